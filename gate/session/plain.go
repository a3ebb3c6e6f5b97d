package session

import (
	"context"
	"io"
	"time"

	"github.com/loadgate/loadgate/compose"
	"github.com/loadgate/loadgate/gate/counted"
	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/procstat"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
)

// PlainTopology is a plain run's topology, the generator pinned to loadSet (empty: not).
func PlainTopology(loadSet pin.Set) result.Topology {
	t := result.Topology{TargetPath: "loopback"}
	t.Pinned, t.PinnedReason = pin.Generator(loadSet)
	return t
}

// Plain is a plain run's samplers (--watch-pid and, with Self, the generator). One goroutine
// uses it; the engine calls Sample's listener (procstat.Watch makes that safe).
type Plain struct {
	PIDs    []int
	Self    bool               // sample the generator too (a soak)
	Every   time.Duration      // the sampling interval
	Tee     io.Writer          // when set, also gets every stats.jsonl line (a soak's collector)
	Watched []procstat.Summary // set by the last Sample's stop
}

// Sample starts sampling into dir/stats.jsonl (nothing to sample: no file).
func (p *Plain) Sample(ctx context.Context, dir string, warmup time.Duration) (start func(t0 time.Time), stop func(*result.Result) error, err error) {
	if len(p.PIDs) == 0 && !p.Self {
		return nil, func(*result.Result) error { return nil }, nil
	}
	stats, err := compose.CreateStats(dir, p.Tee)
	if err != nil {
		return nil, nil, err
	}
	w := procstat.NewWatch(ctx, procstat.Reader{}, procstat.WatchOptions{PIDs: p.PIDs, Self: p.Self, Every: p.Every, Warmup: warmup, Emit: stats.Emit})
	stop = func(res *result.Result) error {
		pids, self := w.Stop()
		p.Watched = pids
		st := &result.Stack{Services: services(pids)}
		if self != nil {
			g := compose.GeneratorService(*self)
			st.Generator = &g
		}
		res.Complete(result.After{Stack: st})
		return stats.Close()
	}
	return w.Started(), stop, nil
}

// Down has nothing to tear down.
func (p *Plain) Down() (time.Duration, error) { return 0, nil }

func services(pids []procstat.Summary) []result.Service {
	var out []result.Service
	for _, sum := range pids {
		name := procstat.ServiceName(sum.PID, sum.Name)
		if sum.Exited {
			name += " (exited during the run)"
		}
		out = append(out, result.Service{Name: name, CPUAvgPct: sum.CPUAvgPct, CPUPeakPct: sum.CPUPeakPct, MemPeakBytes: sum.MemPeakBytes, Samples: sum.Samples})
	}
	return out
}

// CheckPIDs refuses a watched pid that names no process (ErrUsage).
func CheckPIDs(cmd string, pids []int) error {
	for _, pid := range pids {
		if _, err := (procstat.Reader{}).Read(pid); err != nil {
			return Usagef("%s: --watch-pid %d: %w", cmd, pid, err)
		}
	}
	return nil
}

// Count is a plain run's counting: each count not measured (counted.Plain).
func (p *Plain) Count(ctx context.Context, sc *scenario.Scenario) (Counter, error) {
	return &counter{ctx: ctx, c: counted.Plain(sc)}, nil
}

// Inject refuses a scenario with faults (ErrUsage): a plain run has no stack.
func (p *Plain) Inject(ctx context.Context, sc *scenario.Scenario) (*Faults, error) {
	if sc.HasFaults() {
		return nil, Usagef("run: the scenario injects faults (phase inject:), which act on its stack; with --target URL no stack is started, so they could not be injected")
	}
	return &Faults{ctx: ctx, cancel: func(error) {}}, nil
}
