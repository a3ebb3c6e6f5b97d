package result_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/result"
)

// PoolLatency is the merge of the rounds' histograms: the same as the
// histogram of result.Merge, with a result given twice counted once.
func TestPoolLatencyIsMerge(t *testing.T) {
	recs := genRecs(7, 4000)
	a := build(t, recs[:2000], sampleStart, 30, 0)
	b := build(t, recs[2000:], sampleStart.Add(time.Hour), 30, 0)
	m, err := result.Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := m.PhaseNamed("sustain").Workload("api_read").LatencyHistogram()
	got, err := result.PoolLatency([]*result.Result{a, b, a, nil}, "sustain", "api_read")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equals(want) {
		t.Errorf("pooled %d samples, merge %d", got.TotalCount(), want.TotalCount())
	}
	if h, err := result.PoolLatency([]*result.Result{a}, "nope", "api_read"); err != nil || h.TotalCount() != 0 {
		t.Errorf("absent phase: %v, %d samples", err, h.TotalCount())
	}
	bad := sample(t)
	bad.Phases[0].Workloads[0].Histogram = "not base64"
	if _, err := result.PoolLatency([]*result.Result{bad}, bad.Phases[0].Name, bad.Phases[0].Workloads[0].Name); err == nil {
		t.Error("a histogram that does not decode pooled without an error")
	}
}

func TestPoolServicesIsMerge(t *testing.T) {
	a, b := sample(t), sample(t)
	b.Stack.Services = []result.Service{{Name: "api", CPUAvgPct: 10, CPUPeakPct: 99, MemPeakBytes: 10, Samples: 40}, {Name: "db", Samples: 1}}
	m, err := result.Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	got := result.PoolServices([]*result.Result{a, b, b})
	if !reflect.DeepEqual(got, m.Stack.Services) {
		t.Errorf("pooled %+v, merge %+v", got, m.Stack.Services)
	}
	if a.Stack.Services[0].Samples != 120 {
		t.Error("PoolServices modified its input")
	}
	if result.PoolServices([]*result.Result{{}}) != nil {
		t.Error("no stack pooled into services")
	}
}

// Warm-up failures by class travel through Encode/Decode and Merge, and
// Check holds them to their sum.
func TestWarmupFailures(t *testing.T) {
	r := sample(t)
	r.Warmup.AddFailures(map[string]int64{"status 404": 3, "status 400": 1, "timeout": 0})
	r.Warmup.AddFailures(map[string]int64{"status 404": 1})
	if r.Warmup.Failed != 5 || r.Warmup.Failures["status 404"] != 4 || len(r.Warmup.Failures) != 2 {
		t.Fatalf("warmup %+v", r.Warmup)
	}
	var buf bytes.Buffer
	if err := r.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"failures": {`) {
		t.Errorf("warm-up failures not encoded:\n%s", buf.String()[:600])
	}
	d, err := result.Decode(&buf)
	if err != nil || !reflect.DeepEqual(d.Warmup, r.Warmup) {
		t.Fatalf("decoded warmup %+v, %v", d.Warmup, err)
	}
	m, err := result.Merge(r, d)
	if err != nil || m.Warmup.Failed != 10 || m.Warmup.Failures["status 400"] != 2 {
		t.Errorf("merged warmup %+v, %v", m.Warmup, err)
	}
	d.Warmup.Failed = 2
	if p := strings.Join(d.Check(), "\n"); !strings.Contains(p, "warmup: failures by class sum to 5, failed is 2") {
		t.Errorf("Check = %q", p)
	}
	// No failure: the keys are absent, as before they existed.
	buf.Reset()
	if err := sample(t).Encode(&buf); err != nil || strings.Contains(buf.String(), `"failed": 0`) {
		t.Errorf("a warm-up without failures encodes failed: %v", err)
	}
}

// A merge of rounds is no one round.
func TestMergeDropsRound(t *testing.T) {
	a, b := sample(t), sample(t)
	a.Round = &result.Round{Number: 1, First: true, OtherPaused: true}
	m, err := result.Merge(a, b)
	if err != nil || m.Round != nil || a.Round == nil {
		t.Errorf("merged round %+v (a %+v), %v", m.Round, a.Round, err)
	}
}
