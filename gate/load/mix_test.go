package load_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/loadgate/loadgate/gate/load"
)

// normalize divides by the sum, as NewMix does (same order, same rounding).
func normalize(w []float64) []float64 {
	var sum float64
	for _, x := range w {
		sum += x
	}
	s := make([]float64, len(w))
	for k, x := range w {
		s[k] = x / sum
	}
	return s
}

func mustMix(t testing.TB, shares []float64) *load.Mix {
	t.Helper()
	m, err := load.NewMix(shares)
	if err != nil {
		t.Fatalf("NewMix(%v): %v", shares, err)
	}
	return m
}

func mixVectors() []struct {
	name   string
	shares []float64
} {
	phi := (1 + math.Sqrt(5)) / 2
	vs := []struct {
		name   string
		shares []float64
	}{
		{"design 45/5/50", []float64{45, 5, 50}},                              // the design's example
		{"1/999", []float64{1, 999}},                                          // a rare workload first
		{"999/1", []float64{999, 1}},                                          // a rare workload last
		{"1/1e6", []float64{1, 1e6}},                                          // rarer than the horizon/10
		{"equal 2", []float64{1, 1}},                                          // alternation
		{"equal 3", []float64{1, 1, 1}},                                       // thirds are inexact in float
		{"equal 7", []float64{2, 2, 2, 2, 2, 2, 2}},                           // sevenths, any scale
		{"equal 8", []float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}},        // the most workloads
		{"decimal", []float64{0.1, 0.2, 0.7}},                                 // shares that are inexact in binary
		{"decimal thirds", []float64{0.3, 0.3, 0.4}},                          // near-ties
		{"fractions", []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}},                   // already normalized, inexactly
		{"one small", []float64{3, 3, 3, 1}},                                  // ties among the large
		{"powers of two", []float64{1, 2, 4, 8, 16, 32, 64, 128}},             // 8 workloads, wide range
		{"wide", []float64{1e-3, 1e3, 1}},                                     // six orders of magnitude
		{"golden", []float64{1, phi}},                                         // the most irrational ratio
		{"roots", []float64{math.Sqrt2, math.Sqrt(3), math.Pi}},               // irrational-ish
		{"constants", []float64{math.E, math.Pi, math.Sqrt(5), math.Sqrt(7)}}, // irrational-ish, 4
		{"near equal", []float64{1, 1 + 1e-12, 1 - 1e-12}},                    // ties broken by a hair
		{"single", []float64{42}},                                             // one workload takes all
		{"primes", []float64{2, 3, 5, 7, 11, 13, 17, 19}},                     // 8 co-prime weights
		{"percent", []float64{0.5, 99.5}},                                     // a half-percent workload
	}
	// Random shares with a fixed seed: 2 to 8 workloads, uniform and
	// log-uniform (spanning 1e-3..1e3).
	rng := rand.New(rand.NewPCG(10, 20))
	for i := range 24 {
		k := 2 + i%7
		w := make([]float64, k)
		for j := range w {
			if i%2 == 0 {
				w[j] = rng.Float64()*100 + 1e-6
			} else {
				w[j] = math.Pow(10, rng.Float64()*6-3)
			}
		}
		vs = append(vs, struct {
			name   string
			shares []float64
		}{fmt.Sprintf("random %d (k=%d)", i, k), w})
	}
	return vs
}

// TestMixBound checks |count_k − s_k·n| ≤ 1 − δ < 1 after every n up to
// 100 000, for every workload of every share vector (δ = 1/2 for two
// workloads, 1/4 for three, 1/8 for four or five, 1/16 up to nine).
func TestMixBound(t *testing.T) {
	const horizon = 100_000
	for _, tc := range mixVectors() {
		t.Run(tc.name, func(t *testing.T) {
			m := mustMix(t, tc.shares)
			s := normalize(tc.shares)
			counts := make([]int64, len(s))
			bound := 1.0 // one workload: always exact
			if k := len(s); k > 1 {
				bound = 1 - 1/math.Exp2(math.Ceil(math.Log2(float64(2*k-2))))
			}
			worst := 0.0
			for n := 1; n <= horizon; n++ {
				w := m.Next()
				if w < 0 || w >= len(s) {
					t.Fatalf("Next() = %d with %d workloads", w, len(s))
				}
				counts[w]++
				for k, c := range counts {
					// c − s·n rounded once: a deviation of exactly 1 cannot hide.
					dev := math.Abs(math.FMA(-s[k], float64(n), float64(c)))
					if dev >= 1 || dev > bound+1e-9 {
						t.Fatalf("after %d requests workload %d has %d, share·n = %.12f (deviation %.12f > %v)", n, k, c, s[k]*float64(n), dev, bound)
					}
					worst = max(worst, dev)
				}
			}
			if got := m.Counts(); !slices.Equal(got, counts) {
				t.Errorf("Counts() = %v, counted %v", got, counts)
			}
			t.Logf("worst deviation %.6f over %d requests", worst, horizon)
		})
	}
}

// TestMixWindows: any window of consecutive requests holds each workload's
// share within 2 (the difference of two prefixes, each within 1).
func TestMixWindows(t *testing.T) {
	const n = 20_000
	rng := rand.New(rand.NewPCG(3, 4))
	for _, shares := range [][]float64{
		{45, 5, 50},        // the design's example
		{1, 1, 1},          // equal thirds
		{math.Pi, 1, 0.25}, // irrational-ish
	} {
		m := mustMix(t, shares)
		s := normalize(shares)
		prefix := make([][]int64, len(s)) // prefix[k][i]: count of k among the first i
		for k := range prefix {
			prefix[k] = make([]int64, n+1)
		}
		for i := range n {
			w := m.Next()
			for k := range prefix {
				prefix[k][i+1] = prefix[k][i]
			}
			prefix[w][i+1]++
		}
		for range 5000 {
			a := rng.IntN(n)
			b := a + rng.IntN(n-a+1)
			for k := range s {
				c := prefix[k][b] - prefix[k][a]
				if dev := math.Abs(float64(c) - s[k]*float64(b-a)); dev >= 2 {
					t.Fatalf("%v: workload %d has %d in [%d, %d), share·len = %.3f", shares, k, c, a, b, s[k]*float64(b-a))
				}
			}
		}
	}
}

func TestMixDeterministic(t *testing.T) {
	for _, tc := range mixVectors() {
		a, b := mustMix(t, tc.shares), mustMix(t, tc.shares)
		for i := range 50_000 {
			if x, y := a.Next(), b.Next(); x != y {
				t.Fatalf("%s: request %d is workload %d in one mix, %d in the other", tc.name, i, x, y)
			}
		}
	}
}

// TestMixScaleFree: shares are normalized, so any common scale gives the same
// sequence when the scaled shares normalize to the same values (powers of two
// scale exactly).
func TestMixScaleFree(t *testing.T) {
	a, b := mustMix(t, []float64{45, 5, 50}), mustMix(t, []float64{45.0 / 1024, 5.0 / 1024, 50.0 / 1024})
	for i := range 10_000 {
		if x, y := a.Next(), b.Next(); x != y {
			t.Fatalf("request %d: %d != %d", i, x, y)
		}
	}
}

func TestMixSequence(t *testing.T) {
	for _, tc := range []struct {
		shares []float64
		want   []int
	}{
		{[]float64{1, 1}, []int{0, 1, 0, 1, 0, 1}},                              // equal: alternate, ties to the lowest index
		{[]float64{1, 2}, []int{1, 0, 1, 1, 0, 1}},                              // the larger first (earlier deadline)
		{[]float64{1, 1, 2}, []int{2, 0, 1, 2, 2, 0, 1, 2}},                     // period 4: the halves at deadline order, ties to the lowest index
		{[]float64{7}, []int{0, 0, 0}},                                          // one workload
		{[]float64{1, 3}, []int{1, 0, 1, 1, 1, 0, 1, 1}},                        // a quarter, centred in each run of four
		{[]float64{45, 5, 50}, []int{2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 1}}, // the design's example: ingest (5%) 14th, its deadline 0.75/0.05 = 15
	} {
		m := mustMix(t, tc.shares)
		got := make([]int, len(tc.want))
		for i := range got {
			got[i] = m.Next()
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("shares %v: %v, want %v", tc.shares, got, tc.want)
		}
	}
}

func TestMixCountsIsACopy(t *testing.T) {
	m := mustMix(t, []float64{1, 1})
	m.Next()
	c := m.Counts()
	c[0] = 100
	if got := m.Counts(); got[0] != 1 {
		t.Errorf("Counts()[0] = %d after changing a returned copy, want 1", got[0])
	}
}

func TestMixErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		shares []float64
	}{
		{"nil", nil},                                 // no workloads
		{"empty", []float64{}},                       // no workloads
		{"zero", []float64{1, 0}},                    // shares are > 0
		{"negative", []float64{-1, 2}},               // shares are > 0
		{"NaN", []float64{math.NaN(), 1}},            // shares are numbers
		{"infinite", []float64{math.Inf(1), 1}},      // shares are finite
		{"overflowing sum", []float64{1e308, 1e308}}, // the sum must be finite
		{"out of range", []float64{1e-200, 1e200}},   // a share that normalizes to 0
	} {
		if _, err := load.NewMix(tc.shares); err == nil {
			t.Errorf("%s: NewMix(%v) succeeded, want an error", tc.name, tc.shares)
		}
	}
}

func TestMixNextDoesNotAllocate(t *testing.T) {
	m := mustMix(t, []float64{45, 5, 50, 1, 2, 3, 4, 5})
	if allocs := testing.AllocsPerRun(1000, func() { m.Next() }); allocs != 0 {
		t.Errorf("Next allocates %v times per call", allocs)
	}
}

func BenchmarkMixNext(b *testing.B) {
	for _, shares := range [][]float64{
		{45, 5, 50},
		{1, 2, 3, 4, 5, 6, 7, 8},
	} {
		b.Run(fmt.Sprintf("k=%d", len(shares)), func(b *testing.B) {
			m := mustMix(b, shares)
			b.ReportAllocs()
			for b.Loop() {
				m.Next()
			}
		})
	}
}

func ExampleMix() {
	m, _ := load.NewMix([]float64{45, 5, 50}) // api_read, ingest, other
	seq := make([]int, 20)
	for i := range seq {
		seq[i] = m.Next()
	}
	fmt.Println(seq)
	fmt.Println(m.Counts())
	// Output:
	// [2 0 2 0 2 0 2 0 2 0 2 0 2 1 0 2 0 2 0 2]
	// [9 1 10]
}
