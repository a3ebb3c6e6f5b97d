package session

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/loadgate/loadgate/compose"
	"github.com/loadgate/loadgate/gate/load"
	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/scenario"
)

// StackOptions are the stack flags every command that brings one up shares.
type StackOptions struct {
	Compose      []string // --compose files (default: the scenario's)
	StackCPUs    string
	LoadCPUs     string
	AllowOverlap bool
	ReadyTimeout time.Duration
	StatsEvery   time.Duration
	Priority     pin.Mode // --load-priority (commands that send a load; "" elsewhere: auto)
	// Environ is stack.prepare's whole environment, without the runner's credentials.
	Environ func() []string
	Log     io.Writer
}

// PlanCPUs is pin.NewPlan of the options, and CheckPriority. Call it once per
// process: once the generator is pinned, its CPUs are the load set only.
func (o StackOptions) PlanCPUs() (pin.Plan, error) {
	p, err := pin.NewPlan(o.StackCPUs, o.LoadCPUs, o.AllowOverlap)
	if err != nil {
		return p, err
	}
	return p, o.CheckPriority()
}

// CheckPriority refuses --load-priority rt where the system would not permit it.
func (o StackOptions) CheckPriority() error {
	if o.Priority != pin.ModeRealtime {
		return nil
	}
	if err := pin.CheckRaise(); err != nil {
		return fmt.Errorf("--load-priority rt: %w", err)
	}
	return nil
}

// Up is session.Up with sp's cpus from plan and its prepare run with Environ.
func (o StackOptions) Up(ctx context.Context, sp compose.Spec, plan pin.Plan) (*Compose, error) {
	if o.Environ != nil {
		sp.PrepareEnv = o.Environ()
	}
	sp.Plan, sp.ReadyTimeout, sp.Log = plan, o.ReadyTimeout, o.Log
	return Up(ctx, sp, o.StatsEvery)
}

// Files are the --compose files when given, else the scenario's.
func (o StackOptions) Files(sc *scenario.Scenario) []string {
	if len(o.Compose) > 0 {
		return o.Compose
	}
	if sc.Stack != nil {
		return sc.Stack.Compose
	}
	return nil
}

// StackPrepare is the scenario's stack.prepare and its dir, run even with --compose.
func StackPrepare(sc *scenario.Scenario) ([]string, string) {
	if sc.Stack == nil || len(sc.Stack.Prepare) == 0 {
		return nil, ""
	}
	return sc.Stack.Prepare, sc.Stack.Dir
}

// Start brings the scenario's stack up for cmd; the caller tears it down on every return.
func (o StackOptions) Start(ctx context.Context, cmd string, sc *scenario.Scenario, files []string, target, out string) (*Compose, error) {
	plan, err := o.PlanCPUs()
	if err != nil {
		return nil, Usagef("%s: %w", cmd, err)
	}
	prep, prepDir := StackPrepare(sc)
	var allow []string
	if sc.Stack != nil {
		allow = sc.Stack.Allow
	}
	c, err := o.Up(ctx, compose.Spec{Files: files, Target: target, Prepare: prep, PrepareDir: prepDir, OutDir: out, Side: cmd, Allow: allow}, plan)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	return c, nil
}

// StartFile is `loadgate up`'s Start; target defaults to the scenario's stack.target.
func (o StackOptions) StartFile(ctx context.Context, path, target, out string) (*Compose, string, error) {
	if path == "" {
		return nil, "", Usagef("up: --scenario is required")
	}
	sc, err := scenario.Load(path, scenario.Options{})
	if err != nil {
		return nil, "", Usage(err)
	}
	files := o.Files(sc)
	if len(files) == 0 {
		return nil, "", Usagef("up: the scenario has no stack: section and no --compose was given")
	}
	if target == "" && sc.Stack != nil {
		target = sc.Stack.Target
	}
	if target == "" {
		return nil, "", Usagef("up: --target service:port is required (the scenario's stack: names none)")
	}
	c, err := o.Start(ctx, "up", sc, files, target, out)
	return c, target, err
}

// LoadOptions are the load flags run, sweep and soak share.
type LoadOptions struct {
	Cmd      string  // run, sweep or soak
	Scenario string  // --scenario: the file
	Scale    float64 // --scale (not soak's)
	Limits   scenario.OperatorLimits
	Target   string // --target: a loopback URL, or service:port of the stack
	Out      string // --out (default: OutDir's)
	Watch    []int  // --watch-pid (plain mode)
	Stack    StackOptions
	// ResolveEnv resolves and masks ${NAME} values before anything is logged.
	ResolveEnv func(*scenario.Scenario) (map[string]string, error)
}

// LoadScenario loads --scenario at --scale, within the operator's ceilings
// when limits (a sweep checks each step's rate instead).
func (o LoadOptions) LoadScenario(limits bool) (*scenario.Scenario, error) {
	if o.Scenario == "" {
		return nil, Usagef("%s: --scenario is required (see loadgate %s -h)", o.Cmd, o.Cmd)
	}
	sc, err := scenario.Load(o.Scenario, scenario.Options{Scale: o.Scale, ScaleSet: true})
	if err == nil && limits {
		err = sc.CheckOperatorLimits(o.Limits)
	}
	return sc, Usage(err)
}

// LoadPlan is where a command's load goes, known before anything starts.
type LoadPlan struct {
	Env     map[string]string
	Files   []string
	Plain   bool
	Target  string   // the raw URL, or service:port
	URL     *url.URL // plain only
	LoadSet pin.Set  // plain only
	Out     string
}

// OutInfix is cmd's infix in loadgate-out/<scenario>-<infix><time>.
func OutInfix(cmd string) string {
	if cmd == "run" {
		return ""
	}
	return cmd + "-"
}

// PlanLoad is the prelude run, sweep and soak share, before anything starts.
func PlanLoad(ctx context.Context, sc *scenario.Scenario, o LoadOptions) (*LoadPlan, error) {
	p := &LoadPlan{Out: o.Out}
	if o.ResolveEnv != nil {
		env, err := o.ResolveEnv(sc)
		if err != nil {
			return nil, err
		}
		p.Env = env
	}
	var err error
	if p.Files, p.Plain, p.Target, err = LoadTarget(o.Cmd, sc, o.Target, o.Stack); err != nil {
		return nil, err
	}
	if len(o.Watch) > 0 && !p.Plain {
		return nil, Usagef("%s: --watch-pid is for plain mode (a loopback --target URL): a stack's services are sampled already", o.Cmd)
	}
	if err := CheckPIDs(o.Cmd, o.Watch); err != nil {
		return nil, err
	}
	if p.Plain {
		if p.URL, p.LoadSet, err = PlainTarget(ctx, o.Cmd, p.Target, o.Stack); err != nil {
			return nil, err
		}
	}
	if p.Out == "" {
		p.Out = filepath.Join("loadgate-out", fmt.Sprintf("%s-%s%s", sc.Name, OutInfix(o.Cmd), time.Now().Format("20060102-150405")))
	}
	return p, nil
}

// Open brings the plan's target up; with tee (a soak's collector) the stats
// lines also go there and a plain run samples the generator too.
func (p *LoadPlan) Open(ctx context.Context, sc *scenario.Scenario, o LoadOptions, tee io.Writer) (Target, Spec, error) {
	spec := Spec{Env: p.Env, Dir: p.Out}
	if p.Plain {
		spec.Target, spec.Topology = p.URL, PlainTopology(p.LoadSet)
		return &Plain{PIDs: o.Watch, Self: tee != nil, Every: o.Stack.StatsEvery, Tee: tee}, spec, nil
	}
	c, err := o.Stack.Start(ctx, o.Cmd, sc, p.Files, p.Target, p.Out)
	if err != nil {
		return nil, spec, err
	}
	c.Tee = tee
	spec.Target, spec.TargetLabel, spec.Topology = &url.URL{Scheme: "http", Host: c.Addr()}, c.Label(), c.Topology()
	return c, spec, nil
}

// LoadTarget is where a command's load goes: plain for a URL --target (no
// stack is started), else the stack's files and service:port. Refusals are ErrUsage.
func LoadTarget(cmd string, sc *scenario.Scenario, raw string, o StackOptions) (files []string, plain bool, target string, err error) {
	files = o.Files(sc)
	plain = strings.Contains(raw, "://")
	switch {
	case plain && len(o.Compose) > 0:
		return nil, false, "", Usagef("%s: --target %s is a URL, but --compose asks for a stack: give the stack's service:port as --target", cmd, raw)
	case plain:
		return nil, true, raw, nil
	case len(files) == 0 && raw == "":
		return nil, false, "", Usagef("%s: --target is required: a loopback URL such as http://127.0.0.1:8080 (the scenario has no stack: section)", cmd)
	case len(files) == 0:
		return nil, false, "", Usagef("%s: --target %q is not a URL, and there is no stack (no stack: section, no --compose) it could be a service of", cmd, raw)
	case raw != "":
		return files, false, raw, nil
	case sc.Stack == nil || sc.Stack.Target == "":
		return nil, false, "", Usagef("%s: --target service:port is required: the scenario's stack: names no target", cmd)
	}
	return files, false, sc.Stack.Target, nil
}

// PlainTarget checks a plain run's loopback URL (as the run's dialer will)
// and pins the generator to --load-cpus when given, returning that set.
func PlainTarget(ctx context.Context, cmd, raw string, o StackOptions) (*url.URL, pin.Set, error) {
	t, err := load.LoopbackTarget(ctx, raw)
	if err != nil {
		return nil, pin.Set{}, Usagef("%s: %w", cmd, err)
	}
	var set pin.Set
	if o.LoadCPUs != "" {
		if set, err = pin.Parse(o.LoadCPUs); err != nil {
			return nil, pin.Set{}, Usagef("%s: --load-cpus %q: %w", cmd, o.LoadCPUs, err)
		}
		if err := pin.PinProcess(set); err != nil {
			return nil, pin.Set{}, Usagef("%s: --load-cpus: %w", cmd, err)
		}
	}
	if err := o.CheckPriority(); err != nil {
		return nil, pin.Set{}, Usagef("%s: %w", cmd, err)
	}
	return t.URL, set, nil
}
