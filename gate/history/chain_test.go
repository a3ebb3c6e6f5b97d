package history_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/loadgate/loadgate/gate/history"
	"github.com/loadgate/loadgate/gate/verdict"
)

// The creeping regression: five +5% steps, each a pass at a 10% gate,
// fail the 15% cumulative tolerance; one +5% step passes it.
func TestCumulativeCreep(t *testing.T) {
	five := chain(t, []float64{1.05, 1.05, 1.05, 1.05, 1.05}, 0.03)
	ch := five.Cumulative(apiP95, 0, 5, 0, 0)
	if ch.Value != verdict.Regression || ch.Links != 5 {
		t.Errorf("five +5%% steps: %+v, want a regression over 5 links", ch)
	}
	if want := math.Pow(1.05, 5); math.Abs(ch.Ratio-want) > 1e-9 {
		t.Errorf("ratio %v, want %v", ch.Ratio, want)
	}
	one := chain(t, []float64{1.05}, 0.03)
	if ch := one.Cumulative(apiP95, 0, 1, 0, 0); ch.Value != verdict.Pass {
		t.Errorf("one +5%% step: %+v, want pass", ch)
	}
	// Since the third entry, three steps: +15.8%, its interval straddles 1.15.
	if ch := five.Cumulative(apiP95, 2, 5, 0, 0); ch.Value != verdict.Inconclusive {
		t.Errorf("three +5%% steps: %+v, want inconclusive", ch)
	}
}

// The interval widens as √links: k equal links of half-width h give a
// log half-width of h·√k.
func TestCumulativeInterval(t *testing.T) {
	c := chain(t, []float64{1, 1, 1, 1}, 0.02)
	ch := c.Cumulative(apiP95, 0, 4, 0.95, 0)
	got := math.Log(ch.CIHigh)
	if want := math.Log(1.02) * 2; math.Abs(got-want) > 1e-9 {
		t.Errorf("log half-width %v, want %v", got, want)
	}
	if ch := c.Cumulative(apiP95, 3, 3, 0, 0); !ch.Known || ch.Ratio != 1 || ch.Value != verdict.Pass {
		t.Errorf("from an entry to itself: %+v", ch)
	}
}

// A link whose gate ran against another commit breaks the chain: the
// change across it is not measured, never a pass.
func TestCumulativeGap(t *testing.T) {
	c := chain(t, []float64{1.01, 1.01, 1.01}, 0.02)
	c.Entries[2].Base = sha(99)
	ch := c.Cumulative(apiP95, 0, 3, 0, 0)
	if ch.Known || ch.Gap != 2 || ch.Value != verdict.NotMeasured {
		t.Errorf("across a gap: %+v", ch)
	}
	if ch := c.Cumulative(apiP95, 2, 3, 0, 0); !ch.Known {
		t.Errorf("after the gap: %+v", ch)
	}
}

func ExampleChain_Cumulative() {
	c := history.NewChain(nil)
	for i, r := range []float64{1, 1.05, 1.05, 1.05, 1.05, 1.05} {
		e := history.Entry{Commit: fmt.Sprintf("%07d", i)}
		if i > 0 {
			e.Base = c.Entries[i-1].Commit
			e.Steps = []history.Step{{Phase: "steady", Workload: "api", Metric: "p95",
				Ratio: r, CILow: r / 1.03, CIHigh: r * 1.03, Confidence: 0.95}}
		}
		c.Entries = append(c.Entries, e)
	}
	k := history.Key{Phase: "steady", Workload: "api", Metric: "p95"}
	one := c.Cumulative(k, 0, 1, 0.95, 0.15)
	five := c.Cumulative(k, 0, 5, 0.95, 0.15)
	fmt.Printf("one step:   %.3f [%.3f, %.3f] %s\n", one.Ratio, one.CILow, one.CIHigh, one.Value)
	fmt.Printf("five steps: %.3f [%.3f, %.3f] %s\n", five.Ratio, five.CILow, five.CIHigh, five.Value)
	// Output:
	// one step:   1.050 [1.019, 1.082] pass
	// five steps: 1.276 [1.195, 1.363] regression
}
