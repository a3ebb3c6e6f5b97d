package sweep

import (
	"context"
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

// Plan is the stairs a sweep will run: its rates and each step's scenario
// (StepScenario, one per rate), all checked against the ceilings before
// anything starts.
type Plan struct {
	Rates        []float64
	Step, Warmup time.Duration
	Scenarios    []*scenario.Scenario
}

// Stack is the stack a sweep's load goes to, up for the whole sweep. Nil
// in Deps is plain mode (a loopback target: nothing to sample).
type Stack interface {
	// Sample starts sampling the stack (and the generator) into dir once
	// the step's warm-up is over: start is told the schedule's t0 (the
	// engine's clock); stop ends it and fills the result's stack figures.
	Sample(ctx context.Context, dir string, warmup time.Duration) (start func(t0 time.Time), stop func(*result.Result) error, err error)
	// Down tears the stack down (with a context of its own: the sweep's
	// may be cancelled).
	Down() (time.Duration, error)
	// Topology is what a step's result states of the stack, its pinning
	// as verified as the step starts.
	Topology() result.Topology
}

// Deps are a sweep's ways to the world.
type Deps struct {
	Stack Stack // nil: plain mode
	// Runner runs each step's load (its warm-up and judged phase): Spec
	// with the step's scenario, directory, samplers and (with a Stack) the
	// stack's topology.
	Runner session.Runner
	Spec   session.Spec
	// Starting is told before step k of n runs at rate; Measured after
	// each step is measured (its result and verdict, its directory), to
	// write the step's files and report it. The words are the caller's
	// (gate/report). Either may be nil; an error of Measured ends the
	// sweep with it.
	Starting func(k, n int, rate float64)
	Measured func(dir string, s Step, res *result.Result, v verdict.Verdict) error
	Warn     func(format string, a ...any) // a figure lost (a stats file); nil: dropped
	Now      func() time.Time              // default time.Now
}

// Run runs the stairs of plan, in order, under out (each step's files in
// out/steps/NN-RATE/): each step's judged phase after its warm-up, judged
// by verdict.Thresholds and NewStep, until the step after the first that
// does not hold (Next) or the stairs end. A step cut short (ctx) is kept,
// marks the sweep interrupted, and ends it; cut short before a step could
// start, the steps so far are kept (with none, its error is returned). The
// stack is torn down on every return; a teardown that failed is stated in
// NotMeasured. The sweep is concluded (Conclude) and FinishedAt set.
//
// An error is returned with the sweep so far: the Runner's as it is
// (they carry their kind), the sweep's own (a directory that could not be
// made) wrapped.
func Run(ctx context.Context, base *scenario.Scenario, plan Plan, out string, startedAt time.Time, d Deps) (sw *Sweep, err error) {
	now := d.Now
	if now == nil {
		now = time.Now
	}
	sw = &Sweep{
		Schema: Schema, StartedAt: startedAt.UTC(), Rates: plan.Rates,
		StepS: plan.Step.Seconds(), WarmupS: plan.Warmup.Seconds(), HoldRule: Rule,
		Scenario: result.Scenario{Name: base.Name, Hash: base.Hash, File: base.File, Scale: base.Scale, MaxInFlight: base.MaxInFlight,
			TimeoutMS: float64(base.Timeout) / float64(time.Millisecond)},
		NotMeasured: []string{},
	}
	if d.Stack != nil {
		defer func() {
			if _, derr := d.Stack.Down(); derr != nil {
				sw.NotMeasured = append(sw.NotMeasured, fmt.Sprintf("the stack was not torn down cleanly: %v", derr))
			}
			sw.FinishedAt = now().UTC()
			Conclude(sw)
		}()
	} else {
		defer func() { sw.FinishedAt = now().UTC(); Conclude(sw) }()
	}
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
		var started []func(time.Time)
		var stop func(*result.Result) error
		if d.Stack != nil {
			start, st, err := d.Stack.Sample(ctx, stepDir, ssc.Warmup)
			if err != nil {
				return sw, fmt.Errorf("sweep: stats: %w", err)
			}
			started, stop = append(started, start), st // the step's samplers start at its t0 + warm-up
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
			if ctx.Err() == nil || len(sw.Steps) == 0 {
				return sw, err
			}
			sw.Interrupted = true // cut short before the step could start: the steps so far are kept
			break
		}
		if stop != nil {
			if ferr := stop(res); ferr != nil && d.Warn != nil {
				d.Warn("stats.jsonl: %v", ferr)
			}
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
