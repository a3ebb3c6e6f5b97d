package result_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/result"
)

// Merging the results of two halves of a run gives exactly the result of
// recording the whole run at once: histograms, summaries, counts,
// throughput.
func TestMergeIsExact(t *testing.T) {
	recs := genRecs(3, 5000)
	half := len(recs) / 2
	a := build(t, recs[:half], sampleStart, 30, 0.5)
	b := build(t, recs[half:], sampleStart.Add(time.Hour), 30, 0.25)
	b.Usable, b.Unusable = false, []string{"pinning did not hold"}
	b.NotMeasured = append(b.NotMeasured, "stack memory")
	aBefore, bBefore := encodeResult(t, a), encodeResult(t, b)

	got, err := result.Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}

	want := build(t, recs, sampleStart, 60, 0.75)
	want.FinishedAt = b.FinishedAt
	want.Warmup = result.Warmup{DurationS: 20, Offered: 240, Recorded: 240}
	want.Usable, want.Unusable = false, []string{"pinning did not hold"}
	want.NotMeasured = []string{"client-side TLS cost", "stack memory"}
	if !reflect.DeepEqual(got, want) {
		gw, ww := got.PhaseNamed("sustain").Workload("api_read"), want.PhaseNamed("sustain").Workload("api_read")
		t.Errorf("Merge(halves) differs from the whole run\n got sustain/api_read %+v %+v\nwant sustain/api_read %+v %+v",
			gw.LatencyMS, gw.Throughput, ww.LatencyMS, ww.Throughput)
	}
	hg, _ := got.Phases[0].Workloads[0].LatencyHistogram()
	hw, _ := want.Phases[0].Workloads[0].LatencyHistogram()
	if !hg.Equals(hw) {
		t.Error("merged histogram differs from the whole run's")
	}
	if p := got.Check(); p != nil {
		t.Errorf("merged result inconsistent: %q", p)
	}
	if string(encodeResult(t, a)) != string(aBefore) || string(encodeResult(t, b)) != string(bBefore) {
		t.Error("Merge modified its arguments")
	}
	got.Phases[0].Workloads[0].Failures["x"] = 1
	got.NotMeasured[0] = "changed"
	if _, ok := a.Phases[0].Workloads[0].Failures["x"]; ok || a.NotMeasured[0] == "changed" {
		t.Error("merged result shares memory with a")
	}
}

func TestMergeKeepsAndCombines(t *testing.T) {
	a, b := sample(t), sample(t)
	b.StartedAt = sampleStart.Add(-time.Minute)
	b.Machine.Host = "runner-2"
	b.Interrupted = true
	b.Stack = &result.Stack{Services: []result.Service{
		{Name: "api", CPUAvgPct: 20, CPUPeakPct: 95, MemPeakBytes: 1 << 20, Samples: 40},
		{Name: "db", CPUAvgPct: 5, Samples: 40},
	}}
	m, err := result.Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if m.Machine.Host != "runner-1" || !m.StartedAt.Equal(b.StartedAt) || !m.FinishedAt.Equal(a.FinishedAt) || !m.Interrupted {
		t.Errorf("kept: host %s, started %v, finished %v, interrupted %v", m.Machine.Host, m.StartedAt, m.FinishedAt, m.Interrupted)
	}
	wantStack := &result.Stack{Services: []result.Service{
		{Name: "api", CPUAvgPct: (41.5*120 + 20*40) / 160, CPUPeakPct: 95, MemPeakBytes: 52 << 20, Samples: 160},
		{Name: "db", CPUAvgPct: 5, Samples: 40},
	}}
	if !reflect.DeepEqual(m.Stack, wantStack) {
		t.Errorf("stack = %+v", m.Stack)
	}
	if m.Offered != 1200 || m.Phases[0].DurationS != 120 || m.Stalled != 1 {
		t.Errorf("sums: offered %d, duration %v, stalled %v", m.Offered, m.Phases[0].DurationS, m.Stalled)
	}
	if w, wa := m.Phases[0].Workloads[0], a.Phases[0].Workloads[0]; w.Throughput != wa.Throughput || w.LatencyMS.Count != 2*wa.LatencyMS.Count {
		t.Errorf("doubling a result: throughput %+v (was %+v)", w.Throughput, wa.Throughput)
	}
}

func TestMergeRefuses(t *testing.T) {
	a := sample(t)
	other := sample(t)
	other.Scenario.Hash = "sha256:ffff"
	_, err := result.Merge(a, other)
	if want := `result: merge: different scenarios: hash "sha256:0123abcd" (demo-api) and "sha256:ffff" (demo-api)`; err == nil || err.Error() != want {
		t.Errorf("different hashes: %v", err)
	}

	other = sample(t)
	other.Phases[1].Name = "burst"
	_, err = result.Merge(a, other)
	if want := `result: merge: different phases: ["sustain" "recover"] and ["sustain" "burst"]`; err == nil || err.Error() != want {
		t.Errorf("different phases: %v", err)
	}

	other = sample(t)
	other.Phases[0].Workloads = other.Phases[0].Workloads[:1]
	_, err = result.Merge(a, other)
	if want := `result: merge: phases[0] (sustain): different workloads: ["api_read" "ingest"] and ["api_read"]`; err == nil || err.Error() != want {
		t.Errorf("different workloads: %v", err)
	}

	other = sample(t)
	other.Phases[1].Workloads[1].ServiceH = ""
	_, err = result.Merge(a, other)
	if want := `result: merge: b: phases[1].workloads[1].service_histogram holds 0 samples, its summary counts 163`; err == nil || err.Error() != want {
		t.Errorf("summary without histogram: %v", err)
	}
}

// Two rounds' steal merges into the steal of both windows together, the
// shares recomputed over the summed window; a round without it, or on other
// cores, leaves the merge without any (one round's share is not the
// merge's: it once kept a's pointer, its window and its share).
func TestMergeSteal(t *testing.T) {
	a, b := sample(t), sample(t)
	a.Steal = &result.Steal{WindowS: 10, Load: result.StealCores{CPUs: "1", StolenS: 1, Share: 0.1},
		Stack: &result.StealCores{CPUs: "2-3", StolenS: 0.4, Share: 0.02}}
	b.Steal = &result.Steal{WindowS: 30, Load: result.StealCores{CPUs: "1", StolenS: 1, Share: 1.0 / 30},
		Stack: &result.StealCores{CPUs: "2-3", StolenS: 2, Share: 2.0 / 60}}
	m, err := result.Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	want := &result.Steal{WindowS: 40, Load: result.StealCores{CPUs: "1", StolenS: 2, Share: 0.05},
		Stack: &result.StealCores{CPUs: "2-3", StolenS: 2.4, Share: 2.4 / 80}}
	if !reflect.DeepEqual(m.Steal, want) {
		t.Errorf("merged steal %+v (stack %+v), want %+v (stack %+v)", m.Steal, m.Steal.Stack, want, want.Stack)
	}
	if m.Steal == a.Steal || m.Steal.Stack == a.Steal.Stack {
		t.Error("the merge shares a's steal")
	}
	if g := m.GeneratorBehind(); g != nil && (g.StealShare == nil || *g.StealShare != 0.05) {
		t.Errorf("generator steal share %v", g.StealShare)
	}
	for name, change := range map[string]func(r *result.Result){
		"b without steal":      func(r *result.Result) { r.Steal = nil },
		"b on other cores":     func(r *result.Result) { r.Steal.Load.CPUs = "0" },
		"b without a stack":    func(r *result.Result) { r.Steal.Stack = nil },
		"b on a stack's other": func(r *result.Result) { r.Steal.Stack.CPUs = "0" },
	} {
		c := sample(t)
		c.Steal = &result.Steal{WindowS: 30, Load: result.StealCores{CPUs: "1"}, Stack: &result.StealCores{CPUs: "2-3"}}
		change(c)
		if m, err := result.Merge(a, c); err != nil || m.Steal != nil {
			t.Errorf("%s: merged steal %+v, %v; want none", name, m.Steal, err)
		}
	}
}

// Steal that no loadgate writes is refused with its field.
func TestDecodeRefusesBadSteal(t *testing.T) {
	for _, tc := range []struct{ steal, want string }{
		{`{"window_s":1,"load":{"cpus":"1","stolen_seconds":2,"share":2}}`, "steal.load.share 2 is not within 0…1"},
		{`{"window_s":1,"load":{"cpus":"","stolen_seconds":0,"share":0}}`, "steal.load.cpus is empty"},
		{`{"window_s":-1,"load":{"cpus":"1","stolen_seconds":0,"share":0}}`, "steal.window_s -1 is not a duration"},
		{`{"window_s":1,"load":{"cpus":"1","stolen_seconds":0,"share":0},"stack":{"cpus":"0","stolen_seconds":-3,"share":0}}`, "steal.stack.stolen_seconds -3 is not a duration"},
	} {
		_, err := result.Decode(strings.NewReader(`{"schema":"loadgate/result/v1","steal":` + tc.steal + `}`))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", tc.steal, err, tc.want)
		}
	}
}

// Two rounds' early wakes sum (wakes, early wakes, the CPU spun) and keep the
// larger margin and delay; a round without one (an older loadgate, a fake
// clock) leaves the merge without any: a sum over half the rounds would
// understate the CPU the early wake cost.
func TestMergeWait(t *testing.T) {
	a, b := sample(t), sample(t)
	a.Wait = &result.Wait{MarginMS: 0.1, Wakes: 100, WakeDelayMaxMS: 0.08, EarlyWakes: 90, SpunS: 0.5}
	b.Wait = &result.Wait{MarginMS: 0.3, Wakes: 50, WakeDelayMaxMS: 0.02, EarlyWakes: 50, SpunS: 0.25}
	m, err := result.Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	want := &result.Wait{MarginMS: 0.3, Wakes: 150, WakeDelayMaxMS: 0.08, EarlyWakes: 140, SpunS: 0.75}
	if !reflect.DeepEqual(m.Wait, want) {
		t.Errorf("merged wait %+v, want %+v", m.Wait, want)
	}
	if m.Wait == a.Wait || m.Wait == b.Wait {
		t.Error("the merge shares a round's wait")
	}
	b.Wait = nil
	if m, err := result.Merge(a, b); err != nil || m.Wait != nil {
		t.Errorf("merge with a round without a wait: %+v, %v; want none", m.Wait, err)
	}
}

// A wait no loadgate writes (a negative or non-finite figure) is refused, named.
func TestDecodeRefusesBadWait(t *testing.T) {
	for _, tc := range []struct{ wait, want string }{
		{`{"margin_ms":-0.1,"wakes":1,"wake_delay_max_ms":0,"early_wakes":0,"spun_seconds":0}`, "wait.margin_ms -0.1 is not a duration"},
		{`{"margin_ms":0.1,"wakes":1,"wake_delay_max_ms":0,"early_wakes":0,"spun_seconds":-2}`, "wait.spun_seconds -2 is not a duration"},
		{`{"margin_ms":0.1,"wakes":-1,"wake_delay_max_ms":0,"early_wakes":0,"spun_seconds":0}`, "wait: negative count: wakes -1, early_wakes 0"},
		{`{"margin_ms":0.1,"wakes":1,"wake_delay_max_ms":0,"early_wakes":0,"spun_seconds":0,"spun_share":1}`, `unknown field "spun_share"`},
	} {
		_, err := result.Decode(strings.NewReader(`{"schema":"loadgate/result/v1","wait":` + tc.wait + `}`))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", tc.wait, err, tc.want)
		}
	}
}

// MergeAll is Merge folded over the rounds, to the byte: histograms,
// summaries, counts; its arguments untouched. A round that does not merge
// is named by its index.
func TestMergeAllIsFoldedMerge(t *testing.T) {
	recs := genRecs(7, 8000)
	var rs []*result.Result
	for i := range 4 {
		part := recs[i*len(recs)/4 : (i+1)*len(recs)/4]
		r := build(t, part, sampleStart.Add(time.Duration(i)*time.Hour), 30, float64(i)/4)
		// WebSocket session figures on one workload; connect only from the second round on.
		w := &r.Phases[0].Workloads[0]
		for _, f := range []struct {
			h *string
			s **result.Summary
		}{{&w.FirstMessageH, &w.FirstMessageMS}, {&w.ConnectH, &w.ConnectMS}} {
			if f.h == &w.ConnectH && i == 0 {
				continue
			}
			h := result.NewHistogram()
			for v := range int64(50 + 10*i) {
				record(t, h, 1000+v*37)
			}
			s := result.Summarize(h)
			*f.h, *f.s = encode(t, h), &s
		}
		rs = append(rs, r)
	}

	before := make([]string, len(rs))
	for i, r := range rs {
		before[i] = string(encodeResult(t, r))
	}
	want := rs[0]
	for _, r := range rs[1:] {
		var err error
		if want, err = result.Merge(want, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := result.MergeAll(rs)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := string(encodeResult(t, got)), string(encodeResult(t, want)); g != w {
		t.Errorf("MergeAll differs from folded Merge:\n got %.300s\nwant %.300s", g, w)
	}
	for i, r := range rs {
		if string(encodeResult(t, r)) != before[i] {
			t.Errorf("MergeAll modified rs[%d]", i)
		}
	}
	if one, _ := result.MergeAll(rs[:1]); one != rs[0] {
		t.Error("MergeAll of one result is not that result")
	}

	bad := build(t, recs[:100], sampleStart, 30, 0)
	bad.Scenario.Hash = "sha256:ffff"
	_, err = result.MergeAll([]*result.Result{rs[0], rs[1], bad})
	var me *result.MergeError
	if !errors.As(err, &me) || me.Index != 2 || !strings.Contains(err.Error(), "different scenarios") {
		t.Errorf("a third round of another scenario: %v", err)
	}
}
