package report_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

// spread returns n latencies (µs) at the quantiles (i+½)/n of a lognormal
// with median med (µs) and log-sd 0.5: a deterministic sample.
func spread(n int, med float64) []int64 {
	out := make([]int64, n)
	for i := range out {
		z := math.Sqrt2 * math.Erfinv(2*(float64(i)+0.5)/float64(n)-1)
		out[i] = max(int64(med*math.Exp(0.5*z)), 1)
	}
	return out
}

// gwl is one workload of a gate round: ok successes around median med
// (µs), failed failures.
func gwl(t *testing.T, name string, dur float64, ok int, med float64, failed int64) result.Workload {
	t.Helper()
	h := result.NewHistogram()
	for _, v := range spread(ok, med) {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := result.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	w := result.Workload{Name: name, Offered: int64(ok) + failed, Succeeded: int64(ok), Failed: failed,
		Failures: map[string]int64{}, Completed: int64(ok) + failed, Histogram: enc, ServiceH: enc}
	if failed > 0 {
		w.Failures["status 503"] = failed
	}
	w.LatencyMS = result.Summarize(h)
	w.ServiceMS = w.LatencyMS
	w.Throughput = result.Throughput{CompletedPerS: float64(w.Completed) / dur, OfferedPerS: float64(w.Offered) / dur}
	return w
}

// shape of one side's round: factors on the medians and failures.
type shape struct {
	sustain, recover float64 // latency factors
	apiFail          int64   // api_read failures in sustain
	ingestOK         int     // ingest successes in sustain (400 normally)
	ingestFail       int64
}

func gateRound(t *testing.T, side, commit string, round int, s shape) *result.Result {
	r := &result.Result{
		Schema: result.Schema,
		Scenario: result.Scenario{Name: "demo-api", Hash: "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
			File: "examples/demo/scenario.yaml", Scale: 1, MaxInFlight: 512, TimeoutMS: 5000,
			Thresholds: map[string]result.Thr{"api_read": {P95MS: 300, ErrorRate: frac(0.01)}, "ingest": {ErrorRate: frac(0.05)}}},
		StartedAt:  time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(round) * 10 * time.Minute),
		FinishedAt: time.Date(2026, 3, 1, 12, 4, 0, 0, time.UTC).Add(time.Duration(round) * 10 * time.Minute),
		Machine:    result.Machine{Host: "ci-runner-7", CPUs: 8, Kernel: "6.8.0-45-generic", Go: "go1.26.0", OS: "linux", Arch: "amd64"},
		Topology:   result.Topology{StackCPUs: "2-5", LoadCPUs: "0-1", GOMAXPROCS: 2, Pinned: true, TargetPath: "container-network"},
		Target:     "api:8080", Commit: commit, Side: side, Usable: true, LateAfterMS: 1,
		Precision: result.Precision,
		Phases: []result.Phase{
			{Name: "ramp", Pattern: "ramp", DurationS: 60, Workloads: []result.Workload{
				gwl(t, "api_read", 60, 432, 9870, 0)}},
			{Name: "sustain", Pattern: "constant", Judged: true, DurationS: 180, Workloads: []result.Workload{
				gwl(t, "api_read", 180, 1944-int(s.apiFail), 12300*s.sustain, s.apiFail),
				gwl(t, "ingest", 180, s.ingestOK, 25100*s.sustain, s.ingestFail)}},
			{Name: "recover", Pattern: "constant", Recover: true, DurationS: 60, Workloads: []result.Workload{
				gwl(t, "api_read", 60, 648, 13100*s.recover, 0),
				gwl(t, "ingest", 60, 300, 26000*s.recover, 0)}},
		},
		Stack: &result.Stack{Services: []result.Service{
			{Name: "api", CPUAvgPct: 41.27 * s.sustain, CPUPeakPct: 187.5, MemPeakBytes: 48 << 20, Samples: 240},
			{Name: "db", CPUAvgPct: 12.04, CPUPeakPct: 63.9, MemPeakBytes: 312 << 20, Samples: 240}}},
		NotMeasured: []string{"latency of failed requests (counted and named, never timed)"},
		Synthetic:   []string{"the demo stack: a small Go service with an in-memory store, built FROM scratch"},
	}
	total(r)
	return r
}

const baseCommit, headCommit = "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567", "3f1c2a9be07d5f6a1c2d3e4f5a6b7c8d9e0f1a2b"

// gateFixture builds a gate of len(jitter) rounds: base at factor 1, head at
// head.sustain·(1+jitter_i) and head.recover·(1+jitter_i).
func gateFixture(t *testing.T, head shape, jitter []float64, mutate func(base, head []*result.Result)) report.GateReport {
	var bs, hs []*result.Result
	for i, j := range jitter {
		bs = append(bs, gateRound(t, "base", baseCommit, 2*i, shape{sustain: 1, recover: 1, ingestOK: 400}))
		h := head
		h.sustain *= 1 + j
		h.recover *= 1 + j
		hs = append(hs, gateRound(t, "head", headCommit, 2*i+1, h))
	}
	if mutate != nil {
		mutate(bs, hs)
	}
	v, err := verdict.Gate(bs, hs, verdict.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return report.GateReport{
		Base:    report.GateSide{Name: "base", Ref: "main", Commit: baseCommit, Results: bs},
		Head:    report.GateSide{Name: "head", Ref: "feature/cache", Commit: headCommit, Results: hs},
		Verdict: v,
	}
}

var calm = []float64{0, 0.004, -0.004, 0.002, -0.002}

func TestCompareGolden(t *testing.T) {
	cases := []struct {
		name string
		g    func(t *testing.T) report.GateReport
		want verdict.Value
		md   []string
	}{
		{"pass", func(t *testing.T) report.GateReport {
			return gateFixture(t, shape{sustain: 1.01, recover: 1, ingestOK: 400}, calm, nil)
		}, verdict.Pass, []string{"| api_read | p95 ms |", "**PASS** (exit 0)", "| base | main | `0a1b2c3d4e5f` | 2-5 | 0-1 | yes |", "1 base→head · 2 head→base"}},
		{"regression", func(t *testing.T) report.GateReport {
			return gateFixture(t, shape{sustain: 1.31, recover: 1.02, apiFail: 12, ingestOK: 400}, calm, nil)
		}, verdict.Regression, []string{"+31.", "**regression**", "**REGRESSION** (exit 1)", "```mermaid", "xychart-beta"}},
		{"improvement", func(t *testing.T) report.GateReport {
			return gateFixture(t, shape{sustain: 0.7, recover: 0.72, ingestOK: 400}, calm, nil)
		}, verdict.Improvement, []string{"-30.", "**IMPROVEMENT** (exit 0)"}},
		{"inconclusive", func(t *testing.T) report.GateReport {
			return gateFixture(t, shape{sustain: 1.15, recover: 1, ingestOK: 400}, []float64{0, 0.07, -0.07}, nil)
		}, verdict.Inconclusive, []string{"inconclusive: to decide, ≈", "rounds (now 3)", "**INCONCLUSIVE** (exit 0)"}},
		{"not_measured", func(t *testing.T) report.GateReport {
			return gateFixture(t, shape{sustain: 1, recover: 1, ingestOK: 400}, calm[:3], func(_, hs []*result.Result) {
				hs[1] = gateRound(t, "head", headCommit, 3, shape{sustain: 1, recover: 1, ingestOK: 0, ingestFail: 400})
			})
		}, verdict.NotMeasured, []string{"head round 2: no successful request (0 of 400", "**NOT MEASURED** (exit 1)"}},
		{"unusable", func(t *testing.T) report.GateReport {
			return gateFixture(t, shape{sustain: 1, recover: 1, ingestOK: 400}, calm[:3], func(bs, _ []*result.Result) {
				bs[1].Offered += 2
				bs[1].Topology.Pinned, bs[1].Topology.PinnedReason = false, "cpuset not available"
			})
		}, verdict.Unusable, []string{"> **UNUSABLE GATE** — base round 2 (0a1b2c3d4e5f): offered", "**UNUSABLE** (exit 3)", "base round 2 was not pinned (cpuset not available)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.g(t)
			if g.Verdict.Value != tc.want {
				t.Fatalf("fixture verdict %s, want %s: %+v %q", g.Verdict.Value, tc.want, g.Verdict.Workloads, g.Verdict.Reasons)
			}
			out := map[string]string{}
			for ext, fn := range map[string]func(io.Writer, report.GateReport) error{
				"md": report.CompareMarkdown, "txt": report.CompareText, "json": report.CompareJSON, "svg": report.ComparePlotSVG,
			} {
				var a, b bytes.Buffer
				if err := fn(&a, g); err != nil {
					t.Fatal(err)
				}
				if err := fn(&b, g); err != nil || a.String() != b.String() {
					t.Fatalf("%s: not deterministic", ext)
				}
				out[ext] = a.String()
				checkGolden(t, "gate_"+tc.name+"."+ext+".golden", a.String())
			}
			md := out["md"]
			for _, s := range tc.md {
				if !strings.Contains(md, s) {
					t.Errorf("markdown lacks %q", s)
				}
			}
			var heads []string
			for _, l := range strings.Split(md, "\n") {
				if strings.HasPrefix(l, "## ") {
					heads = append(heads, l)
				}
			}
			if heads[len(heads)-1] != "## Verdict" {
				t.Errorf("the verdict is not last: %q", heads)
			}
			if tc.want != verdict.Unusable {
				for _, h := range []string{"## What ran", "## Sustain (judged)", "## Recover (judged, recovery)", "## Stack", "## Verdict"} {
					if !strings.Contains(md, "\n"+h+"\n") {
						t.Errorf("markdown lacks %q", h)
					}
				}
				if i, j := strings.Index(md, "## Sustain"), strings.Index(md, "## Recover"); i > j {
					t.Error("recover before sustain")
				}
			}
			var js map[string]any
			if err := json.Unmarshal([]byte(out["json"]), &js); err != nil {
				t.Fatal(err)
			}
			if js["schema"] != report.VerdictSchema || js["value"] != string(tc.want) || strings.Contains(out["json"], "null") {
				t.Errorf("json: %v %v, or a null", js["schema"], js["value"])
			}
			if err := xml.Unmarshal([]byte(out["svg"]), new(struct{})); err != nil {
				t.Errorf("svg is not well-formed XML: %v", err)
			}
			text := out["txt"]
			if i := strings.Index(text, "\nverdict: "); i < 0 || strings.Contains(text[i+1:], "\nnote:") {
				t.Error("text: the verdict is not last")
			}
		})
	}
}
