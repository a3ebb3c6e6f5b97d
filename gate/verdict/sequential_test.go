package verdict_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/testtier"
)

// seqGate simulates one sequential gate: rounds as in simGate (one
// workload, n successes, per-side per-round noise exp(N(0, noise))), a
// look after MinRounds and then every pair, as the round loop does. It
// returns the p95 comparison's value and the rounds run.
func seqGate(t testing.TB, seed uint64, plan verdict.SeqPlan, n int, ratio, noise float64) (verdict.Value, int) {
	rng := rand.New(rand.NewPCG(seed, 0x5e9))
	var base, head []*result.Result
	step := max(plan.Step, 2)
	for {
		for len(head) < max(plan.MinRounds, verdict.DefaultSeqMinRounds) || len(head)%step != 0 {
			fb := math.Exp(noise * rng.NormFloat64())
			fh := ratio * math.Exp(noise*rng.NormFloat64())
			base = append(base, mkRound(t, hashA, nil, []wlData{{name: "api", lat: lognormal(rng, n, 20000, 0.5, fb)}}, nil))
			head = append(head, mkRound(t, hashA, nil, []wlData{{name: "api", lat: lognormal(rng, n, 20000, 0.5, fh)}}, nil))
		}
		v, err := verdict.Sequential(base, head, verdict.CompareOptions{Percentile: "p95"}, plan)
		if err != nil {
			t.Fatal(err)
		}
		if v.Sequential.Decided() {
			return v.Workloads[0].Comparisons[0].Value, len(head)
		}
		// one more ABBA pair
		for range step {
			fb := math.Exp(noise * rng.NormFloat64())
			fh := ratio * math.Exp(noise*rng.NormFloat64())
			base = append(base, mkRound(t, hashA, nil, []wlData{{name: "api", lat: lognormal(rng, n, 20000, 0.5, fb)}}, nil))
			head = append(head, mkRound(t, hashA, nil, []wlData{{name: "api", lat: lognormal(rng, n, 20000, 0.5, fh)}}, nil))
		}
	}
}

type seqRow struct {
	ratio, noise           float64
	regression, pass, inc  float64 // shares of gates
	improvement, avgRounds float64
}

func seqTally(t *testing.T, seed uint64, gates int, plan verdict.SeqPlan, n int, ratio, noise float64) seqRow {
	vals := make([]verdict.Value, gates)
	rounds := make([]int, gates)
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Go(func() {
			for g := w; g < gates; g += workers {
				vals[g], rounds[g] = seqGate(t, seed+uint64(g), plan, n, ratio, noise)
			}
		})
	}
	wg.Wait()
	row := seqRow{ratio: ratio, noise: noise}
	for g := range gates {
		switch vals[g] {
		case verdict.Regression:
			row.regression++
		case verdict.Pass:
			row.pass++
		case verdict.Improvement:
			row.improvement++
		default:
			row.inc++
		}
		row.avgRounds += float64(rounds[g])
	}
	for _, p := range []*float64{&row.regression, &row.pass, &row.inc, &row.improvement, &row.avgRounds} {
		*p /= float64(gates)
	}
	return row
}

// Sequential rounds under optional stopping, over seeded gates of at most
// 10 rounds (looks after 4, 6, 8, 10) and of the default's most
// (DefaultSeqMaxRounds), 500 successes per round: at exactly the
// tolerance, where both errors are likeliest, regressions and passes each
// stay within the nominal 2.5% (the looks' intervals at their
// group-sequential boundary's level, t intervals of few rounds), A/A calls
// no more, and the table of detection and average rounds is logged
// (README, "How a gate decides").
func TestSimSequential(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	gates := simGates(testtier.Scale(t, testtier.Sim, 6, 30)) // seeded; 30 in make sim
	// LOADGATE_SIM_SPENDING=obf,pocock compares both (the default's alone by default).
	// At most 10 rounds and the default's most (DefaultSeqMaxRounds).
	type plan struct {
		spending  string
		maxRounds int
	}
	// LOADGATE_SIM_SEQ_MAX=10 runs the plans of at most 10 rounds alone
	// (a 1 000-gate run of the default's 20 takes most of an hour on 2 cores).
	// By default the plans of at most 10 rounds alone (make sim: both).
	maxes := []int{10}
	if testtier.On(t, testtier.Sim) {
		maxes = append(maxes, verdict.DefaultSeqMaxRounds)
	}
	if s := os.Getenv("LOADGATE_SIM_SEQ_MAX"); s != "" {
		maxes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(f)
			if err != nil || n < verdict.DefaultSeqMinRounds || (n-verdict.DefaultSeqMinRounds)%2 != 0 {
				t.Fatalf("LOADGATE_SIM_SEQ_MAX=%s: want round counts where a look falls (%d, %d, %d, …), comma-separated", s,
					verdict.DefaultSeqMinRounds, verdict.DefaultSeqMinRounds+2, verdict.DefaultSeqMinRounds+4)
			}
			maxes = append(maxes, n)
		}
	}
	spends := []string{verdict.SpendOBF}
	if s := os.Getenv("LOADGATE_SIM_SPENDING"); s != "" {
		spends = strings.Split(s, ",")
	}
	var spendings []plan
	for _, sp := range spends {
		for _, m := range maxes {
			spendings = append(spendings, plan{sp, m})
		}
	}
	for _, c := range spendings {
		spending, maxRounds := c.spending, c.maxRounds
		plan := verdict.SeqPlan{MaxRounds: maxRounds, Spending: spending}
		var lines []string
		for i, c := range []struct{ ratio, noise float64 }{
			{1, 0.03}, {1, 0.1}, {1.1, 0.03}, {1.1, 0.1}, {1.2, 0.03}, {1.2, 0.1}, {1.5, 0.03}, {1.5, 0.1},
		} {
			r := seqTally(t, uint64(1<<24+i<<16), gates, plan, 500, c.ratio, c.noise)
			line := fmt.Sprintf("| %s | %+.0f%% | %.2f | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.1f |", spending, 100*(c.ratio-1), c.noise,
				100*r.regression, 100*r.pass, 100*r.inc, 100*r.improvement, r.avgRounds)
			lines = append(lines, line)
			t.Log(line)
			// Within the tolerance (10%) a regression is false; at or past it
			// a pass is. At exactly the tolerance both are at their most
			// likely, each ≤ 2.5% (half the 5% the looks spend).
			bound := 0.025 + 2*math.Sqrt(0.025*0.975/float64(gates))
			if c.ratio <= 1.1 && r.regression > bound {
				t.Errorf("%s %+.0f%% σ=%v: %.1f%% false regressions, want ≤ 2.5%%", spending, 100*(c.ratio-1), c.noise, 100*r.regression)
			}
			if c.ratio >= 1.1 && r.pass+r.improvement > bound {
				t.Errorf("%s %+.0f%% σ=%v: %.1f%% passed, want ≤ 2.5%%", spending, 100*(c.ratio-1), c.noise, 100*(r.pass+r.improvement))
			}
		}
		t.Logf("%d gates each, at most %d rounds, 500 successes per round:\n| spending | change | σ | regression | pass | inconclusive | improvement | avg rounds |\n%s", gates, maxRounds, strings.Join(lines, "\n"))
	}
}

// Sequential's looks: off a look is the caller's error; the first look
// spends little, the last (or a Final one) all that is left; a decided
// gate stops.
func TestSequentialLooks(t *testing.T) {
	base, head := slowerHead(t, 6)
	plan := verdict.SeqPlan{MaxRounds: 10}
	if _, err := verdict.Sequential(base[:3], head[:3], verdict.CompareOptions{}, plan); err == nil {
		t.Error("3 rounds accepted as a look")
	}
	if _, err := verdict.Sequential(base[:5], head[:5], verdict.CompareOptions{}, plan); err == nil {
		t.Error("5 rounds accepted as a look (looks at 4, 6, 8, 10)")
	}
	v, err := verdict.Sequential(base[:4], head[:4], verdict.CompareOptions{}, plan)
	if err != nil {
		t.Fatal(err)
	}
	d := v.Sequential
	if d.Look != 1 || d.Looks != 4 || d.Level >= 0.05 || math.Abs(v.Confidence-(1-d.Level)) > 1e-12 {
		t.Errorf("look 1: %+v, confidence %v", d, v.Confidence)
	}
	// Pocock-type spending spends more at the first look: 1.5× stops there.
	v, _ = verdict.Sequential(base[:4], head[:4], verdict.CompareOptions{}, verdict.SeqPlan{MaxRounds: 10, Spending: verdict.SpendPocock})
	if d := v.Sequential; v.Value != verdict.Regression || d.Stop != verdict.StopDecided || d.Level <= 0.01 {
		t.Errorf("1.5× slower, Pocock: %s, %+v", v.Value, d)
	}
	plan.Final = true
	v, _ = verdict.Sequential(base[:6], head[:6], verdict.CompareOptions{}, plan)
	if d := v.Sequential; math.Abs(d.Spent-0.05) > 1e-12 || d.Stop != verdict.StopDecided {
		t.Errorf("final look: %+v", d)
	}
	// An A/A gate with noise runs on until its maximum.
	rng := rand.New(rand.NewPCG(9, 9))
	var b, h []*result.Result
	for range 4 {
		b = append(b, mkRound(t, hashA, nil, []wlData{{name: "api", lat: lognormal(rng, 300, 20000, 0.5, math.Exp(0.2*rng.NormFloat64()))}}, nil))
		h = append(h, mkRound(t, hashA, nil, []wlData{{name: "api", lat: lognormal(rng, 300, 20000, 0.5, math.Exp(0.2*rng.NormFloat64()))}}, nil))
	}
	v, _ = verdict.Sequential(b, h, verdict.CompareOptions{}, verdict.SeqPlan{MaxRounds: 10})
	if d := v.Sequential; d.Stop != "" || d.Open == 0 {
		t.Errorf("noisy A/A at look 1: %+v", d)
	}
	v, _ = verdict.Sequential(b, h, verdict.CompareOptions{}, verdict.SeqPlan{MaxRounds: 4})
	if d := v.Sequential; d.Stop != verdict.StopMaxRounds {
		t.Errorf("noisy A/A at its maximum: %+v", d)
	}
	v, _ = verdict.Sequential(b, h, verdict.CompareOptions{}, verdict.SeqPlan{MaxRounds: 10, Final: true})
	if d := v.Sequential; d.Stop != verdict.StopBudget {
		t.Errorf("noisy A/A out of budget: %+v", d)
	}
}

// TestRegression_RegressionLostToALaterRound: a real +20% gate (the demo's
// A/B, gate 2) called /profile a regression at its second look, ran on
// because another workload was still open, and a later round whose
// generator fell behind made the whole gate inconclusive. A look that
// calls a regression stops the gate: the gate fails whatever the open
// comparisons become.
func TestRegression_RegressionLostToALaterRound(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 14))
	var base, head []*result.Result
	for range 4 {
		api := lognormal(rng, 2000, 20000, 0.3, 1)
		slow := make([]int64, len(api))
		for i, x := range api {
			slow[i] = x * 3 / 2 // 1.5× slower: beyond the tolerance at any look
		}
		nb := lognormal(rng, 300, 20000, 0.5, math.Exp(0.3*rng.NormFloat64()))
		nh := lognormal(rng, 300, 20000, 0.5, math.Exp(0.3*rng.NormFloat64()))
		base = append(base, mkRound(t, hashA, nil, []wlData{{name: "api", lat: api}, {name: "noisy", lat: nb}}, nil))
		head = append(head, mkRound(t, hashA, nil, []wlData{{name: "api", lat: slow}, {name: "noisy", lat: nh}}, nil))
	}
	v, err := verdict.Sequential(base, head, verdict.CompareOptions{Percentile: "p95"}, verdict.SeqPlan{MaxRounds: 10})
	if err != nil {
		t.Fatal(err)
	}
	d := v.Sequential
	if v.Value != verdict.Regression || d.Stop != verdict.StopRegression || d.Open == 0 || !d.Decided() {
		t.Fatalf("a regression beside an open comparison at look 1: %s, %+v; want a regression that stops the gate", v.Value, d)
	}
}
