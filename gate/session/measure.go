package session

import (
	"context"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
)

// Target is what a measured load goes to: a stack (*Compose) or a plain URL (*Plain).
type Target interface {
	Sample(ctx context.Context, dir string, warmup time.Duration) (start func(t0 time.Time), stop func(*result.Result) error, err error)
	Count(ctx context.Context, sc *scenario.Scenario) (Counter, error)
	Inject(ctx context.Context, sc *scenario.Scenario) (*Faults, error)
	Down() (time.Duration, error)
}

// Measure is one measured run on a target already up; Run it once.
type Measure struct {
	Runner Runner
	Target Target
	Began  time.Time                     // when the command started: a stack's "up" time runs from it
	Warn   func(format string, a ...any) // told a figure that was lost; nil: dropped
}

// Run runs spec's load with the target's samplers, counts and faults, and
// returns the result completed; the target is torn down on every return.
// A sampler, count or fault that cannot start is ErrUnusable (a count not allowed, or
// faults without a stack: ErrUsage); the Runner's errors keep their kind, else ErrUnusable.
func (m Measure) Run(ctx context.Context, spec Spec) (res *result.Result, err error) {
	down := true
	defer func() {
		if down {
			m.Target.Down()
		}
	}()
	sc := spec.Scenario
	start, stop, err := m.Target.Sample(ctx, spec.Dir, sc.Warmup)
	if err != nil {
		return nil, Unusablef("run: stats: %w", err)
	}
	defer func() {
		if err != nil {
			_ = stop(&result.Result{}) // only stops the samplers and closes the file
		}
	}()
	cnt, err := m.Target.Count(ctx, sc)
	if err != nil {
		return nil, err
	}
	fr, err := m.Target.Inject(ctx, sc)
	if err != nil {
		return nil, err
	}
	defer fr.Stop()
	spec.Faults = fr.Hook
	spec.Started = append(spec.Started, start, cnt.Started())
	if res, err = m.Runner.Run(fr.Context(), spec); err != nil {
		return nil, orUnusable(err)
	}
	cnt.Finish(ctx, res) // before Apply moves the fault windows' requests out of the phases: sent is all that was sent
	if err = fr.Apply(res); err != nil {
		return nil, err
	}
	if ferr := stop(res); ferr != nil && m.Warn != nil {
		m.Warn("stats.jsonl: %v", ferr)
	}
	down = false
	m.teardown(res)
	return res, nil
}

// teardown tears the target down and completes res with a stack's times.
func (m Measure) teardown(res *result.Result) {
	_, stack := m.Target.(*Compose)
	firstRequest := res.StartedAt.Sub(m.Began)
	_, derr := m.Target.Down()
	if !stack {
		return
	}
	res.Complete(result.After{Up: firstRequest, Teardown: time.Since(res.FinishedAt), TeardownErr: derr})
}
