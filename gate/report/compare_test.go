package report_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
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

// gateRound is one side's result of a gate round; round is its place in
// the run (0, 1, 2, …): run round/2+1, first when round is even, the other
// side paused, as a gate records it in result.Round.
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
	r.Round = &result.Round{Number: round/2 + 1, First: round%2 == 0, OtherPaused: true}
	total(r)
	return r
}

const baseCommit, headCommit = "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567", "3f1c2a9be07d5f6a1c2d3e4f5a6b7c8d9e0f1a2b"

// gateFixture builds a gate of len(jitter) rounds: base at factor 1, head at
// head.sustain·(1+jitter_i) and head.recover·(1+jitter_i).
func gateFixture(t *testing.T, head shape, jitter []float64, mutate func(base, head []*result.Result)) rounds.Outcome {
	var bs, hs []*result.Result
	for i, j := range jitter {
		// ABBA: base first in odd rounds (1, 3, …), head first in even ones.
		bAt, hAt := 2*i, 2*i+1
		if i%2 == 1 {
			bAt, hAt = hAt, bAt
		}
		bs = append(bs, gateRound(t, "base", baseCommit, bAt, shape{sustain: 1, recover: 1, ingestOK: 400}))
		h := head
		h.sustain *= 1 + j
		h.recover *= 1 + j
		hs = append(hs, gateRound(t, "head", headCommit, hAt, h))
	}
	if mutate != nil {
		mutate(bs, hs)
	}
	v, err := verdict.Gate(bs, hs, verdict.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rounds.Outcome{
		Base:    rounds.SideResults{Name: "base", Ref: "main", Commit: baseCommit, Results: bs},
		Head:    rounds.SideResults{Name: "head", Ref: "feature/cache", Commit: headCommit, Results: hs},
		Verdict: v,
	}
}

var calm = []float64{0, 0.004, -0.004, 0.002, -0.002}

func TestCompareGolden(t *testing.T) {
	cases := []struct {
		name string
		g    func(t *testing.T, fix fixture) rounds.Outcome
		want verdict.Value
		md   []string
	}{
		{"pass", func(t *testing.T, gateFixture fixture) rounds.Outcome {
			// A sequential gate that stopped at its third look: verdict.json
			// carries the look (sequential), the notes word it.
			g := gateFixture(t, shape{sustain: 1.01, recover: 1, ingestOK: 400}, calm, nil)
			g.Verdict.Sequential = &verdict.SeqDecision{Look: 3, Looks: 5, Rounds: 5, MaxRounds: 10, Spending: verdict.SpendOBF,
				Nominal: 0.95, Level: 0.0131, Spent: 0.0163, Stop: verdict.StopDecided}
			return g
		}, verdict.Pass, []string{"| api_read | p95 ms |", "**PASS** (exit 0)", "| base | main | `0a1b2c3d4e5f` | 2-5 | 0-1 | yes |", "1 base→head · 2 head→base"}},
		{"regression", func(t *testing.T, gateFixture fixture) rounds.Outcome {
			return gateFixture(t, shape{sustain: 1.31, recover: 1.02, apiFail: 12, ingestOK: 400}, calm, nil)
		}, verdict.Regression, []string{"+31.", "**regression**", "**REGRESSION** (exit 1)", "```mermaid", "xychart-beta"}},
		{"improvement", func(t *testing.T, gateFixture fixture) rounds.Outcome {
			return gateFixture(t, shape{sustain: 0.7, recover: 0.72, ingestOK: 400}, calm, nil)
		}, verdict.Improvement, []string{"−30.", "**IMPROVEMENT** (exit 0)"}},
		{"inconclusive", func(t *testing.T, gateFixture fixture) rounds.Outcome {
			return gateFixture(t, shape{sustain: 1.15, recover: 1, ingestOK: 400}, []float64{0, 0.07, -0.07}, nil)
		}, verdict.Inconclusive, []string{"inconclusive: to decide, ≈", "rounds (now 3)", "**INCONCLUSIVE** (exit 0)"}},
		{"not_measured", func(t *testing.T, gateFixture fixture) rounds.Outcome {
			return gateFixture(t, shape{sustain: 1, recover: 1, ingestOK: 400}, calm[:3], func(_, hs []*result.Result) {
				hs[1] = gateRound(t, "head", headCommit, 2, shape{sustain: 1, recover: 1, ingestOK: 0, ingestFail: 400})
			})
		}, verdict.NotMeasured, []string{"head round 2: no successful request (0 of 400", "**NOT MEASURED** (exit 1)"}},
		{"generator_behind", func(t *testing.T, gateFixture fixture) rounds.Outcome {
			// The regression fixture, with head round 2's generator far behind
			// its schedule: the regression is not called, the round is named.
			// Its host took 12% of the generator's core meanwhile (steal):
			// the note says so, and that only a quieter host avoids it.
			return gateFixture(t, shape{sustain: 1.31, recover: 1.02, apiFail: 12, ingestOK: 400}, calm, func(_, hs []*result.Result) {
				behindSchedule(t, hs[1])
				hs[1].Steal = &result.Steal{WindowS: 60, Load: result.StealCores{CPUs: "1", StolenS: 7.2, Share: 0.12}}
			})
		}, verdict.Inconclusive, []string{
			"limit 5 ms), the hypervisor took 12% of the generator's cores (steal); its lateness at p99 (833 ms) could explain the change at p95",
			"or lower the rate; the steal is other guests' work on this machine's host, which no pinning avoids: only a quieter host does",
			"> **GENERATOR BEHIND SCHEDULE** — head round 2: 57% of requests late (2 122 of 3 724, limit 1%), lateness p99 833 ms (n=3 724, limit 5 ms), the hypervisor took 12% of the generator's cores (steal). These rounds are not trustworthy",
			"— not called a regression: the generator fell behind its schedule in head round 2",
			"head round 2 is not trustworthy: generator behind schedule: 57% of requests late",
			"**INCONCLUSIVE** (exit 0)",
		}},
		{"resource_overrides", func(t *testing.T, gateFixture fixture) rounds.Outcome {
			// Head's compose file set cpu_shares and rtprio to starve base:
			// removed by loadgate (compose's TestRegression_HeadStarvesBaseByResources)
			// and named, the verdict unchanged.
			return gateFixture(t, shape{sustain: 1, recover: 1, ingestOK: 400}, calm, func(_, hs []*result.Result) {
				for _, h := range hs {
					h.Topology.Overrides = []result.Override{
						{Service: "api", Kind: result.OverrideResource, From: "cpu_shares=262144"},
						{Service: "api", Kind: result.OverrideResource, From: "ulimits.rtprio=99"},
					}
				}
			})
		}, verdict.Pass, []string{"head's compose file set resources loadgate overrode (they are loadgate's, alike for both sides): service api: cpu_shares=262144 removed; service api: ulimits.rtprio=99 removed"}},
		{"unusable", func(t *testing.T, gateFixture fixture) rounds.Outcome {
			return gateFixture(t, shape{sustain: 1, recover: 1, ingestOK: 400}, calm[:3], func(bs, _ []*result.Result) {
				bs[1].Offered += 2
				bs[1].Topology.Pinned, bs[1].Topology.PinnedReason = false, "cpuset not available"
			})
		}, verdict.Unusable, []string{"> **UNUSABLE GATE** — base round 2: " + report.Count(3726) + " requests offered, " + report.Count(3724) + " recorded", "**UNUSABLE** (exit 3)", "base round 2 was not pinned (cpuset not available)"}},
	}
	for _, mode := range []string{"", "duet_"} {
		for _, tc := range cases {
			t.Run(mode+tc.name, func(t *testing.T) {
				compareGolden(t, mode, tc.name, tc.g, tc.want, tc.md)
			})
		}
	}
}

// fixture builds a gate's outcome: gateFixture (ABBA rounds) or
// duetFixture.
type fixture func(t *testing.T, head shape, jitter []float64, mutate func(base, head []*result.Result)) rounds.Outcome

// duetFixture is gateFixture with duet rounds (the default): both sides at
// the same instants, neither paused.
func duetFixture(t *testing.T, head shape, jitter []float64, mutate func(base, head []*result.Result)) rounds.Outcome {
	g := gateFixture(t, head, jitter, func(bs, hs []*result.Result) {
		for i := range bs {
			for _, r := range []*result.Result{bs[i], hs[i]} {
				r.Round = &result.Round{Number: i + 1, Mode: result.RoundDuet}
				r.StartedAt = bs[i].StartedAt
			}
		}
		if mutate != nil {
			mutate(bs, hs)
		}
	})
	return g
}

// compareGolden renders one case in every format (mode "duet_": duet
// rounds; the pull request comment, report.md and the text report) and
// checks them against their goldens.
func compareGolden(t *testing.T, mode, name string, fix func(*testing.T, fixture) rounds.Outcome, want verdict.Value, facts []string) {
	tc := struct {
		name string
		want verdict.Value
		md   []string
	}{mode + name, want, facts}
	{
		{
			var g rounds.Outcome
			if mode == "" {
				g = fix(t, gateFixture)
			} else {
				g = fix(t, duetFixture)
				tc.md = nil // the facts are an ABBA gate's
			}
			if mode != "" && g.Verdict.Value != tc.want {
				t.Logf("duet verdict %s (ABBA: %s)", g.Verdict.Value, tc.want)
				tc.want = g.Verdict.Value
			}
			if g.Verdict.Value != tc.want {
				t.Fatalf("fixture verdict %s, want %s: %+v %q", g.Verdict.Value, tc.want, g.Verdict.Workloads, report.NoteTexts(g.Verdict.Notes))
			}
			out := map[string]string{}
			for ext, fn := range map[string]func(io.Writer, rounds.Outcome) error{
				"md": report.CompareMarkdown, "txt": report.CompareText, "json": report.CompareJSON, "svg": report.ComparePlotSVG,
				"comment.md": report.CompareSummary,
			} {
				if mode != "" && (ext == "json" || ext == "svg") {
					continue
				}
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
			text := out["txt"]
			if i := strings.Index(text, "\nverdict: "); i < 0 || strings.Contains(text[i+1:], "\nnote:") {
				t.Error("text: the verdict is not last")
			}
			checkAnswer(t, out)
			if mode != "" {
				return
			}
			var js map[string]any
			if err := json.Unmarshal([]byte(out["json"]), &js); err != nil {
				t.Fatal(err)
			}
			if js["schema"] != report.GateVerdictSchema || js["value"] != string(tc.want) || strings.Contains(out["json"], "null") {
				t.Errorf("json: %v %v, or a null", js["schema"], js["value"])
			}
			if err := xml.Unmarshal([]byte(out["svg"]), new(struct{})); err != nil {
				t.Errorf("svg is not well-formed XML: %v", err)
			}
		}
	}
}

// checkAnswer: the comment, report.md and the text report open with the
// same headline (one renderer), the comment's third line; everything past
// the answer in the comment is collapsed.
func checkAnswer(t *testing.T, out map[string]string) {
	t.Helper()
	cm := strings.Split(out["comment.md"], "\n")
	if len(cm) < 3 || !strings.HasPrefix(cm[0], "# loadgate gate: ") || !strings.HasPrefix(cm[2], "**") {
		t.Fatalf("the comment does not open with its title and headline:\n%s", out["comment.md"])
	}
	head := cm[2]
	if md := strings.Split(out["md"], "\n"); len(md) < 3 || md[2] != head {
		t.Errorf("report.md's headline %q differs from the comment's %q", md[min(2, len(md)-1)], head)
	}
	plain := strings.NewReplacer("**", "", "`", "", "\\", "").Replace(head)
	_, plain, _ = strings.Cut(plain, " ") // the symbol
	if first, _, _ := strings.Cut(out["txt"], "\n"); first != plain {
		t.Errorf("the text report's first line %q, want the headline %q", first, plain)
	}
	top, _, _ := strings.Cut(out["comment.md"], "<details>")
	for _, jargon := range []string{"ABBA", "Holm", "Newcombe", "order statistics", "obf", " pts", "CI from", "look ", "due time", "spending", "!="} {
		if strings.Contains(top, jargon) {
			t.Errorf("the comment's first screen says %q:\n%s", jargon, top)
		}
	}
	// One chart, before the collapsed sections: a chart per workload and
	// phase made the comment 8 KB (issue 31).
	if n := strings.Count(out["comment.md"], "```mermaid"); n > 1 || n != strings.Count(top, "```mermaid") {
		t.Errorf("the comment has %d charts, %d of them before its details; want one, inline", n, strings.Count(top, "```mermaid"))
	}
	if strings.Count(out["comment.md"], "<details>") != strings.Count(out["comment.md"], "</details>") {
		t.Error("unbalanced <details>")
	}
}

// behindSchedule makes r a round whose generator fell far behind its
// schedule: 57% of its requests late, lateness p99 833 ms (issue 8's run).
func behindSchedule(t *testing.T, r *result.Result) {
	t.Helper()
	r.Late = r.Offered * 57 / 100
	h := result.NewHistogram()
	for i := range r.Offered {
		v := int64(19_800) // µs
		switch {
		case i >= r.Offered*98/100:
			v = 833_000
		case i >= r.Offered/2:
			v = 400_000
		}
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := result.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	r.LatenessHist, r.LatenessMS = enc, result.Summarize(h)
}

// Twelve unpinned rounds are one note; results that do not record how they
// ran are not said to have alternated or paused; warm-up failures are
// said once per side.
func TestGateNotesFromData(t *testing.T) {
	jitter := make([]float64, 12)
	g := gateFixture(t, shape{sustain: 1, recover: 1, ingestOK: 400}, jitter, func(bs, hs []*result.Result) {
		for _, r := range append(slices.Clone(bs), hs...) {
			r.Topology.Pinned, r.Topology.PinnedReason = false, "no cpuset controller"
		}
		hs[2].Warmup = result.Warmup{DurationS: 10, Offered: 120, Recorded: 120}
		hs[5].Warmup = result.Warmup{DurationS: 10, Offered: 120, Recorded: 120}
		hs[2].Warmup.AddFailures(map[string]int64{"status 404": 4})
		hs[5].Warmup.AddFailures(map[string]int64{"status 404": 1, "status 400": 2})
	})
	var md bytes.Buffer
	if err := report.CompareMarkdown(&md, g); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"- rounds 1–12 of both sides were not pinned (no cpuset controller): their numbers carry more of the machine's noise\n",
		"- head warm-up (rounds 3, 6): 7 of 240 failed (status 404 5, status 400 2); excluded from every number",
		"alternating which went first (ABBA); the idle side's stack was paused.",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if n := strings.Count(md.String(), "not pinned"); n != 1 {
		t.Errorf("%d not-pinned notes, want 1", n)
	}

	// Result files compared as given: no round data, base always earlier.
	for _, r := range append(slices.Clone(g.Base.Results), g.Head.Results...) {
		r.Round = nil
	}
	for i, r := range g.Head.Results {
		r.StartedAt = g.Base.Results[i].StartedAt.Add(time.Minute)
	}
	md.Reset()
	if err := report.CompareMarkdown(&md, g); err != nil {
		t.Fatal(err)
	}
	if s := md.String(); strings.Contains(s, "alternating") || strings.Contains(s, "; the idle side's stack was paused.") ||
		!strings.Contains(s, "Each round ran both sides one after the other, base first (as their start times say)") ||
		!strings.Contains(s, "the results do not say that the idle side's stack was paused") {
		t.Errorf("a compare of result files claims how they ran:\n%s", s[:min(len(s), 1500)])
	}
	var js bytes.Buffer
	if err := report.CompareJSON(&js, g); err != nil {
		t.Fatal(err)
	}
	f, err := report.DecodeGateVerdict(&js)
	if err != nil || f.Paused || f.Order != "base first" || len(f.FirstSides) != 12 {
		t.Errorf("gate verdict file: %v; order %q first %q paused %v", err, f.Order, f.FirstSides, f.Paused)
	}
}
