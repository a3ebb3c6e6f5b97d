package verdict

import (
	"math"
	"sort"
)

// Family is how a verdict's comparisons were tested together: Holm's
// step-down keeps the chance of any false regression within α = (1 −
// confidence)/2 whatever their dependence; improvements are a second family.
type Family struct {
	Method string  `json:"method"` // "holm"
	Tests  int     `json:"tests"`  // comparisons tested for a regression (and, apart, an improvement)
	Alpha  float64 `json:"alpha"`  // the family's one-sided error rate, (1 − confidence)/2
}

// FamilyTest is one comparison's place in its Holm family: one-sided p,
// rank (1: smallest) of Of, its level α/(Of − Rank + 1), and whether it held.
type FamilyTest struct {
	P     float64 `json:"p"`
	Rank  int     `json:"rank"`
	Of    int     `json:"of"`
	Level float64 `json:"level"`
	Held  bool    `json:"held"`
}

// test is how a comparison is tested at another level: a latency estimate
// and its interval's parts, or error-rate counts; up is the tolerance.
type test struct {
	m, up   float64
	parts   []part
	score   [4]int64 // failed and n of base, then head
	isScore bool
}

// pUp and pDown are the one-sided p-values of "beyond the tolerance" up
// and down; for latency the largest of the parts' (the widest interval).
func (t *test) pUp() float64   { return t.p(1) }
func (t *test) pDown() float64 { return t.p(-1) }

func (t *test) p(sign float64) float64 {
	p := 0.0
	if t.isScore {
		p = t.scoreP(sign) // error rates: the pooled counts' floor, beside the rounds' t part
	}
	x := sign*t.m - t.up
	for _, pt := range t.parts {
		var q float64
		switch {
		case pt.rank != nil && sign > 0:
			q = pt.rank.pAbove(t.up)
		case pt.rank != nil:
			q = pt.rank.pBelow(-t.up)
		case pt.se == 0 && x > 0:
			q = 0
		case pt.se == 0:
			q = 1
		case math.IsInf(pt.df, 1):
			q = 0.5 * math.Erfc(x/pt.se/math.Sqrt2)
		default:
			q = 1 - tCDF(x/pt.se, pt.df)
		}
		p = max(p, q)
	}
	return p
}

// scoreP inverts Newcombe's interval at up (sign +1) or −up (−1).
func (t *test) scoreP(sign float64) float64 {
	k1, n1, k2, n2 := t.score[0], t.score[1], t.score[2], t.score[3]
	beyond := func(z float64) bool {
		_, lo, hi := newcombe(k1, n1, k2, n2, z)
		if sign > 0 {
			return lo > t.up
		}
		return hi < -t.up
	}
	if !beyond(1e-9) {
		return 1
	}
	lo, hi := 1e-9, 40.0
	if beyond(hi) {
		return 0
	}
	for range 60 {
		mid := (lo + hi) / 2
		if beyond(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return 0.5 * math.Erfc(lo/math.Sqrt2)
}

// holm applies Holm's procedure in place to wvs's tested comparisons, for
// regressions and improvements; levelAt, if set, maps a share of α to its
// tested level. It returns nil when nothing was tested.
func holm(wvs []WorkloadVerdict, confidence float64, levelAt func(float64) float64) *Family {
	alpha := math.Round((1-confidence)/2*1e12) / 1e12
	var up, down []holmRef
	for i := range wvs {
		for j := range wvs[i].Comparisons {
			c := &wvs[i].Comparisons[j]
			if c.test == nil {
				continue
			}
			up = append(up, holmRef{c, c.test.pUp()})
			down = append(down, holmRef{c, c.test.pDown()})
		}
	}
	if len(up) == 0 {
		return nil
	}
	holmStep(up, true, alpha, levelAt)
	holmStep(down, false, alpha, levelAt)
	for i := range wvs {
		vals := []Value{}
		for _, ck := range wvs[i].Checks {
			vals = append(vals, ck.Value)
		}
		for _, c := range wvs[i].Comparisons {
			vals = append(vals, c.Value)
		}
		if len(vals) > 0 {
			wvs[i].Value = Worst(vals...)
		}
	}
	return &Family{Method: "holm", Tests: len(up), Alpha: alpha}
}

type holmRef struct {
	c *Comparison
	p float64
}

// holmStep runs Holm's step-down over rs in one direction: from the smallest
// p, each holds while p ≤ α/(k − j); past the first that does not, a
// regression becomes inconclusive and an improvement pass.
func holmStep(rs []holmRef, isUp bool, alpha float64, levelAt func(float64) float64) {
	k := len(rs)
	sort.SliceStable(rs, func(a, b int) bool { return rs[a].p < rs[b].p })
	held := true
	for j, r := range rs {
		share := alpha / float64(k-j)
		if levelAt != nil && k-j > 1 {
			share = levelAt(share) // at k − j = 1 it is the look's own level, (1 − confidence)/2
		}
		level := math.Round(share*1e12) / 1e12
		held = held && r.p <= level
		c := r.c
		pointsUp := c.test.m > 0
		if c.test.isScore {
			pointsUp = c.test.m >= 0
		}
		if pointsUp == isUp {
			c.Family = &FamilyTest{P: r.p, Rank: j + 1, Of: k, Level: level, Held: held}
		}
		if held {
			continue
		}
		switch {
		case isUp && c.Value == Regression:
			c.Value, c.Reason = Inconclusive, ReasonFamily
		case !isUp && c.Value == Improvement:
			c.Value = Pass
			if c.Metric == MetricErrorRate {
				c.Reason = ReasonNoMoreErrors
			} else {
				c.Reason = ReasonWithin
			}
		}
	}
}
