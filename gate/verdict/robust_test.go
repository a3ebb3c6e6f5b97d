package verdict_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

// shape is a fixed spread of 200 latencies (µs) around 20 ms: a round's
// histogram is shape scaled by its factor, so a round's p95 ratio is the
// ratio of its factors (within the histogram's 0.1%).
func shape(factor float64) []int64 {
	out := make([]int64, 200)
	for i := range out {
		out[i] = int64(factor * 20000 * math.Exp(0.5*(float64(i)/199-0.5)))
	}
	return out
}

// ratioRounds builds duet rounds of workloads ws whose head/base p95 in
// round i is ratios[w][i] (base at factor 1).
func ratioRounds(t testing.TB, ws []string, ratios [][]float64) (base, head []*result.Result) {
	t.Helper()
	for i := range ratios[0] {
		var bd, hd []wlData
		for k, w := range ws {
			bd = append(bd, wlData{name: w, lat: shape(1)})
			hd = append(hd, wlData{name: w, lat: shape(ratios[k][i])})
		}
		b := mkRound(t, hashA, nil, bd, nil)
		h := mkRound(t, hashA, nil, hd, nil)
		b.Round = &result.Round{Number: i + 1, Mode: result.RoundDuet}
		h.Round = &result.Round{Number: i + 1, Mode: result.RoundDuet}
		base, head = append(base, b), append(head, h)
	}
	return base, head
}

// calm is ten rounds of an unchanged head (log ratios within ±3%); quiet
// is twenty, one of them a stall: head 5× slower in round 4.
var (
	calm  = []float64{1.01, 0.98, 1.02, 1.00, 0.99, 1.03, 0.97, 1.00, 1.02, 0.99}
	quiet = append([]float64{1.01, 0.98, 1.02, 5.0, 0.99, 1.03, 0.97, 1.00, 1.02, 0.99}, calm...)
)

func scaledBy(xs []float64, f float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x * f
	}
	return out
}

// bruteSignedRank is the signed-rank interval and HL estimate by
// enumerating all 2ⁿ sign patterns: an independent check of the Walsh
// averages' order statistics.
func bruteSignedRank(xs []float64, conf float64) (est, lo, hi float64, ok bool) {
	n := len(xs)
	var w []float64
	for i := range n {
		for j := i; j < n; j++ {
			w = append(w, (xs[i]+xs[j])/2)
		}
	}
	slices.Sort(w)
	N := len(w)
	est = (w[(N-1)/2] + w[N/2]) / 2
	count := make([]float64, N+1) // sign patterns by rank sum
	for mask := range 1 << n {
		s := 0
		for k := range n {
			if mask&(1<<k) != 0 {
				s += k + 1
			}
		}
		count[s]++
	}
	a := (1 - conf) / 2
	tail := 0.0
	t := N + 1
	for s := N; s >= 0; s-- {
		tail += count[s] / float64(int(1)<<n)
		if tail > a {
			break
		}
		t = s
	}
	if t > N {
		return est, 0, 0, false
	}
	return est, w[N-t], w[t-1], true
}

func TestHodgesLehmann(t *testing.T) {
	hl := verdict.CompareOptions{Percentile: "p95", Estimator: verdict.EstimatorHL}
	mt := verdict.CompareOptions{Percentile: "p95", Estimator: verdict.EstimatorMeanT}
	tr := verdict.CompareOptions{Percentile: "p95", Estimator: verdict.EstimatorTrimmed}
	for _, tc := range []struct {
		name     string
		ratios   []float64
		opt      verdict.CompareOptions
		value    verdict.Value
		interval string
	}{
		{"one stall, HL passes", quiet, hl, verdict.Pass, verdict.IntervalRank},
		{"one stall, mean-t is swayed", quiet, mt, verdict.Inconclusive, verdict.IntervalDuet},
		{"head 50% slower in every round", scaledBy(quiet, 1.5), hl, verdict.Regression, verdict.IntervalRank},
		{"head 30% faster in every round", scaledBy(calm[:8], 0.7), hl, verdict.Improvement, verdict.IntervalRank},
		// Ten rounds at 95% leave out the 8 highest Walsh averages of 55;
		// a stall makes 10: the interval's bound is not robust to it.
		{"one stall in ten rounds", quiet[:10], hl, verdict.Inconclusive, verdict.IntervalRank},
		{"one stall in ten rounds, trimmed", quiet[:10], tr, verdict.Pass, verdict.IntervalTrimmed},
		{"one stall in twenty, trimmed", quiet, tr, verdict.Pass, verdict.IntervalTrimmed},
		{"head 50% slower, trimmed", scaledBy(quiet[:10], 1.5), tr, verdict.Regression, verdict.IntervalTrimmed},
		// Below five rounds nothing is trimmed: the t interval.
		{"four rounds, trimmed", calm[:4], tr, verdict.Pass, verdict.IntervalRounds},
		// 2⁻⁶ ≤ 2.5%: six rounds reach 95%.
		{"six rounds", []float64{1.01, 0.98, 1.02, 0.99, 1.03, 0.97}, hl, verdict.Pass, verdict.IntervalRank},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, head := ratioRounds(t, []string{"api"}, [][]float64{tc.ratios})
			_, c := p95Of(t, base, head, tc.opt)
			if c.Value != tc.value || c.Interval != tc.interval {
				t.Fatalf("%s from %q (ratio %.4f, %.4f…%.4f), want %s from %q", c.Value, c.Interval, c.Ratio, c.CILow, c.CIHigh, tc.value, tc.interval)
			}
			var logs []float64
			for _, r := range c.RoundRatios {
				logs = append(logs, math.Log(r))
			}
			if tc.interval == verdict.IntervalTrimmed {
				checkYuen(t, c, logs)
			}
			if tc.opt.Estimator != verdict.EstimatorHL {
				return
			}
			est, lo, hi, ok := bruteSignedRank(logs, verdict.DefaultConfidence)
			if !ok {
				t.Fatal("brute force: unreachable at 95%")
			}
			for _, g := range []struct {
				what      string
				got, want float64
			}{{"ratio", c.Ratio, math.Exp(est)}, {"ci_low", c.CILow, math.Exp(lo)}, {"ci_high", c.CIHigh, math.Exp(hi)}} {
				if math.Abs(g.got/g.want-1) > 1e-6 {
					t.Errorf("%s %.6f, brute force %.6f", g.what, g.got, g.want)
				}
			}
		})
	}
}

// Below 2⁻ᴿ ≤ (1−confidence)/2 no rank interval exists: the t interval
// (here the floor, below DuetMinRounds) stays.
func TestHodgesLehmannTooFewRounds(t *testing.T) {
	base, head := ratioRounds(t, []string{"api"}, [][]float64{calm[:5]})
	_, c := p95Of(t, base, head, verdict.CompareOptions{Estimator: verdict.EstimatorHL})
	if c.Interval == verdict.IntervalRank {
		t.Fatalf("5 rounds at 95%%: interval %q, want no rank interval", c.Interval)
	}
	_, c = p95Of(t, base, head, verdict.CompareOptions{Estimator: verdict.EstimatorHL, Confidence: 0.9})
	if c.Interval != verdict.IntervalRank {
		t.Fatalf("5 rounds at 90%%: interval %q, want %q (2⁻⁵ ≤ 5%%)", c.Interval, verdict.IntervalRank)
	}
}

// Holm's procedure tests a rank comparison by its exact signed-rank
// p-value: a regression on its own interval holds exactly when its p is
// within its level.
func TestHodgesLehmannFamily(t *testing.T) {
	ws := []string{"a", "b", "c", "d"}
	slow := scaledBy(quiet, 1.25)
	base, head := ratioRounds(t, ws, [][]float64{slow, quiet, quiet, quiet})
	v, err := verdict.Gate(base, head, verdict.CompareOptions{Percentile: "p95", Estimator: verdict.EstimatorHL})
	if err != nil {
		t.Fatal(err)
	}
	if v.Family == nil || v.Family.Tests != 4 {
		t.Fatalf("family %+v, want 4 tests", v.Family)
	}
	c := v.Workloads[0].Comparisons[0]
	if c.Value != verdict.Regression || c.Family == nil || !c.Family.Held || c.Family.P > c.Family.Level {
		t.Fatalf("a: %s, family %+v; want a regression that held", c.Value, c.Family)
	}
	// Every round beyond 1.1: the signed-rank statistic is 210 of 210,
	// P(T ≥ 210) = 2⁻²⁰.
	if want := math.Ldexp(1, -20); math.Abs(c.Family.P/want-1) > 1e-9 {
		t.Errorf("p %.9f, want 2⁻²⁰ = %.9f", c.Family.P, want)
	}
	for _, wv := range v.Workloads[1:] {
		if wv.Value != verdict.Pass {
			t.Errorf("%s: %s, want pass", wv.Workload, wv.Value)
		}
	}
}

// checkYuen checks c against the 20% trimmed mean of logs and Yuen's
// interval, computed here from their definitions.
func checkYuen(t *testing.T, c verdict.Comparison, logs []float64) {
	t.Helper()
	tq := map[int]float64{5: 2.570582, 11: 2.200985} // t quantiles at 0.975 by df
	n := len(logs)
	g := n / 5
	s := slices.Sorted(slices.Values(logs))
	var m, wm float64
	for i := g; i < n-g; i++ {
		m += s[i] / float64(n-2*g)
	}
	w := make([]float64, n)
	for i := range s {
		w[i] = s[min(max(i, g), n-g-1)]
		wm += w[i] / float64(n)
	}
	var ss float64
	for _, x := range w {
		ss += (x - wm) * (x - wm)
	}
	h := n - 2*g
	half := tq[h-1] * math.Sqrt(ss/float64(h*(h-1)))
	if math.Abs(math.Log(c.Ratio)-m) > 1e-5 || math.Abs(math.Log(c.CILow)-(m-half)) > 1e-5 || math.Abs(math.Log(c.CIHigh)-(m+half)) > 1e-5 {
		t.Errorf("ratio %.6f (%.6f…%.6f), want exp(%.6f ∓ %.6f)", c.Ratio, c.CILow, c.CIHigh, m, half)
	}
}

func TestEstimatorUnknown(t *testing.T) {
	base, head := ratioRounds(t, []string{"api"}, [][]float64{quiet})
	_, err := verdict.Compare(base, head, verdict.CompareOptions{Estimator: "median"})
	if err == nil || !strings.Contains(err.Error(), `"median"`) {
		t.Fatalf("err %v, want one naming the estimator", err)
	}
}

// Twenty duet rounds of an unchanged head, one of them stalled (head 5×
// slower): the mean of the log ratios and its t interval are swayed by the
// stall; the robust estimators are not.
func ExampleCompareOptions_estimator() {
	var base, head []*result.Result
	for i, f := range quiet {
		b := &result.Result{Schema: result.Schema, Usable: true, Offered: 200, Recorded: 200,
			Scenario: result.Scenario{Name: "demo", Hash: "sha256:aaaa", Scale: 1}}
		h := *b
		b.Phases = []result.Phase{examplePhase(1)}
		h.Phases = []result.Phase{examplePhase(f)}
		b.Round = &result.Round{Number: i + 1, Mode: result.RoundDuet}
		h.Round = b.Round
		base, head = append(base, b), append(head, &h)
	}
	for _, e := range []string{verdict.EstimatorMeanT, verdict.EstimatorHL, verdict.EstimatorTrimmed} {
		v, err := verdict.Compare(base, head, verdict.CompareOptions{Percentile: "p95", Estimator: e})
		if err != nil {
			fmt.Println(err)
			return
		}
		c := v.Workloads[0].Comparisons[0]
		fmt.Printf("%s: ×%.3f (%.3f … %.3f) %s\n", e, c.Ratio, c.CILow, c.CIHigh, c.Value)
	}
	// Output:
	// mean-t: ×1.085 (0.916 … 1.284) inconclusive
	// hodges-lehmann: ×1.004 (0.994 … 1.015) pass
	// trimmed-mean: ×1.003 (0.992 … 1.014) pass
}

// examplePhase is a judged phase of one workload "api" whose 200
// latencies are shape(f).
func examplePhase(f float64) result.Phase {
	h := result.NewHistogram()
	for _, v := range shape(f) {
		_ = h.RecordValue(v)
	}
	enc, _ := result.EncodeHistogram(h)
	w := result.Workload{Name: "api", Offered: 200, Succeeded: 200, Completed: 200, Histogram: enc, ServiceH: enc,
		LatencyMS: result.Summarize(h), Failures: map[string]int64{}}
	w.ServiceMS = w.LatencyMS
	return result.Phase{Name: "sustain", Pattern: "constant", Judged: true, DurationS: 60, Workloads: []result.Workload{w}}
}
