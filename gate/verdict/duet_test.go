package verdict_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/testtier"
)

// duetSim is how simulated duet rounds are drawn. Each round has a
// machine noise shared by both sides (it cancels in the pair's ratio), a
// per-side noise exp(side·X) with X normal or t₃ scaled to unit variance
// (heavy-tailed rounds), and n requests per side whose log latencies
// (median 20 ms, log-sd reqSD) are correlated ρ between the sides'
// request j (both due at the same instant: the machine's state at that
// instant is shared), so the sides' percentiles are correlated.
type duetSim struct {
	n            int
	reqSD, rho   float64
	round, side  float64
	t3           bool
	ratio        float64
	seqMaxRounds int // > 0: a sequential gate of at most this many rounds, else R fixed
}

// unit is a draw of mean 0 and variance 1: normal, or t₃/√3.
func (s duetSim) unit(rng *rand.Rand) float64 {
	if !s.t3 {
		return rng.NormFloat64()
	}
	z := rng.NormFloat64()
	var chi2 float64
	for range 3 {
		x := rng.NormFloat64()
		chi2 += x * x
	}
	return z / math.Sqrt(chi2/3) / math.Sqrt(3)
}

// rounds draws R duet rounds of one workload "api" (judged phase sustain),
// each result's Round.Mode duet.
func (s duetSim) rounds(t testing.TB, rng *rand.Rand, R int) (base, head []*result.Result) {
	for i := range R {
		g := math.Exp(s.round * rng.NormFloat64())
		fb := g * math.Exp(s.side*s.unit(rng))
		fh := g * s.ratio * math.Exp(s.side*s.unit(rng))
		lb, lh := make([]int64, s.n), make([]int64, s.n)
		for j := range s.n {
			shared := rng.NormFloat64()
			zb := math.Sqrt(s.rho)*shared + math.Sqrt(1-s.rho)*rng.NormFloat64()
			zh := math.Sqrt(s.rho)*shared + math.Sqrt(1-s.rho)*rng.NormFloat64()
			lb[j] = max(int64(20000*fb*math.Exp(s.reqSD*zb)), 1)
			lh[j] = max(int64(20000*fh*math.Exp(s.reqSD*zh)), 1)
		}
		b := mkRound(t, hashA, nil, []wlData{{name: "api", lat: lb}}, nil)
		h := mkRound(t, hashA, nil, []wlData{{name: "api", lat: lh}}, nil)
		b.Round = &result.Round{Number: i + 1, Mode: result.RoundDuet}
		h.Round = &result.Round{Number: i + 1, Mode: result.RoundDuet}
		base, head = append(base, b), append(head, h)
	}
	return base, head
}

// unduet is rs as one-after-the-other rounds (the same numbers, no mode):
// judged with the order-statistics floor, as before duet rounds had their
// own model.
func unduet(rs []*result.Result) []*result.Result {
	out := make([]*result.Result, len(rs))
	for i, r := range rs {
		c := *r
		c.Round = nil
		out[i] = &c
	}
	return out
}

// duetGate is one simulated gate of p95, judged as duet rounds and, on
// the same rounds, with the old independent-sides floor: the two
// comparisons and the rounds run.
func duetGate(t testing.TB, seed uint64, s duetSim, R int) (duet, floor verdict.Comparison, rounds int) {
	rng := rand.New(rand.NewPCG(seed, 0xd0e7))
	opt := verdict.CompareOptions{Percentile: "p95"}
	judge := func(base, head []*result.Result) verdict.Comparison {
		v, err := verdict.Compare(base, head, opt)
		if err != nil {
			t.Fatal(err)
		}
		return v.Workloads[0].Comparisons[0]
	}
	if s.seqMaxRounds == 0 {
		base, head := s.rounds(t, rng, R)
		return judge(base, head), judge(unduet(base), unduet(head)), R
	}
	plan := verdict.SeqPlan{MaxRounds: s.seqMaxRounds}
	base, head := s.rounds(t, rng, verdict.DefaultSeqMinRounds)
	var dDone, fDone bool
	for {
		dv, err := verdict.Sequential(base, head, opt, plan)
		if err != nil {
			t.Fatal(err)
		}
		fv, err := verdict.Sequential(unduet(base), unduet(head), opt, plan)
		if err != nil {
			t.Fatal(err)
		}
		if !dDone {
			duet, rounds = dv.Workloads[0].Comparisons[0], len(head)
			dDone = dv.Sequential.Decided()
		}
		if !fDone {
			floor = fv.Workloads[0].Comparisons[0]
			fDone = fv.Sequential.Decided()
		}
		if dDone && fDone {
			return duet, floor, rounds
		}
		b, h := s.rounds(t, rng, 2)
		base, head = append(base, b...), append(head, h...)
	}
}

type duetRow struct {
	regression, pass, improvement float64 // duet model, shares of gates
	floorRegression, floorPass    float64 // the same rounds with the floor
	sd, floorHalf, duetHalf       float64 // mean sd of r_i; mean half-widths (log)
	rounds                        float64
	duetWidth                     int // gates whose width the duet interval set
}

func duetTally(t *testing.T, seed uint64, gates int, s duetSim, R int) duetRow {
	type out struct {
		d, f verdict.Comparison
		r    int
	}
	outs := make([]out, gates)
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Go(func() {
			for g := w; g < gates; g += workers {
				d, f, r := duetGate(t, seed+uint64(g), s, R)
				outs[g] = out{d, f, r}
			}
		})
	}
	wg.Wait()
	var row duetRow
	for _, o := range outs {
		switch o.d.Value {
		case verdict.Regression:
			row.regression++
		case verdict.Pass:
			row.pass++
		case verdict.Improvement:
			row.improvement++
		}
		switch o.f.Value {
		case verdict.Regression:
			row.floorRegression++
		case verdict.Pass:
			row.floorPass++
		}
		if o.d.Interval == verdict.IntervalDuet {
			row.duetWidth++
		}
		var lr []float64
		for _, x := range o.d.RoundRatios {
			lr = append(lr, math.Log(x))
		}
		row.sd += sampleSD(lr)
		row.duetHalf += math.Log(o.d.CIHigh/o.d.CILow) / 2
		row.floorHalf += math.Log(o.f.CIHigh/o.f.CILow) / 2
		row.rounds += float64(o.r)
	}
	for _, p := range []*float64{&row.regression, &row.pass, &row.improvement, &row.floorRegression, &row.floorPass,
		&row.sd, &row.duetHalf, &row.floorHalf, &row.rounds} {
		*p /= float64(gates)
	}
	return row
}

func sampleSD(xs []float64) float64 {
	var m, v float64
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return math.Sqrt(v / float64(len(xs)-1))
}

// Duet rounds' error control and power, in seeded simulations of rounds
// whose sides share a per-round and a per-request noise component (ρ = 0.9
// between the sides' requests, log-sd 1 per request, 500 requests per side
// and round: the floor implies an sd of ≈ 15% per round where r_i's own
// is ≈ 8%). At exactly the tolerance (+10%) at most 2.5% (+3 standard
// errors of the simulation: 20 checks) of gates call a regression, also
// for t₃-distributed per-round noise at DuetMinRounds and for sequential
// gates, and no real slowdown passes; A/A never
// regresses; at +20% the duet interval calls more regressions than the
// floor did on the same rounds. The table is README's ("Duet rounds"):
// LOADGATE_SIM_GATES=1000 go test ./gate/verdict -run SimDuet -v.
func TestSimDuet(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	// Seeded; 60 gates per row in make sim, 8 by default, where the rows of
	// DefaultSeqMaxRounds (most of the time) are make sim's alone.
	full := testtier.On(t, testtier.Sim)
	gates := simGates(testtier.Scale(t, testtier.Sim, 8, 60))
	seqMaxes := []int{10}
	if full {
		seqMaxes = append(seqMaxes, verdict.DefaultSeqMaxRounds)
	}
	// 3 standard errors of the simulation: the test makes 26 such checks,
	// and at 2 an exact 2.5% would fail one of them in about 1 run of 3.
	limit := 0.025 + 3*math.Sqrt(0.025*0.975/float64(gates))
	base := duetSim{n: 500, reqSD: 1, rho: 0.9, round: 0.1, side: 0.02}
	type cse struct {
		R     int
		t3    bool
		seq   int
		ratio float64
	}
	var cases []cse
	for _, k := range []cse{{R: verdict.DuetMinRounds}, {R: verdict.DuetMinRounds, t3: true}, {R: 10}} {
		for _, ratio := range []float64{1, 1.1, 1.2} {
			k.ratio = ratio
			cases = append(cases, k)
		}
	}
	for _, seq := range seqMaxes {
		for _, ratio := range []float64{1, 1.1, 1.2} {
			cases = append(cases, cse{seq: seq, ratio: ratio})
		}
	}
	var lines []string
	for i, c := range cases {
		s := base
		s.t3, s.ratio, s.seqMaxRounds = c.t3, c.ratio, c.seq
		row := duetTally(t, uint64(3<<24+i<<16), gates, s, c.R)
		rounds := fmt.Sprint(c.R)
		if c.seq > 0 {
			rounds = fmt.Sprintf("auto ≤ %d (avg %.1f)", c.seq, row.rounds)
		}
		dist := "normal"
		if c.t3 {
			dist = "t₃"
		}
		line := fmt.Sprintf("| %s | %s | %+.0f%% | %.1f%% | %.1f%% | %.1f%% | %.1f%% | ±%.1f%% | ±%.1f%% | %.1f%% |", rounds, dist, 100*(c.ratio-1),
			100*row.regression, 100*row.pass, 100*row.floorRegression, 100*row.floorPass,
			100*math.Expm1(row.duetHalf), 100*math.Expm1(row.floorHalf), 100*row.sd)
		lines = append(lines, line)
		t.Log(line)
		switch {
		case c.ratio == 1 && row.regression > 0:
			t.Errorf("%s: A/A: %.1f%% false regressions", line, 100*row.regression)
		case c.ratio == 1.1 && row.regression > limit:
			t.Errorf("%s: at the tolerance: %.1f%% called regression, want ≤ 2.5%%", line, 100*row.regression)
		case c.ratio == 1.2 && row.regression <= row.floorRegression:
			t.Errorf("%s: +20%%: duet %.1f%% regressions, no more than the floor's %.1f%%", line, 100*row.regression, 100*row.floorRegression)
		}
		if c.ratio > 1 && row.pass+row.improvement > limit {
			t.Errorf("%s: %.1f%% of a real slowdown passed", line, 100*(row.pass+row.improvement))
		}
		if c.seq == 0 && row.duetWidth != gates {
			t.Errorf("%s: the duet interval set %d of %d gates' width, want all", line, row.duetWidth, gates)
		}
	}
	t.Logf("%d gates per row, p95, 500 requests per side and round, per-request log-sd 1 with ρ = 0.9 between the sides, per-side round noise 0.02 (normal or t₃), shared round noise 0.1:\n"+
		"| rounds | round noise | change | duet: regression | duet: pass | floor: regression | floor: pass | duet half-width | floor half-width | sd of r_i |\n"+
		"| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n%s", gates, strings.Join(lines, "\n"))
}

// duetRounds is R seeded duet rounds of a modest noise (ratio 1.05).
func duetRounds(t *testing.T, R int) (base, head []*result.Result) {
	s := duetSim{n: 500, reqSD: 1, rho: 0.9, round: 0.1, side: 0.02, ratio: 1.05}
	return s.rounds(t, rand.New(rand.NewPCG(42, 42)), R)
}

func p95Of(t *testing.T, base, head []*result.Result, opt verdict.CompareOptions) (verdict.Verdict, verdict.Comparison) {
	t.Helper()
	opt.Percentile = "p95"
	v, err := verdict.Compare(base, head, opt)
	if err != nil {
		t.Fatal(err)
	}
	return v, v.Workloads[0].Comparisons[0]
}

// From DuetMinRounds duet rounds on, the interval is the t interval over
// the rounds alone (t₅ = 2.5706 at 95% for 6 rounds), narrower than the
// same rounds judged with the independent-sides floor; fewer rounds, or a
// mix of duet and other rounds, are judged as before.
func TestDuetIntervalIsTheRounds(t *testing.T) {
	base, head := duetRounds(t, verdict.DuetMinRounds)
	_, c := p95Of(t, base, head, verdict.CompareOptions{})
	if c.Interval != verdict.IntervalDuet {
		t.Fatalf("%d duet rounds: interval from %q, want %q", verdict.DuetMinRounds, c.Interval, verdict.IntervalDuet)
	}
	var lr []float64
	for _, x := range c.RoundRatios {
		lr = append(lr, math.Log(x))
	}
	want := 2.570582 * sampleSD(lr) / math.Sqrt(6)
	if got := math.Log(c.CIHigh/c.CILow) / 2; math.Abs(got-want) > 1e-4 {
		t.Errorf("half-width %.5f, want t₅·s/√6 = %.5f", got, want)
	}
	_, f := p95Of(t, unduet(base), unduet(head), verdict.CompareOptions{})
	if f.Interval != verdict.IntervalSampling || f.CIHigh/f.CILow <= c.CIHigh/c.CILow {
		t.Errorf("the same rounds with the floor: %s %.4f…%.4f, duet %.4f…%.4f; want the floor wider", f.Interval, f.CILow, f.CIHigh, c.CILow, c.CIHigh)
	}
	if _, c5 := p95Of(t, base[:5], head[:5], verdict.CompareOptions{}); c5.Interval == verdict.IntervalDuet {
		t.Errorf("5 duet rounds: interval %q, want the floor kept below DuetMinRounds", c5.Interval)
	}
	mixed := append(slices.Clone(head[:5]), unduet(head[5:])...)
	if _, cm := p95Of(t, base, mixed, verdict.CompareOptions{}); cm.Interval == verdict.IntervalDuet {
		t.Errorf("mixed rounds: interval %q, want them judged as one-after-the-other", cm.Interval)
	}
}

// Sequential judges duet rounds with the same model at every look: its
// first look (4 rounds) with the floor, from 6 rounds on the duet interval.
func TestDuetSequentialLooks(t *testing.T) {
	base, head := duetRounds(t, 8)
	plan := verdict.SeqPlan{MaxRounds: 10}
	for R, want := range map[int]bool{4: false, 6: true, 8: true} {
		v, err := verdict.Sequential(base[:R], head[:R], verdict.CompareOptions{Percentile: "p95"}, plan)
		if err != nil {
			t.Fatal(err)
		}
		c := v.Workloads[0].Comparisons[0]
		if got := c.Interval == verdict.IntervalDuet; got != want {
			t.Errorf("look at %d rounds: interval %q, duet %t, want %t", R, c.Interval, got, want)
		}
		// Compare at the look's confidence gives the same interval.
		_, cc := p95Of(t, base[:R], head[:R], verdict.CompareOptions{Confidence: v.Confidence})
		if cc.CILow != c.CILow || cc.CIHigh != c.CIHigh {
			t.Errorf("look at %d rounds: %v…%v, Compare at its level %v…%v", R, c.CILow, c.CIHigh, cc.CILow, cc.CIHigh)
		}
	}
}

// R1 M3: a calibration (one-side-at-a-time rounds) is never used for duet
// results: Compare rejects it (NoiseDuet, naming the result), so compare
// and gate judge a duet's files alike. With 3 rounds and a calibration of
// 20 degrees of freedom it used to set the width.
func TestRegression_DuetCalibrationRejected(t *testing.T) {
	base, head := duetRounds(t, 3)
	for _, r := range append(slices.Clone(base), head...) {
		r.Machine, r.Topology = calMachine, calTopology
	}
	cal := calibration(0.5, 20)
	_, before := p95Of(t, unduet(base), unduet(head), verdict.CompareOptions{Noise: cal})
	if before.Interval != verdict.IntervalCalibration {
		t.Fatalf("the premise: one-after-the-other rounds use the calibration; got %q", before.Interval)
	}
	v, c := p95Of(t, base, head, verdict.CompareOptions{Noise: cal})
	if v.Noise == nil || v.Noise.Rejected != verdict.NoiseDuet || v.Noise.Here.Side != "base" || v.Noise.Here.Round != 1 {
		t.Fatalf("noise use %+v, want the calibration rejected for base round 1's duet", v.Noise)
	}
	if c.Interval == verdict.IntervalCalibration || c.NoiseSD != 0 {
		t.Errorf("interval %q with noise sd %v: the calibration set it", c.Interval, c.NoiseSD)
	}
	if why := cal.Match(base[0]); why != verdict.NoiseDuet {
		t.Errorf("Match of a duet result: %q, want %q", why, verdict.NoiseDuet)
	}
	if why := cal.Match(unduet(base)[0]); why != "" {
		t.Errorf("Match of the same result run alone: %q, want a match", why)
	}
}

// A duet round behind schedule on both sides (a stall of the machine,
// shared by both), or on one side while neither engine waited for an
// in-flight permit (the generator's own lateness), is left out and the
// comparison is decided on the other rounds, saying so; behind on one side
// whose engine stalled at max_in_flight, it keeps the comparison
// undecided, as in any gate (the cause may be that side's own).
func TestDuetSharedStallLeftOut(t *testing.T) {
	s := duetSim{n: 500, reqSD: 1, rho: 0.9, round: 0.1, side: 0.02, ratio: 1.5}
	base, head := s.rounds(t, rand.New(rand.NewPCG(7, 7)), 9)
	v, c := p95Of(t, base, head, verdict.CompareOptions{})
	if c.Value != verdict.Regression {
		t.Fatalf("1.5× slower over 9 duet rounds: %s, want a regression", c.Value)
	}
	stall := func(r *result.Result) *result.Result {
		cp := *r
		// behind its schedule: p99 lateness past the 5 ms limit, and 40 ms at
		// the judged p95, enough to explain a change of a 20 ms p95
		cp.LatenessMS.P95, cp.LatenessMS.P99 = 40, 40
		return &cp
	}
	b, h := slices.Clone(base), slices.Clone(head)
	b[2], h[2] = stall(b[2]), stall(h[2])
	v, c = p95Of(t, b, h, verdict.CompareOptions{})
	if c.Value != verdict.Regression || len(c.RoundRatios) != 8 {
		t.Errorf("round 3 stalled on both sides: %s on %d rounds, want a regression on the other 8", c.Value, len(c.RoundRatios))
	}
	left := false
	for _, n := range v.Notes {
		left = left || (n.Code == verdict.NoteDuetRoundLeftOut && n.Round == 3 && n.Rounds == 8)
	}
	if !left {
		t.Errorf("no note that round 3 was left out: %+v", v.Notes)
	}
	// A one-sided stall whose engine waited for in-flight permits (its
	// cause may be that side's server), after a left-out round, is named by
	// its own round number, not its place among the rounds judged.
	inflight := func(r *result.Result) *result.Result {
		cp := stall(r)
		cp.Stalled = 0.4 // seconds waiting for a permit at max_in_flight
		return cp
	}
	h[5] = inflight(h[5])
	if v, _ = p95Of(t, b, h, verdict.CompareOptions{}); len(v.Untrusted) != 1 || v.Untrusted[0].Side != "head" || v.Untrusted[0].Round != 6 {
		t.Errorf("head round 6 stalled at max_in_flight after round 3 was left out: untrusted %+v, want head round 6", v.Untrusted)
	}
	h = slices.Clone(head)
	h[2] = inflight(h[2])
	if _, c = p95Of(t, base, h, verdict.CompareOptions{}); c.Value != verdict.Inconclusive || c.Undecided != verdict.Regression {
		t.Errorf("round 3 behind on head only, stalled at max_in_flight: %s (undecided %q), want inconclusive, a regression undecided", c.Value, c.Undecided)
	}
	// Behind on one side, the other half-way to the limits, no in-flight
	// stall on either: the generator's own lateness (one process sends both
	// sides), left out like a shared stall, the side named.
	nearly := func(r *result.Result) *result.Result {
		cp := *r
		cp.LatenessMS.P99 = 3 // under the 5 ms limit, past half of it
		return &cp
	}
	h = slices.Clone(head)
	h[2] = stall(h[2])
	b = slices.Clone(base)
	// Head behind alone while base kept its schedule with room to spare:
	// the cause may be head's own (more work per request for its engine):
	// kept, untrusted.
	if v, c = p95Of(t, b, h, verdict.CompareOptions{}); c.Value != verdict.Inconclusive || len(v.LeftOut) != 0 {
		t.Errorf("round 3 behind on head only, base on schedule: %s, left out %v, want inconclusive, nothing left out", c.Value, v.LeftOut)
	}
	b[2] = nearly(b[2])
	v, c = p95Of(t, b, h, verdict.CompareOptions{})
	if c.Value != verdict.Regression || len(c.RoundRatios) != 8 || len(v.Untrusted) != 0 {
		t.Errorf("round 3 behind on head only, no in-flight stall: %s on %d rounds (untrusted %+v), want a regression on the other 8", c.Value, len(c.RoundRatios), v.Untrusted)
	}
	if !slices.ContainsFunc(v.Notes, func(n verdict.Note) bool {
		return n.Code == verdict.NoteDuetRoundLeftOut && n.Round == 3 && n.Side == "head"
	}) || !slices.Equal(v.LeftOut, []int{3}) {
		t.Errorf("round 3 (head behind) not named as left out: %+v, left out %v", v.Notes, v.LeftOut)
	}
}

// Regression: a duet round left out of the comparisons (a shared stall)
// was still merged into the head result the absolute thresholds judge, so
// a stall of the machine broke a p95 threshold the comparisons had
// rightly not judged on.
func TestRegression_LeftOutDuetRoundBrokeAThreshold(t *testing.T) {
	s := duetSim{n: 500, reqSD: 0.3, rho: 0.9, round: 0.05, side: 0.02, ratio: 1}
	base, head := s.rounds(t, rand.New(rand.NewPCG(11, 11)), 9)
	// 20 ms median, p95 ≈ 33 ms: a 60 ms p95 limit holds on every round.
	thr := map[string]result.Thr{"api": {P95MS: 60}}
	for _, r := range append(slices.Clone(base), head...) {
		r.Scenario.Thresholds = thr
	}
	v, err := verdict.Gate(base, head, verdict.CompareOptions{Percentile: "p95"})
	if err != nil {
		t.Fatal(err)
	}
	if v.Value != verdict.Pass {
		t.Fatalf("the premise: an A/A duet gate within its thresholds passes, got %s %+v", v.Value, v.Notes)
	}
	// Round 4 stalls the machine: both sides behind their schedule, both
	// sides' latencies 10× (a p95 of ≈ 330 ms in that round).
	stall := func(r *result.Result) *result.Result {
		lat := make([]int64, s.n)
		for i := range lat {
			lat[i] = int64(200000 + i*100)
		}
		cp := mkRound(t, hashA, thr, []wlData{{name: "api", lat: lat}}, nil)
		cp.Round, cp.LatenessMS.P99 = r.Round, 40
		return cp
	}
	base[3], head[3] = stall(base[3]), stall(head[3])
	v, err = verdict.Gate(base, head, verdict.CompareOptions{Percentile: "p95"})
	if err != nil {
		t.Fatal(err)
	}
	for _, wv := range v.Workloads {
		for _, c := range wv.Checks {
			if c.Value != verdict.Pass {
				t.Errorf("%s %s %s: %s (observed %v): the left-out round was judged by the threshold", wv.Phase, wv.Workload, c.Metric, c.Value, c.Observed)
			}
		}
	}
	if v.Value != verdict.Pass {
		t.Errorf("gate %s, want pass on the 8 rounds kept: %+v", v.Value, v.Notes)
	}
}

// A sequential duet gate whose first look has too many rounds behind
// their schedule for shared causes to leave them out (3 of 4) goes on —
// more rounds on schedule can decide it — where a round behind on a side
// whose engine stalled at max_in_flight, or every round behind, stops it,
// untrusted.
func TestSequentialDuetGoesOnPastSharedStalls(t *testing.T) {
	s := duetSim{n: 500, reqSD: 0.3, rho: 0.9, round: 0.05, side: 0.02, ratio: 1}
	base, head := s.rounds(t, rand.New(rand.NewPCG(5, 5)), verdict.DefaultSeqMinRounds)
	behind := func(r *result.Result, stalledS float64) *result.Result {
		cp := *r
		cp.LatenessMS.P95, cp.LatenessMS.P99, cp.Stalled = 40, 40, stalledS
		return &cp
	}
	plan := verdict.SeqPlan{MaxRounds: 10}
	opt := verdict.CompareOptions{Percentile: "p95"}
	b, h := slices.Clone(base), slices.Clone(head)
	nearly := func(r *result.Result) *result.Result {
		cp := *r
		cp.LatenessMS.P99 = 3 // half-way to the 5 ms limit
		return &cp
	}
	b[0], h[0] = behind(b[0], 0), behind(h[0], 0) // both sides
	h[1], b[1] = behind(h[1], 0), nearly(b[1])    // head only, base nearly, no in-flight stall
	b[2], h[2] = behind(b[2], 0), nearly(h[2])    // base only, head nearly, no in-flight stall
	v, err := verdict.Sequential(b, h, opt, plan)
	if err != nil {
		t.Fatal(err)
	}
	if v.Sequential.Stop != "" {
		t.Errorf("3 of 4 rounds behind for shared causes: stopped (%s), want the gate to go on", v.Sequential.Stop)
	}
	all := slices.Clone(b)
	all[3] = behind(all[3], 0) // every round behind: a machine stalled throughout
	if v, err = verdict.Sequential(all, h, opt, plan); err != nil {
		t.Fatal(err)
	}
	if v.Sequential.Stop != verdict.StopUntrusted {
		t.Errorf("every round behind: stop %q, want %q (no round kept its schedule)", v.Sequential.Stop, verdict.StopUntrusted)
	}
	h[3] = behind(h[3], 0.5) // head behind, its engine waited for permits
	if v, err = verdict.Sequential(b, h, opt, plan); err != nil {
		t.Fatal(err)
	}
	if v.Sequential.Stop != verdict.StopUntrusted {
		t.Errorf("a round behind with an in-flight stall: stop %q, want %q", v.Sequential.Stop, verdict.StopUntrusted)
	}
}

// withStack gives every result the stack cpus (pinned or not) and one
// service's mean CPU beside a database's 6%; apiPct < 0: no stack sampled.
func withStack(rs []*result.Result, cpus string, pinned bool, apiPct float64) []*result.Result {
	for _, r := range rs {
		r.Topology.StackCPUs, r.Topology.Pinned = cpus, pinned
		r.Stack = nil
		if apiPct >= 0 {
			r.Stack = &result.Stack{Services: []result.Service{{Name: "api", CPUAvgPct: apiPct, Samples: 15}, {Name: "db", CPUAvgPct: 6, Samples: 15}}}
		}
	}
	return rs
}

func busyNote(v verdict.Verdict) *verdict.Note {
	for i, n := range v.Notes {
		if n.Code == verdict.NoteDuetStackBusy {
			return &v.Notes[i]
		}
	}
	return nil
}

// A duet whose two sides' services keep the stack cpus busier than
// DuetBusyPct says so, with how busy and which cpus: on one stack core
// 2 × (24.5 + 6) = 61% (the demo before 2 December's change); at
// 2 × (15.5 + 6) = 43% (the demo after it) it says nothing, nor at exactly
// the limit, nor on two stack cpus at 61% of one, nor in rounds that ran
// one side at a time (each side had the cpus alone), nor where the stack
// was not pinned or not sampled (the share would be a guess).
func TestDuetStackBusyNoted(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cpus   string
		pinned bool
		apiPct float64
		duet   bool
		want   float64 // 0: no note
	}{
		{"the old demo", "0", true, 24.5, true, 61},
		{"the demo now", "0", true, 15.5, true, 0},
		{"at the limit", "0", true, 19, true, 0},           // 2 × (19 + 6) = 50: not above it
		{"rounds to the limit", "0", true, 19.02, true, 0}, // 50.04% is 50.0% as printed: not above it
		{"above", "0", true, 19.3, true, 50.6},             // 2 × 25.3
		{"two cpus", "0-1", true, 24.5, true, 0},           // 30.5% of two
		{"two other cpus", "2,5", true, 45, true, 51},      // 2 × (45 + 6) / 2
		{"one side at a time", "0", true, 24.5, false, 0},  // ABBA: not a duet's queue
		{"no stack cpus", "", true, 24.5, true, 0},         // nothing to divide by
		{"not pinned", "0", false, 24.5, true, 0},          // the services may have run anywhere
		{"no stack sampled", "0", true, -1, true, 0},       // nothing measured
	} {
		base, head := duetRounds(t, verdict.DuetMinRounds)
		if !tc.duet {
			base, head = unduet(base), unduet(head)
		}
		base, head = withStack(base, tc.cpus, tc.pinned, tc.apiPct), withStack(head, tc.cpus, tc.pinned, tc.apiPct)
		v, _ := p95Of(t, base, head, verdict.CompareOptions{})
		n := busyNote(v)
		switch {
		case tc.want == 0 && n != nil:
			t.Errorf("%s: note %+v, want none", tc.name, *n)
		case tc.want != 0 && (n == nil || n.BusyPct != tc.want || n.StackCPUs != tc.cpus):
			t.Errorf("%s: note %+v, want %.1f%% of %q", tc.name, n, tc.want, tc.cpus)
		}
	}
}
