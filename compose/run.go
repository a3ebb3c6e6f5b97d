package compose

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/procstat"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/internal/sandbox"
)

// Spec is a stack to bring up for one run, for every command and side.
type Spec struct {
	Files  []string // compose files
	Target string   // the target service:port
	// Prepare is stack.prepare's argv, run in PrepareDir with PrepareEnv as its
	// whole environment; boxed (internal/sandbox) when PrepareBoxed, hiding PrepareHide,
	// where only PrepareRoot (the side's checkout, "" for PrepareDir) is writable.
	Prepare      []string
	PrepareDir   string
	PrepareRoot  string
	PrepareEnv   []string
	PrepareBoxed bool
	PrepareHide  []string
	OutDir       string        // the services' logs go here at teardown ("" for none)
	RunID        string        // "" for a new one
	Side         string        // the project's suffix: run, up, sweep, soak, base, head
	Plan         pin.Plan      // the stack's and the generator's cpus (pin.NewPlan, once per process)
	ReadyTimeout time.Duration // how long the stack may take to be healthy
	Log          io.Writer     // progress and warnings
	Root         string        // the side's checkout (Options.Root); "" for the checkout holding the first file
	Allow        []string      // scenario.HostKeys accepted (the scenario's stack.allow; in a gate, base's)
	Secrets      []string      // values scrubbed from the saved logs
}

// Run is a stack brought up for one run (Start), sampled (Sample) and torn down
// (Down), by one goroutine in that order; Started's listener may race with Samples.
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

// Start prepares, sweeps leftovers, pins the generator, brings the stack up and
// resolves the target. An error is a *PrepareError, ErrTargetRefused or Up's; in
// the latter two the stack is torn down.
func Start(ctx context.Context, sp Spec) (*Run, error) {
	log := sp.Log
	if log == nil {
		log = io.Discard
	}
	if len(sp.Prepare) > 0 {
		if err := prepare(ctx, sp, log); err != nil {
			return nil, &PrepareError{Err: err}
		}
	}
	opt := Options{
		Files: sp.Files, Root: sp.Root, RunID: sp.RunID, Side: sp.Side, StackCPUs: sp.Plan.Stack, OutDir: sp.OutDir,
		ReadyTimeout: sp.ReadyTimeout, Log: log, Allow: sp.Allow, Secrets: sp.Secrets,
	}
	// Refused before the engine is asked anything: a refusal is the file's, whatever the engine.
	chk := opt
	chk.Log = nil // Up logs the overrides
	if _, err := Check(ctx, chk); err != nil {
		return nil, err
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
	st, err := Up(ctx, opt)
	if err != nil {
		if IsRefused(err) {
			return nil, err // nothing was built
		}
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

func prepare(ctx context.Context, sp Spec, log io.Writer) error {
	argv, dir, env := sp.Prepare, sp.PrepareDir, sp.PrepareEnv
	if env == nil {
		env = []string{} // never this process's whole environment by default
	}
	var err error
	if sp.PrepareBoxed {
		err = sandbox.Run(ctx, sandbox.Spec{Argv: argv, Dir: dir, Root: sp.PrepareRoot, Env: env, Hide: sp.PrepareHide}, log)
		if errors.Is(err, sandbox.ErrUnavailable) {
			return fmt.Errorf("%w: %w", ErrNoBox, err)
		}
	} else {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		if strings.HasPrefix(argv[0], "./") {
			cmd.Path = filepath.Join(dir, argv[0])
		}
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, log, log
		err = cmd.Run()
	}
	if err != nil {
		return fmt.Errorf("%s (in %s): %w", strings.Join(argv, " "), dir, err)
	}
	return nil
}

// ErrNoBox: this system refused a user namespace to box stack.prepare (Ubuntu
// 24.04 unless kernel.apparmor_restrict_unprivileged_userns is 0).
var ErrNoBox = errors.New("stack.prepare runs boxed in a user namespace, and this system refused one: " +
	"allow them (sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0) or build in the compose file's build:")

// Sample opens out/stats.jsonl for the stack's and the generator's samplers,
// which Started's listener arms at t0 + warmup so that set-up is never sampled.
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

// Started is the load.Config.Started listener that arms Sample's samplers.
func (r *Run) Started() func(time.Time) {
	if r == nil {
		return nil
	}
	return r.startStat
}

// Topology is what a result states of the stack: cpus, pinning, target path.
func (r *Run) Topology() result.Topology {
	var t result.Topology
	stackCPUs, pinned, reason, overridden := r.Stack.Topology()
	t.StackCPUs = stackCPUs
	t.CPUsetOverridden = overridden
	t.TargetPath = r.Path
	t.Pinned, t.PinnedReason = r.Plan.Topology(pinned, reason)
	if pinned && overridden {
		t.Overrides = r.Stack.Overrides() // the pinned stack's cpuset is not the file's: say what changed
	} else {
		for _, o := range r.Stack.Overrides() {
			if o.Kind == result.OverrideResource { // resources are loadgate's: always said
				t.Overrides = append(t.Overrides, o)
			}
		}
	}
	return t
}

// Samples stops the samplers and returns the stack's figures.
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

func (r *Run) Finish(res *result.Result) error {
	st, err := r.Samples()
	res.Complete(result.After{Stack: st})
	return err
}

const DownTimeout = 3 * time.Minute

// Down tears the stack down on a fresh context (the run's may be cancelled).
func (r *Run) Down() (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), DownTimeout)
	defer cancel()
	t0 := time.Now()
	err := r.Stack.Down(ctx)
	r.Stack.Close()
	return time.Since(t0), err
}
