package report_test

import (
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

// faulted is base() with the db stopped for 3 s in sustain: api_read
// fails while it is down and recovers after 2 s; ingest, with its
// recovery seconds given, recovers at once or not at all.
func faulted(ingest []result.Second) *result.Result {
	r := base()
	defer func() { // the requests due until recovered, as fault.Apply takes them; the top-level totals count them and those during the fault too
		f := &r.Faults[0]
		for i := range f.Workloads {
			w := &f.Workloads[i]
			w.RecoveringS = verdict.RecoveringSeconds(w.Seconds, f.Recovery)
			w.Recovering.Failures = map[string]int64{}
			for _, s := range w.Seconds[:w.RecoveringS] {
				w.Recovering.Add(result.Workload{Offered: s.Succeeded + s.Failed, Succeeded: s.Succeeded, Failed: s.Failed, Failures: s.Failures})
			}
			r.Offered += w.During.Offered + w.Recovering.Offered
			r.Recorded += w.During.Offered + w.Recovering.Offered
		}
	}()
	ok := func(n int64) result.Second { return result.Second{Observed: true, Succeeded: n} }
	r.Faults = []result.Fault{{
		Phase: "sustain", Action: "stop", Service: "db", Containers: []string{"loadgate-1a2b3c-run-db-1"},
		PlannedAtS: 90, PlannedForS: 3, PlannedS: 160, StartedS: 160.0012, AppliedS: 160.3124,
		UndoStartedS: 163.0008, EndedS: 163.6521, Undo: "started",
		Recovery: result.RecoveryTargets{WithinS: 5, ErrorRate: frac(0), P95MS: 300},
		Workloads: []result.FaultWorkload{
			{Name: "api_read", During: result.Workload{Offered: 40, Succeeded: 3, Failed: 37, Failures: map[string]int64{"status 502": 30, "timeout": 7}},
				Seconds: []result.Second{
					{Observed: true, Succeeded: 2, Failed: 9, Failures: map[string]int64{"status 502": 9}},
					{Observed: true, Succeeded: 11, Over: map[string]int64{"p95": 4}, MaxMS: 812},
					ok(11), ok(11), ok(10),
				}},
			{Name: "ingest", During: result.Workload{Offered: 4, Succeeded: 4, Failures: map[string]int64{}}, Seconds: ingest},
		},
	}}
	return r
}

func TestFaultsGolden(t *testing.T) {
	ok := func(n int64) result.Second { return result.Second{Observed: true, Succeeded: n} }
	for _, tc := range []struct {
		name string
		r    *result.Result
		want verdict.Value
		has  []string
	}{
		{"faults_recovered", faulted([]result.Second{ok(1), ok(1), {Observed: true}, ok(1), ok(2)}), verdict.Pass,
			[]string{"## Faults", "| stop | db | 160.000 s (sustain + 90 s, for 3 s) | 160.001 s (+1.20 ms) | after 311 ms | 163.001 s | after 651 ms | started |",
				"recovered after 2 s", "✗✗✓✓✓", "| 22 | 9 (status 502 9) |", "recovered after 0 s", "✓✓·✓✓", "37 (status 502 30, timeout 7)"}},
		{"faults_not_recovered", faulted([]result.Second{ok(1), ok(1), ok(1), ok(1), {Observed: true, Failed: 1, Failures: map[string]int64{"status 500": 1}}}), verdict.Fail,
			[]string{"**did not recover unattended within 5 s**", "✓✓✓✓✗", "s4: error rate 100% of 1, p95: no success", "ingest did not recover unattended"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := verdict.Thresholds(tc.r)
			if v.Value != tc.want {
				t.Fatalf("verdict %s, want %s (%q)", v.Value, tc.want, report.NoteTexts(v.Notes))
			}
			md, text, js := render(t, tc.r, v)
			checkGolden(t, tc.name+".md.golden", md)
			checkGolden(t, tc.name+".txt.golden", text)
			checkGolden(t, tc.name+".json.golden", js)
			for _, s := range tc.has {
				if !strings.Contains(md, s) {
					t.Errorf("markdown lacks %q", s)
				}
			}
			if !strings.Contains(text, "faults (times on the run's clock") {
				t.Error("text report has no faults section")
			}
		})
	}
}

// notInjected is faulted() whose stop the engine refused: issued, never
// in effect, nothing to undo (AppliedS, UndoStartedS and EndedS... as the
// injector records them), and Docker's message carries markdown.
func notInjected() *result.Result {
	r := faulted(nil)
	f := &r.Faults[0]
	f.AppliedS, f.UndoStartedS, f.EndedS, f.Undo, f.Containers = 0, 0, 160.0427, "", nil
	f.Error = "fault not injected: faults.yaml:27: phase sustain: stop db at 1m30s: compose: stop db (loadgate-1a2b3c-run-db-1): Error response from daemon: cannot stop container: *permission* denied | <b>"
	for i := range f.Workloads {
		r.Offered -= f.Workloads[i].During.Offered + f.Workloads[i].Recovering.Offered
		r.Recorded -= f.Workloads[i].During.Offered + f.Workloads[i].Recovering.Offered
		f.Workloads[i].During, f.Workloads[i].Seconds = result.Workload{Failures: map[string]int64{}}, nil
		f.Workloads[i].Recovering, f.Workloads[i].RecoveringS = result.Workload{Failures: map[string]int64{}}, 0
	}
	r.Usable = false
	r.Unusable = []string{f.Error}
	return r
}

// Regression (review: a failed injection rendered "after −163 652 ms" and
// "undo issued 0.000 s"; Docker's message reached markdown unescaped).
func TestFaultsNotInjectedGolden(t *testing.T) {
	r := notInjected()
	v := verdict.Thresholds(r)
	if v.ExitCode() != 3 {
		t.Fatalf("verdict %s exit %d, want unusable (3)", v.Value, v.ExitCode())
	}
	md, text, js := render(t, r, v)
	checkGolden(t, "faults_not_injected.md.golden", md)
	checkGolden(t, "faults_not_injected.txt.golden", text)
	checkGolden(t, "faults_not_injected.json.golden", js)
	for _, bad := range []string{"after −", " 0.000 s"} { // a negative time; a zero time as if it happened
		if strings.Contains(md, bad) || strings.Contains(text, bad) {
			t.Errorf("report holds %q", bad)
		}
	}
	for _, bad := range []string{"*permission*", "<b>"} { // Docker's text as markdown
		if strings.Contains(md, bad) {
			t.Errorf("markdown holds %q unescaped", bad)
		}
	}
	for _, want := range []string{"| stop | db | 160.000 s (sustain + 90 s, for 3 s) | 160.001 s (+1.20 ms) | failed after 41.5 ms | — | — | not injected |",
		"could not be injected or undone**", `\*permission\*`} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}

// Regression (review: a truncated window passed): seconds past the run's
// end are marked and the recovery is not measured.
func TestFaultsNotObservedMarks(t *testing.T) {
	ok := result.Second{Observed: true, Succeeded: 1}
	r := faulted([]result.Second{ok, ok, {}, {}, {}})
	v := verdict.Thresholds(r)
	md, _, _ := render(t, r, v)
	for _, want := range []string{"✓✓○○○", "not measured (3 s of the window past the run's end)"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}
