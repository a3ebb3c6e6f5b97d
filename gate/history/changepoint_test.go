package history_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/loadgate/loadgate/gate/history"
)

// machineSD is the simulated spread between runners of one commit's log
// latency: about 10%, so two runners 30% apart are 2.6 sd apart.
const machineSD = 0.10

// series is n log latencies about 0 with machine noise, shifted by
// ln(step) from index at on (at < 0: no step).
func series(rng *rand.Rand, n, at int, step float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = rng.NormFloat64() * machineSD
		if at >= 0 && i >= at {
			xs[i] += math.Log(step)
		}
	}
	return xs
}

func TestDetectSingleStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 1))
	xs := series(rng, 20, 12, 1.30)
	cps := history.Detect(xs, history.DetectOptions{Seed: 1})
	if len(cps) != 1 || cps[0].Index != 12 {
		t.Fatalf("change points %+v, want one at entry 12", cps)
	}
	if cps[0].P > history.DefaultSignificance || math.Abs(math.Exp(cps[0].Shift)-1.3) > 0.1 {
		t.Errorf("change point %+v: want p ≤ 1%% and a shift near +30%%", cps[0])
	}
}

// Simulation figures (README of the package's tests: the report quotes
// them): false change points over 100 A/A histories of 20 entries, and
// +30% steps located at their entry over 100 histories.
func TestDetectSimulation(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	rng := rand.New(rand.NewPCG(35, 2))
	falseCPs, aaWith := 0, 0
	for h := 0; h < 100; h++ {
		cps := history.Detect(series(rng, 20, -1, 1), history.DetectOptions{Seed: uint64(h)})
		falseCPs += len(cps)
		if len(cps) > 0 {
			aaWith++
		}
	}
	t.Logf("A/A: %d false change points over 100 histories of 20 entries (%d histories with any)", falseCPs, aaWith)
	for _, step := range []float64{1.30, 1.15} {
		located, near, spurious := 0, 0, 0
		for h := 0; h < 100; h++ {
			at := 5 + rng.IntN(11) // entries 5…15
			cps := history.Detect(series(rng, 20, at, step), history.DetectOptions{Seed: uint64(h)})
			exact, off1 := false, false
			for _, cp := range cps {
				switch d := cp.Index - at; {
				case d == 0:
					exact = true
				case d == 1 || d == -1:
					off1 = true
				default:
					spurious++
				}
			}
			if exact {
				located++
			} else if off1 {
				near++
			}
		}
		t.Logf("%s step: located at its entry in %d of 100 histories, one entry off in %d; %d change points elsewhere",
			fmt.Sprintf("%+.0f%%", (step-1)*100), located, near, spurious)
		if step == 1.30 && (located < 65 || located+near < 85) {
			t.Errorf("+30%% step located in %d of 100 (%d within one entry), want ≥ 65 (≥ 85)", located, located+near)
		}
	}
	if falseCPs > 5 {
		t.Errorf("A/A: %d false change points in 100 histories, want ≤ 5", falseCPs)
	}
}

func ExampleDetect() {
	xs := []float64{20.1, 19.8, 20.4, 20.0, 19.7, 20.2, 26.3, 25.9, 26.4, 26.0, 25.8, 26.2}
	for i := range xs {
		xs[i] = math.Log(xs[i])
	}
	for _, cp := range history.Detect(xs, history.DetectOptions{Seed: 1}) {
		fmt.Printf("level shift at entry %d: %+.0f%%, p = %.3f\n", cp.Index, (math.Exp(cp.Shift)-1)*100, cp.P)
	}
	// Output:
	// level shift at entry 6: +30%, p = 0.006
}
