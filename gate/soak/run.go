package soak

import (
	"context"
	"fmt"
	"time"

	"github.com/loadgate/loadgate/gate/load"
	"github.com/loadgate/loadgate/gate/procstat"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/session"
)

// MaxHours bounds a soak's duration before any phase is built (the cell
// check bounds it further: scenario.MaxCells).
const MaxHours = 10000

// Scenario is base with its phases replaced by the soak's: the judged
// phase's constant rate held for d, as one phase per hour of the soak's
// clock (hour-1, hour-2, ...; the last one may be short), so that the
// request side reads per hour. The warm-up, mix, workloads and ceilings are
// base's; the ceilings are checked again (refuse, never clamp) and the hash
// is the soak's own. A scenario that injects faults is refused: a soak
// holds one steady load, and a fault would read as memory growth.
func Scenario(base *scenario.Scenario, d time.Duration) (*scenario.Scenario, error) {
	if base.HasFaults() {
		return nil, fmt.Errorf("%s: the scenario injects faults: a soak holds one steady load", base.File)
	}
	judged, ok := base.JudgedPhase()
	if !ok {
		return nil, fmt.Errorf("%s: no judged phase to take the soak's rate from", base.File)
	}
	if judged.Pattern != scenario.Constant {
		return nil, fmt.Errorf("%s:%d: phase %s is a %s; a soak holds one steady rate: judge a constant phase (rate: R)", base.File, judged.Line, judged.Name, judged.Pattern)
	}
	if d > MaxHours*time.Hour {
		return nil, fmt.Errorf("--duration %s: more than %d hours", d, MaxHours)
	}
	sc := *base
	sc.Phases = nil
	for i, left := 1, d; left > 0; i++ {
		p := judged
		p.Name = fmt.Sprintf("hour-%d", i)
		p.Duration = min(left, time.Hour)
		p.Judged = false                // a soak judges memory, not the request side's thresholds
		p.Inject, p.Recovery = nil, nil // a soak injects nothing
		sc.Phases = append(sc.Phases, p)
		left -= p.Duration
	}
	if err := sc.CheckCeilings(); err != nil {
		return nil, err
	}
	// One phase per hour: the engine keeps a cell (up to two ~184 KiB
	// histograms) per phase and workload, which Parse bounded for the
	// scenario as written, not for these phases.
	if err := sc.CheckCells(); err != nil {
		return nil, fmt.Errorf("--duration %s is %d phases of an hour: %w", d, len(sc.Phases), err)
	}
	sc.Hash = sc.ComputeHash()
	return &sc, nil
}

// Usable says whether the soak's request side can be trusted: what the
// run's result says of itself and its record invariants (result.Check,
// design rule 3), and why not, in words.
func Usable(res *result.Result) (bool, []string) {
	var why []string
	if !res.Usable {
		why = append(why, res.Unusable...)
		if len(res.Unusable) == 0 {
			why = append(why, "the run's result is marked unusable")
		}
	}
	why = append(why, res.Check()...)
	return len(why) == 0, why
}

// Sampler samples a soak's processes — a stack's services and the
// generator, or (plain mode) the --watch-pid processes and the generator —
// writing their stats.jsonl lines to the Collector it was made with.
type Sampler interface {
	// Start prepares the sampling; it begins warmup after the t0 its
	// listener is told (the engine's clock: load.Config.Started).
	Start(ctx context.Context, warmup time.Duration) (started func(t0 time.Time), err error)
	// Finish stops the sampling and completes res with what was sampled
	// and with the stack's teardown (Result.Complete), which it makes; it
	// returns the watched processes' summaries (plain mode). With res nil
	// (the load failed) it only stops. Its error is a stats file that was
	// not written whole: a warning, not the soak's end.
	Finish(res *result.Result) (watched []procstat.Summary, err error)
}

// Config is a soak to hold.
type Config struct {
	Base                  *scenario.Scenario // as loaded: its judged phase's rate is held
	Scenario              *scenario.Scenario // Scenario(Base, Duration), checked against the operator's limits
	Duration              time.Duration
	ThresholdBytesPerHour float64
	Every                 time.Duration // the samplers' interval
}

// Deps are a soak's ways to the world. Collector is the one the Sampler
// writes to.
type Deps struct {
	Sampler Sampler
	// Runner runs the soak's load (warm-up and phases): Spec with the
	// soak's scenario, its sampler's listener and its progress.
	Runner    session.Runner
	Spec      session.Spec
	Collector *Collector
	// Progress, when set, is told each snapshot with the current growth
	// estimates (the words are the caller's: gate/report).
	Progress func(p load.Progress, estimates []Estimated)
	Warn     func(format string, a ...any) // a figure lost (a stats file); nil: dropped
}

// Run holds the soak's load while its processes are sampled, from the end
// of the warm-up on the engine's clock to the end of the load, then judges
// each process's memory. The run's result comes back completed (the
// stack's figures and teardown). The Sampler is finished once on every
// return. An error is the Runner's (the load could not run), returned as
// it is, or the Sampler's Start, wrapped.
func Run(ctx context.Context, cfg Config, d Deps) (*Result, *result.Result, error) {
	started, err := d.Sampler.Start(ctx, cfg.Scenario.Warmup)
	if err != nil {
		_, _ = d.Sampler.Finish(nil)
		return nil, nil, fmt.Errorf("soak: stats: %w", err)
	}
	var progress func(load.Progress)
	if d.Progress != nil {
		progress = func(p load.Progress) { d.Progress(p, d.Collector.Estimates()) }
	}
	var hooks []func(time.Time)
	if started != nil {
		hooks = append(hooks, started)
	}
	spec := d.Spec
	spec.Scenario, spec.Started, spec.Progress = cfg.Scenario, hooks, progress
	res, err := d.Runner.Run(ctx, spec)
	if err != nil {
		_, _ = d.Sampler.Finish(nil)
		return nil, nil, err
	}
	watched, ferr := d.Sampler.Finish(res)
	if ferr != nil && d.Warn != nil {
		d.Warn("stats.jsonl: %v", ferr)
	}
	judged, _ := cfg.Base.JudgedPhase()
	s := &Result{
		Schema: Schema, Scenario: cfg.Scenario.Name, ScenarioHash: cfg.Scenario.Hash, StartedAt: res.StartedAt,
		DurationS: cfg.Duration.Seconds(), WarmupS: cfg.Scenario.Warmup.Seconds(), RanS: res.FinishedAt.Sub(res.StartedAt).Seconds(),
		RatePerS: judged.Rate, SampleIntervalS: cfg.Every.Seconds(), Interrupted: res.Interrupted,
		ThresholdBytesPerHour: cfg.ThresholdBytesPerHour,
	}
	s.Usable, s.Unusable = Usable(res)
	s.Processes = d.Collector.Processes(cfg.ThresholdBytesPerHour, res.Stack, watched)
	s.Verdict = Overall(s.Processes)
	return s, res, nil
}
