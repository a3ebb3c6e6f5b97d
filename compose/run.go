package compose

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/procstat"
	"github.com/loadgate/loadgate/gate/result"
)

// Spec is a stack to bring up for one run: the same for run, up, sweep,
// soak and each side of a gate.
type Spec struct {
	Files  []string // compose files
	Target string   // the target service:port
	// Prepare is the scenario's stack.prepare (argv; none when empty),
	// run in PrepareDir (the scenario file's directory; in a gate, in the
	// side's checkout) with PrepareEnv as its whole environment: the
	// caller's, without the runner's credentials.
	Prepare    []string
	PrepareDir string
	PrepareEnv []string
	OutDir     string   // the services' logs go here at teardown ("" for none)
	RunID      string   // "" for a new one
	Side       string   // the project's suffix: run, up, sweep, soak, base, head
	Plan       pin.Plan // the stack's and the generator's cpus (pin.NewPlan, once per process)
	// ReadyTimeout bounds how long the stack may take to be healthy.
	ReadyTimeout time.Duration
	Log          io.Writer // progress and warnings
	// OverrideText words a change made to a service for Log (nil: none).
	OverrideText func(result.Override) string
}

// Run is a stack brought up for one run (Start): its target resolved, its
// stats and the generator's own sampled from the load's warm-up on
// (Sample), and torn down (Down).
//
// A Run belongs to the run that started it: Sample, Samples, Finish and
// Down are called by that goroutine, in that order; the listener Started
// returns is called by the engine, and may race with Samples (procstat's
// Watch makes that safe).
type Run struct {
	Stack  *Stack
	Plan   pin.Plan
	Addr   string        // the target's address (host:port)
	Path   string        // how the target is reached (the container's address, a published port)
	UpTook time.Duration // how long Up took

	startStat func(t0 time.Time) // arms the samplers (Sample; Started)
	stopStat  func() ([]result.Service, *result.Service)
	stats     *StatsFile
}

// PrepareError is a stack.prepare that failed: nothing was brought up.
type PrepareError struct{ Err error }

func (e *PrepareError) Error() string { return "stack.prepare: " + e.Err.Error() }
func (e *PrepareError) Unwrap() error { return e.Err }

// Start is the one way a stack comes up, for every command: the spec's
// prepare command, then the leftovers of earlier runs swept, the generator
// pinned to the plan's load cpus, the stack up on its cpuset and the
// target resolved. An error is a *PrepareError, a refused target
// (ErrTargetRefused: the stack is torn down), or a stack that could not
// come up (torn down); it says which, and why.
func Start(ctx context.Context, sp Spec) (*Run, error) {
	log := sp.Log
	if log == nil {
		log = io.Discard
	}
	if len(sp.Prepare) > 0 {
		if err := prepare(ctx, sp.Prepare, sp.PrepareDir, sp.PrepareEnv, log); err != nil {
			return nil, &PrepareError{Err: err}
		}
	}
	if err := Available(ctx); err != nil {
		return nil, fmt.Errorf("no Docker engine: %w", err)
	}
	if r, err := Sweep(ctx); err != nil {
		fmt.Fprintf(log, "loadgate: warning: sweeping leftovers of earlier runs: %v\n", err)
	} else if r.Total() > 0 {
		fmt.Fprintf(log, "loadgate: removed what earlier runs left: %s\n", r)
	}
	if err := pin.PinProcess(sp.Plan.Load); err != nil {
		fmt.Fprintf(log, "loadgate: warning: the generator could not be pinned to %s: %v\n", sp.Plan.Load, err)
	}
	t0 := time.Now()
	st, err := Up(ctx, Options{
		Files: sp.Files, RunID: sp.RunID, Side: sp.Side, StackCPUs: sp.Plan.Stack, OutDir: sp.OutDir,
		ReadyTimeout: sp.ReadyTimeout, Log: log, OverrideText: sp.OverrideText,
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("interrupted while the stack came up (torn down): %w", err)
		}
		return nil, fmt.Errorf("stack did not come up: %w", err)
	}
	r := &Run{Stack: st, Plan: sp.Plan, UpTook: time.Since(t0)}
	r.Addr, r.Path, err = st.Target(ctx, sp.Target)
	if err != nil {
		r.Down()
		return nil, err
	}
	return r, nil
}

// prepare runs a stack's prepare command in dir with env.
func prepare(ctx context.Context, argv []string, dir string, env []string, log io.Writer) error {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	if strings.HasPrefix(argv[0], "./") {
		cmd.Path = filepath.Join(dir, argv[0])
	}
	cmd.Dir = dir
	cmd.Env = env
	if env == nil {
		cmd.Env = []string{} // never this process's whole environment by default
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s (in %s): %w", strings.Join(argv, " "), dir, err)
	}
	return nil
}

// Sample opens out/stats.jsonl for the stack's stats sampler and the
// generator's own (tee, when not nil, also gets every line); they start at
// the schedule's t0 + warmup (rule 7: the warm-up is excluded from every
// number), armed by the load.Config.Started listener that Started returns
// — the engine's own clock, as the counted reads use, so nothing of the
// set-up before the load is sampled.
//
// The generator's sampler reads this whole process (procstat's Self):
// where one process runs two loads at once — a duet gate's two sides, each
// with its own Run — each side's generator figure is both loads' together,
// and the gate's results say so (gate/rounds, result.DuetGeneratorNotMeasured).
//
// Samples may run concurrently with the listener and the timer's callback
// (procstat.Watch): every sampler started is one it ends before the file
// is closed.
func (r *Run) Sample(ctx context.Context, out string, every, warmup time.Duration, tee io.Writer) error {
	stats, err := CreateStats(out, tee)
	if err != nil {
		return err
	}
	var services []result.Service // set by Stop, through Also's stop
	w := procstat.NewWatch(ctx, procstat.Reader{}, procstat.WatchOptions{Self: true, CPUs: r.Plan.Load.Len(), Every: every, Warmup: warmup, Emit: stats.Emit,
		Also: func(ctx context.Context) func() {
			stop := r.Stack.Sample(ctx, every, stats.Writer())
			return func() { services = stop() }
		}})
	r.stats, r.startStat = stats, w.Started()
	r.stopStat = func() ([]result.Service, *result.Service) {
		_, self := w.Stop()
		if self == nil {
			return nil, nil // the load ended before its warm-up did
		}
		gen := GeneratorService(*self)
		return services, &gen
	}
	return nil
}

// Started is the load.Config.Started listener that arms Sample's samplers
// for t0 + warmup; nil before Sample, or on a nil Run (nothing to arm).
func (r *Run) Started() func(time.Time) {
	if r == nil {
		return nil
	}
	return r.startStat
}

// Topology is what a result of a load on this stack states of it, known
// before the load: the stack's cpus, the pinning as verified after Up, the
// target path.
func (r *Run) Topology() result.Topology {
	var t result.Topology
	stackCPUs, pinned, reason, overridden := r.Stack.Topology()
	t.StackCPUs = stackCPUs
	t.CPUsetOverridden = overridden
	t.TargetPath = r.Path
	t.Pinned, t.PinnedReason = r.Plan.Topology(pinned, reason)
	if pinned && overridden {
		t.Overrides = r.Stack.Overrides() // the pinned stack's cpuset is not the file's: say what changed
	}
	return t
}

// Samples stops the samplers: the stack's figures over the measured
// phases (result.After.Stack), and the stats file's error.
func (r *Run) Samples() (*result.Stack, error) {
	var services []result.Service
	var gen *result.Service
	if r.stopStat != nil {
		services, gen = r.stopStat()
	}
	var err error
	if r.stats != nil {
		err = r.stats.Close()
		r.stats = nil
	}
	return &result.Stack{Services: services, Generator: gen}, err
}

// Finish stops the samplers and completes res with the stack's figures
// (Result.Complete).
func (r *Run) Finish(res *result.Result) error {
	st, err := r.Samples()
	res.Complete(result.After{Stack: st})
	return err
}

// DownTimeout bounds the teardown.
const DownTimeout = 3 * time.Minute

// Down tears the stack down with a fresh context bounded by DownTimeout
// (the run's may be cancelled by a signal) and says how long it took.
func (r *Run) Down() (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), DownTimeout)
	defer cancel()
	t0 := time.Now()
	err := r.Stack.Down(ctx)
	r.Stack.Close()
	return time.Since(t0), err
}
