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
	// lagging is a generator behind all along: half its sends p50 late.
	lagging := func(p50, max float64) result.Summary {
		return result.Summary{Count: 250, P50: p50, P90: max, P95: max, P99: max, P999: max, Max: max}
	}
	p95 := func(observed, limit float64) []verdict.Check {
		return []verdict.Check{{Workload: "work", Metric: verdict.MetricP95, Observed: observed, Limit: limit, Count: 250, Value: verdict.Fail}}
	}
	// A 10 s step at 25/s (250 offered) unless a row says otherwise.
	step := func(completed, failed int64) sweep.Step {
		s := sweep.Step{Rate: 25, DurationS: 10, Offered: 250, Completed: completed, Failed: failed, Failures: map[string]int64{}}
		if failed > 0 {
			s.Failures["status 503"] = failed
		}
		return s
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
		// Half the sends 0.5 s late or more, up to 1.2 s, in a 10 s window
		// (a mean of at most 0.73 s ≥ 5% of it): a generator that fell
		// behind all along, the rate asked for may not have gone out.
		{"a generator lagging all along", step(250, 0), nil, lagging(500, 1200), []string{sweep.ExplainRate}},
		// One stall of 1.5 s, the rest on time (a mean of at most 0.08 s):
		// the rate went out, late by one stall.
		{"one stall of 1.5 s", step(250, 0), nil, lat(0.05, 1500), []string{}},
		// Completions 10 short of the 90% (215 of 250) and a mean lateness
		// of at most 0.4 s: 250 × 0.4 / 10 = 10 requests may have been pushed
		// past the window's end, enough to be the ones missing.
		{"completions short by the lateness", step(215, 0), nil, lagging(300, 500), []string{sweep.ExplainCompletions}},
		// Completions 50 short (175 of 250), one 0.2 s stall: the stack's queue.
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
		{"503s in bursts", sweep.Step{Rate: 2000, DurationS: 10, Offered: 20000, Completed: 20000, Failed: 30,
			Failures: map[string]int64{"status 429": 30}}, nil, lat(0.5, 3), []string{sweep.ExplainBursts}},
		// Timeouts at 2 000/s with 3 ms late: a 2 s timeout is the stack's queue.
		{"timeouts, no burst makes them", sweep.Step{Rate: 2000, DurationS: 10, Offered: 20000, Completed: 20000, Failed: 30,
			Failures: map[string]int64{"timeout": 30}}, nil, lat(0.5, 3), []string{}},
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
	return serialStepLag(t, k, rate, late, 0.02, lateMS)
}

// serialStepLag is serialStep with the lateness p50 (and p90) at p50MS.
func serialStepLag(t *testing.T, k int, rate float64, late int64, p50MS, lateMS float64) sweep.Step {
	t.Helper()
	n := int64(rate * 10)
	r := stepResult(t, n, n, repeat(12, int(n)), nil, 0)
	if rate > 100 {
		r = stepResult(t, n, 1000, append(repeat(12, 100), repeat(900, 900)...), nil, n-1000)
	}
	r.Late = late
	r.LatenessMS = result.Summary{Count: n, P50: p50MS, P90: max(p50MS, 0.04), P95: max(p50MS, 0.05), P99: lateMS, P999: lateMS, Max: lateMS}
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

	// The generator lagged at 75/s (half its sends 0.6 s late or more, up
	// to 1.5 s): the rate may not have gone out, the step does not hold,
	// and the limit is named as the generator's.
	steps = []sweep.Step{serialStep(t, 1, 25, 4, 1.8), serialStep(t, 2, 50, 8, 1.8), serialStepLag(t, 3, 75, 700, 600, 1500)}
	if !sweep.Next(steps[:2]) {
		t.Fatal("stopped before 75/s")
	}
	sw = staircase(t, steps...)
	if s := sw.Steps[2]; s.Held || !slices.Contains(s.NotHeld, sweep.ReasonGenerator) || !slices.Contains(s.Lateness.Explains, sweep.ExplainRate) {
		t.Errorf("75/s, lagging: held %v not held %v lateness %+v", s.Held, s.NotHeld, s.Lateness)
	}
	if sw.SustainableRate == nil || *sw.SustainableRate != 50 || sw.Manner != sweep.GeneratorLimit {
		t.Errorf("sustainable %v manner %q, want 50 and %q", sw.SustainableRate, sw.Manner, sweep.GeneratorLimit)
	}
}
