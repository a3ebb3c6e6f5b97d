package session

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"

	"golang.org/x/sys/unix"

	"github.com/loadgate/loadgate/gate/load"
	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/procstat"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/internal/outfile"
)

// Engine is the Runner on gate/load. Set its fields before the first Run;
// Run is then safe for concurrent use.
type Engine struct {
	Insecure   bool       // skip TLS certificate verification (self-signed loopback servers)
	Priority   pin.Mode   // --load-priority ("" : auto)
	CPUProfile string     // write the generator's CPU profile here ("": none)
	Starting   func(Spec) // when set, told each load about to start
	// Progress, when set, makes a progress display: update per snapshot, done after.
	Progress func() (update func(load.Progress), done func())
	Warn     func(format string, a ...any) // told a figure that was lost; nil: dropped
}

// Run sends spec's load: refused before it started is ErrUsage, else ErrUnusable.
func (e *Engine) Run(ctx context.Context, spec Spec) (*result.Result, error) {
	snapF, err := outfile.Create(filepath.Join(spec.Dir, "snapshots.jsonl"))
	if err != nil {
		return nil, Usagef("run: %w", err)
	}
	snapW := bufio.NewWriter(snapF)
	topo := withGenerator(spec.Topology)
	sched, err := pin.ForLoad(e.Priority, topo.Pinned, topo.StackCPUs != "")
	if err != nil {
		snapF.Close()
		return nil, Usagef("run: %w", err)
	}
	defer sched.Lower() // every return, a panic's too (idempotent)
	topo.LoadScheduling, topo.LoadSchedulingWhy = sched.Scheduling, sched.Why
	cfg := e.config(spec, topo)
	cfg.Snapshots = snapW
	done := e.progress(&cfg, spec)
	if e.Starting != nil {
		e.Starting(spec)
	}
	stopProfile, err := startCPUProfile(e.CPUProfile)
	if err != nil {
		done()
		snapF.Close()
		return nil, Usagef("run: --cpuprofile: %w", err)
	}
	res, err := load.Run(ctx, cfg)
	if dropped := sched.Lower(); dropped != "" && res != nil {
		res.Topology.LoadSchedulingWhy = dropped // raised, and lowered by its guard during the load
	}
	stopProfile()
	done()
	if ferr := errors.Join(snapW.Flush(), snapF.Close()); ferr != nil && err == nil && e.Warn != nil {
		e.Warn("snapshots.jsonl: %v", ferr)
	}
	switch {
	case errors.Is(err, load.ErrOperation), errors.Is(err, load.ErrTargetRefused):
		return nil, Usagef("run: %w", err) // refused before any load: exit 2
	case err != nil:
		return nil, Unusablef("run: %w", err)
	}
	return res, nil
}

// config is spec as load.Config, with all the result knows beforehand.
func (e *Engine) config(spec Spec, topo result.Topology) load.Config {
	return load.Config{
		Scenario: spec.Scenario,
		Target:   load.Target{URL: spec.Target, Insecure: e.Insecure},
		Env:      spec.Env,
		Faults:   spec.Faults,
		Started:  hooks(spec.Started...),
		StartAt:  spec.StartAt,
		Machine:  Machine(), Topology: topo, TargetLabel: spec.TargetLabel,
		Side: spec.Side, Commit: spec.Commit, Round: spec.Round,
	}
}

// progress sets cfg's progress listener and returns what ends the display.
func (e *Engine) progress(cfg *load.Config, spec Spec) (done func()) {
	update, done := func(load.Progress) {}, func() {}
	if e.Progress != nil && !spec.NoProgress {
		update, done = e.Progress()
	}
	cfg.Progress = update
	if also := spec.Progress; also != nil {
		cfg.Progress = func(p load.Progress) { update(p); also(p) }
	}
	return done
}

func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := outfile.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// Machine is where the generator runs (rule 12), for load.Config.
func Machine() result.Machine {
	host, _ := os.Hostname()
	m := result.Machine{Host: host, CPUModel: procstat.Reader{}.CPUModel(), CPUs: runtime.NumCPU(), Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	return m
}

// withGenerator is t with the generator's GOMAXPROCS and affinity read back.
func withGenerator(t result.Topology) result.Topology {
	t.GOMAXPROCS = runtime.GOMAXPROCS(0)
	if set, err := pin.ReadBack(); err == nil {
		t.LoadCPUs = set.String()
	}
	return t
}
