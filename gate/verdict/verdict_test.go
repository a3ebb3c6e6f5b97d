package verdict_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

func rate(f float64) *float64 { return &f }

// wl builds a consistent workload: offered = ok + failed + abandoned, the
// latency summary counts the successes.
func wl(name string, ok, failed, abandoned int64, p95 float64) result.Workload {
	w := result.Workload{
		Name: name, Offered: ok + failed + abandoned,
		Succeeded: ok, Failed: failed, Abandoned: abandoned,
		Failures: map[string]int64{},
	}
	if failed > 0 {
		w.Failures["timeout"] = failed
	}
	if ok > 0 {
		s := result.Summary{Count: ok, P50: p95 / 2, P90: p95 * 0.9, P95: p95, P99: p95 * 1.5, P999: p95 * 2, Max: p95 * 3}
		w.LatencyMS, w.ServiceMS = s, s
	}
	return w
}

func phase(name string, judged, recover bool, ws ...result.Workload) result.Phase {
	return result.Phase{Name: name, Pattern: "constant", Judged: judged, Recover: recover, DurationS: 60, Workloads: ws}
}

// run builds a usable result whose totals add up.
func run(thr map[string]result.Thr, phases ...result.Phase) *result.Result {
	r := &result.Result{Schema: result.Schema, Usable: true, Phases: phases}
	r.Scenario = result.Scenario{Name: "demo", Hash: "sha256:00", Scale: 1, Thresholds: thr}
	for _, p := range phases {
		for _, w := range p.Workloads {
			r.Offered += w.Offered
			r.Recorded += w.Succeeded + w.Failed + w.Abandoned
		}
	}
	return r
}

func TestThresholds(t *testing.T) {
	tests := []struct {
		name      string
		r         *result.Result
		want      verdict.Value
		exit      int
		workloads []string      // "phase/workload=value"
		checks    []string      // "phase/workload/metric=value"
		note      *verdict.Note // a note of the verdict (its Detail: a substring)
	}{
		{
			name: "pass under every limit",
			r: run(map[string]result.Thr{"read": {P95MS: 300, ErrorRate: rate(0.01)}},
				phase("ramp", false, false, wl("read", 100, 50, 0, 900)),
				phase("sustain", true, false, wl("read", 1000, 5, 0, 250))),
			want: verdict.Pass, exit: 0,
			workloads: []string{"sustain/read=pass"},
			checks:    []string{"sustain/read/p95=pass", "sustain/read/error_rate=pass"},
		},
		{
			name: "limit equal to observed passes",
			r: run(map[string]result.Thr{"read": {P95MS: 300}},
				phase("sustain", true, false, wl("read", 1000, 0, 0, 300))),
			want: verdict.Pass, exit: 0,
			checks: []string{"sustain/read/p95=pass"},
		},
		{
			name: "p95 over the limit fails",
			r: run(map[string]result.Thr{"read": {P95MS: 300}},
				phase("sustain", true, false, wl("read", 2811, 0, 0, 312))),
			want: verdict.Fail, exit: 1,
			workloads: []string{"sustain/read=fail"},
			checks:    []string{"sustain/read/p95=fail"},
		},
		{
			name: "error rate over the limit fails, abandoned excluded and noted",
			r: run(map[string]result.Thr{"ingest": {ErrorRate: rate(0)}},
				phase("sustain", true, false, wl("ingest", 99, 1, 7, 10))),
			want: verdict.Fail, exit: 1,
			checks: []string{"sustain/ingest/error_rate=fail"},
			note:   &verdict.Note{Code: verdict.NoteAbandoned, Phase: "sustain", Workload: "ingest", Abandoned: 7},
		},
		{
			name: "abandoned alone do not break error_rate 0",
			r: run(map[string]result.Thr{"ingest": {ErrorRate: rate(0)}},
				phase("sustain", true, false, wl("ingest", 100, 0, 3, 10))),
			want: verdict.Pass, exit: 0,
			checks: []string{"sustain/ingest/error_rate=pass"},
			note:   &verdict.Note{Code: verdict.NoteAbandoned, Phase: "sustain", Workload: "ingest", Abandoned: 3},
		},
		{
			name: "recover phase judged separately",
			r: run(map[string]result.Thr{"read": {P99MS: 100}},
				phase("sustain", true, false, wl("read", 100, 0, 0, 10)),
				phase("burst", false, false, wl("read", 100, 0, 0, 900)),
				phase("recover", false, true, wl("read", 100, 0, 0, 80))),
			want: verdict.Fail, exit: 1,
			workloads: []string{"sustain/read=pass", "recover/read=fail"},
		},
		{
			name: "zero successes without thresholds is not measured",
			r: run(nil,
				phase("sustain", true, false, wl("read", 100, 0, 0, 10), wl("write", 0, 20, 0, 0))),
			want: verdict.NotMeasured, exit: 1,
			workloads: []string{"sustain/read=pass", "sustain/write=not measured"},
		},
		{
			name: "zero successes with a broken error rate stays not measured",
			r: run(map[string]result.Thr{"write": {P95MS: 100, ErrorRate: rate(0.01)}},
				phase("sustain", true, false, wl("write", 0, 20, 0, 0))),
			want: verdict.NotMeasured, exit: 1,
			checks: []string{"sustain/write/p95=not measured", "sustain/write/error_rate=fail"},
		},
		{
			name: "workload with thresholds absent from the phase is not measured",
			r: run(map[string]result.Thr{"read": {P95MS: 300}, "search": {P99MS: 500}},
				phase("sustain", true, false, wl("read", 100, 0, 0, 10))),
			want: verdict.NotMeasured, exit: 1,
			workloads: []string{"sustain/read=pass", "sustain/search=not measured"},
			checks:    []string{"sustain/search/p99=not measured"},
		},
		{
			name: "not measured outranks fail",
			r: run(map[string]result.Thr{"read": {P95MS: 1}},
				phase("sustain", true, false, wl("read", 100, 0, 0, 10), wl("idle", 0, 0, 0, 0))),
			want: verdict.NotMeasured, exit: 1,
			workloads: []string{"sustain/read=fail", "sustain/idle=not measured"},
		},
		{
			name: "judged phase with no workloads is not measured",
			r:    run(nil, phase("sustain", true, false)),
			want: verdict.NotMeasured, exit: 1,
			note: &verdict.Note{Code: verdict.NoteNoWorkload, Phase: "sustain"},
		},
		{
			name: "interrupted run is not measured, its workloads still judged",
			r: func() *result.Result {
				r := run(map[string]result.Thr{"read": {P95MS: 300}}, phase("sustain", true, false, wl("read", 10, 0, 0, 10)))
				r.Interrupted = true
				return r
			}(),
			want: verdict.NotMeasured, exit: 1,
			workloads: []string{"sustain/read=pass"},
			note:      &verdict.Note{Code: verdict.NoteInterrupted},
		},
		{
			name: "interrupted run keeps a broken threshold visible",
			r: func() *result.Result {
				r := run(map[string]result.Thr{"read": {P95MS: 1}}, phase("sustain", true, false, wl("read", 10, 0, 0, 10)))
				r.Interrupted = true
				return r
			}(),
			want: verdict.NotMeasured, exit: 1,
			workloads: []string{"sustain/read=fail"},
		},
		{
			name: "marked unusable",
			r: func() *result.Result {
				r := run(nil, phase("sustain", true, false, wl("read", 10, 0, 0, 10)))
				r.Usable, r.Unusable = false, []string{"stack exited"}
				return r
			}(),
			want: verdict.Unusable, exit: 3,
			note: &verdict.Note{Code: verdict.NoteResult, Detail: "stack exited"},
		},
		{
			name: "offered != recorded is unusable even when marked usable",
			r: func() *result.Result {
				r := run(map[string]result.Thr{"read": {P95MS: 300}}, phase("sustain", true, false, wl("read", 10, 0, 0, 10)))
				r.Offered = 12
				return r
			}(),
			want: verdict.Unusable, exit: 3,
			note: &verdict.Note{Code: verdict.NoteResult, Detail: "offered 12 != recorded 10"},
		},
		{
			name: "a workload whose records do not add up is unusable",
			r: func() *result.Result {
				r := run(nil, phase("sustain", true, false, wl("read", 10, 0, 0, 10)))
				r.Phases[0].Workloads[0].Offered = 11
				r.Offered = 11
				return r
			}(),
			want: verdict.Unusable, exit: 3,
			note: &verdict.Note{Code: verdict.NoteResult, Detail: "offered 11 != succeeded 10"},
		},
		{
			name: "no judged phase is unusable",
			r:    run(nil, phase("ramp", false, false, wl("read", 10, 0, 0, 10))),
			want: verdict.Unusable, exit: 3,
			note: &verdict.Note{Code: verdict.NoteNoJudgedPhase},
		},
		{
			name: "nil result is unusable",
			r:    nil,
			want: verdict.Unusable, exit: 3,
			note: &verdict.Note{Code: verdict.NoteNoResult},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := verdict.Thresholds(tt.r)
			if v.Value != tt.want {
				t.Errorf("Value = %q, want %q (notes %+v)", v.Value, tt.want, v.Notes)
			}
			if got := v.ExitCode(); got != tt.exit {
				t.Errorf("ExitCode = %d, want %d", got, tt.exit)
			}
			if v.Value == verdict.Unusable && len(v.Workloads) != 0 {
				t.Errorf("unusable verdict carries %d workload verdicts", len(v.Workloads))
			}
			gotW := map[string]bool{}
			gotC := map[string]bool{}
			for _, wv := range v.Workloads {
				gotW[wv.Phase+"/"+wv.Workload+"="+string(wv.Value)] = true
				for _, c := range wv.Checks {
					gotC[c.Phase+"/"+c.Workload+"/"+c.Metric+"="+string(c.Value)] = true
				}
				if wv.Value == verdict.NotMeasured && wv.Reason == "" {
					t.Errorf("%s/%s not measured without a reason", wv.Phase, wv.Workload)
				}
				if wv.Why != "" {
					t.Errorf("%s/%s: verdict wrote words %q (report words its reason)", wv.Phase, wv.Workload, wv.Why)
				}
			}
			for _, w := range tt.workloads {
				if !gotW[w] {
					t.Errorf("missing workload verdict %s; got %v", w, gotW)
				}
			}
			for _, c := range tt.checks {
				if !gotC[c] {
					t.Errorf("missing check %s; got %v", c, gotC)
				}
			}
			if tt.note != nil && !hasNote(v.Notes, *tt.note) {
				t.Errorf("notes %+v lack %+v", v.Notes, *tt.note)
			}
		})
	}
}

func TestCheckNumbers(t *testing.T) {
	r := run(map[string]result.Thr{"read": {P95MS: 300, ErrorRate: rate(0.001)}},
		phase("sustain", true, false, wl("read", 2811, 3, 2, 312)))
	v := verdict.Thresholds(r)
	if len(v.Workloads) != 1 || len(v.Workloads[0].Checks) != 2 {
		t.Fatalf("got %+v", v.Workloads)
	}
	p95, er := v.Workloads[0].Checks[0], v.Workloads[0].Checks[1]
	if p95.Metric != "p95" || p95.Limit != 300 || p95.Observed != 312 || p95.Count != 2811 {
		t.Errorf("p95 check = %+v", p95)
	}
	if er.Metric != "error_rate" || er.Count != 2814 || er.Observed != 3.0/2814 || er.Value != verdict.Fail {
		t.Errorf("error_rate check = %+v", er)
	}
	if er.Reason != verdict.ReasonAbandonedExcluded || er.Abandoned != 2 || er.Why != "" {
		t.Errorf("error_rate reason %q, abandoned %d, why %q: want the abandoned note as a code and its count", er.Reason, er.Abandoned, er.Why)
	}
}

func TestWorstAndExitCode(t *testing.T) {
	order := []verdict.Value{verdict.Pass, verdict.Improvement, verdict.Inconclusive,
		verdict.Regression, verdict.Fail, verdict.NotMeasured, verdict.Unusable}
	for i := range order {
		for j := range order {
			want := order[max(i, j)]
			if got := verdict.Worst(order[i], order[j]); got != want {
				t.Errorf("Worst(%s, %s) = %s, want %s", order[i], order[j], got, want)
			}
		}
	}
	if got := verdict.Worst(); got != verdict.NotMeasured {
		t.Errorf("Worst() = %s, want not measured", got)
	}
	exits := map[verdict.Value]int{
		verdict.Pass: 0, verdict.Improvement: 0, verdict.Inconclusive: 0,
		verdict.Fail: 1, verdict.Regression: 1, verdict.NotMeasured: 1, "": 1, "bogus": 1,
		verdict.Unusable: 3,
	}
	for val, want := range exits {
		if got := (verdict.Verdict{Value: val}).ExitCode(); got != want {
			t.Errorf("ExitCode(%q) = %d, want %d", val, got, want)
		}
	}
}

// hasNote: some note of ns is want, its Detail containing want's.
func hasNote(ns []verdict.Note, want verdict.Note) bool {
	for _, n := range ns {
		if want.Detail != "" && strings.Contains(n.Detail, want.Detail) {
			n.Detail = want.Detail
		}
		if reflect.DeepEqual(n, want) {
			return true
		}
	}
	return false
}
