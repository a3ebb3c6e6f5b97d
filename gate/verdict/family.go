package verdict

import (
	"math"
	"sort"
)

// Many comparisons, one gate.
//
// A gate judges workloads × phases × percentiles, and the error rate of
// each: each interval alone at 95% calls a false regression at most 2.5%
// of the time, so a gate of k comparisons could do so up to k × 2.5%.
// Holm's step-down procedure (S. Holm, "A simple sequentially rejective
// multiple test procedure", Scandinavian Journal of Statistics 6:65–70,
// 1979) keeps the chance that *any* of them is a false regression at most
// α = (1 − confidence)/2, whatever their dependence, and is uniformly more
// powerful than Bonferroni: order the k one-sided p-values of "slower
// beyond the tolerance" p(1) ≤ … ≤ p(k); the j-th smallest is a
// regression while p(j) ≤ α/(k − j + 1) held for it and every smaller one.
// Improvements are a second family, tested the same way. A pass (the
// interval's high end within the tolerance) is unchanged: a family of
// passes only makes a gate quieter.

// Family is how a verdict's comparisons were tested together.
type Family struct {
	Method string  `json:"method"` // "holm"
	Tests  int     `json:"tests"`  // comparisons tested for a regression (and, apart, an improvement)
	Alpha  float64 `json:"alpha"`  // the family's one-sided error rate, (1 − confidence)/2
}

// FamilyTest is one comparison's place in its family (Holm): its p-value
// for the change it points to (a regression when the estimate is above
// no change, else an improvement), its rank among the family's p-values
// (1: smallest), the level that rank is tested at, α/(tests − rank + 1),
// and whether it held (it and every smaller p-value within their levels).
type FamilyTest struct {
	P     float64 `json:"p"`
	Rank  int     `json:"rank"`
	Of    int     `json:"of"`
	Level float64 `json:"level"`
	Held  bool    `json:"held"`
}

// test is how a comparison is tested at a level other than the
// verdict's: a latency comparison's estimate m (mean log ratio) and the
// parts of its interval, or an error-rate comparison's counts; up is the
// tolerance (ln(1+τ), or τ·base rate).
type test struct {
	m, up   float64
	parts   []part
	score   [4]int64 // failed and n of base, then head
	isScore bool
}

// pUp is the one-sided p-value of "beyond the tolerance upward": the
// smallest α at which the interval at confidence 1 − 2α lies above up.
// Latency: the interval is the widest of its parts, so it lies above up
// exactly when each part's does: the largest of the parts' p-values.
func (t *test) pUp() float64 { return t.p(1) }

// pDown is the same for "beyond the tolerance downward" (below −up).
func (t *test) pDown() float64 { return t.p(-1) }

func (t *test) p(sign float64) float64 {
	if t.isScore {
		return t.scoreP(sign)
	}
	x := sign*t.m - t.up
	p := 0.0
	for _, pt := range t.parts {
		var q float64
		switch {
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

// scoreP inverts Newcombe's interval: the normal quantile z at which its
// low end (sign +1) reaches up, or its high end (−1) reaches −up; p = 1−Φ(z).
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

// holm applies Holm's procedure to every tested comparison of wvs (in
// place) at the one-sided level (1 − confidence)/2, once for regressions
// and once for improvements: a regression or improvement that does not
// hold in its family becomes inconclusive (ReasonFamily) or pass. Each
// workload's value is the worst of its comparisons again. It returns the
// family, nil when nothing was tested.
//
// levelAt, when not nil, maps the share α/(k − j + 1) to the level it is
// tested at (a sequential look's group-sequential boundary at that share).
func holm(wvs []WorkloadVerdict, confidence float64, levelAt func(float64) float64) *Family {
	alpha := math.Round((1-confidence)/2*1e12) / 1e12
	type ref struct {
		c *Comparison
		p float64
	}
	var up, down []ref
	for i := range wvs {
		for j := range wvs[i].Comparisons {
			c := &wvs[i].Comparisons[j]
			if c.test == nil {
				continue
			}
			up = append(up, ref{c, c.test.pUp()})
			down = append(down, ref{c, c.test.pDown()})
		}
	}
	if len(up) == 0 {
		return nil
	}
	k := len(up)
	step := func(rs []ref, isUp bool) {
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
	step(up, true)
	step(down, false)
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
	return &Family{Method: "holm", Tests: k, Alpha: alpha}
}
