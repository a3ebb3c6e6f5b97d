package load

import (
	"errors"
	"fmt"
	"math"
)

// Mix assigns workloads to requests in order, deterministically and with low
// discrepancy (rule 10: two runs at the same rate issue the same count of
// each workload). Not safe for concurrent use (the dispatcher owns it).
//
// Bound: with K workloads, s_k = share_k / Σ share (the normalized shares,
// as float64) and δ = 2^−⌈log₂(2K−2)⌉ (1/2 for K = 2, 1/4 for 3, 1/8 for
// 4–5, 1/16 for 6–9), after any number n of requests every workload's count
// c_k(n) satisfies
//
//	|c_k(n) − s_k·n| ≤ 1 − δ < 1.
//
// So over any window of consecutive requests each count is within 2 of its
// share of the window, a workload with s_k·n > 1 − δ has been sent at least
// once, and two Mix with the same shares produce the same sequence.
//
// The rule is Tijdeman's for the chairman assignment problem (1980), with δ
// rounded down to a power of two so that every comparison is exact: request
// n (1-based) goes to the workload with the smallest deadline
// (c_k + 1 − δ)/s_k among the released ones, s_k·n − c_k ≥ δ; ties go to
// the lowest index. Each workload's j-th request must fall in the window of
// positions that keeps the bound; Tijdeman proved that the windows for
// δ = 1/(2K−2) can all be met, the wider ones of a smaller δ then can too, and
// earliest-deadline-first meets any set of unit-length windows that can be
// met. A workload is always released, since Σ (s_k·n − c_k) = 1 ≥ K·δ. The
// comparisons use fused multiply-adds on exact float64 values (while counts
// stay below 2^48), so rounding never breaks a tie the wrong way, and the
// normalized float64 shares sum to 1 within K ulps, which matters only past
// n ≈ 10^15. Next is O(K) and does not allocate.
type Mix struct {
	shares []float64
	counts []int64
	n      int64
	delta  float64
}

// NewMix returns a mix over workloads with the given shares (each finite and
// > 0, any scale; they are normalized).
func NewMix(shares []float64) (*Mix, error) {
	if len(shares) == 0 {
		return nil, errors.New("no workloads")
	}
	var sum float64
	for k, s := range shares {
		if !(s > 0) || math.IsInf(s, 0) {
			return nil, fmt.Errorf("workload %d: share %v is not a positive number", k, s)
		}
		sum += s
	}
	m := &Mix{shares: make([]float64, len(shares)), counts: make([]int64, len(shares))}
	p := 2
	for p < 2*len(shares)-2 {
		p *= 2
	}
	m.delta = 1 / float64(p)
	for k, s := range shares {
		m.shares[k] = s / sum
		if !(m.shares[k] >= 0x1p-500) || math.IsInf(sum, 0) {
			return nil, fmt.Errorf("workload %d: share %v is out of range beside the others", k, s)
		}
	}
	return m, nil
}

// Next returns the workload index of the next request.
func (m *Mix) Next() int {
	n := float64(m.n + 1)
	d, w := m.delta, 1-m.delta // c+d and c+w are exact: d is a power of two
	best := -1
	var bestKey float64
	for k, s := range m.shares {
		c := float64(m.counts[k])
		// Released: s·n − c ≥ δ, the sign of s·n − (c+δ) rounded once.
		if math.FMA(s, n, -(c+d)) < 0 {
			continue
		}
		// Deadline (c+1−δ)/s strictly before the best's: compare cross products.
		if key := c + w; best < 0 || productLess(key, m.shares[best], bestKey, s) {
			best, bestKey = k, key
		}
	}
	if best < 0 { // unreachable while Σ s_k rounds to 1; never stall
		for k, s := range m.shares {
			if key := float64(m.counts[k]) + w; best < 0 || productLess(key, m.shares[best], bestKey, s) {
				best, bestKey = k, key
			}
		}
	}
	m.counts[best]++
	m.n++
	return best
}

// productLess reports whether a·b < c·d exactly (finite operands, no
// underflow).
func productLess(a, b, c, d float64) bool {
	p, q := float64(a*b), float64(c*d)
	if p != q {
		return p < q // rounding is monotone: the exact products order the same way
	}
	return math.FMA(a, b, -p) < math.FMA(c, d, -q)
}

// Counts returns how many requests each workload has been assigned so far
// (a copy).
func (m *Mix) Counts() []int64 {
	return append([]int64(nil), m.counts...)
}
