package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loadgate/loadgate/gate/load"
	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/session"
)

// loadFlags are the flags run, sweep and soak share: the scenario, where
// its load goes, where the results go, the stack and the ceilings.
type loadFlags struct {
	cmd                   string // run, sweep or soak
	scenario, target, out string
	scale                 float64
	insecure, force       bool
	progress, cpuProfile  string
	watch                 pidFlag // --watch-pid (run, soak)
	stack                 stackFlags
	limits                scenario.OperatorLimits
}

// addLoadFlags adds the shared flags of f.cmd to fs, with that command's
// words where they differ.
func addLoadFlags(fs *flag.FlagSet, f *loadFlags) {
	scen, results, scale := "the scenario `file` (YAML)", "result", "shorten every phase and the warm-up by this `factor` in (0,1]; nothing else changes"
	switch f.cmd {
	case "sweep":
		results, scale = "results", "shorten the judged phase and the warm-up by this `factor` in (0,1] (rates are --rates')"
	case "soak":
		scen = "the scenario `file` (YAML); its judged phase's constant rate is held"
	}
	fs.StringVar(&f.scenario, "scenario", "", scen)
	fs.StringVar(&f.target, "target", "", "loopback base `URL`, or service:port of the stack (default: the scenario's stack.target)")
	fs.StringVar(&f.out, "out", "", "results `dir` (default loadgate-out/<scenario>-"+outSuffix(f.cmd)+"<time>); one that already holds a result is refused unless --force")
	fs.BoolVar(&f.force, "force", false, "replace the "+results+" already in --out")
	if f.cmd != "soak" {
		fs.Float64Var(&f.scale, "scale", 1, scale)
	}
	if f.cmd != "sweep" {
		fs.Var(&f.watch, "watch-pid", watchPIDUsage)
	}
	if f.cmd == "run" {
		fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write the generator's CPU profile to `file` (for make bench)")
	}
	fs.BoolVar(&f.insecure, "insecure", false, "skip TLS certificate verification (self-signed loopback servers)")
	fs.StringVar(&f.progress, "progress", "auto", "progress line on stderr: auto (when a terminal), always, never")
	addStackFlags(fs, &f.stack)
	addPriorityFlag(fs, &f.stack)
	addLimitFlags(fs, &f.limits)
}

// outSuffix is the default results directory's infix of cmd.
func outSuffix(cmd string) string {
	if cmd == "run" {
		return ""
	}
	return cmd + "-"
}

// addLimitFlags adds the operator's ceilings: a scenario's own ceilings
// cannot raise them (the lower wins).
func addLimitFlags(fs *flag.FlagSet, l *scenario.OperatorLimits) {
	fs.Float64Var(&l.Rate, "max-rate", 0, "operator ceiling: refuse a scenario whose peak rate is above this many req/s, whatever its ceilings say (0: none)")
	fs.DurationVar(&l.Duration, "max-duration", 0, "operator ceiling: refuse a scenario whose warm-up and phases last longer (0: none)")
	fs.IntVar(&l.InFlight, "max-in-flight", 0, "operator ceiling: refuse a scenario whose max_in_flight is higher (0: none)")
}

func addStackFlags(fs *flag.FlagSet, f *stackFlags) {
	fs.Var(&f.compose, "compose", "compose `file` (repeatable; default: the scenario's stack.compose)")
	fs.StringVar(&f.stackCPUs, "stack-cpus", "", "cpu `list` for every service of the stack (default: the first half of this machine's)")
	fs.StringVar(&f.loadCPUs, "load-cpus", "", "cpu `list` the generator is pinned to (default with a stack: the other half); GOMAXPROCS follows")
	fs.BoolVar(&f.allowOverlap, "allow-overlap", false, "allow the stack's and the generator's cpus to overlap (the report says so)")
	fs.DurationVar(&f.readyTimeout, "ready-timeout", 2*time.Minute, "how long the stack may take to be healthy")
	fs.DurationVar(&f.statsEvery, "stats-interval", time.Second, "stack stats sampling `interval`")
}

// addPriorityFlag adds --load-priority, for the commands that send a load.
func addPriorityFlag(fs *flag.FlagSet, f *stackFlags) {
	f.priority = pin.ModeAuto
	fs.TextVar(&f.priority, "load-priority", pin.ModeAuto, "the generator's scheduling during a load: `auto` (SCHED_RR 1 when a stack and the generator are pinned apart and the system permits it), rt (SCHED_RR 1 wherever it runs, or refuse), normal (never raised)")
}

// checkProgress refuses a --progress value other than auto, always or never.
func checkProgress(cmd, v string) error {
	switch v {
	case "auto", "always", "never":
		return nil
	}
	return usageErr("%s: --progress must be auto, always or never, not %q", cmd, v)
}

// loadPlan is where a command's load goes, known before anything starts:
// the resolved ${ENV}, a plain target checked (and the generator pinned)
// or a stack's files and service:port, and the results directory.
type loadPlan struct {
	env     map[string]string
	files   []string
	plain   bool
	target  string   // the raw URL, or service:port
	url     *url.URL // plain only
	loadSet pin.Set  // plain only
	out     string
}

// planLoad is the prelude run, sweep and soak share, in their order:
// ${ENV} resolved and masked, the target checked, --watch-pid checked,
// the default results directory named.
func planLoad(ctx context.Context, sc *scenario.Scenario, f loadFlags, stderr io.Writer) (*loadPlan, error) {
	env, err := resolveEnv(sc, stderr) // before anything is logged
	if err != nil {
		return nil, err
	}
	p := &loadPlan{env: env, out: f.out}
	if p.files, p.plain, p.target, err = loadTarget(f.cmd, sc, f.target, f.stack); err != nil {
		return nil, err
	}
	if len(f.watch) > 0 && !p.plain {
		return nil, usageErr("%s: --watch-pid is for plain mode (a loopback --target URL): a stack's services are sampled already", f.cmd)
	}
	if err := session.CheckPIDs(f.cmd, f.watch); err != nil {
		return nil, err
	}
	if p.plain {
		if p.url, p.loadSet, err = plainTarget(ctx, f.cmd, p.target, f.stack); err != nil {
			return nil, err
		}
	}
	if p.out == "" {
		p.out = filepath.Join("loadgate-out", fmt.Sprintf("%s-%s%s", sc.Name, outSuffix(f.cmd), time.Now().Format("20060102-150405")))
	}
	return p, nil
}

// open brings the plan's target up: a stack (started now), or the plain
// URL with the --watch-pid processes sampled. With tee (a soak's
// collector) every stats line goes there too, and a plain run samples the
// generator as well. spec is the load's target and what its result
// states of it.
func (p *loadPlan) open(ctx context.Context, sc *scenario.Scenario, f loadFlags, tee io.Writer, stderr io.Writer) (session.Target, session.Spec, error) {
	spec := session.Spec{Env: p.env, Dir: p.out}
	if p.plain {
		spec.Target, spec.Topology = p.url, session.PlainTopology(p.loadSet)
		return &session.Plain{PIDs: f.watch, Self: tee != nil, Every: f.stack.statsEvery, Tee: tee}, spec, nil
	}
	c, err := startStack(ctx, f.cmd, sc, p.files, p.target, p.out, f.stack, stderr)
	if err != nil {
		return nil, spec, err
	}
	c.Tee = tee
	spec.Target, spec.TargetLabel, spec.Topology = &url.URL{Scheme: "http", Host: c.Addr()}, c.Label(), c.Topology()
	return c, spec, nil
}

// engine is the load engine as the flags ask, its words on stderr.
func engine(insecure bool, progress, cpuProfile string, priority pin.Mode, stderr io.Writer) *session.Engine {
	return &session.Engine{
		Insecure: insecure, Priority: priority, CPUProfile: cpuProfile,
		Starting: func(s session.Spec) {
			fmt.Fprintf(stderr, "loadgate: %s (%s) → %s for %s, results in %s\n",
				s.Scenario.Name, result.ShortHash(s.Scenario.Hash), s.Target.Redacted(), s.Scenario.TotalDuration().Round(time.Millisecond), s.Dir)
		},
		Progress: func() (func(load.Progress), func()) {
			pl := report.NewProgressLine(stderr, progress)
			return pl.Update, pl.Finish
		},
		Warn: warner(stderr),
	}
}

// warner prints a warning: a figure lost, the result standing.
func warner(stderr io.Writer) func(format string, a ...any) {
	return func(format string, a ...any) { fmt.Fprintf(stderr, "loadgate: warning: "+format+"\n", a...) }
}

// pidFlag is a repeatable --watch-pid.
type pidFlag []int

func (p *pidFlag) String() string {
	s := make([]string, len(*p))
	for i, v := range *p {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

func (p *pidFlag) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return fmt.Errorf("%q is not a process id", v)
	}
	for _, have := range *p {
		if have == n {
			return fmt.Errorf("pid %d given twice", n)
		}
	}
	*p = append(*p, n)
	return nil
}

const watchPIDUsage = "sample the CPU (deltas of cumulative CPU time) and RSS of this host process `PID` from /proc, like a stack service (repeatable; plain mode only)"
