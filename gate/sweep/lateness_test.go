package sweep_test

import (
	"slices"
	"testing"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/sweep"
	"github.com/loadgate/loadgate/gate/verdict"
)

// StepLateness names only what a step's own lateness could have made: the
// stop rule's "generator behind schedule" stands on it.
func TestStepLateness(t *testing.T) {
	lat := func(p95, max float64) result.Summary {
		return result.Summary{Count: 250, P50: 0.02, P90: 0.05, P95: p95, P99: max, P999: max, Max: max}
	}
	p95 := func(observed, limit float64) []verdict.Check {
		return []verdict.Check{{Workload: "work", Metric: verdict.MetricP95, Observed: observed, Limit: limit, Count: 250, Value: verdict.Fail}}
	}
	// A 10 s step at 25/s (250 offered) unless a row says otherwise.
	step := func(completed, failed int64) sweep.Step {
		return sweep.Step{Rate: 25, DurationS: 10, Offered: 250, Completed: completed, Failed: failed}
	}
	for _, tc := range []struct {
		name   string
		s      sweep.Step
		checks []verdict.Check
		lat    result.Summary
		want   []string
	}{
		// Issue 45: a 10 ms serial server, 4 of 125 sends 1.8 ms late, every
		// request completed, no threshold failed: nothing to explain.
		{"serial server, 1.8 ms late", step(250, 0), nil, lat(0.05, 1.8), []string{}},
		// The lateness was never measured (no send): it explains nothing.
		{"no lateness measured", step(250, 0), nil, result.Summary{}, []string{}},
		// The generator's largest lateness spans 1.5 s of a 10 s window:
		// the rate asked for may not have gone out in it.
		{"a lateness of 15% of the window", step(250, 0), nil, lat(400, 1500), []string{sweep.ExplainRate}},
		// Completions 20 short of the 90% (205 of 250) and 0.9 s of the
		// window's end: 22 requests were due then, enough to be the ones missing.
		{"completions short by the late tail", step(205, 0), nil, lat(100, 900), []string{sweep.ExplainCompletions}},
		// Completions 50 short (175 of 250), lateness at most 0.2 s: 5
		// requests due in it cannot be 50. The stack's own queue.
		{"completions far behind a small lateness", step(175, 0), nil, lat(50, 200), []string{}},
		// p95 160 ms over a 150 ms limit, lateness 12 ms at p95: less the
		// lateness, 148 ms is within the limit.
		{"p95 threshold by the lateness's margin", step(250, 0), p95(160, 150), lat(12, 20), []string{sweep.ExplainThreshold("work", "p95")}},
		// p95 400 ms over a 150 ms limit, lateness 1.8 ms: the server's.
		{"p95 threshold far over", step(250, 0), p95(400, 150), lat(0.05, 1.8), []string{}},
		// 503s at 25/s with at most 1.8 ms late: under 0.05 requests at
		// once, no burst a rate limiter would see.
		{"503s, no burst", step(250, 10), nil, lat(0.05, 1.8), []string{}},
		// 503s at 2 000/s with 3 ms late: six requests at once.
		{"503s in bursts", sweep.Step{Rate: 2000, DurationS: 10, Offered: 20000, Completed: 20000, Failed: 30}, nil, lat(0.5, 3), []string{sweep.ExplainBursts}},
	} {
		if got := sweep.StepLateness(tc.s, tc.checks, tc.lat); !slices.Equal(got, tc.want) {
			t.Errorf("%s: explains %q, want %q", tc.name, got, tc.want)
		}
	}
}

// serialStep is a step of a 10 ms serial server at rate for 10 s: up to
// 100/s it keeps up (p95 12 ms); above, its queue grows (completions at its
// 100/s, latency to seconds); late of the sends lateMS late (p95 on time).
func serialStep(t *testing.T, k int, rate float64, late int64, lateMS float64) sweep.Step {
	t.Helper()
	n := int64(rate * 10)
	r := stepResult(t, n, n, repeat(12, int(n)), nil, 0)
	if rate > 100 {
		r = stepResult(t, n, 1000, append(repeat(12, 100), repeat(900, 900)...), nil, n-1000)
	}
	r.Late = late
	r.LatenessMS = result.Summary{Count: n, P50: 0.02, P90: 0.04, P95: 0.05, P99: lateMS, P999: lateMS, Max: lateMS}
	return newStep(t, k, rate, r)
}

// Issue 45's sweep symptom: on a 10 ms serial server, 4 of 125 sends 1.8 ms
// late made a step "generator behind schedule" at 25–75/s. The steps hold
// (the lateness is noted, explaining nothing), the sweep goes on, and finds
// 100/s sustainable and 125/s queueing; a step whose lateness does explain
// what it showed still stops it as the generator's.
func TestSweepStopRuleOnLateness(t *testing.T) {
	var steps []sweep.Step
	for k, rate := range []float64{25, 50, 75, 100, 125} {
		// 3.2% of the sends 1.8 ms late: past the 1% limit
		steps = append(steps, serialStep(t, k+1, rate, int64(rate*10*4/125), 1.8))
		if !sweep.Next(steps) {
			break
		}
	}
	sw := staircase(t, steps...)
	for _, s := range sw.Steps[:4] {
		if s.Generator == nil || s.Lateness == nil || len(s.Lateness.Explains) != 0 || !s.Held {
			t.Errorf("step %d (%v/s): generator %v lateness %+v held %v: want behind, noted, held", s.Number, s.Rate, s.Generator, s.Lateness, s.Held)
		}
	}
	if sw.SustainableRate == nil || *sw.SustainableRate != 100 || sw.DegradesAt == nil || *sw.DegradesAt != 125 || sw.Manner != sweep.Queueing {
		t.Errorf("sustainable %v degrades %v manner %q, want 100, 125, queueing", sw.SustainableRate, sw.DegradesAt, sw.Manner)
	}

	// The generator stalled for 1.5 s at 75/s: the rate may not have gone
	// out, the step does not hold, and the limit is named as the generator's.
	steps = []sweep.Step{serialStep(t, 1, 25, 4, 1.8), serialStep(t, 2, 50, 8, 1.8), serialStep(t, 3, 75, 300, 1500)}
	if !sweep.Next(steps[:2]) {
		t.Fatal("stopped before 75/s")
	}
	sw = staircase(t, steps...)
	if s := sw.Steps[2]; s.Held || !slices.Contains(s.NotHeld, sweep.ReasonGenerator) || !slices.Contains(s.Lateness.Explains, sweep.ExplainRate) {
		t.Errorf("75/s, 1.5 s late: held %v not held %v lateness %+v", s.Held, s.NotHeld, s.Lateness)
	}
	if sw.SustainableRate == nil || *sw.SustainableRate != 50 || sw.Manner != sweep.GeneratorLimit {
		t.Errorf("sustainable %v manner %q, want 50 and %q", sw.SustainableRate, sw.Manner, sweep.GeneratorLimit)
	}
}
