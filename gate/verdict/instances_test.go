package verdict_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/testtier"
)

// instanceGate is a windows gate's plan as gate/rounds makes it for the
// README's scenario: instances of per duet windows each, looks from two
// rounds into the second instance, every 2 rounds, at most max.
type instanceGate struct {
	per, max int
	sim      duetSim
	// offset is instance k's persistent ln(head/base) (k from 0), beside the change.
	offset func(rng *rand.Rand, k int) float64
	noInst bool // the results record no instance (the model before instances)
}

func (g instanceGate) firstLook() int {
	if g.per >= g.max {
		return verdict.DefaultSeqMinRounds
	}
	f := max(verdict.DefaultSeqMinRounds, g.per+2)
	return f + f%2
}

// rounds draws the gate's rounds, each instance's head offset by its own factor.
func (g instanceGate) rounds(t testing.TB, rng *rand.Rand) (base, head []*result.Result) {
	k := 0
	for len(head) < g.max {
		s := g.sim
		s.ratio *= math.Exp(g.offset(rng, k))
		n := min(g.per, g.max-len(head))
		b, h := s.rounds(t, rng, n)
		for i := range b {
			for _, r := range []*result.Result{b[i], h[i]} {
				r.Round.Number = len(head) + i + 1
				if !g.noInst {
					r.Round.Instance = k + 1
				}
			}
		}
		base, head = append(base, b...), append(head, h...)
		k++
	}
	return base, head
}

// judge runs the sequential looks until one decides: the value and rounds.
func (g instanceGate) judge(t testing.TB, seed uint64) (verdict.Comparison, int) {
	rng := rand.New(rand.NewPCG(seed, 0x1257))
	base, head := g.rounds(t, rng)
	plan := verdict.SeqPlan{MaxRounds: g.max, MinRounds: g.firstLook()}
	opt := verdict.CompareOptions{Percentile: "p95"}
	for R := plan.MinRounds; ; R += 2 {
		R = min(R, g.max)
		v, err := verdict.Sequential(base[:R], head[:R], opt, plan)
		if err != nil {
			t.Fatal(err)
		}
		if v.Sequential.Decided() || R == g.max {
			return v.Workloads[0].Comparisons[0], R
		}
	}
}

type instanceRow struct {
	regression, pass, gates int
	rounds                  float64
}

func (g instanceGate) tally(t *testing.T, seed uint64, gates int) instanceRow {
	outs := make([]verdict.Comparison, gates)
	rs := make([]int, gates)
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < gates; i += workers {
				outs[i], rs[i] = g.judge(t, seed+uint64(i))
			}
		})
	}
	wg.Wait()
	row := instanceRow{gates: gates}
	for i, c := range outs {
		switch c.Value {
		case verdict.Regression:
			row.regression++
		case verdict.Pass:
			row.pass++
		}
		row.rounds += float64(rs[i]) / float64(gates)
	}
	return row
}

// quietDuet is TestSimDuet's rounds: 500 requests a side, per-request log-sd
// 1 with ρ 0.9 between the sides, per-side round noise 0.02, shared 0.1.
var quietDuet = duetSim{n: 500, reqSD: 1, rho: 0.9, round: 0.1, side: 0.02, ratio: 1}

// Regression test of issue 45: an A/A gate whose two stacks of one instance
// sit 20% apart for all its rounds is pass or inconclusive, never a
// regression, whichever instance it is (the first, seen alone longest, or
// the last), over seeded gates of 3 instances of 7 windows (the README's
// scenario's plan). The same rounds with no instance recorded — the model
// of rounds alone — do call regressions: the offset is what it missed.
func TestRegression_InstanceOffsetIsNoRegression(t *testing.T) {
	gates := 16
	for _, at := range []int{0, 2} {
		g := instanceGate{per: 7, max: 20, sim: quietDuet, offset: func(_ *rand.Rand, k int) float64 {
			if k == at {
				return math.Log(1.2)
			}
			return 0
		}}
		row := g.tally(t, uint64(45<<20+at<<12), gates)
		if row.regression > 0 {
			t.Errorf("instance %d of 3 sits 20%% apart: %d of %d A/A gates called a regression", at+1, row.regression, gates)
		}
		t.Logf("instance %d of 3 at +20%%: %d regression, %d pass of %d (%.1f rounds)", at+1, row.regression, row.pass, gates, row.rounds)
	}
	// Without instances the rounds alone cannot tell: one instance pair 20%
	// apart for a whole gate of one instance is a "regression".
	one := instanceGate{per: 20, max: 20, sim: quietDuet, noInst: true, offset: func(*rand.Rand, int) float64 { return math.Log(1.2) }}
	if row := one.tally(t, 45<<20+99, 10); row.regression == 0 {
		t.Errorf("rounds alone, one instance pair 20%% apart: no regression in %d gates; the test shows nothing", row.gates)
	}
}

// campaignOffset draws one instance pair's persistent ln(head/base) from the
// spread of bench/gate-quality-campaigns.md: of its 24 A/A gates with the
// sides' change stated, one sat −16…−45% apart (under heavy steal) and one
// +3.5…+12.4%; the others within about ±6%. So: with probability 1/24 an
// offset of ±ln(1.16)…±ln(1.45), else normal of sd 0.04 (above the quiet
// gates' spread, which holds the rounds' noise too).
func campaignOffset(rng *rand.Rand, _ int) float64 {
	if rng.IntN(24) == 0 {
		x := math.Log(1.16) + rng.Float64()*(math.Log(1.45)-math.Log(1.16))
		if rng.IntN(2) == 0 {
			return -x
		}
		return x
	}
	return 0.04 * rng.NormFloat64()
}

// The two-level model in simulation (issue 45): windows gates of 3
// instances × 7 duet windows (at most 20 rounds, looks from 10), instance
// offsets drawn from the campaigns' spread (campaignOffset). A/A: false
// regressions ≤ 1%; +20%: the share caught, and beside both the same
// rounds with no instance recorded (rounds alone). Seeded;
// LOADGATE_SIM_GATES=1000 LOADGATE_TEST_TIER=sim go test ./gate/verdict -run SimInstances -v.
func TestSimInstances(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	gates := simGates(testtier.Scale(t, testtier.Sim, 8, 200))
	for i, c := range []struct {
		ratio  float64
		noInst bool
	}{{1, false}, {1, true}, {1.2, false}, {1.2, true}} {
		s := quietDuet
		s.ratio = c.ratio
		g := instanceGate{per: 7, max: 20, sim: s, offset: campaignOffset, noInst: c.noInst}
		row := g.tally(t, uint64(46<<20+i<<14), gates)
		model := "instances"
		if c.noInst {
			model = "rounds alone"
		}
		line := fmt.Sprintf("| %+.0f%% | %s | %d of %d (%.1f%%) | %d of %d (%.1f%%) | %.1f |", 100*(c.ratio-1), model,
			row.regression, gates, 100*float64(row.regression)/float64(gates), row.pass, gates, 100*float64(row.pass)/float64(gates), row.rounds)
		t.Log(line)
		if c.ratio == 1 && !c.noInst && float64(row.regression) > 0.01*float64(gates) {
			t.Errorf("%s: A/A false regressions above 1%%", line)
		}
		// An instance pair can sit far enough apart (1 in 24: −16…−45%) to
		// hide a +20% change in its instance: a pass, at most that often.
		if c.ratio == 1.2 && !c.noInst && float64(row.pass) > 0.01*float64(gates) {
			t.Errorf("%s: a real +20%% passed in more than 1%%", line)
		}
	}
}
