package compose

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/compose-spec/compose-go/v2/types"
	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"

	"github.com/loadgate/loadgate/gate/result"
)

// What loadgate does with a compose key (the allow-list): a key not in
// serviceRules is refused.
type action string

const (
	accept   action = "accepted"
	check    action = "accepted if"
	override action = "set by loadgate"
	refuse   action = "refused"
)

// rule is one key of the allow-list: what loadgate does with it and why.
type rule struct {
	do  action
	why string
}

// serviceRules is the allow-list of a service's keys (services.<name>.<key>),
// by compose-go's YAML name. docs/security.md's table is generated from it
// (TestSecurityDocAllowList).
var serviceRules = map[string]rule{
	"name":              {accept, "the service's name (compose-go sets it)"},
	"image":             {accept, "an image the engine already has or pulls"},
	"build":             {check, "context and dockerfile inside the side's checkout; no `additional_contexts`, `ssh`, `secrets`, `cache_to`, local `cache_from`, `tags`, `entitlements`, `privileged`, `isolation`, `network` other than default/none; a context holding `.git/` with credentials in its config only when `.dockerignore` excludes `.git`"},
	"command":           {accept, "runs in the container"},
	"entrypoint":        {accept, "runs in the container"},
	"environment":       {check, "literal values only: a bare `VAR` (or `VAR:` with no value) would pass loadgate's own environment through"},
	"env_file":          {check, "files inside the side's checkout (symlinks resolved); elsewhere they would read the runner's files (`/proc/self/environ`)"},
	"label_file":        {check, "files inside the side's checkout (symlinks resolved)"},
	"depends_on":        {accept, "order within the stack"},
	"healthcheck":       {accept, "runs in the container"},
	"ports":             {check, "host ports are made ephemeral (two sides run at once); listed in the report's overrides"},
	"expose":            {accept, "within the stack's network"},
	"networks":          {check, "the project's own networks; no `driver_opts`"},
	"volumes":           {check, "anonymous and named volumes of the project, tmpfs, image mounts; binds whose source (symlinks resolved) is inside the side's checkout and not inside another writable bind (which a container could turn into a symlink before this mount); a writable bind not holding the checkout's `.git` (hooks); no Docker socket; no shared propagation"},
	"tmpfs":             {accept, "memory inside the container"},
	"user":              {accept, "a user inside the container"},
	"working_dir":       {accept, "inside the container"},
	"read_only":         {accept, "restricts the container"},
	"labels":            {accept, "metadata (loadgate adds its own)"},
	"stop_signal":       {accept, "the container's own"},
	"stop_grace_period": {accept, "the container's own"},
	"restart":           {accept, "the container's own"},
	"init":              {accept, "an init process inside the container"},
	"hostname":          {accept, "inside the container"},
	"domainname":        {accept, "inside the container"},
	"extra_hosts":       {accept, "the container's /etc/hosts"},
	"dns":               {accept, "the container's resolver"},
	"dns_opt":           {accept, "the container's resolver"},
	"dns_search":        {accept, "the container's resolver"},
	"links":             {accept, "services of the same stack"},
	"tty":               {accept, "the container's own"},
	"stdin_open":        {accept, "the container's own"},
	"attach":            {accept, "log attachment"},
	"profiles":          {accept, "selects services"},
	"platform":          {accept, "the image's platform"},
	"pull_policy":       {accept, "when to pull the image"},
	"scale":             {accept, "replicas of the service"},
	"mac_address":       {accept, "on the stack's own network"},
	"group_add":         {accept, "groups inside the container"},
	"shm_size":          {accept, "the container's /dev/shm"},
	"cap_drop":          {accept, "removes privileges"},
	"secrets":           {accept, "references to the project's secrets (whose `file:` is checked)"},
	"configs":           {accept, "references to the project's configs (whose `file:` is checked)"},
	"extends":           {accept, "merged at load; the extended file is checked like the others"},
	"develop":           {accept, "not used by loadgate"},
	"deploy":            {check, "`deploy.resources` is set by loadgate like the resource keys; no device reservations"},
	"post_start":        {check, "runs in the container; not `privileged`"},
	"pre_stop":          {check, "runs in the container; not `privileged`"},
	"logging":           {check, "driver `json-file` or `local` (loadgate reads the logs; other drivers write to the host or the network)"},
	"cap_add":           {check, "only capabilities Docker grants by default (" + strings.Join(safeCaps, ", ") + ")"},
	"security_opt":      {check, "only `no-new-privileges` (seccomp profiles, `label=disable`, apparmor and the like reach the host)"},
	"network_mode":      {check, "`none` or `service:<name>` (another container's namespace, the other side's among them, or the host's otherwise)"},
	"cpuset":            {override, "every service gets the stack's cpuset"},
	"container_name":    {refuse, "a fixed name collides between runs and sides (no `stack.allow` accepts it)"},

	// The CPU, memory and I/O a side gets are loadgate's, alike for both sides.
	"cpu_shares":       {override, "who gets the CPU: loadgate's, alike for both sides"},
	"cpus":             {override, "who gets the CPU: loadgate's, alike for both sides"},
	"cpu_quota":        {override, "who gets the CPU: loadgate's, alike for both sides"},
	"cpu_period":       {override, "who gets the CPU: loadgate's, alike for both sides"},
	"cpu_rt_runtime":   {override, "real-time CPU: loadgate's, alike for both sides"},
	"cpu_rt_period":    {override, "real-time CPU: loadgate's, alike for both sides"},
	"cpu_count":        {override, "who gets the CPU: loadgate's, alike for both sides"},
	"cpu_percent":      {override, "who gets the CPU: loadgate's, alike for both sides"},
	"ulimits":          {override, "`rtprio` and the like decide who gets the CPU: loadgate's, alike for both sides"},
	"oom_score_adj":    {override, "who the kernel kills first: loadgate's, alike for both sides"},
	"oom_kill_disable": {override, "who the kernel kills first: loadgate's, alike for both sides"},
	"mem_limit":        {override, "memory: loadgate's, alike for both sides"},
	"mem_reservation":  {override, "memory: loadgate's, alike for both sides"},
	"memswap_limit":    {override, "memory: loadgate's, alike for both sides"},
	"mem_swappiness":   {override, "memory: loadgate's, alike for both sides"},
	"pids_limit":       {override, "processes: loadgate's, alike for both sides"},
	"blkio_config":     {override, "disk I/O: loadgate's, alike for both sides"},

	// Refused unless the base's stack.allow names the key.
	"privileged":          {refuse, "all of the host's devices and capabilities"},
	"pid":                 {refuse, "`host` or `container:…` shares the host's or the other side's processes"},
	"ipc":                 {refuse, "`host` or `container:…` shares the host's or the other side's shared memory"},
	"uts":                 {refuse, "`host` shares the host's hostname"},
	"userns_mode":         {refuse, "`host` makes root in the container root on the host"},
	"cgroup":              {refuse, "`host` shares the host's cgroup tree"},
	"cgroup_parent":       {refuse, "a cgroup of the host's choosing, the other side's among them"},
	"devices":             {refuse, "the host's devices"},
	"device_cgroup_rules": {refuse, "with mknod, any host device"},
	"volumes_from":        {refuse, "another container's mounts, the other side's among them"},
	"external_links":      {refuse, "containers outside the stack"},
	"gpus":                {refuse, "the host's devices"},
	"runtime":             {refuse, "another container runtime of the host"},
	"isolation":           {refuse, "another isolation technology of the host"},
	"sysctls":             {refuse, "kernel settings"},
	"storage_opt":         {refuse, "the host's storage driver"},
	"credential_spec":     {refuse, "the host's credentials"},
	"annotations":         {refuse, "instructions to the host's runtime"},
	"use_api_socket":      {refuse, "the Docker socket: root on the runner"},
	"provider":            {refuse, "runs a program on the host"},
	"models":              {refuse, "the host's model runner"},
	"volume_driver":       {refuse, "a volume plugin of the host"},
	"log_driver":          {refuse, "a logging driver that writes to the host (use `logging`)"},
	"log_opt":             {refuse, "a logging driver's host options"},
	"net":                 {refuse, "the legacy `network_mode`"},
	"dockerfile":          {refuse, "the legacy build key (use `build.dockerfile`)"},
}

// projectRules is the allow-list of the project's top-level resources, by
// the name stack.allow accepts.
var projectRules = []struct {
	key string
	rule
}{
	{"networks.<name>.driver", rule{check, "`bridge` (the default); `macvlan`/`ipvlan` put the stack on the host's LAN (allow name `network_driver`), other drivers are plugins of the host (`networks.driver`)"}},
	{"networks.<name>.external", rule{refuse, "a network outside the stack: the host's (`name: host`) or the other side's"}},
	{"networks.<name>.name", rule{refuse, "a fixed name joins whatever network has it (`host`, the other side's)"}},
	{"networks.<name>.driver_opts", rule{refuse, "options of the host's network driver (`com.docker.network.bridge.name: docker0`)"}},
	{"networks.<name>.ipam", rule{refuse, "subnets that can shadow the host's routes"}},
	{"volumes.<name>.driver", rule{refuse, "`local` only: other drivers are plugins of the host"}},
	{"volumes.<name>.driver_opts", rule{refuse, "`type: none, o: bind, device: /` is a bind of any host path"}},
	{"volumes.<name>.external", rule{refuse, "a volume outside the stack, the other side's among them"}},
	{"volumes.<name>.name", rule{refuse, "a fixed name shares the volume with whatever has it"}},
	{"secrets", rule{check, "`file:` inside the side's checkout (like a bind) or `content:`; `environment:` passes loadgate's environment through, `file: /var/run/docker.sock` is root on the runner"}},
	{"configs", rule{check, "as `secrets`"}},
	{"include", rule{check, "files inside the side's checkout, checked like the file that includes them"}},
}

// refusal is one setting refused: where, what, why and the stack.allow name
// that accepts it ("" when none does).
type refusal struct {
	path  []string // YAML path, e.g. services, web, cap_add
	value string
	why   string
	allow string
}

// allowHint says how to accept a refused setting.
func allowHint(name string) string {
	return fmt.Sprintf("name %q in stack.allow (in a gate, base's scenario) to accept it", name)
}

// RefusedError is a compose file refused before anything was built (exit 2).
type RefusedError struct {
	Files   string   // the compose files, relative to the project
	Reasons []string // one per setting, each with file:line
	Err     error    // or the load's own error (a file too large, aliased too much, invalid)
}

func (e *RefusedError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return fmt.Sprintf("compose: %s: refused: %s", e.Files, strings.Join(e.Reasons, "; "))
}

func (e *RefusedError) Unwrap() error { return e.Err }

// IsRefused reports whether err is a compose file refused (bad input, exit 2).
func IsRefused(err error) bool {
	var re *RefusedError
	return errors.As(err, &re)
}

// guard holds what the checks of one project need.
type guard struct {
	p        *types.Project
	root     string // the side's checkout, symlinks resolved
	files    []string
	allow    []string
	cpus     string
	labels   map[string]string
	bad      []refusal
	notes    []result.Override
	writable map[string]string // resolved writable bind source → service
}

// guardProject applies the allow-list to p: it returns p with loadgate's
// settings applied, the overrides made and what it refuses.
func guardProject(p *types.Project, root string, files, allow []string, cpus string, labels map[string]string) (*types.Project, []result.Override, []string) {
	g := &guard{p: p, root: realPath(root), files: files, allow: allow, cpus: cpus, labels: labels, writable: map[string]string{}}
	names := slices.Sorted(maps.Keys(p.Services))
	// Writable binds first: a bind inside one of them is refused, whoever comes first.
	for _, name := range names {
		for _, v := range p.Services[name].Volumes {
			if v.Type == types.VolumeTypeBind && !v.ReadOnly {
				g.writable[realPath(v.Source)] = name
			}
		}
	}
	for _, name := range names {
		p.Services[name] = g.service(name, p.Services[name])
	}
	g.project()
	var out []string
	for _, r := range g.bad {
		if r.allow != "" && slices.Contains(allow, r.allow) {
			continue
		}
		out = append(out, g.word(r))
	}
	slices.Sort(out)
	return p, g.notes, out
}

func (g *guard) word(r refusal) string {
	val := ""
	if r.value != "" {
		val = " (" + r.value + ")"
	}
	s := fmt.Sprintf("%s%s%s: %s", where(g.files, r.path...), strings.Join(r.path, "."), val, strings.ReplaceAll(r.why, "`", ""))
	if r.allow != "" {
		s += fmt.Sprintf(": %s", allowHint(r.allow))
	}
	return s
}

func (g *guard) refuse(why, allow, value string, path ...string) {
	g.bad = append(g.bad, refusal{path: path, value: value, why: why, allow: allow})
}

// service checks one service key by key (compose-go's fields by YAML name).
func (g *guard) service(name string, sc types.ServiceConfig) types.ServiceConfig {
	v := reflect.ValueOf(&sc).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		key := yamlName(t.Field(i))
		if key == "" || v.Field(i).IsZero() {
			continue
		}
		r, ok := serviceRules[key]
		switch {
		case !ok:
			g.refuse("not on loadgate's allow-list of keys that stay inside the stack", key, "", "services", name, key)
		case r.do == refuse && key == "container_name":
			g.refuse(r.why, "", fmt.Sprintf("%q", sc.ContainerName), "services", name, key)
		case r.do == refuse:
			g.refuse(r.why, key, short(v.Field(i).Interface()), "services", name, key)
		case r.do == override && key == "ulimits":
			for _, u := range slices.Sorted(maps.Keys(sc.Ulimits)) {
				g.notes = append(g.notes, result.Override{Service: name, Kind: result.OverrideResource, From: "ulimits." + u + "=" + ulimit(sc.Ulimits[u])})
			}
			v.Field(i).SetZero()
		case r.do == override && key != "cpuset":
			g.notes = append(g.notes, result.Override{Service: name, Kind: result.OverrideResource, From: key + "=" + short(v.Field(i).Interface())})
			v.Field(i).SetZero()
		}
	}
	g.checkService(name, &sc)
	return sc
}

// checkService checks the values of the keys accepted if they stay inside.
func (g *guard) checkService(name string, sc *types.ServiceConfig) {
	for _, c := range sc.CapAdd {
		if !slices.Contains(safeCaps, strings.TrimPrefix(strings.ToUpper(c), "CAP_")) {
			g.refuse("a capability Docker does not grant by default reaches the host", "cap_add", c, "services", name, "cap_add")
		}
	}
	for _, o := range sc.SecurityOpt {
		if !strings.HasPrefix(o, "no-new-privileges") {
			g.refuse("only no-new-privileges is accepted: the others loosen the host's confinement", "security_opt", o, "services", name, "security_opt")
		}
	}
	switch nm := sc.NetworkMode; {
	case nm == "" || nm == "none" || strings.HasPrefix(nm, "service:"):
	case strings.HasPrefix(nm, "host"):
		g.refuse("host networking shares the host's ports between sides and cannot be reached on a project network", "", fmt.Sprintf("%q", nm), "services", name, "network_mode")
	default:
		g.refuse("another container's network namespace, the other side's among them", "network_mode", nm, "services", name, "network_mode")
	}
	if l := sc.Logging; l != nil && l.Driver != "" && l.Driver != "json-file" && l.Driver != "local" {
		g.refuse("a logging driver that writes to the host or the network", "logging", l.Driver, "services", name, "logging")
	}
	for _, h := range []struct {
		key   string
		hooks []types.ServiceHook
	}{{"post_start", sc.PostStart}, {"pre_stop", sc.PreStop}} {
		for _, hk := range h.hooks {
			if hk.Privileged {
				g.refuse("a privileged hook has all of the host's devices and capabilities", "privileged", "privileged: true", "services", name, h.key)
			}
		}
	}
	for _, f := range sc.EnvFiles {
		if !g.inside(f.Path) {
			g.refuse("an env file outside the side's checkout reads the runner's files", "env_file", f.Path, "services", name, "env_file")
		}
	}
	for _, f := range sc.LabelFiles {
		if !g.inside(f) {
			g.refuse("a label file outside the side's checkout reads the runner's files", "label_file", f, "services", name, "label_file")
		}
	}
	if d := sc.Deploy; d != nil {
		for _, r := range []*types.Resource{d.Resources.Limits, d.Resources.Reservations} {
			if r != nil && len(r.Devices) > 0 {
				g.refuse("device reservations are the host's devices", "devices", r.Devices[0].Driver, "services", name, "deploy")
			}
		}
		if d.Resources.Limits != nil || d.Resources.Reservations != nil {
			g.notes = append(g.notes, result.Override{Service: name, Kind: result.OverrideResource, From: "deploy.resources=" + short(d.Resources)})
			d.Resources = types.Resources{}
		}
	}
	for net, cfg := range sc.Networks {
		if cfg != nil && len(cfg.DriverOpts) > 0 {
			g.refuse("options of the host's network driver", "networks.driver_opts", net, "services", name, "networks")
		}
	}
	if sc.Build != nil {
		g.build(name, sc.Build)
	}
	for i, v := range sc.Volumes {
		sc.Volumes[i] = g.volume(name, v)
	}
	// Loadgate's own settings.
	sc.Labels = withLabels(sc.Labels, g.labels)
	if sc.Build != nil {
		sc.Build.Labels = withLabels(sc.Build.Labels, g.labels)
	}
	if g.cpus != "" {
		if sc.CPUSet != "" && sc.CPUSet != g.cpus {
			g.notes = append(g.notes, result.Override{Service: name, Kind: result.OverrideCPUSet, From: sc.CPUSet, To: g.cpus})
		}
		sc.CPUSet = g.cpus
	} else if sc.CPUSet != "" {
		g.notes = append(g.notes, result.Override{Service: name, Kind: result.OverrideResource, From: "cpuset=" + sc.CPUSet})
		sc.CPUSet = ""
	}
	for i, port := range sc.Ports {
		if port.Published != "" {
			g.notes = append(g.notes, result.Override{Service: name, Kind: result.OverrideHostPort, From: port.Published, Target: port.Target, Protocol: protocol(port.Protocol)})
			sc.Ports[i].Published = ""
		}
		sc.Ports[i].HostIP = ""
	}
}

func (g *guard) build(name string, b *types.BuildConfig) {
	path := func(k string) []string { return []string{"services", name, "build", k} }
	ctx := b.Context
	if ctx != "" && !isRemoteContext(ctx) {
		if !g.inside(ctx) {
			g.refuse("a build context outside the side's checkout sends the runner's files to the build", "build.context", ctx, path("context")...)
		} else if why := gitCredentials(realPath(ctx), b.Dockerfile); why != "" {
			g.refuse(why, "build.context", ctx, path("context")...)
		} else if df := b.Dockerfile; df != "" {
			if !filepath.IsAbs(df) {
				df = filepath.Join(ctx, df)
			}
			if !g.inside(df) {
				g.refuse("a Dockerfile outside the side's checkout", "build.context", b.Dockerfile, path("dockerfile")...)
			}
		}
	} else if ctx != "" {
		g.refuse("a remote build context fetches code the checkout does not hold", "build.context", ctx, path("context")...)
	}
	if len(b.AdditionalContexts) > 0 {
		for k, v := range b.AdditionalContexts {
			g.refuse("more build contexts send the runner's files or another image to the build", "build.additional_contexts", k+"="+v, path("additional_contexts")...)
			break
		}
	}
	if n := b.Network; n != "" && n != "default" && n != "none" {
		g.refuse("the build's RUN steps on the host's network", "build.network", n, path("network")...)
	}
	if len(b.SSH) > 0 {
		g.refuse("forwards the runner's SSH agent or keys to the build", "build.ssh", b.SSH[0].ID, path("ssh")...)
	}
	if len(b.Secrets) > 0 {
		g.refuse("build secrets come from the runner's files or environment", "build.secrets", b.Secrets[0].Source, path("secrets")...)
	}
	if len(b.CacheTo) > 0 {
		g.refuse("the build cache is written to the host or a registry", "build.cache_to", b.CacheTo[0], path("cache_to")...)
	}
	for _, c := range b.CacheFrom {
		if strings.Contains(c, "type=local") {
			g.refuse("a local build cache reads the runner's files", "build.cache_from", c, path("cache_from")...)
		}
	}
	if len(b.Tags) > 0 {
		g.refuse("more tags overwrite images of the host, the other side's base images among them", "build.tags", b.Tags[0], path("tags")...)
	}
	if len(b.Entitlements) > 0 {
		g.refuse("entitlements let the build reach the host", "build.entitlements", b.Entitlements[0], path("entitlements")...)
	}
	if b.Privileged {
		g.refuse("a privileged build has the host's devices", "privileged", "true", path("privileged")...)
	}
	if b.Isolation != "" {
		g.refuse("another isolation technology of the host", "isolation", b.Isolation, path("isolation")...)
	}
	if len(b.Ulimits) > 0 {
		g.notes = append(g.notes, result.Override{Service: name, Kind: result.OverrideResource, From: "build.ulimits=" + short(b.Ulimits)})
		b.Ulimits = nil
	}
}

func ulimit(u *types.UlimitsConfig) string {
	switch {
	case u == nil:
		return ""
	case u.Single != 0:
		return fmt.Sprint(u.Single)
	}
	return fmt.Sprintf("%d:%d", u.Soft, u.Hard)
}

func isRemoteContext(ctx string) bool {
	for _, p := range []string{"http://", "https://", "git://", "git@", "github.com/", "docker-image://", "oci-layout://", "service:"} {
		if strings.HasPrefix(ctx, p) {
			return true
		}
	}
	return false
}

// gitCredentials is why a build context is refused for the repository's
// credentials in it, or "": .git/config with a persisted token (actions/checkout's
// http.*.extraheader, a URL with a password, a credential helper's store) goes
// to the build unless .dockerignore (or <Dockerfile>.dockerignore) excludes it.
func gitCredentials(ctx, dockerfile string) string {
	b, err := os.ReadFile(filepath.Join(ctx, ".git", "config"))
	if err != nil {
		return ""
	}
	conf := strings.ToLower(string(b))
	if !strings.Contains(conf, "extraheader") && !strings.Contains(conf, "[credential") && !strings.Contains(conf, "@github.com") && !urlWithPassword(conf) {
		return ""
	}
	ignores := []string{filepath.Join(ctx, ".dockerignore")}
	if dockerfile != "" && !filepath.IsAbs(dockerfile) {
		ignores = append([]string{filepath.Join(ctx, dockerfile+".dockerignore")}, ignores...)
	}
	for _, f := range ignores {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		pats, err := ignorefile.ReadAll(fh)
		fh.Close()
		if err != nil {
			break
		}
		pm, err := patternmatcher.New(pats)
		if err != nil {
			break
		}
		if ok, _ := pm.MatchesOrParentMatches(".git/config"); ok {
			return ""
		}
		break // the first ignore file that exists is the one the builder reads
	}
	return "the build context holds .git/config with the checkout's credentials: add .git to .dockerignore (or check out with persist-credentials: false)"
}

func urlWithPassword(conf string) bool {
	for _, line := range strings.Split(conf, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "url") {
			continue
		}
		if i := strings.Index(line, "://"); i >= 0 {
			rest := line[i+3:]
			if at := strings.Index(rest, "@"); at > 0 && strings.Contains(rest[:at], ":") {
				return true
			}
		}
	}
	return false
}

func (g *guard) volume(name string, v types.ServiceVolumeConfig) types.ServiceVolumeConfig {
	path := []string{"services", name, "volumes"}
	switch v.Type {
	case types.VolumeTypeBind:
		src := realPath(v.Source)
		switch {
		case strings.HasSuffix(v.Source, "docker.sock") || strings.HasSuffix(src, "docker.sock"):
			g.refuse("the Docker socket is root on the runner", "docker_socket", v.Source, path...)
			return v
		case !g.inside(v.Source):
			g.refuse("a bind outside the side's checkout reaches the host's files", "bind", v.Source, path...)
			return v
		}
		if git := filepath.Join(g.root, ".git"); !v.ReadOnly && within(src, git) && exists(git) {
			g.refuse("a writable bind of the checkout's .git lets a container plant hooks that later git commands of the job run: mount it read-only", "bind", v.Source, path...)
			return v
		}
		for w, svc := range g.writable {
			if src != w && within(w, src) {
				g.refuse(fmt.Sprintf("it lies inside service %s's writable bind %s, which can make it a symlink to / before this mount", svc, w), "bind", v.Source, path...)
				return v
			}
		}
		if v.Bind != nil && v.Bind.Propagation != "" && !strings.Contains(v.Bind.Propagation, "private") {
			g.refuse("shared mount propagation reaches the host's mounts", "bind", v.Bind.Propagation, path...)
		}
		v.Source = src // the path checked, not a symlink that may change
	case types.VolumeTypeVolume, types.VolumeTypeTmpfs, types.VolumeTypeImage, "":
	default:
		g.refuse("a mount of the host's", "volumes", string(v.Type)+":"+v.Source, path...)
	}
	return v
}

// project checks the top-level networks, volumes, secrets and configs.
func (g *guard) project() {
	p := g.p
	for _, k := range slices.Sorted(maps.Keys(p.Networks)) {
		n := p.Networks[k]
		path := func(f string) []string { return []string{"networks", k, f} }
		if bool(n.External) {
			g.refuse("a network outside the stack: the host's or the other side's", "networks.external", n.Name, path("external")...)
			continue
		}
		switch n.Driver {
		case "", "bridge":
		case "macvlan", "ipvlan":
			g.refuse("puts the stack on the host's network", "network_driver", n.Driver, path("driver")...)
		default:
			g.refuse("a network plugin of the host", "networks.driver", n.Driver, path("driver")...)
		}
		if n.Name != "" && n.Name != p.Name+"_"+k {
			g.refuse("a fixed name joins whatever network has it (host, the other side's)", "networks.name", n.Name, path("name")...)
		}
		if len(n.DriverOpts) > 0 {
			g.refuse("options of the host's network driver", "networks.driver_opts", short(n.DriverOpts), path("driver_opts")...)
		}
		if n.Ipam.Driver != "" || len(n.Ipam.Config) > 0 {
			g.refuse("fixed subnets can shadow the host's routes", "networks.ipam", short(n.Ipam), path("ipam")...)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.Volumes)) {
		v := p.Volumes[k]
		path := func(f string) []string { return []string{"volumes", k, f} }
		if bool(v.External) {
			g.refuse("a volume outside the stack, the other side's among them", "volumes.external", v.Name, path("external")...)
			continue
		}
		if v.Driver != "" && v.Driver != "local" {
			g.refuse("a volume plugin of the host", "volumes.driver", v.Driver, path("driver")...)
		}
		if len(v.DriverOpts) > 0 {
			g.refuse("driver options make a volume a bind of any host path", "volumes.driver_opts", short(v.DriverOpts), path("driver_opts")...)
		}
		if v.Name != "" && v.Name != p.Name+"_"+k {
			g.refuse("a fixed name shares the volume with whatever has it", "volumes.name", v.Name, path("name")...)
		}
	}
	for _, kind := range []struct {
		key  string
		objs map[string]types.FileObjectConfig
	}{{"secrets", fileObjects(p.Secrets)}, {"configs", fileObjects(p.Configs)}} {
		for _, k := range slices.Sorted(maps.Keys(kind.objs)) {
			o := kind.objs[k]
			path := []string{kind.key, k, "file"}
			switch {
			case bool(o.External):
				g.refuse("one outside the stack", kind.key, k, kind.key, k, "external")
			case o.Environment != "":
				g.refuse("passes loadgate's own environment through", kind.key, o.Environment, kind.key, k, "environment")
			case o.Driver != "" || o.TemplateDriver != "":
				g.refuse("a driver of the host", kind.key, o.Driver+o.TemplateDriver, kind.key, k, "driver")
			case o.File != "":
				src := realPath(o.File)
				if strings.HasSuffix(src, "docker.sock") || !g.inside(o.File) {
					g.refuse("a file outside the side's checkout is mounted from the host (a socket still connects read-only)", kind.key, o.File, path...)
					continue
				}
				for w, svc := range g.writable {
					if within(w, src) {
						g.refuse(fmt.Sprintf("it lies inside service %s's writable bind %s, which can make it a symlink before it is mounted", svc, w), kind.key, o.File, path...)
						break
					}
				}
			}
		}
	}
}

func fileObjects[M ~map[string]V, V types.SecretConfig | types.ConfigObjConfig](m M) map[string]types.FileObjectConfig {
	out := make(map[string]types.FileObjectConfig, len(m))
	for k, v := range m {
		out[k] = types.FileObjectConfig(v)
	}
	return out
}

// inside reports whether p, symlinks resolved (as far as it exists), lies in the checkout.
func (g *guard) inside(p string) bool {
	return within(g.root, realPath(p))
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && filepath.IsLocal(rel)
}

// realPath is p with symlinks resolved as far as it exists: the rest is
// appended to the deepest existing ancestor's real path.
func realPath(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

func yamlName(f reflect.StructField) string {
	tag := f.Tag.Get("yaml")
	name, _, _ := strings.Cut(tag, ",")
	if name == "-" || strings.HasPrefix(name, "#") {
		return ""
	}
	return name
}

// short is a value as a refusal shows it, at most 60 characters.
func short(v any) string {
	s := fmt.Sprint(v)
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}
