package compose

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/compose-spec/compose-go/v2/types"
	"github.com/docker/compose/v5/pkg/api"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/result"
)

// load reads the compose files, then applies loadgate's rules: labels everywhere,
// the stack cpuset on every service, ephemeral host ports, no container names.
func (s *Stack) load(ctx context.Context) error {
	p, err := s.loadProject(ctx)
	if err != nil {
		return err
	}
	labels := map[string]string{
		LabelRun:     s.runID,
		LabelProject: s.name,
		LabelSide:    s.opt.Side,
		LabelOwner:   owner(),
	}
	cpus := s.stackCPUs.String()
	var (
		mu        sync.Mutex
		overrides []result.Override
		refused   []string
	)
	// WithServicesTransform runs fn concurrently, one goroutine per service.
	p, err = p.WithServicesTransform(func(name string, sc types.ServiceConfig) (types.ServiceConfig, error) {
		sc, notes, bad := applyServiceRules(name, sc, labels, cpus)
		mu.Lock()
		overrides = append(overrides, notes...)
		refused = append(refused, bad...)
		mu.Unlock()
		return sc, nil
	})
	if err != nil {
		return fmt.Errorf("compose: %w", err)
	}
	refused = append(refused, refuseHostReach(p, s.opt.Files, s.opt.Allow)...)
	if len(refused) > 0 {
		sort.Strings(refused)
		return fmt.Errorf("compose: %s: refused: %s", strings.Join(rel(s.opt.ProjectDir, s.opt.Files), ", "), strings.Join(refused, "; "))
	}
	labelResources(p, labels)
	s.recordOverrides(overrides)
	s.project = p
	return nil
}

func (s *Stack) loadProject(ctx context.Context) (*types.Project, error) {
	for _, f := range s.opt.Files {
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("compose: %w", err)
		}
	}
	p, err := s.svc.LoadProject(ctx, api.ProjectLoadOptions{
		ProjectName: s.name,
		ConfigPaths: s.opt.Files,
		WorkingDir:  s.opt.ProjectDir,
		EnvFiles:    s.opt.EnvFiles,
		Profiles:    s.opt.Profiles,
		Offline:     true, // no git/OCI remote includes: nothing leaves this machine
	})
	if err != nil {
		return nil, fmt.Errorf("compose: load %s: %w", strings.Join(rel(s.opt.ProjectDir, s.opt.Files), ", "), err)
	}
	if len(p.Services) == 0 {
		return nil, fmt.Errorf("compose: %s: no service enabled (profiles: %v)", strings.Join(rel(s.opt.ProjectDir, s.opt.Files), ", "), s.opt.Profiles)
	}
	return p, nil
}

// applyServiceRules applies the rules to one service; it returns the overrides
// made and the settings it refuses.
func applyServiceRules(name string, sc types.ServiceConfig, labels map[string]string, cpus string) (types.ServiceConfig, []result.Override, []string) {
	var notes []result.Override
	var bad []string
	if sc.ContainerName != "" {
		bad = append(bad, fmt.Sprintf("services.%s.container_name (%q): a fixed container name collides between runs and sides of a throwaway stack", name, sc.ContainerName))
	}
	if strings.HasPrefix(sc.NetworkMode, "host") {
		bad = append(bad, fmt.Sprintf("services.%s.network_mode (%q): host networking shares the host's ports between sides and cannot be reached on a project network", name, sc.NetworkMode))
	}
	sc.Labels = withLabels(sc.Labels, labels)
	if sc.Build != nil {
		sc.Build.Labels = withLabels(sc.Build.Labels, labels)
	}
	if cpus != "" {
		if sc.CPUSet != "" && sc.CPUSet != cpus {
			notes = append(notes, result.Override{Service: name, Kind: result.OverrideCPUSet, From: sc.CPUSet, To: cpus})
		}
		sc.CPUSet = cpus
	}
	for i, port := range sc.Ports {
		if port.Published != "" {
			notes = append(notes, result.Override{Service: name, Kind: result.OverrideHostPort, From: port.Published, Target: port.Target, Protocol: protocol(port.Protocol)})
			sc.Ports[i].Published = ""
		}
	}
	return sc, notes, bad
}

func labelResources(p *types.Project, labels map[string]string) {
	for k, n := range p.Networks {
		if !bool(n.External) {
			n.Labels = withLabels(n.Labels, labels)
			p.Networks[k] = n
		}
	}
	for k, v := range p.Volumes {
		if !bool(v.External) {
			v.Labels = withLabels(v.Labels, labels)
			p.Volumes[k] = v
		}
	}
}

func withLabels(dst types.Labels, labels map[string]string) types.Labels {
	if dst == nil {
		dst = types.Labels{}
	}
	for k, v := range labels {
		dst[k] = v
	}
	return dst
}

func (s *Stack) recordOverrides(overrides []result.Override) {
	slices.SortFunc(overrides, func(a, b result.Override) int {
		return cmp.Or(cmp.Compare(a.Service, b.Service), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.From, b.From), cmp.Compare(a.Target, b.Target))
	})
	s.overrides = overrides
	for _, o := range overrides {
		if o.Kind == result.OverrideCPUSet {
			s.overridden = true
		}
		s.logf("%s", o)
	}
}

func protocol(p string) string {
	if p == "" {
		return "tcp"
	}
	return p
}

func rel(dir string, files []string) []string {
	out := make([]string, len(files))
	for i, f := range files {
		if r, err := filepath.Rel(dir, f); err == nil && !strings.HasPrefix(r, "..") {
			out[i] = r
		} else {
			out[i] = f
		}
	}
	return out
}

// preflightPinning drops the cpuset when the engine cannot apply it; the stack
// then reports pinned=false with the reason.
func (s *Stack) preflightPinning(ctx context.Context) error {
	if s.stackCPUs.Empty() {
		s.reason = "no stack cpuset was given"
		return nil
	}
	info, err := s.api.Info(ctx)
	if err != nil {
		return fmt.Errorf("compose: docker engine not reachable: %w", err)
	}
	why := ""
	switch {
	case !info.CPUSet:
		why = fmt.Sprintf("the engine (%s, cgroup %s) does not support cpusets", info.ServerVersion, info.CgroupVersion)
	case s.stackCPUs.CPUs()[s.stackCPUs.Len()-1] >= info.NCPU:
		why = fmt.Sprintf("cpuset %s is outside the engine's %d CPUs", s.stackCPUs, info.NCPU)
	}
	if why == "" {
		return nil
	}
	s.reason = why
	s.logf("not pinning: %s", why)
	for name, sc := range s.project.Services {
		sc.CPUSet = ""
		s.project.Services[name] = sc
	}
	s.stackCPUs = pin.Set{}
	return nil
}

func (s *Stack) verifyPinning(ctx context.Context) error {
	if s.stackCPUs.Empty() {
		s.pinned = false
		return nil
	}
	cs, err := s.containers(ctx, true)
	if err != nil {
		return err
	}
	var bad []string
	for _, c := range cs {
		ins, err := s.api.ContainerInspect(ctx, c.ID)
		if err != nil {
			return fmt.Errorf("compose: inspect %s: %w", c.name, err)
		}
		got, err := pin.Parse(ins.HostConfig.CpusetCpus)
		if err != nil || !got.Equal(s.stackCPUs) {
			bad = append(bad, fmt.Sprintf("%s has cpuset %q", c.name, ins.HostConfig.CpusetCpus))
		}
	}
	if len(bad) > 0 {
		s.pinned = false
		s.reason = "read back after start: " + strings.Join(bad, "; ")
		return nil
	}
	s.pinned = true
	s.reason = ""
	return nil
}

type ctr struct {
	ID      string
	name    string
	service string
	number  string
	state   string
	labels  map[string]string
}

func (s *Stack) containers(ctx context.Context, all bool) ([]ctr, error) {
	list, err := s.api.ContainerList(ctx, container.ListOptions{
		All:     all,
		Filters: filters.NewArgs(filters.Arg("label", api.ProjectLabel+"="+s.name)),
	})
	if err != nil {
		return nil, fmt.Errorf("compose: list containers: %w", err)
	}
	out := make([]ctr, 0, len(list))
	for _, c := range list {
		name := c.ID[:12]
		if len(c.Names) > 0 {
			name = strings.TrimPrefix(c.Names[0], "/")
		}
		out = append(out, ctr{ID: c.ID, name: name, service: c.Labels[api.ServiceLabel], number: c.Labels[api.ContainerNumberLabel], state: c.State, labels: c.Labels})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].service != out[j].service {
			return out[i].service < out[j].service
		}
		if len(out[i].number) != len(out[j].number) {
			return len(out[i].number) < len(out[j].number)
		}
		return out[i].number < out[j].number
	})
	return out, nil
}
