package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/stack"
	"github.com/loadgate/loadgate/internal/outfile"
)

// stackFlags are the flags of every command that brings a stack up.
type stackFlags struct {
	compose      multiFlag
	stackCPUs    string
	loadCPUs     string
	allowOverlap bool
	readyTimeout time.Duration
	statsEvery   time.Duration
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
		return u, pin.Set{}, nil
	}
	set, err := pin.Parse(f.loadCPUs)
	if err != nil {
		return nil, pin.Set{}, usageErr("%s: --load-cpus %q: %w", cmd, f.loadCPUs, err)
	}
	if err := pin.PinProcess(set); err != nil {
		return nil, pin.Set{}, usageErr("%s: --load-cpus: %w", cmd, err)
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

// planCPUs is pin.NewPlan of the stack flags.
func planCPUs(f stackFlags) (pin.Plan, error) {
	return pin.NewPlan(f.stackCPUs, f.loadCPUs, f.allowOverlap)
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

// stackRun is a stack brought up for one run: up, target, sampler, down.
type stackRun struct {
	stack     *stack.Stack
	plan      pin.Plan
	addr      string
	path      string
	startStat func(t0 time.Time) // arms the samplers (sample; started)
	stopStat  func() ([]result.Service, *result.Service)
	statsF    *os.File
	statsW    *bufio.Writer
	upTook    time.Duration
	statsTee  io.Writer // when set before sample, also gets every stats.jsonl line (soak)
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

// bringUp runs the stack's prepare command, then upStack: the one way a
// stack comes up, for every command.
func bringUp(ctx context.Context, sp stackSpec, plan pin.Plan, f stackFlags, stderr io.Writer) (*stackRun, error) {
	if len(sp.prepare) > 0 {
		if err := prepare(ctx, sp.prepare, sp.prepareDir, stderr); err != nil {
			return nil, unusable(fmt.Errorf("stack.prepare: %w", err))
		}
	}
	return upStack(ctx, sp.files, sp.target, sp.out, sp.runID, sp.side, plan, f, stderr)
}

// upStack sweeps leftovers of earlier runs, pins the generator, brings the
// stack up on its cpuset and resolves the target service:port.
//
// plan comes from planCPUs, called once per process: after the generator is
// pinned, this process's CPUs are the load set only.
func upStack(ctx context.Context, files []string, target, out, runID, side string, plan pin.Plan, f stackFlags, stderr io.Writer) (*stackRun, error) {
	if err := stack.Available(ctx); err != nil {
		return nil, unusable(fmt.Errorf("no Docker engine: %w", err))
	}
	if r, err := stack.Sweep(ctx); err != nil {
		fmt.Fprintf(stderr, "loadgate: warning: sweeping leftovers of earlier runs: %v\n", err)
	} else if r.Total() > 0 {
		fmt.Fprintf(stderr, "loadgate: removed what earlier runs left: %s\n", r)
	}
	if err := pin.PinProcess(plan.Load); err != nil {
		fmt.Fprintf(stderr, "loadgate: warning: the generator could not be pinned to %s: %v\n", plan.Load, err)
	}
	t0 := time.Now()
	st, err := stack.Up(ctx, stack.Options{
		Files: files, RunID: runID, Side: side, StackCPUs: plan.Stack, OutDir: out,
		ReadyTimeout: f.readyTimeout, Log: stderr,
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, unusable(fmt.Errorf("interrupted while the stack came up (torn down): %w", err))
		}
		return nil, unusable(fmt.Errorf("stack did not come up: %w", err))
	}
	sr := &stackRun{stack: st, plan: plan, upTook: time.Since(t0)}
	sr.addr, sr.path, err = st.Target(ctx, target)
	if err != nil {
		sr.down(stderr)
		if errors.Is(err, stack.ErrTargetRefused) {
			return nil, usageErr("%w", err)
		}
		return nil, unusable(err)
	}
	return sr, nil
}

// sample opens OUT/stats.jsonl for the stack's stats sampler and the
// generator's own; they start at the schedule's t0 + warmup (rule 7: the
// warm-up is excluded from every number), armed by the load.Config.Started
// listener that started returns — the engine's own clock, as the counted
// reads use, so nothing of the set-up before the load is sampled.
//
// stopStat may run concurrently with the listener and the timer's
// callback: once it has begun (stopped, under mu) no sampler is started
// any more, so every sampler started is one stopStat ends before the file
// is closed.
func (sr *stackRun) sample(ctx context.Context, out string, every, warmup time.Duration) error {
	f, err := outfile.Create(filepath.Join(out, "stats.jsonl"))
	if err != nil {
		return err
	}
	sr.statsF, sr.statsW = f, bufio.NewWriter(f)
	var sink io.Writer = sr.statsW
	if sr.statsTee != nil {
		sink = io.MultiWriter(sr.statsW, sr.statsTee)
	}
	w := &lockedWriter{w: sink}
	var (
		mu        sync.Mutex
		stopped   bool
		timer     *time.Timer
		stopStack func() []result.Service
		stopSelf  func() result.Service
	)
	begin := func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		sctx := context.WithoutCancel(ctx)
		stopStack = sr.stack.Sample(sctx, every, w)
		stopSelf = sampleSelf(sctx, every, sr.plan.Load.Len(), w)
	}
	sr.startStat = func(t0 time.Time) {
		mu.Lock()
		defer mu.Unlock()
		if stopped || timer != nil {
			return
		}
		timer = time.AfterFunc(max(time.Until(t0.Add(warmup)), 0), begin)
	}
	sr.stopStat = func() ([]result.Service, *result.Service) {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		if timer != nil {
			timer.Stop()
		}
		if stopStack == nil {
			return nil, nil
		}
		gen := stopSelf()
		return stopStack(), &gen
	}
	return nil
}

// started is the load.Config.Started listener that arms sample's
// samplers for t0 + warmup; nil before sample (nothing to arm).
func (sr *stackRun) started() func(time.Time) {
	if sr == nil {
		return nil
	}
	return sr.startStat
}

// lockedWriter serializes the samplers' lines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// sampleSelf samples the generator (pin.SampleSelf) into stats.jsonl
// lines of service "loadgate".
func sampleSelf(ctx context.Context, every time.Duration, cpus int, w io.Writer) (stop func() result.Service) {
	enc := json.NewEncoder(w)
	pid := fmt.Sprintf("pid %d", os.Getpid())
	stopSelf := pin.SampleSelf(ctx, every, cpus, func(s pin.SelfSample) {
		_ = enc.Encode(stack.Sample{Time: s.Time, Service: "loadgate", Container: pid, IntervalS: s.Interval.Seconds(),
			CPUPct: s.CPUPct, CPUPctOfSet: s.CPUPctOfSet, MemBytes: s.MemBytes, CPUUsageNS: uint64(s.CPUTime)})
	})
	return func() result.Service {
		sum := stopSelf()
		return result.Service{Name: "loadgate (generator)", Samples: sum.Samples, CPUAvgPct: sum.CPUAvgPct, CPUPeakPct: sum.CPUPeakPct, MemPeakBytes: sum.MemPeakBytes}
	}
}

// about is what a result of a load on this stack states that is known
// before the load: the stack's cpus, the pinning as verified after Up, the
// target path, and the target as target (host:port).
func (sr *stackRun) about(target string) about {
	var t result.Topology
	stackCPUs, pinned, reason, overridden := sr.stack.Topology()
	t.StackCPUs = stackCPUs
	t.CPUsetOverridden = overridden
	t.TargetPath = sr.path
	t.Pinned, t.PinnedReason = sr.plan.Topology(pinned, reason)
	return about{topology: t, targetLabel: target + " (" + sr.addr + ")"}
}

// samples stops the sampler: the stack's figures over the measured phases
// (result.After.Stack).
func (sr *stackRun) samples() (*result.Stack, error) {
	var services []result.Service
	var gen *result.Service
	if sr.stopStat != nil {
		services, gen = sr.stopStat()
	}
	var err error
	if sr.statsF != nil {
		err = errors.Join(sr.statsW.Flush(), sr.statsF.Close())
	}
	return &result.Stack{Services: services, Generator: gen}, err
}

// finish stops the sampler and completes res with the stack's figures
// (Result.Complete).
func (sr *stackRun) finish(res *result.Result) error {
	st, err := sr.samples()
	res.Complete(result.After{Stack: st})
	return err
}

// down tears the stack down with a fresh context (the run's may be
// cancelled by a signal) and says how long it took.
func (sr *stackRun) down(stderr io.Writer) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	t0 := time.Now()
	err := sr.stack.Down(ctx)
	sr.stack.Close()
	return time.Since(t0), err
}

// prepare runs a stack's prepare command in dir.
func prepare(ctx context.Context, argv []string, dir string, stderr io.Writer) error {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	if strings.HasPrefix(argv[0], "./") {
		cmd.Path = filepath.Join(dir, argv[0])
	}
	cmd.Dir = dir
	cmd.Env = action.EnvWithoutRunnerSecrets(os.Environ()) // no GitHub token for the checkout's own script
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s (in %s): %w", strings.Join(argv, " "), dir, err)
	}
	return nil
}
