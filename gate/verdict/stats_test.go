package verdict_test

import (
	"math"
	"testing"

	"github.com/loadgate/loadgate/gate/verdict"
)

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.10g, want %.10g (±%g)", what, got, want, tol)
	}
}

func TestNormQuantile(t *testing.T) {
	for _, c := range []struct{ p, z float64 }{
		{0.5, 0}, {0.975, 1.959963984540054}, {0.95, 1.6448536269514722},
		{0.995, 2.5758293035489004}, {0.9995, 3.2905267314918945}, {0.025, -1.959963984540054},
		{0.8413447460685429, 1}, {1e-10, -6.361340902404056},
	} {
		near(t, "normQuantile", verdict.NormQuantile(c.p), c.z, 1e-9)
	}
}

// Student-t quantiles from the standard tables (e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2).
func TestTQuantile(t *testing.T) {
	for _, c := range []struct{ p, df, t float64 }{
		{0.975, 1, 12.7062047362}, {0.975, 2, 4.3026527297}, {0.975, 3, 3.1824463053},
		{0.975, 4, 2.7764451052}, {0.975, 9, 2.2621571628}, {0.975, 29, 2.0452296421},
		{0.975, 100, 1.9839715185}, {0.95, 4, 2.1318467863}, {0.995, 4, 4.6040948713},
		{0.995, 1, 63.6567411629}, {0.9, 10, 1.3721836411}, {0.975, 1e6, 1.959966},
		{0.025, 4, -2.7764451052}, {0.5, 7, 0},
	} {
		near(t, "tQuantile", verdict.TQuantile(c.p, c.df), c.t, 1e-6*math.Max(1, math.Abs(c.t)))
	}
	// CDF and quantile invert each other.
	for _, df := range []float64{1, 2, 5, 30} {
		for _, p := range []float64{0.6, 0.9, 0.99, 0.999} {
			near(t, "tCDF(tQuantile)", verdict.TCDF(verdict.TQuantile(p, df), df), p, 1e-10)
		}
	}
}

func TestBetaInc(t *testing.T) {
	near(t, "I_0.5(2,2)", verdict.BetaInc(0.5, 2, 2), 0.5, 1e-12)
	near(t, "I_0.3(1,1)", verdict.BetaInc(0.3, 1, 1), 0.3, 1e-12)
	// I_x(a,1) = x^a; I_x(1,b) = 1−(1−x)^b.
	near(t, "I_0.7(3,1)", verdict.BetaInc(0.7, 3, 1), math.Pow(0.7, 3), 1e-12)
	near(t, "I_0.2(1,4)", verdict.BetaInc(0.2, 1, 4), 1-math.Pow(0.8, 4), 1e-12)
}

func TestWilsonAndNewcombe(t *testing.T) {
	z := verdict.NormQuantile(0.975)
	lo, hi := verdict.Wilson(0, 10, z)
	near(t, "wilson 0/10 lo", lo, 0, 1e-12)
	near(t, "wilson 0/10 hi", hi, 0.2775, 1e-4)
	lo, hi = verdict.Wilson(81, 263, z) // Newcombe (1998a) example: 0.2553 – 0.3662
	near(t, "wilson 81/263 lo", lo, 0.2553, 1e-4)
	near(t, "wilson 81/263 hi", hi, 0.3662, 1e-4)
	// Newcombe (1998b), method 10: 56/70 − 48/80 → 0.0524 … 0.2813; 9/10 − 3/10 → 0.1705 … 0.8090.
	d, lo, hi := verdict.Newcombe(48, 80, 56, 70, z)
	near(t, "newcombe a diff", d, 0.2, 1e-12)
	near(t, "newcombe a lo", lo, 0.0524, 1e-4)
	near(t, "newcombe a hi", hi, 0.3339, 1e-4)
	_, lo, hi = verdict.Newcombe(3, 10, 9, 10, z)
	near(t, "newcombe b lo", lo, 0.1705, 1e-4)
	near(t, "newcombe b hi", hi, 0.8090, 1e-4)
}
