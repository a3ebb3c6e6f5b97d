package verdict_test

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/testtier"
)

const hashA = "sha256:aaaa"

// wlData is one workload's records in one phase: successes' latencies (µs)
// and a failure count.
type wlData struct {
	name    string
	lat     []int64
	failed  int64
	offered int64 // 0: len(lat) + failed
}

// mkWorkload builds a consistent workload with real encoded histograms.
func mkWorkload(t testing.TB, d wlData, durS float64) result.Workload {
	t.Helper()
	h := result.NewHistogram()
	for _, v := range d.lat {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := result.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	ok := int64(len(d.lat))
	off := d.offered
	if off == 0 {
		off = ok + d.failed
	}
	w := result.Workload{Name: d.name, Offered: off, Succeeded: ok, Failed: d.failed, Abandoned: off - ok - d.failed,
		Failures: map[string]int64{}, Completed: ok + d.failed, Histogram: enc, ServiceH: enc}
	if d.failed > 0 {
		w.Failures["status 503"] = d.failed
	}
	w.LatencyMS = result.Summarize(h)
	w.ServiceMS = w.LatencyMS
	w.Throughput = result.Throughput{CompletedPerS: float64(w.Completed) / durS, OfferedPerS: float64(off) / durS}
	return w
}

// mkRound builds one usable round: a judged "sustain" and, when recover is
// not nil, a "recover" phase.
func mkRound(t testing.TB, hash string, thr map[string]result.Thr, sustain, recover []wlData) *result.Result {
	t.Helper()
	r := &result.Result{Schema: result.Schema, Usable: true,
		Scenario: result.Scenario{Name: "demo", Hash: hash, Scale: 1, Thresholds: thr}}
	add := func(name string, judged, rec bool, ds []wlData) {
		p := result.Phase{Name: name, Pattern: "constant", Judged: judged, Recover: rec, DurationS: 60}
		for _, d := range ds {
			w := mkWorkload(t, d, 60)
			p.Workloads = append(p.Workloads, w)
			r.Offered += w.Offered
			r.Recorded += w.Succeeded + w.Failed + w.Abandoned
		}
		r.Phases = append(r.Phases, p)
	}
	add("sustain", true, false, sustain)
	if recover != nil {
		add("recover", false, true, recover)
	}
	return r
}

// lognormal draws n latencies (µs) with median med·factor and log-sd sigma.
func lognormal(rng *rand.Rand, n int, med, sigma, factor float64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = max(int64(med*factor*math.Exp(sigma*rng.NormFloat64())), 1)
	}
	return out
}

// simGate simulates R paired rounds where head = base × ratio, each side of
// each round scaled by its own lognormal machine noise exp(N(0, noise)), n
// successes per side and round (median 20 ms, log-sd 0.5), and returns the
// p95 comparison of the judged phase.
func simGate(t testing.TB, seed uint64, R, n int, ratio, noise float64) verdict.Comparison {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x10ad6a7e))
	var base, head []*result.Result
	for range R {
		fb := math.Exp(noise * rng.NormFloat64())
		fh := ratio * math.Exp(noise*rng.NormFloat64())
		base = append(base, mkRound(t, hashA, nil, []wlData{{name: "api", lat: lognormal(rng, n, 20000, 0.5, fb)}}, nil))
		head = append(head, mkRound(t, hashA, nil, []wlData{{name: "api", lat: lognormal(rng, n, 20000, 0.5, fh)}}, nil))
	}
	v, err := verdict.Compare(base, head, verdict.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Workloads) != 1 || len(v.Workloads[0].Comparisons) != 2 {
		t.Fatalf("got %+v", v)
	}
	return v.Workloads[0].Comparisons[0]
}

// tally runs gates simulations and counts outcomes and CI coverage of truth.
func tally(t *testing.T, seed uint64, gates, R, n int, ratio, noise float64) (covered float64, vals map[verdict.Value]int) {
	t.Parallel()
	out := make([]verdict.Comparison, gates)
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for k := range workers {
		wg.Go(func() {
			for g := k; g < gates; g += workers {
				out[g] = simGate(t, seed+uint64(g), R, n, ratio, noise)
			}
		})
	}
	wg.Wait()
	vals = map[verdict.Value]int{}
	cov := 0
	for _, c := range out {
		if c.CILow <= ratio && ratio <= c.CIHigh {
			cov++
		}
		vals[c.Value]++
	}
	return float64(cov) / float64(gates), vals
}

// Coverage: the interval covers the true ratio at about the stated 95%
// (slightly above: the sampling floor only ever widens it). Three rounds
// (t with 2 degrees of freedom, 4.30 where z is 1.96) is where a wrong
// quantile would show most.
func TestSimCoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	// 500 gates in make sim; 60, seeded, by default, within 3 standard
	// errors of the simulation (a z where t belongs would give ≈ 81%).
	gates := testtier.Scale(t, testtier.Sim, 60, 500)
	lo, hi := 0.92, 0.985
	if gates < 500 {
		se := math.Sqrt(0.95 * 0.05 / float64(gates))
		lo, hi = 0.95-3*se, 0.955+3*se
	}
	cov, vals := tally(t, 1000, gates, 3, 1000, 1.2, 0.1)
	t.Logf("coverage of ratio 1.2 (%d gates, 3 rounds, noise σ=0.1, n=1000): %.1f%%, values %v", gates, 100*cov, vals)
	if cov < lo || cov > hi {
		t.Errorf("coverage %.1f%%, want %.1f%% … %.1f%%", 100*cov, 100*lo, 100*hi)
	}
}

// A/A: no change is called a regression at most 5% of the time (by design
// it is far rarer: the interval must clear 1+τ).
func TestSimAA(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	gates := testtier.Scale(t, testtier.Sim, 60, 500) // seeded; 500 in make sim
	cov, vals := tally(t, 5000, gates, 5, 1000, 1.0, 0.1)
	t.Logf("A/A (%d gates, 5 rounds, σ=0.1, n=1000): coverage %.1f%%, values %v", gates, 100*cov, vals)
	if bad := vals[verdict.Regression] + vals[verdict.Improvement]; float64(bad) > 0.05*float64(gates) {
		t.Errorf("A/A: %d of %d gates called a change", bad, gates)
	}
	if ok := vals[verdict.Pass] + vals[verdict.Inconclusive]; float64(ok) < 0.95*float64(gates) {
		t.Errorf("A/A: %d of %d pass or inconclusive, want ≥ 95%%", ok, gates)
	}
}

// A/B: +20% at 5 rounds with modest noise (σ=0.03 per side and round, 2 000
// samples per round) is caught as a regression in at least 70% of gates
// (78% with these seeds),
// and never called an improvement or a pass.
func TestSimPower(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	gates := testtier.Scale(t, testtier.Sim, 40, 300) // seeded; 300 in make sim
	cov, vals := tally(t, 9000, gates, 5, 2000, 1.2, 0.03)
	power := float64(vals[verdict.Regression]) / float64(gates)
	t.Logf("A/B +20%% (5 rounds, σ=0.03, n=2000): power %.1f%%, coverage %.1f%%, values %v", 100*power, 100*cov, vals)
	if power < 0.70 {
		t.Errorf("power %.1f%%, want ≥ 70%%", 100*power)
	}
	if vals[verdict.Pass]+vals[verdict.Improvement] > 0 {
		t.Errorf("a +20%% change passed: %v", vals)
	}
}

// A stored baseline is one measurement paired with every head round: it
// counts once in the pooled counts and error rates, and its sampling error,
// shared by every round, does not shrink with the number of rounds.
func TestRepeatedBaselineCountsOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	base := mkRound(t, hashA, nil, []wlData{{name: "api", lat: lognormal(rng, 400, 20000, 0.5, 1), failed: 4}}, nil)
	var fixed, heads []*result.Result
	for range 5 {
		heads = append(heads, mkRound(t, hashA, nil, []wlData{{name: "api", lat: lognormal(rng, 400, 20000, 0.5, 1), failed: 4}}, nil))
		fixed = append(fixed, base)
	}
	get := func(bs []*result.Result) (lat, errRate verdict.Comparison) {
		v, err := verdict.Compare(bs, heads, verdict.CompareOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := v.Workloads[0].Comparisons
		return c[0], c[1]
	}
	lat, er := get(fixed)
	if lat.BaseN != 400 || lat.HeadN != 2000 {
		t.Errorf("latency n base %d head %d, want 400 (the baseline once) and 2000", lat.BaseN, lat.HeadN)
	}
	if er.BaseN != 404 || er.ErrBase.Failed != 4 {
		t.Errorf("error rate base n %d failed %d, want 404 and 4", er.BaseN, er.ErrBase.Failed)
	}
	// Five copies of one pair of results carry the information of one pair:
	// the interval must be the one-round interval, not √5 narrower.
	h := heads[0]
	one, err := verdict.Compare([]*result.Result{base}, []*result.Result{h}, verdict.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	five, err := verdict.Compare(fixed, []*result.Result{h, h, h, h, h}, verdict.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c1, c5 := one.Workloads[0].Comparisons[0], five.Workloads[0].Comparisons[0]
	if math.Abs(c1.CILow-c5.CILow) > 1e-9 || math.Abs(c1.CIHigh-c5.CIHigh) > 1e-9 {
		t.Errorf("5 copies of one pair give CI %.4f…%.4f, one pair %.4f…%.4f: copies are not information", c5.CILow, c5.CIHigh, c1.CILow, c1.CIHigh)
	}
}

// slowerHead builds R paired rounds where head is 1.5× slower than base
// with little noise: a clear regression.
func slowerHead(t *testing.T, R int) (base, head []*result.Result) {
	rng := rand.New(rand.NewPCG(42, 42))
	for range R {
		base = append(base, mkRound(t, hashA, nil, []wlData{{name: "api", lat: lognormal(rng, 2000, 20000, 0.5, 1)}}, nil))
		head = append(head, mkRound(t, hashA, nil, []wlData{{name: "api", lat: lognormal(rng, 2000, 20000, 0.5, 1.5)}}, nil))
	}
	return base, head
}

// markBehind makes r a round whose generator fell behind: 57% of its
// requests late, lateness p99 833 ms (issue 8's run).
func markBehind(t *testing.T, r *result.Result) {
	r.Late = r.Offered * 57 / 100
	h := result.NewHistogram()
	for i := range r.Offered {
		v := int64(19_800) // µs
		switch {
		case i >= r.Offered*98/100:
			v = 833_000
		case i >= r.Offered/2:
			v = 400_000
		}
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := result.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	r.LatenessHist, r.LatenessMS = enc, result.Summarize(h)
}

// A round whose generator fell behind its schedule is not trustworthy: a
// comparison that would call a regression is inconclusive instead, and the
// verdict names the side, the round and the numbers.
func TestGeneratorBehindIsNotARegression(t *testing.T) {
	base, head := slowerHead(t, 3)
	v, err := verdict.Gate(base, head, verdict.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v.Value != verdict.Regression || len(v.Untrusted) != 0 {
		t.Fatalf("on schedule: %s, untrusted %v; want a regression (the premise of this test)", v.Value, v.Untrusted)
	}

	markBehind(t, head[1])
	v, err = verdict.Gate(base, head, verdict.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v.Value != verdict.Inconclusive || v.ExitCode() != 0 {
		t.Errorf("head round 2 behind schedule: %s (exit %d), want inconclusive (exit 0)", v.Value, v.ExitCode())
	}
	if len(v.Untrusted) != 1 || v.Untrusted[0].Side != "head" || v.Untrusted[0].Round != 2 {
		t.Fatalf("untrusted = %+v, want head round 2", v.Untrusted)
	}
	if g := v.Untrusted[0].Generator; g.LateShare != 0.57 || g.LatenessP99MS < 833 || g.LatenessP99MS >= 834 || g.LatenessCount != 2000 {
		t.Errorf("untrusted generator = %+v, want 57%% late, p99 833 ms over 2000", g)
	}
	for _, wv := range v.Workloads {
		for _, c := range wv.Comparisons {
			if c.Value == verdict.Regression || c.Value == verdict.Pass || c.Value == verdict.Improvement {
				t.Errorf("%s %s: %s on an untrusted round", c.Workload, c.Metric, c.Value)
			}
			if c.Undecided == "" || c.Needs == nil || !c.Needs.TrustedRounds {
				t.Errorf("%s undecided %q, needs %+v: want the value it would have had and what would decide", c.Metric, c.Undecided, c.Needs)
			}
		}
	}
	p95 := v.Workloads[0].Comparisons[0]
	if p95.Undecided != verdict.Regression || p95.Reason != verdict.ReasonSlower {
		t.Errorf("p95 undecided %q reason %q: want the measured change and that it is not called a regression", p95.Undecided, p95.Reason)
	}
}

// A stored baseline paired with every head round is one result: named once,
// with the rounds it stands in. (Head is the faster side: a base late by
// 400 ms at p95 could fake that improvement.)
func TestGeneratorBehindBaseline(t *testing.T) {
	head, base := slowerHead(t, 3)
	markBehind(t, base[0])
	for i := range base {
		base[i] = base[0]
	}
	v, err := verdict.Compare(base, head, verdict.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v.Value != verdict.Inconclusive || len(v.Untrusted) != 1 || !slices.Equal(v.Untrusted[0].Rounds, []int{1, 2, 3}) || v.Untrusted[0].Side != "base" {
		t.Errorf("value %s, untrusted %+v", v.Value, v.Untrusted)
	}
}
