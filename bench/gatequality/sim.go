package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

// plan is one candidate's rounds: a fixed number, or Auto as gate/rounds plans --rounds auto.
type plan struct {
	Rounds    int
	Auto      bool
	Budget    time.Duration
	MaxRounds int
	Spending  string `json:",omitempty"` // the sequential plan's alpha spending (verdict.SeqPlan); "": the default's
}

func (p plan) String() string {
	if p.Auto {
		if p.Spending != "" && p.Spending != verdict.SpendOBF {
			return fmt.Sprintf("auto (≤ %d, %s, %s spending)", p.MaxRounds, p.Budget, p.Spending)
		}
		return fmt.Sprintf("auto (≤ %d, %s; the default)", p.MaxRounds, p.Budget)
	}
	return fmt.Sprint(p.Rounds)
}

// teardownMargin is gate/rounds' margin per side kept for the teardown.
const teardownMargin = 15 * time.Second

// seqMax is the plan's most rounds on ds as gate/rounds fixes them (even, at most MaxRounds).
func (p plan) seqMax(ds *design) int {
	left := p.Budget - ds.upDur - 2*teardownMargin
	fit := 0
	if left > 0 && ds.estimate > 0 {
		fit = int(left / ds.estimate)
	}
	m := min(p.MaxRounds, fit)
	m -= m % 2
	if m < 2 || ds.pairDur <= 0 {
		return m
	}
	m = min(p.MaxRounds, 1+budgetRounds(ds, p.Budget, 1))
	m -= m % 2
	return max(m, 2)
}

type outcome struct {
	regression map[string]bool // workload → some comparison of it is a regression
	pass       map[string]bool // workload → every comparison of it passes
	anyReg     bool            // some comparison is a regression
	allPass    bool            // every comparison passes (the gate is decided: pass)
	thrFail    bool            // an absolute threshold is broken
	untrusted  bool            // a round's generator fell behind: nothing is decided
	rounds     int
	err        error
}

// judge is the gate's verdict: verdict.Gate (Compare without thresholds) for fixed rounds, else Sequential.
func judge(ds *design, p plan, base, head []*result.Result, opt verdict.CompareOptions, thresholds bool) outcome {
	if !p.Auto {
		opt.MaxRounds = max(p.Rounds, budgetRounds(ds, p.Budget, 0))
		judgeFn := verdict.Compare
		if thresholds {
			judgeFn = verdict.Gate
		}
		v, err := judgeFn(base, head, opt)
		return classify(v, len(head), err)
	}
	maxR := p.seqMax(ds)
	sp := verdict.SeqPlan{MaxRounds: maxR, MinRounds: min(verdict.DefaultSeqMinRounds, maxR), Spending: p.Spending}
	for R := sp.MinRounds; R <= maxR; R += 2 {
		sp.Final = budgetRounds(ds, p.Budget, R) < 2
		v, err := verdict.Sequential(base[:R], head[:R], opt, sp)
		if err != nil || v.Sequential.Decided() {
			return classify(v, R, err)
		}
	}
	return outcome{err: fmt.Errorf("sequential plan of %d rounds never stopped", maxR)}
}

func budgetRounds(ds *design, budget time.Duration, done int) int {
	left := budget - ds.upDur - time.Duration(done)*ds.pairDur - 2*teardownMargin
	if left <= 0 || ds.pairDur <= 0 {
		return 0
	}
	return int(left / ds.pairDur)
}

func classify(v verdict.Verdict, rounds int, err error) outcome {
	o := outcome{regression: map[string]bool{}, pass: map[string]bool{}, allPass: true, rounds: rounds, err: err}
	if err != nil {
		return o
	}
	if v.Value == verdict.Unusable {
		o.err = fmt.Errorf("unusable: %v", report.NoteTexts(v.Notes))
		return o
	}
	o.untrusted = len(v.Untrusted) > 0
	for _, wv := range v.Workloads {
		if _, seen := o.pass[wv.Workload]; !seen {
			o.pass[wv.Workload] = true
		}
		for _, c := range wv.Checks {
			if c.Value == verdict.Fail {
				o.thrFail = true
			}
		}
		for _, c := range wv.Comparisons {
			if c.Value == verdict.Regression {
				o.regression[wv.Workload], o.anyReg = true, true
			}
			if c.Value != verdict.Pass {
				o.pass[wv.Workload], o.allPass = false, false
			}
		}
	}
	return o
}

// condition is what head carries: nothing (A/A), or one workload × (1+Delta).
type condition struct {
	Workload string // "" for A/A
	Delta    float64
}

type cell struct {
	Gates, Errors            int
	AnyReg, AllPass, ThrFail int
	Untrusted                int // gates with a round whose generator fell behind (nothing decided)
	Reg, Pass                map[string]int
	RoundsSum                int
	Replacement              bool   // the plan needs more rounds than a real gate has: its rounds drawn with replacement
	Units                    int    // the real gates drawn from (each simulated gate is one of them)
	FirstErr                 string // the first simulated gate not judged, and why
}

// gatesOf is the corpus's pairs (indices) by the real gate (chunk) that ran them, in order.
func gatesOf(ds *design) [][]int {
	var out [][]int
	at := map[string]int{}
	for i, p := range ds.pairs {
		k, ok := at[p.chunk]
		if !ok {
			k = len(out)
			at[p.chunk] = k
			out = append(out, nil)
		}
		out[k] = append(out[k], i)
	}
	return out
}

// oneInstance is r as a round of instance 1: a real gate of the corpus ran
// one pair of stacks, so gate/verdict carries the variance between
// instances (DefaultInstanceSD) that its rounds cannot show.
func oneInstance(r *result.Result) *result.Result {
	c := clone(r) // a round drawn twice is two rounds, not one result in two
	rd := result.Round{Mode: result.RoundDuet}
	if r.Round != nil {
		rd = *r.Round
	}
	rd.Instance = 1
	c.Round = &rd
	return c
}

// simulate estimates one cell over simulated gates, each one real gate of
// the corpus judged as a unit: its rounds in a random order (drawn with
// replacement only when the plan needs more than it has), never rounds of
// several gates together, which would hide the offset one gate's pair of
// stacks keeps for its whole length.
func simulate(ds *design, p plan, heads []*result.Result, gates int, rng *rand.Rand, opt verdict.CompareOptions, thresholds bool) cell {
	need := p.Rounds
	if p.Auto {
		need = p.seqMax(ds)
	}
	units := gatesOf(ds)
	c := cell{Reg: map[string]int{}, Pass: map[string]int{}, Units: len(units)}
	for _, u := range units {
		c.Replacement = c.Replacement || need > len(u)
	}
	if need < 1 || len(units) == 0 {
		c.FirstErr = "the plan allows no round"
		return c
	}
	for g := 0; g < gates; g++ {
		base, head := make([]*result.Result, need), make([]*result.Result, need)
		u := slices.Clone(units[rng.IntN(len(units))])
		rng.Shuffle(len(u), func(i, j int) { u[i], u[j] = u[j], u[i] })
		for i := range need {
			k := u[i%len(u)]
			if need > len(u) {
				k = u[rng.IntN(len(u))]
			}
			base[i], head[i] = oneInstance(ds.pairs[k].base), oneInstance(heads[k])
			base[i].Round.Number, head[i].Round.Number = i+1, i+1
		}
		o := judge(ds, p, base, head, opt, thresholds)
		c.Gates++
		if o.err != nil {
			c.Errors++
			if c.FirstErr == "" {
				c.FirstErr = o.err.Error()
			}
			continue
		}
		c.RoundsSum += o.rounds
		if o.anyReg {
			c.AnyReg++
		}
		if o.allPass {
			c.AllPass++
		}
		if o.thrFail {
			c.ThrFail++
		}
		if o.untrusted {
			c.Untrusted++
		}
		for w, r := range o.regression {
			if r {
				c.Reg[w]++
			}
		}
		for w, ok := range o.pass {
			if ok {
				c.Pass[w]++
			}
		}
	}
	return c
}

func scaledHeads(ds *design, cond condition) ([]*result.Result, error) {
	out := make([]*result.Result, len(ds.pairs))
	for i, p := range ds.pairs {
		if cond.Workload == "" {
			out[i] = p.head
			continue
		}
		r, err := scaled(p.head, cond.Workload, 1+cond.Delta)
		if err != nil {
			return nil, fmt.Errorf("%s %s round %d: %w", ds.name, p.chunk, p.round, err)
		}
		out[i] = r
	}
	return out, nil
}
