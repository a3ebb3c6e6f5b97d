package verdict

import (
	"math"
	"sync"
)

// Group-sequential boundaries: the nominal level of each look. The looks'
// statistics are correlated (each adds rounds to the last), so the exact
// boundary (Lan and DeMets 1983; Armitage, McPherson and Rowe 1969;
// Jennison and Turnbull 2000, ch. 19) finds by recursive integration the
// c_k with P(no earlier crossing, |Z_k| ≥ c_k) = α_k. Intervals at level
// 2(1 − Φ(c_k)) are repeated confidence intervals: all cover at once with
// probability ≥ 1 − α. Holm within a look uses each comparison's own
// boundary at its share of α (Ye et al. 2013; Maurer and Bretz 2013).

// seqKey names one design's boundary at one look.
type seqKey struct {
	kind                    string
	alpha                   float64
	first, step, rounds, mx int
	final                   bool
}

// seqMemo caches boundaries (a harness asks for the same few thousands of
// times). Safe for concurrent use.
var seqMemo sync.Map // seqKey → float64

// seqBound is the two-sided critical value c_k (z scale) at the look
// after rounds rounds of a design looking after first, first+step, …,
// spending alpha with kind over n_j/mx. +Inf: the look spends nothing.
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

// seqGrid is the (even) number of Simpson intervals over a look's
// continuation region: fine against the √2 moves between looks.
const seqGrid = 400

// seqBounds is the recursive numerical integration: the critical values
// c_j for looks after ns[j] rounds with cumulative spending cum[j].
func seqBounds(ns []int, cum []float64) []float64 {
	c := make([]float64, len(ns))
	var grid, dens, w []float64 // the sub-density of S_{j−1} on the continuation region
	prev := 0.0
	for j, n := range ns {
		aj := cum[j] - prev
		prev = math.Max(prev, cum[j])
		I := float64(n)
		sd := 0.0 // the sd of S_j − S_{j−1}: the rounds between the looks
		if j > 0 {
			sd = math.Sqrt(I - float64(ns[j-1]))
		}
		if j == 0 {
			// The first look: S_1 ~ N(0, n_1), exact.
			if aj <= 0 {
				c[0] = math.Inf(1)
			} else {
				c[0] = -normQuantile(aj / 2)
			}
		} else {
			cross := func(b float64) float64 { // P(continue to j−1, |S_j| ≥ b)
				p := 0.0
				for i, u := range grid {
					p += w[i] * dens[i] * 0.5 * (math.Erfc((b-u)/sd/math.Sqrt2) + math.Erfc((b+u)/sd/math.Sqrt2))
				}
				return p
			}
			if aj <= 0 {
				c[j] = math.Inf(1)
			} else if cross(0) <= aj {
				c[j] = 0 // all that is left is more than a crossing can take
			} else {
				// Bisection in log scale: α_j may be as small as 1e−12.
				lo, hi := 0.0, 40*math.Sqrt(I)
				for range 80 {
					mid := (lo + hi) / 2
					if cross(mid) > aj {
						lo = mid
					} else {
						hi = mid
					}
				}
				c[j] = hi / math.Sqrt(I)
			}
		}
		if j == len(ns)-1 {
			break
		}
		// The sub-density of S_j on |s| < c_j√n_j, truncated at 9√n_j.
		b := math.Min(c[j]*math.Sqrt(I), 9*math.Sqrt(I))
		ng, nw := simpson(-b, b)
		nd := make([]float64, len(ng))
		for i, s := range ng {
			if j == 0 {
				nd[i] = math.Exp(-s*s/(2*I)) / math.Sqrt(2*math.Pi*I)
				continue
			}
			x := 0.0
			for k, u := range grid {
				z := (s - u) / sd
				x += w[k] * dens[k] * math.Exp(-z*z/2)
			}
			nd[i] = x / (sd * math.Sqrt(2*math.Pi))
		}
		grid, dens, w = ng, nd, nw
	}
	return c
}

// simpson is the points and weights of Simpson's rule over [a, b] with
// seqGrid intervals.
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
