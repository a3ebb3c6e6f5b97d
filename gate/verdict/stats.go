package verdict

import (
	"math"
	"sync"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"
)

// The distributions of a comparison, from gonum (distuv, mathext); what no
// library offers (the group-sequential boundary, the exact signed-rank test,
// Wilson and Newcombe intervals) is here and beside it.

// normQuantile returns z with Φ(z) = p for 0 < p < 1 (±Inf at 0 and 1).
func normQuantile(p float64) float64 {
	switch {
	case p <= 0:
		return math.Inf(-1)
	case p >= 1:
		return math.Inf(1)
	}
	return distuv.UnitNormal.Quantile(p)
}

// betaInc is the regularized incomplete beta I_x(a, b).
func betaInc(x, a, b float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	return mathext.RegIncBeta(a, b, x)
}

// tCDF is P(T ≤ t) for Student's t with df > 0 degrees of freedom.
func tCDF(t, df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.CDF(t)
}

type tKey struct{ p, df float64 }

var tCache sync.Map // tKey → float64

// tQuantile returns t with P(T ≤ t) = p (df ≥ 1), cached: the simulations ask
// for a few quantiles millions of times.
func tQuantile(p, df float64) float64 {
	switch {
	case p == 0.5:
		return 0
	case p <= 0:
		return math.Inf(-1)
	case p >= 1:
		return math.Inf(1)
	}
	k := tKey{p, df}
	if v, ok := tCache.Load(k); ok {
		return v.(float64)
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
	tCache.Store(k, t)
	return t
}

// wilson is the Wilson score interval for k of n > 0, sound at k = 0 and k = n.
func wilson(k, n int64, z float64) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	nf := float64(n)
	p := float64(k) / nf
	z2 := z * z
	den := 1 + z2/nf
	center := (p + z2/(2*nf)) / den
	half := z / den * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	lo, hi = math.Max(0, center-half), math.Min(1, center+half)
	if k == 0 {
		lo = 0
	}
	if k == n {
		hi = 1
	}
	return lo, hi
}

// newcombe is Newcombe's hybrid score interval (method 10) for p2 − p1.
func newcombe(k1, n1, k2, n2 int64, z float64) (diff, lo, hi float64) {
	p1 := float64(k1) / float64(n1)
	p2 := float64(k2) / float64(n2)
	l1, u1 := wilson(k1, n1, z)
	l2, u2 := wilson(k2, n2, z)
	diff = p2 - p1
	lo = diff - math.Sqrt((p2-l2)*(p2-l2)+(u1-p1)*(u1-p1))
	hi = diff + math.Sqrt((u2-p2)*(u2-p2)+(p1-l1)*(p1-l1))
	return diff, lo, hi
}
