package result_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/result"
)

// Counting survives Encode → Decode, a span not measured stays without a
// count (never 0), and a result without it carries no "counting" key.
func TestCountingRoundTrips(t *testing.T) {
	n := 41.0
	r := &result.Result{Schema: result.Schema, Counting: &result.Counting{
		Counts: []result.Counted{{Workload: "api_read", Service: "api", Port: 9090, Path: "/metrics", Metric: `x{a="1"}`,
			Phases: []result.CountedSpan{{Phase: "sustain", Sent: 42, Counted: &n, Series: 1, BeforeS: 5, AfterS: 35},
				{Phase: "recover", Sent: 10, Reset: true, NotMeasured: "the counter went down"}},
			Total: result.CountedSpan{Phase: result.TotalSpan, Sent: 52, NotMeasured: "reset"}}},
		Stubs: []result.Stub{{Service: "backend", Port: 8081, Config: &result.StubConfig{
			Delay: result.StubDelay{Dist: "fixed", MS: 20, CapMS: 60000}, HoldMaxMS: 30000, Seed: 1, Routes: []string{"/"}}}},
	}}
	var b bytes.Buffer
	if err := r.Encode(&b); err != nil {
		t.Fatal(err)
	}
	got, err := result.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Counting, r.Counting) {
		t.Errorf("counting %+v, want %+v", got.Counting, r.Counting)
	}
	if d, ok := got.Counting.Counts[0].Phases[0].Difference(); !ok || d != -1 {
		t.Errorf("difference %v, %v; want -1", d, ok)
	}
	if _, ok := got.Counting.Counts[0].Phases[1].Difference(); ok {
		t.Error("a reset span has a difference")
	}
	b.Reset()
	if err := (&result.Result{Schema: result.Schema}).Encode(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "counting") {
		t.Error("a result without counting writes the key")
	}
}

// counting is one round's count of api_read: the sustain span counted
// (nil: not measured, why), the total likewise.
func counting(sent int64, counted *float64, reset bool, why string) *result.Counting {
	span := func(phase string) result.CountedSpan {
		return result.CountedSpan{Phase: phase, Sent: sent, Counted: counted, Reset: reset, NotMeasured: why}
	}
	return &result.Counting{Counts: []result.Counted{{Workload: "api_read", Service: "api", Port: 9090, Path: "/metrics", Metric: "reqs",
		Phases: []result.CountedSpan{span("sustain")}, Total: span(result.TotalSpan)}}, Stubs: []result.Stub{}}
}

func f64(v float64) *float64 { return &v }

// Merge sums what the service counted when both parts measured it; a part
// that did not (a reset, a failed read, no counter read at all) makes the
// merge not measured saying why, never a sum that reads as "equal to sent".
func TestMergeCountingIsSummedOnlyWhenEveryPartMeasured(t *testing.T) {
	for _, tc := range []struct {
		name      string
		a, b      *result.Counting
		counted   *float64
		reset     bool
		whyPrefix string
		sent      int64
	}{
		{"both measured", counting(100, f64(98), false, ""), counting(50, f64(50), false, ""), f64(148), false, "", 150},
		{"b reset", counting(100, f64(98), false, ""), counting(50, nil, true, "the counter went down"), nil, true, "one of the parts: the counter went down", 150},
		{"a not read", counting(100, nil, false, "connection refused"), counting(50, f64(50), false, ""), nil, false, "one of the parts: connection refused", 150},
		{"b has no counting", counting(100, f64(98), false, ""), nil, nil, false, "the other part did not read this counter", 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := sample(t), sample(t)
			a.Counting, b.Counting = tc.a, tc.b
			m, err := result.Merge(a, b)
			if err != nil {
				t.Fatal(err)
			}
			if m.Counting == nil || len(m.Counting.Counts) != 1 {
				t.Fatalf("merged counting %+v, want one count", m.Counting)
			}
			c := m.Counting.Counts[0]
			for _, s := range []result.CountedSpan{c.Phases[0], c.Total} {
				if s.Sent != tc.sent {
					t.Errorf("%s: sent %d, want %d", s.Phase, s.Sent, tc.sent)
				}
				switch {
				case tc.counted == nil && s.Counted != nil:
					t.Errorf("%s: counted %v, want not measured", s.Phase, *s.Counted)
				case tc.counted != nil && (s.Counted == nil || *s.Counted != *tc.counted):
					t.Errorf("%s: counted %v, want %v", s.Phase, s.Counted, *tc.counted)
				}
				if s.Reset != tc.reset {
					t.Errorf("%s: reset %v, want %v", s.Phase, s.Reset, tc.reset)
				}
				if !strings.HasPrefix(s.NotMeasured, tc.whyPrefix) || (tc.whyPrefix == "") != (s.NotMeasured == "") {
					t.Errorf("%s: not measured %q, want it to start %q", s.Phase, s.NotMeasured, tc.whyPrefix)
				}
			}
			if tc.a != nil && tc.a.Counts[0].Phases[0].Sent != 100 {
				t.Error("Merge modified a's counting")
			}
		})
	}
}

// PoolCounting over one side's rounds names the round that was not
// measured, and counts a result given twice (a stored baseline) once.
func TestPoolCountingNamesTheRoundNotMeasured(t *testing.T) {
	r1, r2, r3 := sample(t), sample(t), sample(t)
	r1.Counting = counting(100, f64(100), false, "")
	r2.Counting = counting(100, nil, false, "connection refused")
	r3.Counting = counting(100, f64(99), false, "")
	c := result.PoolCounting([]*result.Result{r1, r2, r3}).Counts[0].Total
	if c.Counted != nil || c.Sent != 300 || c.NotMeasured != "round 2: connection refused" {
		t.Errorf("pooled total %+v, want sent 300, not measured \"round 2: connection refused\"", c)
	}
	r2.Counting = counting(100, f64(97), false, "")
	c = result.PoolCounting([]*result.Result{r1, r2, r3, r3}).Counts[0].Total
	if c.Counted == nil || *c.Counted != 296 || c.Sent != 300 {
		t.Errorf("pooled total %+v, want sent 300, counted 296", c)
	}
	if result.PoolCounting([]*result.Result{sample(t)}) != nil {
		t.Error("rounds that read no counter pool to a counting")
	}
}
