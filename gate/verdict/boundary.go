package verdict

import (
	"math"
	"sync"
)

// Group-sequential boundaries (Lan–DeMets; Jennison and Turnbull ch. 19):
// the looks are correlated, so recursive integration finds the c_k with
// P(no earlier crossing, |Z_k| ≥ c_k) = α_k; intervals at 2(1 − Φ(c_k)) all
// cover at once with probability ≥ 1 − α.

type seqKey struct {
	kind                    string
	alpha                   float64
	first, step, rounds, mx int
	final                   bool
}

// seqMemo caches boundaries, which a harness asks for repeatedly.
var seqMemo sync.Map // seqKey → float64

// seqBound is the two-sided critical value c_k (z scale) at the look after
// rounds of a design looking at first, first+step, …, spending alpha by kind
// over n_j/mx; +Inf when the look spends nothing.
func seqBound(kind string, alpha float64, first, step, rounds, mx int, final bool) float64 {
	key := seqKey{kind, alpha, first, step, rounds, mx, final}
	if c, ok := seqMemo.Load(key); ok {
		return c.(float64)
	}
	var ns []int
	for n := first; n <= rounds; n += step {
		ns = append(ns, n)
	}
	cum := make([]float64, len(ns))
	for j, n := range ns {
		cum[j] = spend(kind, alpha, float64(n)/float64(mx))
	}
	if final {
		cum[len(cum)-1] = alpha
	}
	c := seqBounds(ns, cum)[len(ns)-1]
	seqMemo.Store(key, c)
	return c
}

// seqLevel is seqBound's nominal two-sided level, 2(1 − Φ(c_k)).
func seqLevel(kind string, alpha float64, first, step, rounds, mx int, final bool) float64 {
	c := seqBound(kind, alpha, first, step, rounds, mx, final)
	return math.Erfc(c / math.Sqrt2)
}

// seqGrid is the (even) number of Simpson intervals over a continuation region.
const seqGrid = 400

// seqBounds integrates recursively to the critical values c_j for looks
// after ns[j] rounds with cumulative spending cum[j].
func seqBounds(ns []int, cum []float64) []float64 {
	c := make([]float64, len(ns))
	var d subDensity // of S_{j−1} on the continuation region
	prev := 0.0
	for j, n := range ns {
		aj := cum[j] - prev
		prev = math.Max(prev, cum[j])
		I := float64(n)
		sd := 0.0 // the sd of S_j − S_{j−1}: the rounds between the looks
		if j > 0 {
			sd = math.Sqrt(I - float64(ns[j-1]))
		}
		switch {
		case j > 0:
			c[j] = d.bound(aj, sd, I)
		case aj <= 0:
			c[0] = math.Inf(1)
		default:
			c[0] = -normQuantile(aj / 2) // the first look: S_1 ~ N(0, n_1), exact
		}
		if j == len(ns)-1 {
			break
		}
		d = d.next(c[j], I, sd, j == 0)
	}
	return c
}

// subDensity is the sub-density of the sum S on a look's continuation region.
type subDensity struct {
	grid, dens, w []float64
}

// cross is P(continue to this look, |S_next| ≥ b); sd: of the sum between looks.
func (d subDensity) cross(b, sd float64) float64 {
	p := 0.0
	for i, u := range d.grid {
		p += d.w[i] * d.dens[i] * 0.5 * (math.Erfc((b-u)/sd/math.Sqrt2) + math.Erfc((b+u)/sd/math.Sqrt2))
	}
	return p
}

// bound is the next look's critical value after I rounds, spending aj.
func (d subDensity) bound(aj, sd, I float64) float64 {
	if aj <= 0 {
		return math.Inf(1)
	}
	if d.cross(0, sd) <= aj {
		return 0 // all that is left is more than a crossing can take
	}
	// Bisection in log scale: α_j may be as small as 1e−12.
	lo, hi := 0.0, 40*math.Sqrt(I)
	for range 80 {
		mid := (lo + hi) / 2
		if d.cross(mid, sd) > aj {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi / math.Sqrt(I)
}

// next is the sub-density of S after I rounds on |s| < c√I, truncated at 9√I.
func (d subDensity) next(c, I, sd float64, first bool) subDensity {
	b := math.Min(c*math.Sqrt(I), 9*math.Sqrt(I))
	ng, nw := simpson(-b, b)
	nd := make([]float64, len(ng))
	for i, s := range ng {
		if first {
			nd[i] = math.Exp(-s*s/(2*I)) / math.Sqrt(2*math.Pi*I)
			continue
		}
		x := 0.0
		for k, u := range d.grid {
			z := (s - u) / sd
			x += d.w[k] * d.dens[k] * math.Exp(-z*z/2)
		}
		nd[i] = x / (sd * math.Sqrt(2*math.Pi))
	}
	return subDensity{ng, nd, nw}
}

func simpson(a, b float64) (xs, ws []float64) {
	h := (b - a) / seqGrid
	xs = make([]float64, seqGrid+1)
	ws = make([]float64, seqGrid+1)
	for i := range xs {
		xs[i] = a + float64(i)*h
		switch {
		case i == 0 || i == seqGrid:
			ws[i] = h / 3
		case i%2 == 1:
			ws[i] = 4 * h / 3
		default:
			ws[i] = 2 * h / 3
		}
	}
	return xs, ws
}
