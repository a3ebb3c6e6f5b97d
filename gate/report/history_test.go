package report_test

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/history"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

// historyResult is commit's result: workload "api" of phase "steady" took
// about latMS on host.
func historyResult(t *testing.T, commit, host string, latMS float64) *result.Result {
	t.Helper()
	h := result.NewHistogram()
	for i := 0; i < 400; i++ {
		_ = h.RecordValue(int64(latMS * 1000 * (0.8 + 0.25*float64(i)/399)))
	}
	enc, err := result.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	s := result.Summarize(h)
	return &result.Result{Schema: result.Schema, Commit: commit, Usable: true, Offered: 400, Recorded: 400,
		Scenario: result.Scenario{Name: "checkout", Hash: "sha256:" + strings.Repeat("ab", 32), Scale: 1},
		Machine:  result.Machine{Host: host, CPUModel: "AMD EPYC 7763", CPUs: 4},
		Phases: []result.Phase{{Name: "steady", Judged: true, DurationS: 20, Workloads: []result.Workload{{Name: "api",
			Offered: 400, Succeeded: 400, Failures: map[string]int64{}, LatencyMS: s, ServiceMS: s, Histogram: enc, ServiceH: enc, Completed: 400}}}},
		NotMeasured: []string{}}
}

// historyFixture: 12 entries on three runners; a +30% step at entry 5,
// then (since entry 7, the release tag) five +5% steps, each a pass at its
// gate and a regression together.
func historyFixture(t *testing.T) history.Analysis {
	t.Helper()
	ratios := []float64{1.004, 0.996, 1.002, 1.30, 0.998, 1.003, 1.05, 1.05, 1.05, 1.05, 1.05}
	runner := []float64{1.00, 1.04, 0.97}
	day := time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)
	commit := func(i int) string { return fmt.Sprintf("%02x%038x", 0x10+i*7, i) }
	lat := 40.0
	var es []history.Entry
	for i := 0; i < 12; i++ {
		if i > 0 {
			lat *= ratios[i-1]
		}
		host := fmt.Sprintf("runner-%d", i%3)
		e := history.Entry{Schema: history.Schema, Commit: commit(i), Ref: "main", Date: day.AddDate(0, 0, i),
			Result: historyResult(t, commit(i), host, lat*runner[i%3])}
		if i > 0 {
			r := ratios[i-1]
			v := verdict.Pass
			if r > 1.2 {
				v = verdict.Regression
			}
			e.Base = commit(i - 1)
			e.Steps = []history.Step{{Phase: "steady", Workload: "api", Metric: "p95", Ratio: r, CILow: r / 1.025, CIHigh: r * 1.025,
				Confidence: 0.95, Interval: verdict.IntervalRounds, Rounds: 6, BaseN: 2400, HeadN: 2400, Value: v}}
		}
		es = append(es, e)
	}
	a, err := history.Analyze(history.NewChain(es), history.Options{Since: commit(6), Detect: history.DetectOptions{Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	a.Scenario = "checkout"
	return a
}

func TestHistoryGolden(t *testing.T) {
	a := historyFixture(t)
	var md, svg bytes.Buffer
	if err := report.HistoryMarkdown(&md, a); err != nil {
		t.Fatal(err)
	}
	k := history.Key{Phase: "steady", Workload: "api", Metric: "p95"}
	if err := report.HistorySVG(&svg, a, k); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "history.md.golden", md.String())
	checkGolden(t, "history.svg.golden", svg.String())
	for _, want := range []string{"**REGRESSION** since", "change point at entry 5", "+27.6%"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	dec := xml.NewDecoder(&svg)
	for {
		if _, err := dec.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
	}
	if err := report.HistorySVG(io.Discard, a, history.Key{Workload: "none"}); err == nil {
		t.Error("an unknown series: no error")
	}
}

func TestHistoryEmpty(t *testing.T) {
	a, err := history.Analyze(history.Chain{}, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := report.HistoryMarkdown(&b, a); err != nil || !strings.Contains(b.String(), "No entry yet") {
		t.Errorf("empty history: %q %v", b.String(), err)
	}
}

// The comment's line: this head against the history, golden.
func TestHistoryTrendLine(t *testing.T) {
	a := historyFixture(t)
	last := a.Chain.Entries[len(a.Chain.Entries)-1]
	gr := rounds.Outcome{Base: rounds.SideResults{Name: "base", Commit: last.Commit},
		Verdict: verdict.Verdict{Confidence: 0.95, Workloads: []verdict.WorkloadVerdict{{Phase: "steady", Workload: "api",
			Comparisons: []verdict.Comparison{{Phase: "steady", Workload: "api", Metric: "p95", Ratio: 1.03, CILow: 1.03 / 1.025,
				CIHigh: 1.03 * 1.025, Interval: verdict.IntervalRounds, Rounds: 6, Value: verdict.Pass}}}}}}
	tr, ok := a.HeadTrend(gr)
	if !ok {
		t.Fatal("no trend")
	}
	line := report.HistoryTrendLine(tr, a)
	checkGolden(t, "history_trend.md.golden", line+"\n")
	for _, want := range []string{"`main`", "+31.5%", "a regression beyond the +15% cumulative tolerance", "6 gate(s)", "+3.0% included"} {
		if !strings.Contains(line, want) {
			t.Errorf("line lacks %q:\n%s", want, line)
		}
	}
}

// Regression (act run of the history workflow): a history of one entry
// read "1 entries" and "+0.0%, 95% interval +0.0% … +0.0%, over 0 link(s)".
func TestRegression_HistoryOfOneEntry(t *testing.T) {
	e := history.Entry{Schema: history.Schema, Commit: strings.Repeat("b9", 20), Ref: "main", Date: time.Date(2026, 12, 6, 4, 0, 0, 0, time.UTC),
		Result: historyResult(t, strings.Repeat("b9", 20), "runner-0", 105)}
	a, err := history.Analyze(history.NewChain([]history.Entry{e}), history.Options{Detect: history.DetectOptions{Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	a.Scenario = "e2e-api"
	var md bytes.Buffer
	if err := report.HistoryMarkdown(&md, a); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1 entry, 2026-12-06", "since `b9b9b9b9b9b9`: nothing to chain yet"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
}
