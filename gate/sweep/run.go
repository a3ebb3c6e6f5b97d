package sweep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/session"
	"github.com/loadgate/loadgate/gate/verdict"
)

// Plan is a sweep's rates and each step's scenario, checked before start.
type Plan struct {
	Rates        []float64
	Step, Warmup time.Duration
	Scenarios    []*scenario.Scenario
}

// Stack is the stack under load for the whole sweep.
type Stack interface {
	// Sample samples into dir from warmup after start's t0; stop fills the result.
	Sample(ctx context.Context, dir string, warmup time.Duration) (start func(t0 time.Time), stop func(*result.Result) error, err error)
	Down() (time.Duration, error) // on a context of its own
	Topology() result.Topology    // pinning verified at step start
}

type Deps struct {
	Stack  Stack // nil: plain mode
	Runner session.Runner
	Spec   session.Spec
	// Starting is called before step k of n; Measured after each, its error ending the sweep.
	Starting func(k, n int, rate float64)
	Measured func(dir string, s Step, res *result.Result, v verdict.Verdict) error
	Warn     func(format string, a ...any) // a figure lost (a stats file); nil: dropped
	Now      func() time.Time              // default time.Now
}

// Run runs plan's steps under out/steps/NN-RATE/ until Next says stop; the stack is always torn down.
func Run(ctx context.Context, base *scenario.Scenario, plan Plan, out string, startedAt time.Time, d Deps) (sw *Sweep, err error) {
	now := d.Now
	if now == nil {
		now = time.Now
	}
	sw = newSweep(base, plan, startedAt)
	defer d.finish(sw, now)
	floor := min(base.Timeout, base.Drain)
	for i, ssc := range plan.Scenarios {
		k, rate := i+1, plan.Rates[i]
		dir := filepath.Join("steps", fmt.Sprintf("%02d-%s", k, strconv.FormatFloat(rate, 'f', -1, 64)))
		stepDir := filepath.Join(out, dir)
		if err := os.MkdirAll(stepDir, 0o755); err != nil {
			return sw, fmt.Errorf("sweep: %w", err)
		}
		if d.Starting != nil {
			d.Starting(k, len(plan.Rates), rate)
		}
		res, err := d.measure(ctx, ssc, stepDir)
		if errors.Is(err, errStats) {
			return sw, err
		}
		if err != nil {
			if ctx.Err() == nil || len(sw.Steps) == 0 {
				return sw, err
			}
			sw.Interrupted = true // cut short before the step could start: the steps so far are kept
			break
		}
		v := verdict.Thresholds(res)
		st, err := NewStep(StepInput{Number: k, Rate: rate, Result: filepath.ToSlash(filepath.Join(dir, "result.json")), Res: res, Verdict: v, Floor: floor})
		if err != nil {
			return sw, err
		}
		sw.Steps = append(sw.Steps, st)
		sw.Machine, sw.Topology, sw.Target = res.Machine, res.Topology, res.Target
		sw.Scenario.Thresholds = res.Scenario.Thresholds
		Conclude(sw)
		if d.Measured != nil {
			if err := d.Measured(stepDir, st, res, v); err != nil {
				return sw, fmt.Errorf("sweep: step %d: %w", k, err)
			}
		}
		if res.Interrupted || ctx.Err() != nil {
			sw.Interrupted = true
			break
		}
		if !Next(sw.Steps) {
			break
		}
	}
	return sw, nil
}

func newSweep(base *scenario.Scenario, plan Plan, startedAt time.Time) *Sweep {
	return &Sweep{
		Schema: Schema, StartedAt: startedAt.UTC(), Rates: plan.Rates,
		StepS: plan.Step.Seconds(), WarmupS: plan.Warmup.Seconds(), HoldRule: Rule,
		Scenario: result.Scenario{Name: base.Name, Hash: base.Hash, File: base.File, Scale: base.Scale, MaxInFlight: base.MaxInFlight,
			TimeoutMS: float64(base.Timeout) / float64(time.Millisecond)},
		NotMeasured: []string{},
	}
}

func (d Deps) finish(sw *Sweep, now func() time.Time) {
	if d.Stack != nil {
		if _, derr := d.Stack.Down(); derr != nil {
			sw.NotMeasured = append(sw.NotMeasured, fmt.Sprintf("the stack was not torn down cleanly: %v", derr))
		}
	}
	sw.FinishedAt = now().UTC()
	Conclude(sw)
}

var errStats = errors.New("sweep: stats")

// measure runs one step's load into stepDir; a sampler that did not start is an errStats.
func (d Deps) measure(ctx context.Context, ssc *scenario.Scenario, stepDir string) (*result.Result, error) {
	var started []func(time.Time)
	var stop func(*result.Result) error
	if d.Stack != nil {
		start, st, err := d.Stack.Sample(ctx, stepDir, ssc.Warmup)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errStats, err)
		}
		started, stop = append(started, start), st
	}
	spec := d.Spec
	spec.Scenario, spec.Dir, spec.Started = ssc, stepDir, started
	if d.Stack != nil {
		spec.Topology = d.Stack.Topology()
	}
	res, err := d.Runner.Run(ctx, spec)
	if err != nil {
		if stop != nil {
			_ = stop(&result.Result{})
		}
		return nil, err
	}
	if stop != nil {
		if ferr := stop(res); ferr != nil && d.Warn != nil {
			d.Warn("stats.jsonl: %v", ferr)
		}
	}
	return res, nil
}
