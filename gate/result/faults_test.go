package result_test

import (
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/result"
)

func TestSubtractHistogram(t *testing.T) {
	all, part, rest := result.NewHistogram(), result.NewHistogram(), result.NewHistogram()
	for v := int64(1); v <= 5000; v++ {
		_ = all.RecordValue(v * 7)
		if v%3 == 0 {
			_ = part.RecordValue(v * 7)
		} else {
			_ = rest.RecordValue(v * 7)
		}
	}
	a, _ := result.EncodeHistogram(all)
	p, _ := result.EncodeHistogram(part)
	want, _ := result.EncodeHistogram(rest)
	got, sum, err := result.SubtractHistogram(a, p)
	if err != nil {
		t.Fatal(err)
	}
	if got != want || sum != result.Summarize(rest) {
		t.Errorf("a − part = %v, want the rest %v", sum, result.Summarize(rest))
	}
	// Taking away what is not there is refused, never clamped.
	if _, _, err := result.SubtractHistogram(p, a); err == nil || !strings.Contains(err.Error(), "cannot take") {
		t.Errorf("subtracting more than held: %v", err)
	}
}

func TestCheckFaults(t *testing.T) {
	r := &result.Result{Offered: 5, Recorded: 5, Faults: []result.Fault{{Action: "stop", Service: "db", Workloads: []result.FaultWorkload{
		{Name: "read", During: result.Workload{Offered: 5, Succeeded: 2, Failed: 2, Failures: map[string]int64{"status 502": 2}}},
	}}}}
	probs := r.Check() // also: recorded 5 != 4 (phases + during), the same inconsistency seen from the top
	if len(probs) != 2 || !strings.Contains(probs[1], "faults[0].workloads[0] (stop db/read): during: offered 5 != succeeded 2 + failed 2 + abandoned 0") {
		t.Errorf("Check = %q", probs)
	}
}

// Regression (review: Apply took the fault windows' requests out of the
// top-level offered and recorded, so result.json's header no longer said
// what was offered): the top-level totals are phases + faults' during.
func TestCheckTotalsCountFaultsDuring(t *testing.T) {
	during := result.Workload{Offered: 5, Succeeded: 2, Failed: 3, Failures: map[string]int64{"status 502": 3}}
	r := &result.Result{Offered: 15, Recorded: 15,
		Phases: []result.Phase{{Name: "sustain", Workloads: []result.Workload{{Name: "read", Offered: 10, Succeeded: 10}}}},
		Faults: []result.Fault{{Action: "stop", Service: "db", Workloads: []result.FaultWorkload{{Name: "read", During: during}}}}}
	if probs := r.Check(); len(probs) != 0 {
		t.Errorf("Check = %q, want none", probs)
	}
	r.Offered, r.Recorded = 10, 10 // the phases only: what the old Apply wrote
	if probs := r.Check(); len(probs) != 2 || !strings.Contains(probs[0], "offered 10 != 15, the sum over phases and faults' during") {
		t.Errorf("Check = %q", probs)
	}
}

// Sub refuses to take out what a workload does not hold, and leaves it
// unchanged; Add and Sub are inverse.
func TestWorkloadAddSub(t *testing.T) {
	w := result.Workload{Name: "read", Offered: 10, Succeeded: 7, Failed: 3, Late: 1, Completed: 9, Failures: map[string]int64{"timeout": 3}}
	part := result.Workload{Offered: 4, Succeeded: 1, Failed: 3, Completed: 4, Failures: map[string]int64{"timeout": 3}}
	if err := w.Sub(part); err != nil {
		t.Fatal(err)
	}
	if w.Offered != 6 || w.Failed != 0 || len(w.Failures) != 0 || w.Late != 1 {
		t.Errorf("after Sub: %+v", w)
	}
	before := w
	if err := w.Sub(result.Workload{Late: 2}); err == nil || !strings.Contains(err.Error(), "cannot take 2 late out of 1") {
		t.Errorf("Sub of more late than held: %v", err)
	}
	if w.Late != before.Late || w.Offered != before.Offered {
		t.Errorf("a refused Sub changed w: %+v", w)
	}
	w.Add(part)
	if w.Offered != 10 || w.Failed != 3 || w.Failures["timeout"] != 3 {
		t.Errorf("after Add: %+v", w)
	}
}
