package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/loadgate/loadgate/compose"
	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
)

// stackFlags are the flags of every command that brings a stack up.
type stackFlags struct {
	compose      multiFlag
	stackCPUs    string
	loadCPUs     string
	allowOverlap bool
	readyTimeout time.Duration
	statsEvery   time.Duration
	priority     pin.Mode // --load-priority (commands that send a load; "" elsewhere: auto)
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// loadTarget is where a command's load goes (run, sweep, soak): plain, a
// loopback URL given as --target (the scenario's stack is not started);
// else the stack's compose files and its target service:port (--target,
// else the scenario's stack.target). Refusals are usage errors.
func loadTarget(cmd string, sc *scenario.Scenario, raw string, f stackFlags) (files []string, plain bool, target string, err error) {
	files = composeFiles(sc, f)
	plain = strings.Contains(raw, "://")
	switch {
	case plain && len(f.compose) > 0:
		return nil, false, "", usageErr("%s: --target %s is a URL, but --compose asks for a stack: give the stack's service:port as --target", cmd, raw)
	case plain:
		return nil, true, raw, nil
	case len(files) == 0 && raw == "":
		return nil, false, "", usageErr("%s: --target is required: a loopback URL such as http://127.0.0.1:8080 (the scenario has no stack: section)", cmd)
	case len(files) == 0:
		return nil, false, "", usageErr("%s: --target %q is not a URL, and there is no stack (no stack: section, no --compose) it could be a service of", cmd, raw)
	case raw != "":
		return files, false, raw, nil
	case sc.Stack == nil || sc.Stack.Target == "":
		return nil, false, "", usageErr("%s: --target service:port is required: the scenario's stack: names no target", cmd)
	}
	return files, false, sc.Stack.Target, nil
}

// resolveEnv resolves the scenario's ${NAME} values from this process's
// environment without the runner's credentials, and masks them (GitHub
// Actions) before anything is logged.
func resolveEnv(sc *scenario.Scenario, stderr io.Writer) (map[string]string, error) {
	env, err := sc.ResolveEnv(action.WithoutRunnerSecrets(os.LookupEnv))
	if err != nil {
		return nil, usageErr("%w", err)
	}
	action.MaskEnv(stderr, os.Getenv, env)
	return env, nil
}

// plainTarget is a plain run's target (cmd run, sweep, soak): the loopback
// URL checked (loopbackTarget), and the generator pinned to --load-cpus
// when given (the set it is pinned to; empty when not).
func plainTarget(ctx context.Context, cmd, raw string, f stackFlags) (*url.URL, pin.Set, error) {
	u, err := loopbackTarget(ctx, raw)
	if err != nil {
		return nil, pin.Set{}, usageErr("%s: %w", cmd, err)
	}
	if f.loadCPUs == "" {
		if err := checkPriority(f); err != nil {
			return nil, pin.Set{}, usageErr("%s: %w", cmd, err)
		}
		return u, pin.Set{}, nil
	}
	set, err := pin.Parse(f.loadCPUs)
	if err != nil {
		return nil, pin.Set{}, usageErr("%s: --load-cpus %q: %w", cmd, f.loadCPUs, err)
	}
	if err := pin.PinProcess(set); err != nil {
		return nil, pin.Set{}, usageErr("%s: --load-cpus: %w", cmd, err)
	}
	if err := checkPriority(f); err != nil {
		return nil, pin.Set{}, usageErr("%s: %w", cmd, err)
	}
	return u, set, nil
}

// startStack brings the scenario's stack up for one command (run, sweep,
// soak: side names it): the cpus planned from the flags, the scenario's
// stack.prepare, the stack pinned and the target resolved. The caller tears
// it down (stackRun.down) on every return.
func startStack(ctx context.Context, cmd string, sc *scenario.Scenario, files []string, target, out string, f stackFlags, stderr io.Writer) (*stackRun, error) {
	plan, err := planCPUs(f)
	if err != nil {
		return nil, usageErr("%s: %w", cmd, err)
	}
	prep, prepDir := stackPrepare(sc)
	sr, err := bringUp(ctx, stackSpec{files: files, target: target, prepare: prep, prepareDir: prepDir, out: out, side: cmd}, plan, f, stderr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	return sr, nil
}

// planCPUs is pin.NewPlan of the stack flags, and checkPriority.
func planCPUs(f stackFlags) (pin.Plan, error) {
	p, err := pin.NewPlan(f.stackCPUs, f.loadCPUs, f.allowOverlap)
	if err != nil {
		return p, err
	}
	return p, checkPriority(f)
}

// checkPriority refuses --load-priority rt where the system would not
// permit it, before anything starts.
func checkPriority(f stackFlags) error {
	if f.priority != pin.ModeRealtime {
		return nil
	}
	if err := pin.CheckRaise(); err != nil {
		return fmt.Errorf("--load-priority rt: %w", err)
	}
	return nil
}

// raiseGenerator applies --load-priority (mode) to a load about to run
// with topology t (pin.Want: raised when loadgate pinned a stack and the
// generator apart, or when rt says so) and states in t the generator's
// scheduling as read back, with why it was not raised. lower ends the
// raise and returns why its guard lowered the generator during the load
// ("" when it did not, or when nothing was raised); it may be called
// again. Under rt a raise that fails is an error; under auto it is the
// reason stated.
func raiseGenerator(mode pin.Mode, t *result.Topology) (lower func() string, err error) {
	if mode == "" {
		mode = pin.ModeAuto
	}
	lower = func() string { return "" }
	raise, why := pin.Want(mode, t.Pinned, t.StackCPUs != "")
	if raise {
		r, err := pin.Raise()
		switch {
		case err == nil:
			lower = func() string {
				dropped := r.Dropped()
				r.Lower()
				return dropped
			}
		case mode == pin.ModeRealtime:
			return nil, fmt.Errorf("--load-priority rt: %w", err)
		default:
			why = err.Error()
		}
	}
	sched, err := pin.ReadScheduling()
	if err != nil {
		sched, why = "", "not read back: "+err.Error()
	}
	t.LoadScheduling, t.LoadSchedulingWhy = sched, why
	return lower, nil
}

// composeFiles are --compose files when given, else the scenario's.
func composeFiles(sc *scenario.Scenario, f stackFlags) []string {
	if len(f.compose) > 0 {
		return f.compose
	}
	if sc.Stack != nil {
		return sc.Stack.Compose
	}
	return nil
}

// stackRun is a stack brought up for one run (compose's Run), as this
// command's files use it.
type stackRun struct {
	run      *compose.Run
	stack    *compose.Stack // run.Stack
	addr     string         // run.Addr
	statsTee io.Writer      // when set before sample, also gets every stats.jsonl line (soak)
}

// stackSpec is a stack to bring up: the same for run, up and each side of
// a gate.
type stackSpec struct {
	files      []string // compose files
	target     string   // service:port
	prepare    []string // the scenario's stack.prepare (argv); none when empty
	prepareDir string   // where it runs: the scenario file's directory (in a gate, in the side's checkout)
	out        string   // the services' logs go here at teardown ("" for none)
	runID      string   // "" for a new one
	side       string   // the project's suffix: run, up, base, head
}

// stackPrepare is the scenario's stack.prepare and where it runs. It runs
// whenever the scenario has one — whether the compose files come from the
// scenario or from --compose — in run, up and (in each side's checkout)
// gate alike.
func stackPrepare(sc *scenario.Scenario) ([]string, string) {
	if sc.Stack == nil || len(sc.Stack.Prepare) == 0 {
		return nil, ""
	}
	return sc.Stack.Prepare, sc.Stack.Dir
}

// bringUp is compose.Start with the flags, the prepare command run without
// the runner's credentials: a refused target is a usage error (exit 2),
// anything else that kept the stack from coming up unusable (exit 3).
//
// plan comes from planCPUs, called once per process: after the generator is
// pinned, this process's CPUs are the load set only.
func bringUp(ctx context.Context, sp stackSpec, plan pin.Plan, f stackFlags, stderr io.Writer) (*stackRun, error) {
	r, err := compose.Start(ctx, compose.Spec{
		Files: sp.files, Target: sp.target,
		Prepare: sp.prepare, PrepareDir: sp.prepareDir, PrepareEnv: action.EnvWithoutRunnerSecrets(os.Environ()), // no GitHub token for the checkout's own script
		OutDir: sp.out, RunID: sp.runID, Side: sp.side, Plan: plan, ReadyTimeout: f.readyTimeout, Log: stderr,
		OverrideText: report.OverrideText,
	})
	switch {
	case errors.Is(err, compose.ErrTargetRefused):
		return nil, usageErr("%w", err)
	case err != nil:
		return nil, unusable(err)
	}
	return &stackRun{run: r, stack: r.Stack, addr: r.Addr}, nil
}

// sample is Run.Sample into out/stats.jsonl (and statsTee).
func (sr *stackRun) sample(ctx context.Context, out string, every, warmup time.Duration) error {
	return sr.run.Sample(ctx, out, every, warmup, sr.statsTee)
}

// started is Run.Started; nil on a nil stackRun (a plain run).
func (sr *stackRun) started() func(time.Time) {
	if sr == nil {
		return nil
	}
	return sr.run.Started()
}

// about is what a result of a load on this stack states that is known
// before the load: the stack's topology, and the target as target
// (host:port).
func (sr *stackRun) about(target string) about {
	return about{topology: sr.run.Topology(), targetLabel: target + " (" + sr.addr + ")"}
}

func (sr *stackRun) samples() (*result.Stack, error)       { return sr.run.Samples() }
func (sr *stackRun) finish(res *result.Result) error       { return sr.run.Finish(res) }
func (sr *stackRun) down(io.Writer) (time.Duration, error) { return sr.run.Down() }
