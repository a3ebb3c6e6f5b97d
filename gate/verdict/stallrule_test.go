package verdict_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/testtier"
)

// stallCells is ten rounds of five workloads, each workload's log ratios
// its own ±3% noise around change (1: none), with round at (1-based)
// multiplied by stall on every workload (1: none).
func stallCells(change float64, at int, stall float64) [][]float64 {
	out := make([][]float64, len(stallWorkloads))
	for k := range out {
		for i, c := range calm {
			x := change * (1 + (c-1)*float64(k+1)/3)
			if i+1 == at {
				x *= stall
			}
			out[k] = append(out[k], x)
		}
	}
	return out
}

// The rule flags the one round whose every workload moved at once, names
// the slower side and the least of the workloads' slowdowns, and flags
// nothing where no round stands apart: a head 4× slower in every round is
// a change, not a stall.
func TestStallRule(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ratios [][]float64
		round  int    // 0: none flagged
		side   string // the slower side
		factor float64
	}{
		{"head stalled in round 4", stallCells(1, 4, 4.1), 4, "head", 4.1},
		{"base stalled in round 7", stallCells(1, 7, 1/5.0), 7, "base", 5},
		{"head stalled on top of a +20% change", stallCells(1.2, 2, 3.5), 2, "head", 3.5},
		{"head 4× slower in every round", stallCells(4, 0, 1), 0, "", 0},
		{"no stall", stallCells(1, 0, 1), 0, "", 0},
		{"slower by 1.6× at once: below the factor", stallCells(1, 4, 1.6), 0, "", 0},
		{"one workload 6× slower alone", func() [][]float64 {
			r := stallCells(1, 0, 1)
			r[2][4] *= 6
			return r
		}(), 0, "", 0},
		{"three rounds: none set against enough others", func() [][]float64 {
			r := stallCells(1, 2, 5)
			for k := range r {
				r[k] = r[k][:3]
			}
			return r
		}(), 0, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, head := ratioRounds(t, stallWorkloads, tc.ratios)
			s := verdict.FindStall(base, head, verdict.CompareOptions{})
			if tc.round == 0 {
				if s != nil {
					t.Fatalf("flagged %+v, want no stall", *s)
				}
				return
			}
			if s == nil {
				t.Fatalf("no stall flagged, want round %d", tc.round)
			}
			// The workloads' own noise (±3% × k/3) moves the least
			// slowdown a little off the stall's factor.
			if s.Round != tc.round || s.Index != tc.round-1 || s.Side != tc.side || s.Cells != 5 || s.Others != 9 ||
				s.Factor > tc.factor*1.07 || s.Factor < tc.factor*0.93 || s.T < 5 || s.Backed {
				t.Errorf("flagged %+v, want round %d, %s %.1f× slower on 5 workloads", *s, tc.round, tc.side, tc.factor)
			}
		})
	}
}

// The side's own figures back a smaller shared slowdown: 1.6× at once is
// a stall when steal on the slow side's cores jumped in that round, or
// its stack's CPU moved 2× off its other rounds'; not otherwise.
func TestStallRuleBackedBySteal(t *testing.T) {
	base, head := ratioRounds(t, stallWorkloads, stallCells(1, 4, 1.6))
	for i, r := range head {
		r.Steal = &result.Steal{WindowS: 60, Load: result.StealCores{CPUs: "1", Share: 0.001}}
		r.Stack = &result.Stack{Services: []result.Service{{Name: "api", CPUAvgPct: 40}}}
		if i == 3 {
			r.Steal.Load.Share = 0.21
		}
	}
	s := verdict.FindStall(base, head, verdict.CompareOptions{})
	if s == nil || s.Round != 4 || !s.Backed || s.Steal == nil || s.Steal.Round != 0.21 || s.Steal.Others != 0.001 ||
		s.StackCPU == nil || s.StackCPU.Round != 40 {
		t.Fatalf("flagged %+v, want round 4 backed by steal 21%% against 0.1%%", s)
	}
	head[3].Steal.Load.Share = 0.001
	if s := verdict.FindStall(base, head, verdict.CompareOptions{}); s != nil {
		t.Fatalf("flagged %+v without steal, want none (1.6× is below %v×)", *s, verdict.StallFactor)
	}
	head[3].Stack.Services[0].CPUAvgPct = 15
	if s := verdict.FindStall(base, head, verdict.CompareOptions{}); s == nil || !s.Backed || s.StackCPU.Others != 40 {
		t.Fatalf("flagged %+v, want round 4 backed by its stack's CPU (15%% against 40%%)", s)
	}
}

// A/A rounds rarely flag a round, checked as a gate checks them (after
// every round from the fourth), in seeded gates of 20 rounds (3 gates;
// 100 in the sim tier): heavy-tailed noise shared by the workloads (t₃,
// sd 4%, and 5% each workload's own: TestSimStall's bad day without its
// stalls), and a machine whose rounds swing 50% (sd, normal) on every
// workload at once. At most 1% of A/A gates may re-run a round: a re-run
// costs a round, never a verdict, and both models do make a rare round
// slower on every workload at once (t₃: 3.1×, seed 552; the 50% machine:
// 2.2× and 2.3×, seeds 170 and 266 of 400).
func TestStallRuleQuietOnAA(t *testing.T) {
	for _, s := range []stallSim{{roundSD: 0.04, ownSD: 0.05}, {roundSD: 0.5, ownSD: 0.01, normal: true}} {
		gates, flagged := testtier.Scale(t, testtier.Sim, 3, 100), 0
		for g := range gates {
			rng := rand.New(rand.NewPCG(uint64(g), 0xa1a))
			base, head := ratioRounds(t, stallWorkloads, s.ratios(rng, verdict.DefaultSeqMaxRounds))
			for R := 4; R <= len(base); R++ {
				if st := verdict.FindStall(base[:R], head[:R], verdict.CompareOptions{}); st != nil {
					t.Logf("%+v gate %d: flagged %+v after %d rounds of an A/A gate without stalls", s, g, *st, R)
					flagged++
					break
				}
			}
		}
		if limit := max(1, gates/100); flagged > limit {
			t.Errorf("%+v: %d of %d A/A gates re-ran a round, want at most %d", s, flagged, gates, limit)
		}
	}
}

func TestStallCap(t *testing.T) {
	for maxR, want := range map[int]int{4: 1, 10: 1, 19: 1, 20: 2, 100: 2} {
		if got := verdict.StallCap(maxR); got != want {
			t.Errorf("StallCap(%d) = %d, want %d", maxR, got, want)
		}
	}
	if math.Log(verdict.StallFactorBacked) >= math.Log(verdict.StallFactor) {
		t.Error("a backed stall must need less than an unbacked one")
	}
}
