package main

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

// Regression test of issue 45: the harness resampled rounds of several real
// gates into one simulated gate, which hides the offset one gate's pair of
// stacks keeps for its whole length. Two real A/A gates, one whose head sat
// 30% slower in every round: every simulated gate is one of them whole, so
// each is either clean (never a regression) or carries the whole offset,
// about half of each — mixed, every gate would carry half of it.
func TestSimulateDrawsWholeGates(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 7))
	ds := &design{name: "duet"}
	for _, g := range []struct {
		chunk  string
		offset float64
	}{{"chunk-1", 1}, {"chunk-2", 1.3}} {
		for i := range 12 {
			shared := 3000 * math.Exp(0.05*rng.NormFloat64())
			ds.pairs = append(ds.pairs, pair{base: round(t, rng, 4000, shared), head: round(t, rng, 4000, shared*g.offset), chunk: g.chunk, round: i + 1})
		}
	}
	heads := make([]*result.Result, len(ds.pairs))
	for i, p := range ds.pairs {
		heads[i] = p.head
	}
	const gates = 40
	c := simulate(ds, plan{Rounds: 10}, heads, gates, rand.New(rand.NewPCG(1, 1)), verdict.CompareOptions{Percentile: "p95"}, false)
	if c.Errors > 0 || c.Units != 2 || c.Replacement {
		t.Fatalf("%d errors (%s), %d real gates, replacement %v", c.Errors, c.FirstErr, c.Units, c.Replacement)
	}
	if c.AnyReg < gates/4 || c.AnyReg > 3*gates/4 || c.AllPass < gates/4 || c.AnyReg+c.AllPass < gates*9/10 {
		t.Errorf("%d regression, %d pass of %d simulated gates: want about half each (whole gates), not mixtures", c.AnyReg, c.AllPass, gates)
	}
	for _, p := range ds.pairs {
		if p.base.Round.Instance != 0 {
			t.Fatal("simulate changed the corpus's results")
		}
	}
}
