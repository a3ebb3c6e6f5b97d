package result_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/loadgate/loadgate/gate/result"
)

// rec is one offered request of a synthetic run.
type rec struct {
	phase, wl int
	outcome   string // "ok", "abandoned" or a failure class
	dueUS     int64  // latency from the due time
	sendUS    int64  // latency from the send time (service time)
	late      bool
}

var (
	phaseNames    = []string{"sustain", "recover"}
	workloadNames = []string{"api_read", "ingest"}
)

// genRecs returns n deterministic requests with a long-tailed latency.
func genRecs(seed uint64, n int) []rec {
	rng := rand.New(rand.NewPCG(seed, 42))
	recs := make([]rec, n)
	for i := range recs {
		svc := int64(200 + rng.ExpFloat64()*3000)
		if rng.IntN(50) == 0 {
			svc += rng.Int64N(2_000_000) // tail up to 2 s
		}
		lateness := int64(rng.IntN(400))
		r := rec{phase: rng.IntN(2), wl: rng.IntN(2), outcome: "ok", sendUS: svc, dueUS: svc + lateness, late: lateness > 250}
		switch k := rng.IntN(100); {
		case k < 3:
			r.outcome = "status_503"
		case k < 4:
			r.outcome = "timeout"
		case k < 5:
			r.outcome = "abandoned"
		}
		recs[i] = r
	}
	return recs
}

func record(t testing.TB, h *hdrhistogram.Histogram, v int64) {
	t.Helper()
	if err := h.RecordValue(v); err != nil {
		t.Fatal(err)
	}
}

func encode(t testing.TB, h *hdrhistogram.Histogram) string {
	t.Helper()
	s, err := result.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// build returns the result a run of recs would produce, each phase lasting
// durS seconds, started at start.
func build(t testing.TB, recs []rec, start time.Time, durS float64, stalled float64) *result.Result {
	t.Helper()
	type hists struct{ lat, svc *hdrhistogram.Histogram }
	hs := make([][]hists, len(phaseNames))
	r := &result.Result{
		Schema:      result.Schema,
		Scenario:    result.Scenario{Name: "demo-api", Hash: "sha256:0123abcd", Scale: 1, MaxInFlight: 512, TimeoutMS: 5000},
		StartedAt:   start,
		FinishedAt:  start.Add(time.Duration(durS*float64(len(phaseNames))) * time.Second),
		Machine:     result.Machine{Host: "runner-1", CPUs: 8, Kernel: "6.8.0", Go: "go1.26.8", OS: "linux", Arch: "amd64"},
		Topology:    result.Topology{StackCPUs: "0-3", LoadCPUs: "4-7", GOMAXPROCS: 4, Pinned: true, TargetPath: "container-network"},
		Target:      "api:8080",
		Usable:      true,
		LateAfterMS: 0.25,
		Stalled:     stalled,
		Precision:   result.Precision,
		Warmup:      result.Warmup{DurationS: 10, Offered: 120, Recorded: 120},
		NotMeasured: []string{"client-side TLS cost"},
		Synthetic:   []string{"the demo stack"},
	}
	lateness := result.NewHistogram()
	for i, name := range phaseNames {
		p := result.Phase{Name: name, Pattern: "constant", Judged: i == 0, Recover: name == "recover", DurationS: durS}
		for _, wn := range workloadNames {
			p.Workloads = append(p.Workloads, result.Workload{Name: wn, Failures: map[string]int64{}})
			hs[i] = append(hs[i], hists{result.NewHistogram(), result.NewHistogram()})
		}
		r.Phases = append(r.Phases, p)
	}
	for _, q := range recs {
		w := &r.Phases[q.phase].Workloads[q.wl]
		h := hs[q.phase][q.wl]
		w.Offered++
		r.Offered++
		r.Recorded++
		if q.outcome == "abandoned" {
			w.Abandoned++
			continue
		}
		record(t, lateness, q.dueUS-q.sendUS)
		if q.late {
			w.Late++
			r.Late++
		}
		w.Completed++
		if q.outcome != "ok" {
			w.Failed++
			w.Failures[q.outcome]++
			continue
		}
		w.Succeeded++
		record(t, h.lat, q.dueUS)
		record(t, h.svc, q.sendUS)
	}
	r.LatenessHist = encode(t, lateness)
	r.LatenessMS = result.Summarize(lateness)
	for i := range r.Phases {
		for j := range r.Phases[i].Workloads {
			w := &r.Phases[i].Workloads[j]
			h := hs[i][j]
			w.Histogram, w.ServiceH = encode(t, h.lat), encode(t, h.svc)
			w.LatencyMS, w.ServiceMS = result.Summarize(h.lat), result.Summarize(h.svc)
			w.Throughput = result.Throughput{
				CompletedPerS: float64(w.Completed) / durS,
				OfferedPerS:   float64(w.Offered) / durS,
			}
		}
	}
	r.Generator = r.GeneratorBehind() // as the engine's build step does
	return r
}

var sampleStart = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

// sample is the result stored in testdata/result.json.
func sample(t testing.TB) *result.Result {
	r := build(t, genRecs(1, 600), sampleStart, 60, 0.5)
	r.Commit = "9f1c2e7"
	r.Side = "head"
	er := 0.001
	r.Scenario.Thresholds = map[string]result.Thr{"api_read": {P95MS: 300, ErrorRate: &er}}
	r.Stack = &result.Stack{Services: []result.Service{{Name: "api", CPUAvgPct: 41.5, CPUPeakPct: 88, MemPeakBytes: 52 << 20, Samples: 120}}}
	r.Wait = &result.Wait{MarginMS: 0.084, Wakes: 596, WakeDelayMaxMS: 0.064, EarlyWakes: 596, SpunS: 0.048}
	return r
}
