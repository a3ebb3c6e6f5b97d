package load

import (
	"errors"
	"fmt"
	"math"
)

// Mix assigns workloads to requests deterministically with low discrepancy: each count
// stays within 1 − δ of share·n, so two runs at one rate send the same mix (Tijdeman's
// chairman assignment, exact comparisons). Dispatcher only.
type Mix struct {
	shares []float64
	counts []int64
	n      int64
	delta  float64
}

// NewMix returns a mix over shares (finite, > 0, any scale: they are normalized).
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

// productLess reports whether a·b < c·d exactly (finite, no underflow).
func productLess(a, b, c, d float64) bool {
	p, q := float64(a*b), float64(c*d)
	if p != q {
		return p < q // rounding is monotone: the exact products order the same way
	}
	return math.FMA(a, b, -p) < math.FMA(c, d, -q)
}

// Counts returns a copy of each workload's count so far.
func (m *Mix) Counts() []int64 {
	return append([]int64(nil), m.counts...)
}
