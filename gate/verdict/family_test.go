package verdict_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/testtier"
)

// simMulti simulates one gate of R paired rounds of k workloads, head =
// base × ratio for every workload; each side of each round has a machine
// noise exp(N(0, common)) shared by its workloads and exp(N(0, own)) per
// workload; n successes per workload, side and round (median 20 ms, log-sd
// 0.5).
func simMulti(t testing.TB, seed uint64, k, R, n int, ratio, common, own float64) verdict.Verdict {
	rng := rand.New(rand.NewPCG(seed, 0xfa417e))
	var base, head []*result.Result
	for range R {
		for s, side := range []*[]*result.Result{&base, &head} {
			f := math.Exp(common * rng.NormFloat64())
			if s == 1 {
				f *= ratio
			}
			var ws []wlData
			for w := range k {
				ws = append(ws, wlData{name: fmt.Sprintf("w%02d", w), lat: lognormal(rng, n, 20000, 0.5, f*math.Exp(own*rng.NormFloat64()))})
			}
			*side = append(*side, mkRound(t, hashA, nil, ws, nil))
		}
	}
	v, err := verdict.Compare(base, head, verdict.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// familyTally counts, over gates, the gates with any regression called
// (with Holm) and any comparison whose interval alone cleared the
// tolerance (what the gate would have called without Holm).
func familyTally(t *testing.T, seed uint64, gates, k, R, n int, ratio, common, own float64) (holm, alone int, tests int) {
	vs := make([]verdict.Verdict, gates)
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Go(func() {
			for g := w; g < gates; g += workers {
				vs[g] = simMulti(t, seed+uint64(g), k, R, n, ratio, common, own)
			}
		})
	}
	wg.Wait()
	for _, v := range vs {
		var h, a bool
		for _, wv := range v.Workloads {
			for _, c := range wv.Comparisons {
				h = h || c.Value == verdict.Regression
				a = a || c.Value == verdict.Regression || c.Reason == verdict.ReasonFamily
			}
		}
		if h {
			holm++
		}
		if a {
			alone++
		}
		if v.Family != nil {
			tests = v.Family.Tests
		}
	}
	return holm, alone, tests
}

// simGates is the gates per simulation: def, or LOADGATE_SIM_GATES (the
// README's tables ran 1 000; the default keeps `go test` to seconds).
func simGates(def int) int {
	if n, err := strconv.Atoi(os.Getenv("LOADGATE_SIM_GATES")); err == nil && n > 0 {
		return n
	}
	return def
}

// Many workloads, one gate. A/A over 1 000 gates of 10 workloads: no gate
// calls a false regression. The hard case is a change of exactly the
// tolerance (+10%) in every workload, where each interval alone calls a
// "regression" 2.5% of the time: without Holm a 10-workload gate would
// then false-alarm about 10× as often as a 1-workload gate; with Holm the
// family's rate stays at most 2.5%.
func TestSimFamily(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	gates := simGates(testtier.Scale(t, testtier.Sim, 20, 60)) // seeded; 60 in make sim
	t.Run("A/A 10 workloads", func(t *testing.T) {
		holm, alone, tests := familyTally(t, 1<<20, gates, 10, 5, 400, 1, 0.05, 0.03)
		t.Logf("A/A, %d gates of 10 workloads (%d tests), 5 rounds, 400 successes, σ common 0.05 + own 0.03: false regressions in %d gates (%d on intervals alone)", gates, tests, holm, alone)
		if float64(holm) > 0.025*float64(gates) {
			t.Errorf("%d of %d A/A gates called a regression, want ≤ 2.5%%", holm, gates)
		}
	})
	t.Run("at the tolerance", func(t *testing.T) {
		// Little noise and many samples: each interval is narrow, so the
		// chance a +10% change clears it is close to the nominal 2.5%.
		var rates [2][2]float64
		for i, k := range []int{1, 10} {
			holm, alone, tests := familyTally(t, 2<<20, gates, k, 5, 400, 1.1, 0, 0.03)
			rates[i] = [2]float64{float64(holm) / float64(gates), float64(alone) / float64(gates)}
			t.Logf("ratio 1.1 (= 1+τ), %d gates of %d workload(s) (%d tests): any regression in %.1f%% of gates with Holm, %.1f%% on intervals alone", gates, k, tests, 100*rates[i][0], 100*rates[i][1])
		}
		if rates[1][0] > 0.025+2*math.Sqrt(0.025*0.975/float64(gates)) {
			t.Errorf("10 workloads with Holm: %.1f%% of gates false-alarm, want ≤ 2.5%% (+2 standard errors of the simulation)", 100*rates[1][0])
		}
		if rates[1][1] < 3*rates[0][1] {
			t.Errorf("the premise: 10 workloads alone %.1f%% vs 1 workload %.1f%%; want far more", 100*rates[1][1], 100*rates[0][1])
		}
	})
}
