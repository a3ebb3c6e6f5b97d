package verdict_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/loadgate/loadgate/gate/verdict"
)

// The recursive integration against published boundaries of two-sided
// tests at α = 0.05 with five equally spaced looks, to the 3 decimals they
// print (R's ldbounds and gsDesign; Jennison and Turnbull 2000, ch. 7).
func TestSeqBoundsPublished(t *testing.T) {
	ns := []int{1, 2, 3, 4, 5}
	cum := func(f func(t float64) float64) []float64 {
		var c []float64
		for _, n := range ns {
			c = append(c, f(float64(n)/5))
		}
		return c
	}
	z := verdict.NormQuantile(1 - 0.05/4) // 2.2414: ldbounds spends α/2 a side
	for _, c := range []struct {
		name string
		cum  []float64
		want []float64
	}{
		// ldbounds' O'Brien–Fleming type, α/2 = 0.025 a side:
		// 2·(2 − 2Φ(z_{α/4}/√t)). Very little early, most at the end.
		{"obf, α/2 a side", cum(func(t float64) float64 { return 2 * math.Erfc(z/math.Sqrt(t)/math.Sqrt2) }),
			[]float64{4.877, 3.357, 2.680, 2.290, 2.031}},
		// Pocock type α·ln(1 + (e−1)t): nearly flat.
		{"pocock", cum(func(t float64) float64 { return 0.05 * math.Log(1+(math.E-1)*t) }),
			[]float64{2.438, 2.427, 2.410, 2.397, 2.386}},
	} {
		got := verdict.SeqBounds(ns, c.cum)
		for k, want := range c.want {
			if math.Abs(got[k]-want) > 0.0015 {
				t.Errorf("%s, look %d of 5: c = %.4f, want %.3f", c.name, k+1, got[k], want)
			}
		}
	}
	// SeqBound, as Sequential calls it, gives the same recursion's last
	// look. (The gate's O'Brien–Fleming type is Lan and DeMets' two-sided
	// 2 − 2Φ(z_{α/2}/√t), not ldbounds' α/2 a side: TestSeqBoundsSpend
	// checks it.)
	if got := verdict.SeqBound(verdict.SpendPocock, 0.05, 1, 1, 5, 5, false); math.Abs(got-2.386) > 0.0015 {
		t.Errorf("SeqBound pocock look 5 of 5: %.4f, want 2.386", got)
	}
}

// The boundaries spend what they are told: over 400 000 seeded paths of a
// gate's looks (after 4, 6, …, 20 rounds of standard normal rounds), the
// share first crossing at each look is the spending function's increment
// there, and the nominal level of the last look is well above its
// increment (what the union bound over the looks left unused).
func TestSeqBoundsSpend(t *testing.T) {
	const alpha, paths = 0.05, 400_000
	var ns []int
	for n := 4; n <= 20; n += 2 {
		ns = append(ns, n)
	}
	var c []float64
	for _, n := range ns {
		c = append(c, verdict.SeqBound(verdict.SpendOBF, alpha, 4, 2, n, 20, false))
	}
	rng := rand.New(rand.NewPCG(19, 83))
	first := make([]int, len(ns))
	for range paths {
		s, at := 0.0, 0
		for j, n := range ns {
			for ; at < n; at++ {
				s += rng.NormFloat64()
			}
			if math.Abs(s)/math.Sqrt(float64(n)) >= c[j] {
				first[j]++
				break
			}
		}
	}
	prev, crossed := 0.0, 0
	for j, n := range ns {
		want := spendOBF(alpha, float64(n)/20) - prev
		prev += want
		got := float64(first[j]) / paths
		crossed += first[j]
		se := math.Sqrt(want * (1 - want) / paths)
		if math.Abs(got-want) > 4*se+1e-5 {
			t.Errorf("look %d (%d rounds, c = %.3f): %.5f crossed first, want %.5f ± %.5f", j+1, n, c[j], got, want, se)
		}
	}
	if got := float64(crossed) / paths; math.Abs(got-alpha) > 4*math.Sqrt(alpha*(1-alpha)/paths) {
		t.Errorf("any look: %.4f crossed, want %.2f", got, alpha)
	}
	last := math.Erfc(c[len(c)-1] / math.Sqrt2)
	incr := alpha - spendOBF(alpha, 18.0/20)
	if !(last > 2.5*incr) {
		t.Errorf("the last look's nominal level %.4f, its increment %.4f: want the boundary well above the union bound's", last, incr)
	}
	t.Logf("looks %v: c = %.3f; last look's nominal level %.4f, its increment %.4f", ns, c, last, incr)
}

func spendOBF(alpha, t float64) float64 {
	return math.Erfc(verdict.NormQuantile(1-alpha/2) / math.Sqrt(t) / math.Sqrt2)
}
