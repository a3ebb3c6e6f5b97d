package verdict_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

// sec is one second: ok successes of which over exceed the p95 target,
// and failed failures.
func sec(ok, over, failed int64) result.Second {
	s := result.Second{Observed: true, Succeeded: ok, Failed: failed}
	if over > 0 {
		s.Over = map[string]int64{"p95": over}
	}
	if failed > 0 {
		s.Failures = map[string]int64{"status 502": failed}
	}
	return s
}

func TestJudgeRecovery(t *testing.T) {
	p95 := result.RecoveryTargets{WithinS: 5, ErrorRate: rate(0), P95MS: 300}
	errOnly := result.RecoveryTargets{WithinS: 5, ErrorRate: rate(0.1)}
	none := result.Second{Observed: true}
	gone := result.Second{} // past the run's end: not observed
	tests := []struct {
		name    string
		seconds []result.Second
		t       result.RecoveryTargets
		want    verdict.Value
		afterS  int
		marks   string // ✓ met, ✗ broken, · not measured
	}{
		{"clean from the first second", []result.Second{sec(10, 0, 0), sec(10, 0, 0), sec(10, 0, 0)}, p95, verdict.Pass, 0, "✓✓✓"},
		{"failures then clean", []result.Second{sec(0, 0, 10), sec(5, 0, 5), sec(10, 0, 0), sec(10, 0, 0)}, p95, verdict.Pass, 2, "✗✗✓✓"},
		{"slow then fast", []result.Second{sec(10, 5, 0), sec(20, 1, 0), sec(20, 0, 0)}, p95, verdict.Pass, 1, "✗✓✓"},
		{"relapse resets the point", []result.Second{sec(10, 0, 0), sec(10, 0, 1), sec(10, 0, 0), sec(10, 0, 0)}, p95, verdict.Pass, 2, "✓✗✓✓"},
		{"broken in the last second", []result.Second{sec(10, 0, 0), sec(10, 0, 0), sec(10, 0, 1)}, p95, verdict.Fail, 0, "✓✓✗"},
		{"never recovered", []result.Second{sec(0, 0, 10), sec(0, 0, 10)}, p95, verdict.Fail, 0, "✗✗"},
		{"empty seconds are no evidence", []result.Second{sec(0, 0, 3), none, sec(4, 0, 0), none}, p95, verdict.Pass, 2, "✗·✓·"},
		{"recovered after the first measured second", []result.Second{sec(0, 0, 3), none, none, sec(4, 0, 0)}, p95, verdict.Pass, 3, "✗··✓"},
		// Regression (review: a late undo passed on a truncated window):
		// seconds past the run's end are not observed, and the recovery is
		// not measured however good the observed ones were.
		{"truncated window is not measured", []result.Second{sec(10, 0, 0), sec(10, 0, 0), gone, gone, gone}, p95, verdict.NotMeasured, 0, "✓✓···"},
		{"one unobserved second is enough", []result.Second{sec(0, 0, 3), sec(10, 0, 0), sec(10, 0, 0), gone}, p95, verdict.NotMeasured, 0, "✗✓✓·"},
		{"only empty seconds after the last broken", []result.Second{sec(4, 0, 0), sec(0, 0, 3), none, none}, p95, verdict.Fail, 0, "✓✗··"},
		{"nothing measured", []result.Second{none, none}, p95, verdict.NotMeasured, 0, "··"},
		{"no seconds", nil, p95, verdict.NotMeasured, 0, ""},
		// Nearest rank: p95 of 20 is the 19th value; one value over the
		// limit leaves the 19th within it, two do not.
		{"p95 of 20 with one over", []result.Second{sec(20, 1, 0)}, p95, verdict.Pass, 0, "✓"},
		{"p95 of 20 with two over", []result.Second{sec(20, 2, 0)}, p95, verdict.Fail, 0, "✗"},
		// p95 of 10 is the 10th value: any one over breaks it.
		{"p95 of 10 with one over", []result.Second{sec(10, 1, 0)}, p95, verdict.Fail, 0, "✗"},
		{"failures only break a latency target", []result.Second{sec(0, 0, 1)}, result.RecoveryTargets{WithinS: 1, P95MS: 300}, verdict.Fail, 0, "✗"},
		{"error rate at the limit", []result.Second{sec(9, 0, 1), sec(10, 0, 0)}, errOnly, verdict.Pass, 0, "✓✓"},
		{"error rate above the limit", []result.Second{sec(8, 0, 2), sec(10, 0, 0)}, errOnly, verdict.Pass, 1, "✗✓"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, after, secs := verdict.JudgeRecovery(tt.seconds, tt.t)
			marks := ""
			for _, s := range secs {
				switch {
				case !s.Measured:
					marks += "·"
				case s.Met:
					marks += "✓"
				default:
					marks += "✗"
				}
			}
			if got != tt.want || after != tt.afterS || marks != tt.marks {
				t.Errorf("JudgeRecovery = %s after %d s, seconds %s; want %s after %d s, seconds %s", got, after, marks, tt.want, tt.afterS, tt.marks)
			}
		})
	}
}

func TestRecoveryFailsTheVerdict(t *testing.T) {
	r := recoveryResult([]result.Second{sec(10, 0, 0), sec(0, 0, 10)})
	v := verdict.Thresholds(r)
	if v.Value != verdict.Fail || v.ExitCode() != 1 || len(v.Recovery) != 1 || v.Recovery[0].Value != verdict.Fail {
		t.Fatalf("verdict %s (exit %d), recovery %+v; want fail, exit 1", v.Value, v.ExitCode(), v.Recovery)
	}
	r = recoveryResult([]result.Second{sec(0, 0, 10), sec(10, 0, 0)})
	v = verdict.Thresholds(r)
	if v.Value != verdict.Pass || len(v.Recovery) != 1 || v.Recovery[0].AfterS != 1 || v.Recovery[0].Measured != 2 {
		t.Fatalf("verdict %s, recovery %+v; want pass, recovered after 1 s", v.Value, v.Recovery)
	}
}

// Regression (review: a late undo passed on a truncated window): the
// verdict says which seconds were not observed, and does not pass.
func TestRecoveryLateUndoNotObserved(t *testing.T) {
	r := recoveryResult([]result.Second{sec(10, 0, 0), sec(10, 0, 0), {}})
	v := verdict.Thresholds(r)
	if len(v.Recovery) != 1 || v.Recovery[0].Value != verdict.NotMeasured || v.Recovery[0].NotObserved != 1 {
		t.Fatalf("recovery %+v; want not measured, 1 second not observed", v.Recovery)
	}
	if !slices.ContainsFunc(v.Notes, func(n verdict.Note) bool {
		return n.Code == verdict.NoteRecoveryNotMeasured && n.NotObservedS == 1 && n.WindowS == 3
	}) {
		t.Errorf("notes %+v do not say the window was not observed", v.Notes)
	}
}

func recoveryResult(secs []result.Second) *result.Result {
	w := result.Workload{Name: "read", Offered: 100, Succeeded: 100, Failures: map[string]int64{}, LatencyMS: result.Summary{Count: 100, P95: 10}}
	return &result.Result{
		Schema: result.Schema, Usable: true, Offered: 100, Recorded: 100,
		Scenario: result.Scenario{Name: "f", Hash: "sha256:x", Thresholds: map[string]result.Thr{"read": {ErrorRate: rate(0.01)}}},
		Phases:   []result.Phase{{Name: "sustain", Judged: true, DurationS: 10, Workloads: []result.Workload{w}}},
		Faults: []result.Fault{{Phase: "sustain", Action: "stop", Service: "db",
			Recovery:  result.RecoveryTargets{WithinS: float64(len(secs)), ErrorRate: rate(0), P95MS: 300},
			Workloads: []result.FaultWorkload{{Name: "read", During: result.Workload{Failures: map[string]int64{}}, Seconds: secs}}}},
	}
}

func ExampleJudgeRecovery() {
	targets := result.RecoveryTargets{WithinS: 4, ErrorRate: rate(0)}
	seconds := []result.Second{{Observed: true, Failed: 12}, {Observed: true, Succeeded: 6, Failed: 6}, {Observed: true, Succeeded: 12}, {Observed: true, Succeeded: 12}}
	value, after, _ := verdict.JudgeRecovery(seconds, targets)
	fmt.Println(value, after)
	// Output: pass 2
}
