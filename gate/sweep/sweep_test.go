package sweep_test

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/sweep"
	"github.com/loadgate/loadgate/gate/verdict"
)

// stepResult is a step's result: one judged phase of 10 s, one workload
// "work", successes with latency ms (each value once), failures by class.
func stepResult(t testing.TB, offered, completed int64, latMS []float64, failures map[string]int64, abandoned int64) *result.Result {
	t.Helper()
	h := result.NewHistogram()
	for _, v := range latMS {
		if err := h.RecordValue(int64(v * 1000)); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := result.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	var failed int64
	for _, n := range failures {
		failed += n
	}
	succ := int64(len(latMS))
	w := result.Workload{Name: "work", Offered: offered, Succeeded: succ, Failed: failed, Abandoned: abandoned,
		Completed: completed, Failures: failures, LatencyMS: result.Summarize(h), Histogram: enc, ServiceH: enc,
		Throughput: result.Throughput{CompletedPerS: float64(completed) / 10, OfferedPerS: float64(offered) / 10}}
	return &result.Result{Schema: result.Schema, Offered: offered, Recorded: succ + failed + abandoned, Usable: succ+failed+abandoned == offered,
		Scenario: result.Scenario{Name: "s", Hash: "sha256:ab", Thresholds: map[string]result.Thr{"work": {P95MS: 150, ErrorRate: ptr(0.001)}}},
		Phases:   []result.Phase{{Name: "sustain", Judged: true, DurationS: 10, Workloads: []result.Workload{w}}}}
}

func ptr(v float64) *float64 { return &v }

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func newStep(t testing.TB, k int, rate float64, r *result.Result) sweep.Step {
	t.Helper()
	s, err := sweep.NewStep(sweep.StepInput{Number: k, Rate: rate, Result: "steps/x/result.json", Res: r, Verdict: verdict.Thresholds(r), Floor: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewStepHolds(t *testing.T) {
	cases := []struct {
		name string
		res  *result.Result
		held bool
		why  []sweep.Reason
	}{
		{"keeps up", stepResult(t, 200, 200, repeat(50, 200), nil, 0), true, nil},
		{"completions within 10%", stepResult(t, 200, 181, repeat(50, 200), nil, 0), true, nil},
		{"completions behind", stepResult(t, 200, 179, repeat(50, 200), nil, 0), false, []sweep.Reason{sweep.ReasonCompletionsBehind}},
		{"error rate over its threshold", stepResult(t, 200, 200, repeat(50, 190), map[string]int64{"status 503": 10}, 0), false, []sweep.Reason{sweep.ReasonThresholds}},
		{"p95 over its threshold", stepResult(t, 200, 200, append(repeat(50, 180), repeat(400, 20)...), nil, 0), false, []sweep.Reason{sweep.ReasonThresholds}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newStep(t, 1, 20, tc.res)
			if s.Held != tc.held {
				t.Errorf("held = %v, want %v (not held: %v)", s.Held, tc.held, s.NotHeld)
			}
			if tc.why != nil && !reflect.DeepEqual(s.NotHeld, tc.why) {
				t.Errorf("not held = %v, want %v", s.NotHeld, tc.why)
			}
		})
	}
}

// late marks r's generator behind: n of its sends late, the lateness p95
// and the largest (ms), p50 on time.
func late(r *result.Result, n int64, p95MS, maxMS float64) {
	r.Late = n
	r.LatenessMS = result.Summary{Count: r.Offered, P50: 0.02, P90: min(p95MS, 0.5), P95: p95MS, P99: maxMS, P999: maxMS, Max: maxMS}
}

func TestNewStepGeneratorBehindDoesNotHold(t *testing.T) {
	r := stepResult(t, 200, 200, repeat(50, 200), nil, 0)
	// half of the requests late by 0.6 s or more, up to 2 s of the 10 s
	// window: the generator lagged all along, the rate did not go out on time
	late(r, 100, 900, 2000)
	r.LatenessMS.P50, r.LatenessMS.P90 = 600, 900
	s := newStep(t, 1, 20, r)
	if s.Held || !reflect.DeepEqual(s.NotHeld, []sweep.Reason{sweep.ReasonGenerator}) || s.Generator == nil {
		t.Fatalf("held %v, not held %v, generator %v", s.Held, s.NotHeld, s.Generator)
	}
	if m := sweep.Classify(nil, s); m != sweep.GeneratorLimit {
		t.Errorf("manner %q, want %q", m, sweep.GeneratorLimit)
	}
}

func TestNewStepInterruptedDoesNotHold(t *testing.T) {
	r := stepResult(t, 200, 200, repeat(50, 200), nil, 0)
	r.Interrupted, r.Usable = true, false
	s := newStep(t, 1, 20, r)
	if s.Held || s.NotHeld[0] != sweep.ReasonInterrupted {
		t.Fatalf("held %v, not held %v", s.Held, s.NotHeld)
	}
	if sweep.Next([]sweep.Step{s}) {
		t.Error("Next after an interrupted step")
	}
}

// TestAccountingQueuedStepIsNotItsCompletions is the field's classic lie
// (issue 12): a step whose completions fell behind must not report the
// latency of only those that completed. 69 requests completed in 5 ms, 131
// timed out or were abandoned: p50, p95 and p99 all fall among the
// unfinished and read ≥ the floor, with n = 200, not "p99 5 ms (n=69)".
func TestAccountingQueuedStepIsNotItsCompletions(t *testing.T) {
	r := stepResult(t, 200, 69, repeat(5, 69), map[string]int64{"timeout": 100}, 31)
	s := newStep(t, 1, 20, r)
	a := s.Workloads[0].AccountedMS
	if a.Count != 200 || a.Unfinished != 131 {
		t.Fatalf("count %d unfinished %d, want 200 and 131", a.Count, a.Unfinished)
	}
	if !a.P50Over || !a.P95Over || !a.P99Over || a.P99 != 2000 {
		t.Errorf("accounted %+v: every percentile should be a lower bound of 2000 ms", a)
	}
	if s.Workloads[0].LatencyMS.Count != 69 {
		t.Errorf("successes' latency count %d, want 69", s.Workloads[0].LatencyMS.Count)
	}
	if s.Held {
		t.Error("a step that fell behind held")
	}
	if m := sweep.Classify(nil, s); m != sweep.Queueing {
		t.Errorf("manner %q, want queueing", m)
	}
}

func TestAccountingNearestRank(t *testing.T) {
	h := result.NewHistogram()
	for v := int64(1); v <= 95; v++ {
		_ = h.RecordValue(v * 20) // 0.02 … 1.9 ms: exact below 2048 µs
	}
	a := sweep.Accounting(h, 5, time.Second) // 100 values: 95 successes, 5 unfinished
	want := sweep.Accounted{Count: 100, Unfinished: 5, FloorMS: 1000, P50: 1, P95: 1.9, P99: 1000, P99Over: true}
	if a != want {
		t.Errorf("got %+v\nwant %+v", a, want)
	}
	if z := sweep.Accounting(nil, 0, time.Second); z.Count != 0 || z.P99 != 0 {
		t.Errorf("nothing measured: %+v", z)
	}
}

func TestClassify(t *testing.T) {
	held := newStep(t, 1, 40, stepResult(t, 400, 400, repeat(50, 400), nil, 0))
	cases := []struct {
		name string
		res  *result.Result
		want sweep.Manner
	}{
		{"fast 503s, latency flat", stepResult(t, 840, 840, repeat(60, 800), map[string]int64{"status 503": 40}, 0), sweep.HonestRefusal},
		{"connection refused", stepResult(t, 840, 840, repeat(50, 800), map[string]int64{"refused": 40}, 0), sweep.HonestRefusal},
		{"503s with latency grown", stepResult(t, 840, 840, repeat(140, 800), map[string]int64{"status 503": 40}, 0), sweep.Queueing},
		{"timeouts", stepResult(t, 840, 840, repeat(50, 800), map[string]int64{"timeout": 40}, 0), sweep.Queueing},
		{"latency over its threshold", stepResult(t, 840, 840, repeat(200, 840), nil, 0), sweep.Queueing},
		{"500s", stepResult(t, 840, 840, repeat(50, 800), map[string]int64{"status 500": 40}, 0), sweep.Errors},
		{"resets beside a few 503s", stepResult(t, 840, 840, repeat(50, 800), map[string]int64{"reset": 30, "status 503": 10}, 0), sweep.Errors},
		{"fewer successes than before", stepResult(t, 840, 300, repeat(50, 300), map[string]int64{"status 500": 540}, 0), sweep.Collapse},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newStep(t, 2, 84, tc.res)
			if s.Held {
				t.Fatal("the step held")
			}
			if got := sweep.Classify([]sweep.Step{held}, s); got != tc.want {
				t.Errorf("manner %q, want %q", got, tc.want)
			}
		})
	}
}

// staircase runs Conclude over steps built from (rate, result) pairs.
func staircase(t *testing.T, steps ...sweep.Step) *sweep.Sweep {
	t.Helper()
	sw := &sweep.Sweep{Schema: sweep.Schema}
	for i := range steps {
		steps[i].Number = i + 1
		sw.Rates = append(sw.Rates, steps[i].Rate)
	}
	sw.Steps = steps
	sweep.Conclude(sw)
	return sw
}

func TestConclude(t *testing.T) {
	ok := func(rate float64) sweep.Step {
		n := int64(rate * 10)
		return newStep(t, 1, rate, stepResult(t, n, n, repeat(50, int(n)), nil, 0))
	}
	refuse := func(rate, served float64) sweep.Step {
		n, s := int64(rate*10), int(served*10)
		return newStep(t, 1, rate, stepResult(t, n, n, repeat(52, s), map[string]int64{"status 503": n - int64(s)}, 0))
	}
	t.Run("honest refusal above 80", func(t *testing.T) {
		sw := staircase(t, ok(20), ok(40), ok(76), refuse(84, 79), refuse(100, 79))
		if sw.SustainableRate == nil || *sw.SustainableRate != 76 || sw.DegradesAt == nil || *sw.DegradesAt != 84 {
			t.Fatalf("sustainable %v degrades %v", sw.SustainableRate, sw.DegradesAt)
		}
		if sw.Manner != sweep.HonestRefusal || sw.MannerStep != 4 {
			t.Errorf("manner %q at step %d", sw.Manner, sw.MannerStep)
		}
	})
	t.Run("collapse in the step after", func(t *testing.T) {
		sw := staircase(t, ok(20), ok(40), refuse(60, 45), refuse(100, 20))
		if sw.Manner != sweep.Collapse || sw.MannerStep != 4 || *sw.DegradesAt != 60 {
			t.Errorf("manner %q at step %d, degrades at %v", sw.Manner, sw.MannerStep, *sw.DegradesAt)
		}
	})
	t.Run("a generator behind on its own is the manner, not the collapse after it", func(t *testing.T) {
		behind := refuse(60, 59)
		behind.Generator, behind.NotHeld = &result.Generator{BehindSchedule: true}, append(behind.NotHeld, sweep.ReasonGenerator)
		sw := staircase(t, ok(20), ok(40), behind, refuse(100, 20))
		if sw.Manner != sweep.GeneratorLimit || sw.MannerStep != 3 || sw.Steps[3].Manner != sweep.Collapse {
			t.Errorf("manner %q at step %d; step 4 %q", sw.Manner, sw.MannerStep, sw.Steps[3].Manner)
		}
	})
	t.Run("every step held", func(t *testing.T) {
		sw := staircase(t, ok(20), ok(40))
		if *sw.SustainableRate != 40 || sw.DegradesAt != nil || sw.Manner != "" {
			t.Errorf("sustainable %v degrades %v manner %q", sw.SustainableRate, sw.DegradesAt, sw.Manner)
		}
	})
	t.Run("first step did not hold", func(t *testing.T) {
		sw := staircase(t, refuse(20, 10), refuse(40, 10))
		if sw.SustainableRate != nil || *sw.DegradesAt != 20 {
			t.Errorf("sustainable %v degrades %v", sw.SustainableRate, sw.DegradesAt)
		}
	})
	t.Run("a held step after the first that did not is not sustainable", func(t *testing.T) {
		sw := staircase(t, ok(20), refuse(40, 30), ok(60))
		if *sw.SustainableRate != 20 || *sw.DegradesAt != 40 {
			t.Errorf("sustainable %v degrades %v", *sw.SustainableRate, *sw.DegradesAt)
		}
	})
}

func TestNext(t *testing.T) {
	ok := sweep.Step{Held: true, Usable: true}
	bad := sweep.Step{Usable: true, NotHeld: []sweep.Reason{sweep.ReasonThresholds}}
	cases := []struct {
		steps []sweep.Step
		want  bool
	}{
		{nil, true},
		{[]sweep.Step{ok, ok}, true},
		{[]sweep.Step{ok, bad}, true}, // one step after the first that did not hold
		{[]sweep.Step{ok, bad, ok}, false},
		{[]sweep.Step{ok, bad, bad}, false},
		{[]sweep.Step{{Usable: false, NotHeld: []sweep.Reason{sweep.ReasonUnusable}}}, false},
	}
	for i, tc := range cases {
		if got := sweep.Next(tc.steps); got != tc.want {
			t.Errorf("case %d: Next = %v, want %v", i, got, tc.want)
		}
	}
}

func TestParseRates(t *testing.T) {
	got, err := sweep.ParseRates("20, 40,60.5")
	if err != nil || !reflect.DeepEqual(got, []float64{20, 40, 60.5}) {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, bad := range []string{"", "10,abc", "0,10", "-5", "10,10", "20,10", "NaN", "Inf", strings.Repeat("1,", 70) + "1"} {
		if _, err := sweep.ParseRates(bad); !errors.Is(err, sweep.ErrRates) {
			t.Errorf("ParseRates(%q) = %v, want ErrRates", bad, err)
		}
	}
}

const scenarioYAML = `name: s
warmup: 2s
ceilings: {rate: 100, duration: 1m}
phases:
  - {name: ramp, pattern: ramp, from: 1, to: 10, duration: 10s}
  - {name: sustain, rate: 10, duration: 20s}
workloads:
  - {name: work, share: 1, http: {path: /w}}
`

func TestStepScenario(t *testing.T) {
	sc, err := scenario.Parse([]byte(scenarioYAML), "s.yaml", scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := sweep.StepScenario(sc, 80, 5*time.Second, time.Second, scenario.OperatorLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Phases) != 1 || st.Phases[0].Name != "sustain" || !st.Phases[0].Judged || st.Phases[0].Rate != 80 ||
		st.Phases[0].Pattern != scenario.Constant || st.Warmup != time.Second || st.Phases[0].Duration != 5*time.Second {
		t.Errorf("step scenario phases %+v warm-up %v", st.Phases, st.Warmup)
	}
	if st.Hash == sc.Hash || len(sc.Phases) != 2 {
		t.Error("the step's hash is the scenario's, or the scenario was modified")
	}
	// Ceilings refuse, never clamp: the scenario's and the operator's.
	if _, err := sweep.StepScenario(sc, 120, 5*time.Second, time.Second, scenario.OperatorLimits{}); !errors.Is(err, scenario.ErrCeiling) {
		t.Errorf("120 req/s above ceilings.rate 100: %v", err)
	}
	if _, err := sweep.StepScenario(sc, 60, 5*time.Second, time.Second, scenario.OperatorLimits{Rate: 50}); !errors.Is(err, scenario.ErrCeiling) {
		t.Errorf("60 req/s above --max-rate 50: %v", err)
	}
	if _, err := sweep.StepScenario(sc, 60, 2*time.Minute, 0, scenario.OperatorLimits{}); !errors.Is(err, scenario.ErrCeiling) {
		t.Errorf("a 2 min step above ceilings.duration 1m: %v", err)
	}
	rates, err := sweep.DefaultRates(sc)
	if err != nil || !reflect.DeepEqual(rates, []float64{2.5, 5, 10, 20, 40, 80}) {
		t.Errorf("default rates %v, %v", rates, err)
	}
}

func sampleSweep(t testing.TB) *sweep.Sweep {
	sw := &sweep.Sweep{Schema: sweep.Schema, Scenario: result.Scenario{Name: "s", Hash: "sha256:ab"}, Rates: []float64{20, 84, 100}, StepS: 10, HoldRule: sweep.Rule,
		StartedAt: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	sw.Steps = []sweep.Step{
		newStep(t, 1, 20, stepResult(t, 200, 200, repeat(50, 200), nil, 0)),
		newStep(t, 2, 84, stepResult(t, 840, 840, repeat(52, 790), map[string]int64{"status 503": 50}, 0)),
	}
	sweep.Conclude(sw)
	return sw
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	sw := sampleSweep(t)
	var buf bytes.Buffer
	if err := sw.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := sweep.Decode(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if *got.SustainableRate != 20 || *got.DegradesAt != 84 || got.Manner != sweep.HonestRefusal || len(got.Steps) != 2 {
		t.Errorf("decoded %+v", got)
	}
	var again bytes.Buffer
	if err := got.Encode(&again); err != nil || !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Errorf("re-encoding differs (%v)", err)
	}
}

func TestDecodeRefuses(t *testing.T) {
	cases := map[string]string{
		"another schema":       `{"schema":"loadgate/sweep/v9"}`,
		"unknown field":        `{"schema":"loadgate/sweep/v1","bogus":1}`,
		"trailing data":        `{"schema":"loadgate/sweep/v1"} {}`,
		"rates down":           `{"schema":"loadgate/sweep/v1","rates":[20,10]}`,
		"step not a rate":      `{"schema":"loadgate/sweep/v1","rates":[20],"steps":[{"number":1,"rate":30,"held":true}]}`,
		"step numbering":       `{"schema":"loadgate/sweep/v1","rates":[20],"steps":[{"number":2,"rate":20,"held":true}]}`,
		"held contradicts":     `{"schema":"loadgate/sweep/v1","rates":[20],"steps":[{"number":1,"rate":20,"held":true,"not_held":["threshold_failed"]}]}`,
		"unknown manner":       `{"schema":"loadgate/sweep/v1","manner":"meltdown","manner_step":1,"rates":[20],"steps":[{"number":1,"rate":20,"held":false,"not_held":["threshold_failed"]}]}`,
		"sustainable not held": `{"schema":"loadgate/sweep/v1","sustainable_rate":20,"rates":[20],"steps":[{"number":1,"rate":20,"held":false,"not_held":["threshold_failed"]}]}`,
	}
	for name, in := range cases {
		if _, err := sweep.Decode(strings.NewReader(in)); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// A generator that fell behind on its own (no stall at max_in_flight) is
// the manner, whatever else the step shows: its 503s may be its own late
// bursts. One that fell behind because it waited at max_in_flight is the
// stack's backpressure: the step is classified by what the stack did.
func TestClassifyGeneratorBehind(t *testing.T) {
	r := stepResult(t, 400, 400, repeat(50, 395), map[string]int64{"status 503": 5}, 0)
	late(r, 40, 10, 50) // 40/s × 50 ms: two requests at once
	s := newStep(t, 2, 40, r)
	if m := sweep.Classify(nil, s); m != sweep.GeneratorLimit {
		t.Errorf("generator behind on its own: manner %q", m)
	}
	r = stepResult(t, 400, 300, repeat(50, 300), map[string]int64{"timeout": 100}, 0)
	late(r, 40, 10, 50)
	r.Stalled = 1.5
	s = newStep(t, 2, 40, r)
	if m := sweep.Classify(nil, s); m != sweep.Queueing {
		t.Errorf("generator stalled at max_in_flight: manner %q, want queueing", m)
	}
}
