package result_test

import (
	"reflect"
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
