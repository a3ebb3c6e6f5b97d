package verdict

import (
	"fmt"
	"math"
	"slices"
	"sync"
)

// Estimators of a latency shift over the rounds' log ratios (CompareOptions.Estimator).
const (
	// EstimatorMeanT: the mean with a Student-t interval; one outlier round sets its width.
	EstimatorMeanT = "mean-t"
	// EstimatorHL: the Hodges–Lehmann estimate with the Wilcoxon signed-rank
	// interval, exact under symmetric noise; one stalled round in ten moves
	// neither much.
	EstimatorHL = "hodges-lehmann"
	// EstimatorTrimmed: the trimmed mean with Yuen's t interval; from 5 rounds
	// it trims a stall (fewer: the plain mean) and, unlike a rank test (2⁻ᴿ
	// floor), decides at any level.
	EstimatorTrimmed = "trimmed-mean"
)

// TrimShare is the share of rounds EstimatorTrimmed trims from each end.
const TrimShare = 0.2

// DefaultEstimator is the estimator of CompareOptions{}.
const DefaultEstimator = EstimatorMeanT

// Interval sources of the robust estimators.
const (
	IntervalRank    = "signed-rank" // the Wilcoxon signed-rank interval (EstimatorHL)
	IntervalTrimmed = "trimmed"     // Yuen's interval of the trimmed mean (EstimatorTrimmed)
)

// rankMaxExact: beyond this many rounds the signed-rank distribution is normal.
const rankMaxExact = 200

// signedRank holds n log ratios' sorted Walsh averages (x_i + x_j)/2, i ≤ j;
// the number above θ is the signed-rank statistic of x − θ.
type signedRank struct {
	n     int
	walsh []float64
}

func newSignedRank(xs []float64) *signedRank {
	n := len(xs)
	w := make([]float64, 0, n*(n+1)/2)
	for i := range n {
		for j := i; j < n; j++ {
			w = append(w, (xs[i]+xs[j])/2)
		}
	}
	slices.Sort(w)
	return &signedRank{n: n, walsh: w}
}

// estimate is the Hodges–Lehmann estimate: the median Walsh average.
func (s *signedRank) estimate() float64 {
	w, k := s.walsh, len(s.walsh)
	return (w[(k-1)/2] + w[k/2]) / 2
}

// critical is the fewest Walsh averages on one side of θ that reject θ at
// one-sided level a; not ok when 2⁻ⁿ > a (too few rounds for a).
func (s *signedRank) critical(a float64) (t int, ok bool) {
	N := len(s.walsh)
	tail := rankTail(s.n)
	lo, hi := N/2, N+1 // tail(hi) ≤ a; tail(N+1) = 0
	if tail(N) > a {
		return 0, false
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if tail(mid) <= a {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true
}

// interval is the signed-rank interval [W₍N−t+1₎, W₍t₎], t = critical((1−conf)/2).
func (s *signedRank) interval(conf float64) (lo, hi float64, ok bool) {
	t, ok := s.critical((1 - conf) / 2)
	if !ok {
		return 0, 0, false
	}
	N := len(s.walsh)
	return s.walsh[N-t], s.walsh[t-1], true
}

// pAbove is the one-sided p-value of "the shift is above x"; interval's
// lower bound exceeds x exactly when pAbove(x) ≤ (1−conf)/2.
func (s *signedRank) pAbove(x float64) float64 {
	k := len(s.walsh) - upperIndex(s.walsh, x)
	return rankTail(s.n)(k)
}

func (s *signedRank) pBelow(x float64) float64 {
	k := lowerIndex(s.walsh, x)
	return rankTail(s.n)(k)
}

func upperIndex(ws []float64, x float64) int {
	i, _ := slices.BinarySearchFunc(ws, x, func(w, x float64) int {
		if w <= x {
			return -1
		}
		return 1
	})
	return i
}

func lowerIndex(ws []float64, x float64) int {
	i, _ := slices.BinarySearchFunc(ws, x, func(w, x float64) int {
		if w < x {
			return -1
		}
		return 1
	})
	return i
}

var rankTails sync.Map // n → []float64, P(T ≥ t) for t = 0..N+1

// rankTail is P(T ≥ t) of the signed-rank statistic of n symmetric, independent values.
func rankTail(n int) func(t int) float64 {
	N := n * (n + 1) / 2
	if n > rankMaxExact {
		mu := float64(N) / 2
		sd := math.Sqrt(float64(n*(n+1)*(2*n+1)) / 24)
		return func(t int) float64 {
			if t <= 0 {
				return 1
			}
			return 0.5 * math.Erfc((float64(t)-0.5-mu)/sd/math.Sqrt2)
		}
	}
	v, ok := rankTails.Load(n)
	if !ok {
		// P(T = s) by adding one rank at a time, each positive with ½.
		p := make([]float64, N+1)
		p[0] = 1
		top := 0
		for k := 1; k <= n; k++ {
			top += k
			for s := top; s >= 0; s-- {
				q := p[s] / 2
				if s >= k {
					q += p[s-k] / 2
				}
				p[s] = q
			}
		}
		tail := make([]float64, N+2)
		for s := N; s >= 0; s-- {
			tail[s] = tail[s+1] + p[s]
		}
		v, _ = rankTails.LoadOrStore(n, tail)
	}
	tail := v.([]float64)
	return func(t int) float64 {
		switch {
		case t <= 0:
			return 1
		case t > N:
			return 0
		}
		return min(tail[t], 1)
	}
}

// robustSD is 1.4826 × the median absolute deviation from m (the sd under
// normal noise), a spread one outlier moves little.
func robustSD(xs []float64, m float64) float64 {
	d := make([]float64, len(xs))
	for i, x := range xs {
		d[i] = math.Abs(x - m)
	}
	slices.Sort(d)
	k := len(d)
	return 1.4826 * (d[(k-1)/2] + d[k/2]) / 2
}

// trimmed is the TrimShare-trimmed mean of xs, Yuen's standard error
// √((n−1)·s_w² / (h·(h−1))) and df h − 1 (h kept); not ok when nothing is
// trimmed or fewer than two would remain.
func trimmed(xs []float64) (m, se, df float64, ok bool) {
	n := len(xs)
	g := int(math.Floor(TrimShare * float64(n)))
	h := n - 2*g
	if g < 1 || h < 2 {
		return 0, 0, 0, false
	}
	s := slices.Sorted(slices.Values(xs))
	m = mean(s[g : n-g])
	w := make([]float64, n)
	for i := range s {
		w[i] = s[min(max(i, g), n-g-1)]
	}
	sw := stddev(w, mean(w))
	return m, math.Sqrt(float64(n-1) * sw * sw / float64(h*(h-1))), float64(h - 1), true
}

func (mdl noiseModel) trim(se, df float64) noiseModel {
	mdl.s = se * math.Sqrt(float64(mdl.R))
	if mdl.ownZ != nil {
		mdl.ownZ = &part{se: se, df: math.Inf(1), what: IntervalRounds}
	}
	if mdl.own != nil {
		mdl.own = &part{se: se, df: df, what: IntervalTrimmed}
	}
	return mdl
}

func checkEstimator(e string) error {
	switch e {
	case EstimatorMeanT, EstimatorHL, EstimatorTrimmed:
		return nil
	}
	return fmt.Errorf("verdict: estimator %q: want %q, %q or %q", e, EstimatorMeanT, EstimatorHL, EstimatorTrimmed)
}
