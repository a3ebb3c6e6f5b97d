package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/bisect"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

// bisected runs a bisection of commits whose api_read p95 is level[i] (good
// first) on gates that say what a 10% tolerance would; undecidedAt (1-based)
// makes that gate inconclusive, failAt makes it end without a verdict.
func bisected(t *testing.T, level []float64, undecidedAt, failAt int) (bisect.Outcome, []string) {
	t.Helper()
	all := make([]bisect.Commit, len(level))
	idx := map[string]int{}
	for i := range all {
		all[i] = bisect.Commit{SHA: fmt.Sprintf("%02d%038x", i, i), Subject: fmt.Sprintf("change %d", i)}
		idx[all[i].SHA] = i
	}
	if len(all) > 3 {
		all[3].Subject = "cache `items` *less*"
	}
	k := 0
	var lines []string
	o, _ := bisect.Run(context.Background(), bisect.Config{Good: all[0], Commits: all[1:], Out: "/out",
		Progress: func(g bisect.Gate, est int, done bool) {
			lines = append(lines, report.BisectProgress(g, est, len(level)-1, done))
		},
		Now: func() time.Time { return time.Unix(0, 0) },
	}, func(ctx context.Context, base, head, dir string) (verdict.Verdict, error) {
		k++
		if k == failAt {
			return verdict.Verdict{}, rounds.Unusablef("gate: interrupted")
		}
		r := level[idx[head]] / level[idx[base]]
		v := verdict.Pass
		switch {
		case k == undecidedAt:
			v = verdict.Inconclusive
		case r > 1.12:
			v = verdict.Regression
		}
		c := verdict.Comparison{Phase: "sustain", Workload: "api_read", Metric: "p95", Ratio: r, CILow: r / 1.02, CIHigh: r * 1.02, Value: v, Interval: verdict.IntervalDuet}
		return verdict.Verdict{Value: v, Workloads: []verdict.WorkloadVerdict{{Phase: "sustain", Workload: "api_read", Value: v, Comparisons: []verdict.Comparison{c}}}}, nil
	})
	return o, lines
}

// The summary of each way a bisection ends: the answer first, then the gates.
func TestBisectGolden(t *testing.T) {
	for _, c := range []struct {
		name                string
		level               []float64
		undecidedAt, failAt int
		want                []string
	}{
		{"found", []float64{10, 10.1, 10, 12.5, 12.6, 12.5, 12.7}, 0, 0,
			[]string{"**FOUND:** `03", "“cache \\`items\\` \\*less\\*”", "against its parent `02", "4 gates for 6 commits between good and bad (at most 4)"}},
		{"creep", []float64{100, 104, 108.2, 112.5, 117, 121.7}, 0, 0,
			[]string{"**NOT ATTRIBUTABLE:**", "spread over several commits", "+4.0%"}},
		{"creep-at-bad", []float64{100, 106, 112.4}, 0, 0,
			[]string{"**NOT ATTRIBUTABLE:**", "not gated again"}},
		{"undecided", []float64{10, 10.1, 10, 12.5, 12.6, 12.5, 12.7}, 2, 0,
			[]string{"**UNDECIDED:** gate 2", "inconclusive", "(3 commits)"}},
		{"stopped", []float64{10, 10.1, 10, 12.5, 12.6, 12.5, 12.7}, 0, 2,
			[]string{"**STOPPED:** gate 2", "(gate: interrupted)", "| no verdict |"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, lines := bisected(t, c.level, c.undecidedAt, c.failAt)
			var md bytes.Buffer
			if err := report.BisectMarkdown(&md, o, "/out"); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "bisect-"+c.name+".md.golden", md.String()+"\n<!-- stderr -->\n"+strings.Join(lines, "\n")+"\n")
			for _, w := range c.want {
				if !strings.Contains(md.String(), w) {
					t.Errorf("summary lacks %q:\n%s", w, md.String())
				}
			}
			if a := report.BisectAnswer(o); strings.Contains(a, "**") || strings.Contains(a, "`0") {
				t.Errorf("plain answer has markdown: %s", a)
			}
			var js bytes.Buffer
			if err := report.BisectJSON(&js, o); err != nil {
				t.Fatal(err)
			}
			var back map[string]any
			if err := json.Unmarshal(js.Bytes(), &back); err != nil || back["schema"] != bisect.Schema {
				t.Errorf("bisect.json: %v %v", err, back["schema"])
			}
		})
	}
}
