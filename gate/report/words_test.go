package report_test

import (
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/verdict"
)

// One number, one spelling: the error rate the table prints is the one the
// verdict's words print (issue 9: "0.0355%" in the table, "0.036%" in the
// text of the same report).
func TestOneSpellingPerNumber(t *testing.T) {
	v := verdict.Verdict{Tolerance: 0.1, Confidence: 0.95}
	c := verdict.Comparison{Metric: verdict.MetricErrorRate, Base: 0.000355, Head: 0.0012, Diff: 0.000845,
		CILow: 0.0004, CIHigh: 0.0013, Interval: verdict.IntervalScore, Significant: true,
		Value: verdict.Regression, Reason: verdict.ReasonMoreErrors}
	why := report.ComparisonWhy(v, c)
	for _, want := range []string{"error rate " + report.Percent(0.000355) + " → 0.12%", "0.0355%", "(+0.08 points, 95% CI +0.04 … +0.13)", "beyond the tolerance (+0.00 points)"} {
		if !strings.Contains(why, want) {
			t.Errorf("why %q lacks %q", why, want)
		}
	}
	l := verdict.Comparison{Metric: "p95", Ratio: 0.868, CILow: 0.8, CIHigh: 0.95, Value: verdict.Improvement, Reason: verdict.ReasonFaster,
		Undecided: verdict.Improvement}
	v.Untrusted = []verdict.UntrustedRound{{Side: "base", Round: 1, Rounds: []int{1, 2, 3}}}
	if got := report.ComparisonWhy(v, l); got != "p95 −13.2% (95% CI −20.0% … −5.0%): faster beyond the +10.0% tolerance — not called an improvement: the generator fell behind its schedule in base rounds 1–3 (one result) (see the notes)" {
		t.Errorf("why %q", got)
	}
	n := verdict.Comparison{Metric: "p95", Rounds: 3, Reason: verdict.ReasonStraddles, Needs: &verdict.Need{Rounds: 13, SustainFactor: 2.5}}
	if got := report.ComparisonNeed(v, n); got != "≈ 13 rounds (now 3), or 3 rounds with a sustain ≈ 2.5× longer" {
		t.Errorf("need %q", got)
	}
	e := report.Explain(verdict.Verdict{Workloads: []verdict.WorkloadVerdict{{Comparisons: []verdict.Comparison{n}}}})
	if e.Workloads[0].Comparisons[0].Need == "" || n.Need != "" {
		t.Error("Explain did not word the copy, or changed its argument")
	}
}

// The words of issue 14: an assumed noise bound, the smallest change a
// gate could call, a budget that is the limit, a regression Holm did not
// keep, a calibration not used and why, a sequential look.
func TestNoiseFamilySequentialWords(t *testing.T) {
	v := verdict.Verdict{Tolerance: 0.1, Confidence: 0.95,
		Noise: &verdict.NoiseUse{Source: verdict.NoiseDefault, SD: 0.3, Pairs: 10, Rejected: verdict.NoiseOtherMachine,
			Mine: "runner-2 (2 CPUs, linux/amd64)", Theirs: "runner-1 (2 CPUs, linux/amd64)"}}
	c := verdict.Comparison{Metric: "p95", Rounds: 1, Ratio: 1.2, CILow: 0.67, CIHigh: 2.16, Interval: verdict.IntervalNoise, NoiseSD: 0.3,
		Detectable: 1.98, Value: verdict.Inconclusive, Reason: verdict.ReasonStraddles,
		Needs: &verdict.Need{Rounds: 14, Budget: 10, Calibrate: true}}
	if got, want := report.ComparisonWhy(v, c), "p95 +20.0% (95% CI −33.0% … +116.0%) [noise between runs not measured by one round: the default bound, a pair's log-sd 0.3]: the interval straddles the +10.0% tolerance; the smallest slowdown one round could call a regression is +98.0%"; got != want {
		t.Errorf("why\n got %q\nwant %q", got, want)
	}
	if got, want := report.ComparisonNeed(v, c), "≈ 14 rounds (now 1), more than the budget's 10: the budget is the limit, or a calibration of this machine (loadgate calibrate) in place of the default noise bound"; got != want {
		t.Errorf("need\n got %q\nwant %q", got, want)
	}
	f := verdict.Comparison{Metric: "p95", Rounds: 5, Ratio: 1.3, CILow: 1.12, CIHigh: 1.5, Interval: verdict.IntervalRounds,
		Value: verdict.Inconclusive, Reason: verdict.ReasonFamily, Family: &verdict.FamilyTest{P: 0.004, Rank: 3, Of: 20, Level: 0.0013889}}
	if got := report.ComparisonWhy(v, f); !strings.Contains(got, "not among the gate's comparisons (Holm: p 0.4%, rank 3 of 20, needs ≤ 0.139%)") {
		t.Errorf("family why %q", got)
	}
	if got := report.NoiseNote(v); !strings.Contains(got, "is not used: it was measured on another machine (here runner-2") {
		t.Errorf("noise note %q", got)
	}
	v.Sequential = &verdict.SeqDecision{Look: 2, Looks: 4, Rounds: 6, MaxRounds: 10, Spending: verdict.SpendOBF, Nominal: 0.95, Level: 0.0049, Spent: 0.0055, Stop: verdict.StopDecided}
	if got := report.SequentialNote(v); !strings.Contains(got, "look 2 of at most 4 after 6 rounds") || !strings.Contains(got, "stopped: every judged comparison is decided") {
		t.Errorf("sequential note %q", got)
	}
}
