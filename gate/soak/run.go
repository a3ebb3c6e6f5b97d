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

// MaxHours bounds a soak's duration (scenario.MaxCells bounds it further).
const MaxHours = 10000

// Scenario is base's judged phase held for d, one phase per hour, ceilings rechecked, rehashed.
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
	// Parse bounded cells for the scenario as written, not per-hour phases.
	if err := sc.CheckCells(); err != nil {
		return nil, fmt.Errorf("--duration %s is %d phases of an hour: %w", d, len(sc.Phases), err)
	}
	sc.Hash = sc.ComputeHash()
	return &sc, nil
}

// Usable says whether the request side can be trusted, and why not.
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

// Sampler samples a soak's processes into its Collector from warmup after t0.
type Sampler interface {
	Start(ctx context.Context, warmup time.Duration) (started func(t0 time.Time), err error)
	// Finish stops sampling and completes res (nil: only stop); its error is a warning.
	Finish(res *result.Result) (watched []procstat.Summary, err error)
}

type Config struct {
	Base                  *scenario.Scenario // as loaded: its judged phase's rate is held
	Scenario              *scenario.Scenario // Scenario(Base, Duration), checked against the operator's limits
	Duration              time.Duration
	ThresholdBytesPerHour float64
	Every                 time.Duration // the samplers' interval
}

// Deps are a soak's ways to the world; the Sampler writes to Collector.
type Deps struct {
	Sampler   Sampler
	Runner    session.Runner
	Spec      session.Spec
	Collector *Collector
	Progress  func(p load.Progress, estimates []Estimated) // nil: none
	Warn      func(format string, a ...any)                // a figure lost (a stats file); nil: dropped
}

// Run holds the load while its processes are sampled, then judges their memory; Run finishes
// d.Sampler on every return.
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
