package report_test

import (
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

func f64(v float64) *float64 { return &v }

// counting is the base run with a count of api_read (one phase short of
// what was sent, one reset), none of ingest, and a stub upstream.
func counting() *result.Result {
	r := base()
	span := func(phase string, sent int64, counted *float64) result.CountedSpan {
		return result.CountedSpan{Phase: phase, Sent: sent, Counted: counted, Series: 2}
	}
	reset := result.CountedSpan{Phase: "burst", Sent: workload(r, "burst", "api_read").Offered, Reset: true,
		NotMeasured: "the service restarted (its counter went down, or its process_start_time_seconds changed): a reset is said, not subtracted"}
	var phases []result.CountedSpan
	at := r.Warmup.DurationS
	for _, p := range r.Phases {
		sent := workload(r, p.Name, "api_read").Offered
		var s result.CountedSpan
		switch p.Name {
		case "burst":
			s = reset
		case "sustain":
			s = span(p.Name, sent, f64(float64(sent-3)))
		default:
			s = span(p.Name, sent, f64(float64(sent)))
		}
		s.BeforeS, s.AfterS = at+0.0004, at+p.DurationS+0.0004
		if p.Name == "recover" {
			s.BeforeS = at + 1.56 // a late read: the report says so
		}
		at += p.DurationS
		phases = append(phases, s)
	}
	total := reset
	total.Phase, total.Sent = result.TotalSpan, 0
	for _, s := range phases {
		total.Sent += s.Sent
	}
	r.Counting = &result.Counting{
		Counts: []result.Counted{{Workload: "api_read", Service: "api", Port: 9090, Path: "/metrics",
			Metric: `http_requests_total{route="GET /items"}`, Phases: phases, Total: total}},
		Stubs: []result.Stub{
			{Service: "backend", Port: 8081, Config: &result.StubConfig{
				Delay:     result.StubDelay{Dist: "lognormal", P50MS: 20, P99MS: 80, CapMS: 60000},
				ErrorRate: 0.01, TimeoutRate: 0.005, HoldMaxMS: 30000, Seed: 1, Routes: []string{"GET /profile/{id}"},
				Stream: &result.StubStream{Chunks: 40, First: result.StubDelay{Dist: "uniform", MinMS: 200, MaxMS: 600, CapMS: 60000}, ChunkEveryMS: 25}}},
			{Service: "llm", Port: 8082, NotMeasured: "stub: GET /stub/config answered 404 (is it a loadgate stub?)"},
		},
	}
	return r
}

func TestCountedGolden(t *testing.T) {
	r := counting()
	md, text, _ := render(t, r, verdict.Thresholds(r))
	checkGolden(t, "counted.md.golden", md)
	checkGolden(t, "counted.txt.golden", text)
	for _, want := range []string{
		"| api_read | ramp | 432 | 432 | 0 |",
		"|  | sustain | 1\u2009944 | 1\u2009941 | −3 |",
		"|  | burst | 1\u2009458 | reset | not measured |",
		"|  | all phases | 4\u2009482 | reset | not measured |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	for _, want := range []string{
		"Counted by the service: not measured for ingest (no count: names a counter of theirs).",
		"lognormal p50 20.0 ms, p99 80.0 ms",
		"answered 500: 1%",
		"held open without an answer: 0.5%",
		"streams 40 server-sent events",
		"configuration not measured: stub: GET /stub/config answered 404",
		"the read at the start of recover was made at 297 s, the phase starts at 295 s",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	for _, want := range []string{"counted by the service: not measured for ingest", "sustain     1\u2009944  1\u2009941    −3", "stub upstream backend:8081: delay lognormal"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q", want)
		}
	}
	// The verdict stays last.
	if i, j := strings.Index(md, "## Counted by the service"), strings.Index(md, "## Verdict"); i < 0 || j < i {
		t.Errorf("counted section at %d, verdict at %d", i, j)
	}
}

// With no count: at all, the report says so: never "equal to sent".
func TestNoCountSaysNotMeasured(t *testing.T) {
	r := base()
	md, text, _ := render(t, r, verdict.Thresholds(r))
	if !strings.Contains(md, "Counted by the service: not measured (the scenario names no count:).") ||
		!strings.Contains(text, "counted by the service: not measured (the scenario names no count:)") {
		t.Errorf("no count: the report does not say not measured\n%s", md)
	}
}
