package verdict

import (
	"math"
	"sync"
)

// Group-sequential boundaries: the nominal level of each look.
//
// A sequential gate's looks judge a growing set of rounds, so their
// statistics are strongly correlated: the mean log ratio after R rounds is
// the one after R − 2 plus two more rounds. Spending α_k = α(t_k) −
// α(t_{k−1}) at look k and taking the union over the looks (Bonferroni)
// ignores that and is conservative by a factor of 2–4 at the late looks
// (at the 9th look of 4, 6, …, 20 rounds the O'Brien–Fleming-type
// increment is 1.1% where the exact boundary allows 4.1%). The exact
// boundary (K. K. G. Lan and D. L. DeMets, Biometrika 70:659–663, 1983;
// the recursive numerical integration of P. Armitage, C. K. McPherson and
// B. C. Rowe, JRSS A 132:235–244, 1969; C. Jennison and B. W. Turnbull,
// "Group Sequential Methods with Applications to Clinical Trials", 2000,
// ch. 19) finds, look by look, the critical value c_k with
//
//	P(|Z_1| < c_1, …, |Z_{k−1}| < c_{k−1}, |Z_k| ≥ c_k) = α_k
//
// under no change, where Z_j is the standardized statistic after n_j
// rounds: Z_j = S_j/√n_j for the partial sum S_j of n_j independent
// standard normal rounds (Brownian motion, corr(Z_i, Z_j) = √(n_i/n_j)).
// Since the events of the looks are disjoint, the chance of any crossing
// is Σα_k = α(t_K) ≤ α exactly. The intervals of look k at the nominal
// level 2(1 − Φ(c_k)) are then repeated confidence intervals (Jennison and
// Turnbull, JRSS B 51:305–361, 1989): all of them cover the true change
// at once with probability ≥ 1 − α, so a decision of any kind taken at
// whichever look the gate stops (regression, improvement or pass) is
// wrong with probability ≤ α — the same guarantee the union bound gave,
// with wider levels at the late looks. The rounds' variance is estimated,
// not known: the look applies its nominal level to its t interval (R − 1
// degrees of freedom), the "significance level" approach of Jennison and
// Turnbull (2000, §3.8), which they show keeps the error rates close to
// nominal; TestSimSequential checks it at this package's few rounds.
//
// Within a look, Holm's procedure tests the j-th smallest of k p-values at
// the look's nominal level of a design at α/(k − j + 1) — each comparison
// has its own group-sequential boundary at its Holm share of α (the group
// sequential Holm procedure: Y. Ye, A. Li, L. Liu and B. Yao, Statistics
// in Medicine 32:1112–1124, 2013; W. Maurer and F. Bretz, Statistics in
// Biopharmaceutical Research 5:311–320, 2013).

// seqKey names one design's boundary at one look: the spending, the
// two-sided α, the looks (after first, first+step, …, the look's rounds),
// the maximum the spending's information fraction is taken against, and
// whether this look spends all that is left.
type seqKey struct {
	kind                    string
	alpha                   float64
	first, step, rounds, mx int
	final                   bool
}

// seqMemo caches boundaries: a gate's looks, and a harness's thousands of
// simulated gates, ask for the same few again and again. Safe for
// concurrent use (a harness judges gates in parallel).
var seqMemo sync.Map // seqKey → float64

// seqBound is the two-sided critical value c_k (z scale) at the look after
// rounds rounds of a design looking after first, first+step, …, spending
// alpha (two-sided) with kind over the information fractions n_j/mx; a
// final look spends all of alpha that is left. +Inf: the look spends
// nothing (it decides nothing).
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

// seqGrid is the intervals of the Simpson grid over a look's continuation
// region (even). The rounds' partial sums move by √2 or more between looks
// (a pair of rounds), and the region is at most ±9√n wide: at n = 20 the
// grid's step is 0.2, a seventh of the smallest move.
const seqGrid = 400

// seqBounds is the recursive numerical integration: for looks after ns[j]
// rounds with cumulative spending cum[j], the two-sided critical values
// c_j (z scale; +Inf where look j spends nothing).
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
				// Bisection on b = c√I in log scale of the probability:
				// cross is decreasing in b, and α_j may be as small as 1e−12.
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
		// The sub-density of S_j on |s| < c_j√n_j (truncated at 9√n_j,
		// beyond which it is below 1e−18).
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
