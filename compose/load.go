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
	"time"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/docker/compose/v5/pkg/api"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"gopkg.in/yaml.v3"

	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/result"
)

// load reads the compose files (bounded: boundFiles), then applies loadgate's
// rules (guardProject): the allow-list, labels everywhere, the stack cpuset and
// loadgate's resources on every service, ephemeral host ports. What it refuses
// is a *RefusedError, before anything is built.
func (s *Stack) load(ctx context.Context) error {
	p, docs, err := s.loadProject(ctx)
	if err != nil {
		return err
	}
	labels := map[string]string{
		LabelRun:     s.runID,
		LabelProject: s.name,
		LabelSide:    s.opt.Side,
		LabelOwner:   owner(),
	}
	p, overrides, refused := guardProject(p, s.opt.Root, s.opt.Files, s.opt.Allow, s.stackCPUs.String(), labels)
	if !slices.Contains(s.opt.Allow, "environment") {
		for _, b := range bareVars(docs) {
			refused = append(refused, b+": "+bareWhy+": "+allowHint("environment"))
		}
		for _, b := range secretRefs(docs, os.LookupEnv) {
			refused = append(refused, b+": "+secretRefWhy+": "+allowHint("environment"))
		}
		slices.Sort(refused)
	}
	if len(refused) > 0 {
		return &RefusedError{Files: strings.Join(rel(s.opt.ProjectDir, s.opt.Files), ", "), Reasons: refused}
	}
	// Bare variables were refused above: env files resolve without loadgate's environment.
	env := p.Environment
	p.Environment = types.Mapping{}
	if p, err = p.WithServicesEnvironmentResolved(true); err != nil {
		return &RefusedError{Err: fmt.Errorf("compose: %w", err)}
	}
	p.Environment = env
	labelResources(p, labels)
	s.recordOverrides(overrides)
	s.project = p
	return nil
}

// loadTimeout bounds compose-go's load of files boundFiles accepted.
const loadTimeout = 20 * time.Second

// secretRefWhy is why interpolating a secret of the job's environment is refused.
const secretRefWhy = "interpolates a secret the job's environment sets, which the change's code then reads: pass it through the scenario's ${ENV} instead"

// bareWhy is why a variable without a value is refused.
const bareWhy = "a variable without a value passes loadgate's own environment (the job's) through: write VAR=value"

// loadProject loads the files, bounded, and returns the parsed YAML of each
// file read (includes and extends too).
func (s *Stack) loadProject(ctx context.Context) (*types.Project, map[string]*yaml.Node, error) {
	files := strings.Join(rel(s.opt.ProjectDir, s.opt.Files), ", ")
	docs, err := boundFiles(s.opt.Files, s.opt.Root)
	if err != nil {
		return nil, nil, &RefusedError{Err: fmt.Errorf("compose: %w", err)}
	}
	type loaded struct {
		p   *types.Project
		err error
	}
	ctx, cancel := context.WithTimeout(ctx, loadTimeout)
	defer cancel()
	done := make(chan loaded, 1)
	go func() {
		p, err := s.svc.LoadProject(ctx, api.ProjectLoadOptions{
			ProjectName: s.name,
			ConfigPaths: s.opt.Files,
			WorkingDir:  s.opt.ProjectDir,
			EnvFiles:    s.opt.EnvFiles,
			Profiles:    s.opt.Profiles,
			Offline:     true, // no git/OCI remote includes: nothing leaves this machine
			// guardProject refuses bare variables first: they would pass this process's environment.
			ProjectOptionsFns: []cli.ProjectOptionsFn{cli.WithoutEnvironmentResolution},
		})
		done <- loaded{p, err}
	}()
	var l loaded
	select {
	case l = <-done:
	case <-ctx.Done():
		if ctx.Err() == context.DeadlineExceeded {
			return nil, nil, &RefusedError{Err: fmt.Errorf("compose: load %s: took longer than %s: simplify the file", files, loadTimeout)}
		}
		return nil, nil, fmt.Errorf("compose: load %s: %w", files, ctx.Err())
	}
	if l.err != nil {
		return nil, nil, &RefusedError{Err: fmt.Errorf("compose: load %s: %w", files, l.err)}
	}
	if len(l.p.Services) == 0 {
		return nil, nil, &RefusedError{Err: fmt.Errorf("compose: %s: no service enabled (profiles: %v)", files, s.opt.Profiles)}
	}
	return l.p, docs, nil
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
