package history_test

import (
	"math"
	"testing"

	"github.com/loadgate/loadgate/gate/history"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

// gateOn is a gate of a head against base with one p95 step of ratio (±hw).
func gateOn(base string, ratio, hw float64) rounds.Outcome {
	st := step(ratio, hw)
	return rounds.Outcome{Base: rounds.SideResults{Name: "base", Commit: base},
		Verdict: verdict.Verdict{Confidence: 0.95, Workloads: []verdict.WorkloadVerdict{{Phase: "steady", Workload: "api",
			Comparisons: []verdict.Comparison{{Phase: "steady", Workload: "api", Metric: "p95", Ratio: st.Ratio,
				CILow: st.CILow, CIHigh: st.CIHigh, Interval: verdict.IntervalRounds, Rounds: 6, Value: verdict.Pass}}}}}}
}

// A head whose own +5% passes its gate, on a branch already +10.25%
// since the tag, is +15.8% against the trend: the chain and the gate's
// step multiply, their variances add.
func TestHeadTrend(t *testing.T) {
	a, err := history.Analyze(chain(t, []float64{1.05, 1.05}, 0.02), history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr, ok := a.HeadTrend(gateOn(sha(2), 1.05, 0.02))
	if !ok {
		t.Fatal("no trend for a gate on the last entry")
	}
	c := tr.Change
	if tr.Key != apiP95 || tr.Base != 2 || c.Links != 3 || math.Abs(c.Ratio-1.05*1.05*1.05) > 1e-9 || !c.Known {
		t.Errorf("trend %+v", tr)
	}
	// Three links of ±2% (95%): the interval is ±2%·√3 in log terms.
	if hw := math.Log(c.CIHigh / c.Ratio); math.Abs(hw-math.Log(1.02)*math.Sqrt(3)) > 1e-9 {
		t.Errorf("log half-width %v, want %v", hw, math.Log(1.02)*math.Sqrt(3))
	}
	if c.Value != verdict.Inconclusive {
		t.Errorf("+15.8%% (±3.5%%) against 15%%: %s, want inconclusive", c.Value)
	}
	if _, ok := a.HeadTrend(gateOn("deadbeefdeadbeef", 1.05, 0.02)); ok {
		t.Error("a gate whose base is no entry has a trend")
	}
	if tr, ok := a.HeadTrend(gateOn(sha(0), 1.01, 0.02)); !ok || tr.Change.Links != 1 || tr.Change.Value != verdict.Pass {
		t.Errorf("a gate on the first entry: %+v %v", tr, ok)
	}
}
