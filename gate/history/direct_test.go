package history_test

import (
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/history"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

// directGate is a gate of head against base whose api p95 comparison is
// ratio (±2%) with the gate's call v at a 10% tolerance.
func directGate(base, head string, ratio float64, v verdict.Value) rounds.Outcome {
	c := verdict.Comparison{Phase: "steady", Workload: "api", Metric: "p95", Ratio: ratio, CILow: ratio / 1.02, CIHigh: ratio * 1.02,
		Interval: verdict.IntervalDuet, Rounds: 12, BaseN: 2400, HeadN: 2400, Value: v}
	e := verdict.Comparison{Phase: "steady", Workload: "api", Metric: verdict.MetricErrorRate, Value: verdict.Pass}
	return rounds.Outcome{Base: rounds.SideResults{Name: "base", Commit: base}, Head: rounds.SideResults{Name: "head", Commit: head},
		Verdict: verdict.Verdict{Value: v, Tolerance: 0.10, Confidence: 0.95,
			Workloads: []verdict.WorkloadVerdict{{Phase: "steady", Workload: "api", Value: v, Comparisons: []verdict.Comparison{c, e}}}}}
}

// Five +4% pushes with ±6% links: the chain cannot call the +21.7% since
// entry 0 (its interval widens with every link); a direct gate that
// measured it as a regression decides the rule, the chain stays the trend.
func TestDirectGateDecidesTheCumulativeRule(t *testing.T) {
	c := chain(t, []float64{1.04, 1.04, 1.04, 1.04, 1.04}, 0.06)
	chained, err := history.Analyze(c, history.Options{Since: sha(0)})
	if err != nil {
		t.Fatal(err)
	}
	if v := chained.Series[0].Total.Value; v == verdict.Regression || chained.Value() != verdict.Pass {
		t.Fatalf("the chain alone calls %s (rule %s): the test would prove nothing", v, chained.Value())
	}
	d, err := history.DirectFromGate(directGate(sha(0), sha(5), 1.217, verdict.Regression))
	if err != nil {
		t.Fatal(err)
	}
	a, err := history.Analyze(c, history.Options{Since: sha(0), Direct: &d})
	if err != nil {
		t.Fatal(err)
	}
	s := a.Series[0]
	if s.Direct == nil || s.Rule != verdict.Regression || a.Value() != verdict.Regression || s.Total.Value != chained.Series[0].Total.Value {
		t.Errorf("with the direct gate: direct %+v, rule %s, value %s, chain %s", s.Direct, s.Rule, a.Value(), s.Total.Value)
	}
	if len(d.Steps) != 1 || a.Direct.Tolerance != 0.10 {
		t.Errorf("direct steps %+v (error rates are not steps), tolerance %v", d.Steps, a.Direct.Tolerance)
	}

	// A direct pass decides too, even where the chain (here, tight links) would call a regression.
	tight := chain(t, []float64{1.04, 1.04, 1.04, 1.04, 1.04}, 0.005)
	d, _ = history.DirectFromGate(directGate(sha(0), sha(5), 1.05, verdict.Pass))
	a, err = history.Analyze(tight, history.Options{Since: sha(0), Direct: &d})
	if err != nil {
		t.Fatal(err)
	}
	if s := a.Series[0]; s.Total.Value != verdict.Regression || s.Rule != verdict.Pass || a.Value() != verdict.Pass {
		t.Errorf("direct pass: chain %s, rule %s, value %s", s.Total.Value, s.Rule, a.Value())
	}
}

// A direct gate of other commits than the change judged is refused, naming both.
func TestDirectGateOfOtherCommitsIsRefused(t *testing.T) {
	c := chain(t, []float64{1.04, 1.04, 1.04}, 0.06)
	for _, o := range []rounds.Outcome{
		directGate(sha(1), sha(3), 1.1, verdict.Pass), // against entry 1, not since (entry 0)
		directGate(sha(0), sha(2), 1.1, verdict.Pass), // of entry 2, not the last
	} {
		d, err := history.DirectFromGate(o)
		if err != nil {
			t.Fatal(err)
		}
		_, err = history.Analyze(c, history.Options{Since: sha(0), Direct: &d})
		if err == nil || !strings.Contains(err.Error(), result.ShortHash(sha(3))) || !strings.Contains(err.Error(), "direct gate ran "+result.ShortHash(o.Head.Commit)) {
			t.Errorf("%s against %s: %v", result.ShortHash(o.Head.Commit), result.ShortHash(o.Base.Commit), err)
		}
	}
	if _, err := history.DirectFromGate(rounds.Outcome{}); err == nil {
		t.Error("a gate without commits: no error")
	}
}

// A series the direct gate did not compare is left to the chain.
func TestDirectGateWithoutTheSeries(t *testing.T) {
	c := chain(t, []float64{1.3}, 0.02)
	o := directGate(sha(0), sha(1), 1.0, verdict.Pass)
	o.Verdict.Workloads[0].Workload, o.Verdict.Workloads[0].Comparisons[0].Workload = "other", "other"
	d, _ := history.DirectFromGate(o)
	a, err := history.Analyze(c, history.Options{Since: sha(0), Direct: &d})
	if err != nil {
		t.Fatal(err)
	}
	if s := a.Series[0]; s.Direct != nil || s.Rule != verdict.Regression || a.Value() != verdict.Regression {
		t.Errorf("api without a direct comparison: direct %+v, rule %s", s.Direct, s.Rule)
	}
}
