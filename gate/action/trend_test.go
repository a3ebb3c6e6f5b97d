package action_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/history"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

// trendResult is commit's result of scenario demo-api: workload api_read
// of phase sustain at about latMS.
func trendResult(t *testing.T, commit string, latMS float64) *result.Result {
	t.Helper()
	h := result.NewHistogram()
	for i := 0; i < 300; i++ {
		_ = h.RecordValue(int64(latMS * 1000 * (0.9 + 0.2*float64(i)/299)))
	}
	enc, err := result.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	s := result.Summarize(h)
	return &result.Result{Schema: result.Schema, Commit: commit, Usable: true, Offered: 300, Recorded: 300,
		Scenario: result.Scenario{Name: "demo-api", Hash: "sha256:" + strings.Repeat("cd", 32), Scale: 1},
		Machine:  result.Machine{Host: "runner", CPUs: 4},
		Phases: []result.Phase{{Name: "sustain", Judged: true, DurationS: 15, Workloads: []result.Workload{{Name: "api_read",
			Offered: 300, Succeeded: 300, Failures: map[string]int64{}, LatencyMS: s, ServiceMS: s, Histogram: enc, ServiceH: enc, Completed: 300}}}},
		NotMeasured: []string{}}
}

// latencyStep is a gate's p95 comparison of api_read: ratio ±2%.
func latencyStep(ratio float64) verdict.Comparison {
	return verdict.Comparison{Phase: "sustain", Workload: "api_read", Metric: "p95", Ratio: ratio, CILow: ratio / 1.02,
		CIHigh: ratio * 1.02, Interval: verdict.IntervalRounds, Rounds: 6, Value: verdict.Pass}
}

// trendClone is a clone whose origin's data branch holds four entries of
// demo-api, each +6% on the one before (three links): the branch is
// +19.1% since its first entry.
func trendClone(t *testing.T) (dir string, commits []string) {
	t.Helper()
	root := t.TempDir()
	dir = filepath.Join(root, "clone")
	for _, args := range [][]string{{"init", "-q", "--bare", filepath.Join(root, "remote.git")}, {"init", "-q", dir},
		{"-C", dir, "remote", "add", "origin", filepath.Join(root, "remote.git")}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	s := &history.Store{Dir: dir}
	lat := 10.0
	day := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for i := 0; i < 4; i++ {
		c := fmt.Sprintf("%02x%038x", 0xa0+i, i)
		e := history.Entry{Schema: history.Schema, Commit: c, Ref: "release/1.4", Date: day.AddDate(0, 0, i), Result: trendResult(t, c, lat)}
		if i > 0 {
			e.Base = commits[i-1]
			e.Steps = []history.Step{{Phase: "sustain", Workload: "api_read", Metric: "p95", Ratio: 1.06, CILow: 1.06 / 1.02, CIHigh: 1.06 * 1.02,
				Confidence: 0.95, Interval: verdict.IntervalRounds, Rounds: 6, Value: verdict.Pass}}
		}
		if _, err := s.Append(context.Background(), e); err != nil {
			t.Fatal(err)
		}
		commits = append(commits, c)
		lat *= 1.06
	}
	return dir, commits
}

// A pull request on the release's tip gets the trend line: +19.1% so far
// and this head's +3%, a regression against 15% together. A base that is
// no entry, or no data branch, gets none; the gate's answer is unchanged.
func TestHistoryTrend(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git:", err)
	}
	dir, commits := trendClone(t)
	gr := rounds.Outcome{Scenario: result.Scenario{Name: "demo-api"}, Base: rounds.SideResults{Name: "base", Commit: commits[3]},
		Verdict: verdict.Verdict{Value: verdict.Pass, Confidence: 0.95, Workloads: []verdict.WorkloadVerdict{{Phase: "sustain", Workload: "api_read",
			Comparisons: []verdict.Comparison{latencyStep(1.03)}}}}}
	var log bytes.Buffer
	trend := action.HistoryTrend(&log)
	line := trend(context.Background(), dir, gr)
	for _, want := range []string{"**Against `release/1.4`'s history:**", "sustain · api_read p95 is +22.7%", "4 gate(s) chained", "a regression beyond the +15%"} {
		if !strings.Contains(line, want) {
			t.Errorf("trend line lacks %q:\n%s", want, line)
		}
	}
	gr.Base.Commit = strings.Repeat("e", 40)
	if line := trend(context.Background(), dir, gr); line != "" {
		t.Errorf("a base that is no entry: %q", line)
	}
	if line := trend(context.Background(), t.TempDir(), gr); line != "" || !strings.Contains(log.String(), "was not read") {
		t.Errorf("no clone: line %q, log %q", line, log.String())
	}
}

// Step.Trend's line ends the comment and comment.md.
func TestStepTrendLine(t *testing.T) {
	f := newFake(t)
	f.Login = "loadgate-ci"
	results := filepath.Join(t.TempDir(), "results")
	os.MkdirAll(results, 0o755)
	g := &fakeGate{out: results, gr: rounds.Outcome{
		Head:    rounds.SideResults{Name: "head", Results: []*result.Result{{Scenario: result.Scenario{Name: "demo-api"}}}},
		Verdict: passing(),
	}}
	s := newStep(t, f, "", g)
	s.step.Trend = func(context.Context, string, rounds.Outcome) string { return "**Against `main`'s history:** a line." }
	if res := s.run(t); res.ExitCode != 0 {
		t.Fatalf("exit %d", res.ExitCode)
	}
	ours := f.ours(prNum, "demo-api")
	if len(ours) != 1 || !strings.Contains(ours[0].Body, "**Against `main`'s history:** a line.") {
		t.Errorf("comment without the trend line: %+v", ours)
	}
	if b, _ := os.ReadFile(filepath.Join(results, "comment.md")); !strings.HasSuffix(string(b), "a line.\n") {
		t.Errorf("comment.md: %q", b)
	}
}
