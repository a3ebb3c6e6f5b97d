package report_test

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/sweep"
	"github.com/loadgate/loadgate/gate/verdict"
)

// sweepStep is a 10 s step at rate of workload "work": served successes
// at latMS, the rest of the offered requests failed with class, plus
// abandoned ones.
func sweepStep(t *testing.T, k int, rate float64, served int, latMS float64, class string, abandoned int64) sweep.Step {
	t.Helper()
	offered := int64(rate * 10)
	h := result.NewHistogram()
	for i := 0; i < served; i++ {
		_ = h.RecordValue(int64(latMS*1000) + int64(i%7)*100)
	}
	enc, err := result.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	failures := map[string]int64{}
	failed := offered - int64(served) - abandoned
	if failed > 0 {
		failures[class] = failed
	}
	completed := offered - abandoned
	if class == "timeout" {
		completed = int64(served)
	}
	r := &result.Result{Schema: result.Schema, Offered: offered, Recorded: offered, Usable: true,
		Scenario: result.Scenario{Name: "demo-sweep", Hash: "sha256:0123456789abcdef", Thresholds: map[string]result.Thr{"work": {P95MS: 150, ErrorRate: ptrF(0.001)}}},
		Phases: []result.Phase{{Name: "sustain", Judged: true, DurationS: 10, Workloads: []result.Workload{{
			Name: "work", Offered: offered, Succeeded: int64(served), Failed: max(failed, 0), Abandoned: abandoned, Completed: completed,
			Failures: failures, LatencyMS: result.Summarize(h), Histogram: enc, ServiceH: enc}}}},
		Stack: &result.Stack{Services: []result.Service{{Name: "pool", CPUAvgPct: 3.5 * rate / 20, CPUPeakPct: 9, MemPeakBytes: 12 << 20, Samples: 10}}}}
	st, err := sweep.NewStep(sweep.StepInput{Number: k, Rate: rate, Result: "steps/0" + string(rune('0'+k)) + "/result.json", Res: r, Verdict: verdict.Thresholds(r), Floor: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func ptrF(v float64) *float64 { return &v }

func sweepOf(t *testing.T, steps ...sweep.Step) *sweep.Sweep {
	sw := &sweep.Sweep{Schema: sweep.Schema, Scenario: result.Scenario{Name: "demo-sweep", Hash: "sha256:0123456789abcdef", File: "examples/demo/sweep.yaml", MaxInFlight: 64, TimeoutMS: 2000},
		StartedAt: time.Date(2026, 12, 1, 13, 0, 0, 0, time.UTC), FinishedAt: time.Date(2026, 12, 1, 13, 1, 30, 0, time.UTC),
		Machine:  result.Machine{Host: "ci", CPUs: 2, Kernel: "6.1", Go: "go1.26", OS: "linux", Arch: "amd64"},
		Topology: result.Topology{StackCPUs: "0", LoadCPUs: "1", GOMAXPROCS: 1, Pinned: true, TargetPath: "container-network"},
		Target:   "pool:8082 (172.18.0.2:8082)", Rates: []float64{20, 40, 60, 76, 84, 100}, StepS: 10, WarmupS: 3, HoldRule: sweep.Rule,
		NotMeasured: []string{}, Synthetic: []string{"the demo stack's pool: a timer stands for the work"}}
	sw.Steps = steps
	sweep.Conclude(sw)
	return sw
}

func renderSweep(t *testing.T, sw *sweep.Sweep) (md, svg, text string) {
	t.Helper()
	var a, b, c bytes.Buffer
	if err := report.SweepMarkdown(&a, sw, "sweep.svg"); err != nil {
		t.Fatal(err)
	}
	if err := report.SweepPlotSVG(&b, sw); err != nil {
		t.Fatal(err)
	}
	if err := report.SweepText(&c, sw); err != nil {
		t.Fatal(err)
	}
	// The SVG is well-formed XML.
	dec := xml.NewDecoder(bytes.NewReader(b.Bytes()))
	for {
		if _, err := dec.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("sweep.svg is not well-formed: %v", err)
		}
	}
	return a.String(), b.String(), c.String()
}

func TestSweepGolden(t *testing.T) {
	cases := map[string]func(t *testing.T) *sweep.Sweep{
		"sweep_honest_refusal": func(t *testing.T) *sweep.Sweep {
			return sweepOf(t, sweepStep(t, 1, 20, 200, 51, "", 0), sweepStep(t, 2, 40, 400, 51, "", 0), sweepStep(t, 3, 60, 600, 51, "", 0),
				sweepStep(t, 4, 76, 760, 52, "", 0), sweepStep(t, 5, 84, 790, 60, "status 503", 0), sweepStep(t, 6, 100, 792, 62, "status 503", 0))
		},
		"sweep_queueing": func(t *testing.T) *sweep.Sweep {
			return sweepOf(t, sweepStep(t, 1, 20, 200, 51, "", 0), sweepStep(t, 2, 40, 400, 51, "", 0),
				sweepStep(t, 3, 60, 480, 900, "timeout", 60), sweepStep(t, 4, 76, 560, 1500, "timeout", 100))
		},
		"sweep_interrupted": func(t *testing.T) *sweep.Sweep {
			s2 := sweepStep(t, 2, 40, 150, 51, "", 0)
			s2.Interrupted, s2.Usable, s2.Held = true, false, false
			s2.NotHeld = []sweep.Reason{sweep.ReasonInterrupted, sweep.ReasonUnusable}
			sw := sweepOf(t, sweepStep(t, 1, 20, 200, 51, "", 0), s2)
			sw.Interrupted = true
			return sw
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			md, svg, text := renderSweep(t, mk(t))
			checkGolden(t, name+".md.golden", md)
			checkGolden(t, name+".svg.golden", svg)
			checkGolden(t, name+".txt.golden", text)
		})
	}
}

// TestSweepQueuedStepIsNotItsCompletions: the step that fell behind reads
// its percentiles as lower bounds over every request not refused fast,
// never the latency of the ones that completed (issue 12's classic lie).
func TestSweepQueuedStepIsNotItsCompletions(t *testing.T) {
	sw := sweepOf(t, sweepStep(t, 1, 20, 200, 51, "", 0), sweepStep(t, 2, 76, 500, 5, "timeout", 60))
	md, _, text := renderSweep(t, sw)
	row := ""
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "| 2 | 76.0 |") && row == "" { // the steps table comes first
			row = l
		}
	}
	if cells := strings.Split(row, " | "); len(cells) < 12 || cells[8] != "≥ "+report.MS(2000) || cells[9] != "≥ "+report.MS(2000) || cells[10] != "760 (260 unfinished)" {
		t.Errorf("the queued step's row does not account for every request:\n%s", row)
	}
	if !strings.Contains(text, "p99 ≥ "+report.MS(2000)+" ms (n=760, 260 unfinished)") {
		t.Errorf("text:\n%s", text)
	}
	if sw.Manner != sweep.Queueing {
		t.Errorf("manner %q", sw.Manner)
	}
}

// Issue 45: a step behind its schedule by a lateness that explains nothing
// it measured holds, and its banner says the lateness was noted and why
// the step is judged all the same.
func TestSweepLatenessNoted(t *testing.T) {
	mark := func(s sweep.Step) sweep.Step {
		s.Generator = &result.Generator{BehindSchedule: true, Late: 6, Offered: 200, LateShare: 0.03, LatenessP99MS: 1.8, LatenessCount: 200, LateShareLimit: 0.01, LatenessP99LimitMS: 5}
		s.Lateness = &sweep.Lateness{LatenessMS: result.Summary{Count: 200, P95: 0.05, P99: 1.8, Max: 1.8}, Explains: []string{}}
		return s
	}
	sw := sweepOf(t, mark(sweepStep(t, 1, 20, 200, 51, "", 0)), sweepStep(t, 2, 40, 400, 51, "", 0))
	md, _, _ := renderSweep(t, sw)
	want := "its lateness (p95 0.0500 ms, max 1.80 ms) cannot explain what the step measured: the step is judged on it"
	if !strings.Contains(md, "GENERATOR BEHIND SCHEDULE at step 1") || !strings.Contains(md, want) || sw.SustainableRate == nil || *sw.SustainableRate != 40 {
		t.Errorf("sustainable %v; markdown lacks %q:\n%s", sw.SustainableRate, want, md)
	}
}
