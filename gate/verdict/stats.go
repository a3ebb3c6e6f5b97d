package verdict

import (
	"math"
	"sync"
)

// The statistics of a comparison, without a statistics library.

// normQuantile returns z with Φ(z) = p for 0 < p < 1 (±Inf at 0 and 1).
func normQuantile(p float64) float64 {
	switch {
	case p <= 0:
		return math.Inf(-1)
	case p >= 1:
		return math.Inf(1)
	}
	if p < 1e-8 || p > 1-1e-8 {
		// 2p−1 loses digits near ±1: refine with Newton on Φ (erfc keeps them).
		z := math.Sqrt2 * math.Erfinv(2*p-1)
		for range 3 {
			f := 0.5*math.Erfc(-z/math.Sqrt2) - p
			z -= f / (math.Exp(-z*z/2) / math.Sqrt(2*math.Pi))
		}
		return z
	}
	return math.Sqrt2 * math.Erfinv(2*p-1)
}

// betaInc is the regularized incomplete beta I_x(a, b) (continued fraction, Lentz).
func betaInc(x, a, b float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(x, a, b) / a
	}
	return 1 - front*betaCF(1-x, b, a)/b
}

// betaCF evaluates the continued fraction of betaInc by modified Lentz.
func betaCF(x, a, b float64) float64 {
	const tiny = 1e-300
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	// step takes one term aa into c and d and returns the factor for h.
	step := func(aa float64) float64 {
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		return d * c
	}
	for m := 1; m <= 10000; m++ {
		fm := float64(m)
		m2 := 2 * fm
		h *= step(fm * (b - fm) * x / ((qam + m2) * (a + m2)))
		del := step(-(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2)))
		h *= del
		if math.Abs(del-1) < 1e-15 {
			break
		}
	}
	return h
}

// tCDF is P(T ≤ t) for Student's t with df > 0 degrees of freedom.
func tCDF(t, df float64) float64 {
	if math.IsInf(t, 0) {
		if t > 0 {
			return 1
		}
		return 0
	}
	tail := 0.5 * betaInc(df/(df+t*t), df/2, 0.5)
	if t >= 0 {
		return 1 - tail
	}
	return tail
}

type tKey struct{ p, df float64 }

var tCache sync.Map // tKey → float64

// tQuantile returns t with P(T ≤ t) = p (df ≥ 1), cached.
func tQuantile(p, df float64) float64 {
	if p == 0.5 {
		return 0
	}
	if p < 0.5 {
		return -tQuantile(1-p, df)
	}
	if p >= 1 {
		return math.Inf(1)
	}
	k := tKey{p, df}
	if v, ok := tCache.Load(k); ok {
		return v.(float64)
	}
	lo, hi := 0.0, math.Max(2*normQuantile(p), 1)
	for tCDF(hi, df) < p {
		lo, hi = hi, hi*2
		if hi > 1e12 {
			break
		}
	}
	for range 200 {
		mid := (lo + hi) / 2
		if tCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-13*math.Max(1, hi) {
			break
		}
	}
	t := (lo + hi) / 2
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
