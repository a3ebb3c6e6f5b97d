package history_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/loadgate/loadgate/gate/history"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/testtier"
)

// simHistory is a seeded 20-entry history. True level: 1, times each
// steps[entry] from that entry on. Each link measures its true ratio with
// log noise of sd hw/1.96 and a 95% interval of ±hw (in log terms), as a
// gate's paired rounds do; each entry's own percentile carries machineSD
// of runner bias about the true level.
func simHistory(t testing.TB, rng *rand.Rand, steps map[int]float64, hw float64) history.Chain {
	t.Helper()
	const n = 20
	sd := hw / 1.96
	lat := 20.0
	es := []history.Entry{{Schema: history.Schema, Commit: sha(0), Ref: "main", Date: t0, Result: res(t, sha(0), lat*math.Exp(rng.NormFloat64()*machineSD))}}
	for i := 1; i < n; i++ {
		r := 1.0
		if s, ok := steps[i]; ok {
			r = s
		}
		lat *= r
		m := math.Exp(math.Log(r) + rng.NormFloat64()*sd)
		st := step(m, 0)
		st.CILow, st.CIHigh = m*math.Exp(-hw), m*math.Exp(hw)
		es = append(es, history.Entry{Schema: history.Schema, Commit: sha(i), Ref: "main", Date: t0.AddDate(0, 0, i),
			Result: res(t, sha(i), lat*math.Exp(rng.NormFloat64()*machineSD)), Base: sha(i - 1), Steps: []history.Step{st}})
	}
	return history.NewChain(es)
}

// simRow is one row of the history's simulation figures.
type simRow struct {
	histories          int
	changePoints       int // change points found, over all histories
	withChangePoint    int // histories with any
	located, nearStep  int // a change point at the step's entry; one entry off
	cumulative         int // histories whose cumulative change since Since is a regression
	regressionVerdicts int // histories whose Analysis.Value is a regression
}

// runSim analyzes n histories from gen (which returns the chain, the step's
// entry or −1, and Since's entry).
func runSim(t *testing.T, n int, gen func(h int) (history.Chain, int, int)) simRow {
	t.Helper()
	var row simRow
	for h := 0; h < n; h++ {
		c, at, since := gen(h)
		a, err := history.Analyze(c, history.Options{Since: sha(since), Detect: history.DetectOptions{Seed: uint64(h)}})
		if err != nil {
			t.Fatal(err)
		}
		row.histories++
		s := a.Series[0]
		row.changePoints += len(s.ChangePoints)
		if len(s.ChangePoints) > 0 {
			row.withChangePoint++
		}
		exact, near := false, false
		for _, cp := range s.ChangePoints {
			exact = exact || cp.Index == at
			near = near || at >= 0 && (cp.Index == at-1 || cp.Index == at+1)
		}
		if exact {
			row.located++
		} else if near {
			row.nearStep++
		}
		if s.Total.Value == verdict.Regression {
			row.cumulative++
		}
		if a.Value() == verdict.Regression {
			row.regressionVerdicts++
		}
	}
	return row
}

// per100 is k of n as a rate per 100.
func per100(k, n int) float64 { return 100 * float64(k) / float64(n) }

// The detector's and the cumulative rule's figures over seeded histories
// of 20 entries (bench/history-sim.md): A/A histories, a single +30% step,
// and five +5% steps since a release tag. make sim runs 200 histories a
// row; the default tier 20, with bounds loose enough for 20.
func TestHistorySimulation(t *testing.T) {
	n := testtier.Scale(t, testtier.Sim, 20, 200)
	rng := rand.New(rand.NewPCG(35, 3))

	aa := runSim(t, n, func(int) (history.Chain, int, int) { return simHistory(t, rng, nil, 0.03), -1, 0 })
	t.Logf("A/A, 20 entries, links ±3%%: %.1f false change points per 100 histories (%.1f with any); cumulative rule since entry 1: %.1f regressions per 100; the history's verdict a regression in %.1f",
		per100(aa.changePoints, n), per100(aa.withChangePoint, n), per100(aa.cumulative, n), per100(aa.regressionVerdicts, n))
	if per100(aa.changePoints, n) > 10 || per100(aa.regressionVerdicts, n) > 10 {
		t.Errorf("A/A: %d false change points, %d cumulative regressions in %d histories", aa.changePoints, aa.cumulative, n)
	}

	for _, size := range []float64{1.30, 1.15} {
		row := runSim(t, n, func(int) (history.Chain, int, int) {
			at := 5 + rng.IntN(11) // entries 6…16
			return simHistory(t, rng, map[int]float64{at: size}, 0.03), at, 0
		})
		t.Logf("single %+.0f%% step, 20 entries: located at its commit in %.1f per 100 histories, one entry off in %.1f; %.1f per 100 change points in all",
			(size-1)*100, per100(row.located, n), per100(row.nearStep, n), per100(row.changePoints, n))
		if min := map[bool]float64{true: 75, false: 50}[n >= 100]; size == 1.30 && per100(row.located+row.nearStep, n) < min {
			t.Errorf("+30%% step: located (±1) in %d of %d histories", row.located+row.nearStep, n)
		}
	}

	// Five +5% steps, each under a gate's 10% tolerance, among the links
	// since the release tag (entry since): 5 links, or spread over 9.
	for _, c := range []struct {
		since, span int
		hw          float64
	}{{14, 5, 0.03}, {10, 9, 0.03}, {10, 9, 0.02}, {14, 5, 0.05}} {
		row := runSim(t, n, func(int) (history.Chain, int, int) {
			steps := map[int]float64{}
			for _, k := range rng.Perm(c.span)[:5] {
				steps[c.since+1+k] = 1.05
			}
			return simHistory(t, rng, steps, c.hw), -1, c.since
		})
		t.Logf("five +5%% steps in %d links since the tag, links ±%.0f%%: the cumulative rule (15%%) caught %.1f per 100 histories; the history's verdict a regression in %.1f",
			c.span, c.hw*100, per100(row.cumulative, n), per100(row.regressionVerdicts, n))
		if c.span == 5 && c.hw == 0.03 && per100(row.cumulative, n) < 80 {
			t.Errorf("five +5%% steps in 5 links at ±3%%: caught in %d of %d", row.cumulative, n)
		}
	}
}
