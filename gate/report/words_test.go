package report_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

// One number, one spelling: the error rate the table prints is the one the
// verdict's words print (issue 9: "0.0355%" in the table, "0.036%" in the
// text of the same report).
func TestOneSpellingPerNumber(t *testing.T) {
	v := verdict.Verdict{Tolerance: 0.1, Confidence: 0.95}
	c := verdict.Comparison{Metric: verdict.MetricErrorRate, Base: 0.000355, Head: 0.0012, Diff: 0.000845,
		CILow: 0.0004, CIHigh: 0.0013, Interval: verdict.IntervalScore, Significant: true,
		Value: verdict.Regression, Reason: verdict.ReasonMoreErrors}
	why := report.ComparisonWhy(v, c)
	for _, want := range []string{"error rate " + report.Percent(0.000355) + " → 0.12%", "0.0355%", "(+0.08 points, 95% CI +0.04 … +0.13)", "beyond the tolerance (+0.00 points)"} {
		if !strings.Contains(why, want) {
			t.Errorf("why %q lacks %q", why, want)
		}
	}
	l := verdict.Comparison{Metric: "p95", Ratio: 0.868, CILow: 0.8, CIHigh: 0.95, Value: verdict.Improvement, Reason: verdict.ReasonFaster,
		Undecided: verdict.Improvement}
	v.Untrusted = []verdict.UntrustedRound{{Side: "base", Round: 1, Rounds: []int{1, 2, 3}}}
	if got := report.ComparisonWhy(v, l); got != "p95 −13.2% (95% CI −20.0% … −5.0%): faster beyond the +10.0% tolerance — not called an improvement: the generator fell behind its schedule in base rounds 1–3 (one result) (see the notes)" {
		t.Errorf("why %q", got)
	}
	// Regression test: the rounds behind schedule were listed one by one,
	// "base round 1 and base round 2 and … and head round 10" (a duet
	// corpus's gate, eighteen names in every row).
	for _, tc := range []struct {
		untrusted []verdict.UntrustedRound
		want      string
	}{
		{[]verdict.UntrustedRound{{Side: "base", Round: 1}, {Side: "base", Round: 2}, {Side: "base", Round: 3}, {Side: "base", Round: 5},
			{Side: "head", Round: 1}, {Side: "head", Round: 2}, {Side: "head", Round: 3}, {Side: "head", Round: 5}}, "rounds 1–3, 5 of both sides"},
		{[]verdict.UntrustedRound{{Side: "base", Round: 1}, {Side: "base", Round: 2}, {Side: "head", Round: 2}}, "base rounds 1, 2 and head round 2"},
		{[]verdict.UntrustedRound{{Side: "base", Round: 4}, {Side: "head", Round: 4}}, "base round 4 and head round 4"},
		{[]verdict.UntrustedRound{{Side: "base", Round: 1, Rounds: []int{1, 2, 3}}, {Side: "head", Round: 2}, {Side: "head", Round: 3}}, "base rounds 1–3 (one result) and head rounds 2, 3"},
		// two results of one side numbered alike (a duet's) name the round once
		{[]verdict.UntrustedRound{{Side: "base", Round: 1}, {Side: "base", Round: 1}, {Side: "head", Round: 1}}, "base round 1 and head round 1"},
		{[]verdict.UntrustedRound{{Side: "base", Round: 2}, {Side: "base", Round: 2}, {Side: "head", Round: 2}, {Side: "head", Round: 2}}, "base round 2 and head round 2"},
		// a result paired in rounds 1 and 2 beside another in round 3: all three
		{[]verdict.UntrustedRound{{Side: "base", Round: 1, Rounds: []int{1, 2}}, {Side: "base", Round: 3}}, "base rounds 1–3"},
	} {
		v.Untrusted = tc.untrusted
		want := "p95 −13.2% (95% CI −20.0% … −5.0%): faster beyond the +10.0% tolerance — not called an improvement: the generator fell behind its schedule in " + tc.want + " (see the notes)"
		if got := report.ComparisonWhy(v, l); got != want {
			t.Errorf("why %q\nwant %q", got, want)
		}
	}
	n := verdict.Comparison{Metric: "p95", Rounds: 3, Reason: verdict.ReasonStraddles, Needs: &verdict.Need{Rounds: 13, SustainFactor: 2.5}}
	if got := report.ComparisonNeed(v, n); got != "≈ 13 rounds (now 3), or 3 rounds with a sustain ≈ 2.5× longer" {
		t.Errorf("need %q", got)
	}
	e := report.Explain(verdict.Verdict{Workloads: []verdict.WorkloadVerdict{{Comparisons: []verdict.Comparison{n}}}})
	if e.Workloads[0].Comparisons[0].Need == "" || n.Need != "" {
		t.Error("Explain did not word the copy, or changed its argument")
	}
}

// The words of issue 14: an assumed noise bound, the smallest change a
// gate could call, a budget that is the limit, a regression Holm did not
// keep, a calibration not used and why, a sequential look.
func TestNoiseFamilySequentialWords(t *testing.T) {
	v := verdict.Verdict{Tolerance: 0.1, Confidence: 0.95,
		Noise: &verdict.NoiseUse{Source: verdict.NoiseDefault, SD: 0.3, Pairs: 10, Rejected: verdict.NoiseOtherMachine,
			Here:  verdict.NoiseSetting{Machine: result.Machine{Host: "runner-2", CPUs: 2, OS: "linux", Arch: "amd64", Kernel: "6.8"}},
			There: verdict.NoiseSetting{Machine: result.Machine{Host: "runner-1", CPUs: 2, OS: "linux", Arch: "amd64", Kernel: "6.8"}}}}
	c := verdict.Comparison{Metric: "p95", Rounds: 1, Ratio: 1.2, CILow: 0.67, CIHigh: 2.16, Interval: verdict.IntervalNoise, NoiseSD: 0.3,
		Detectable: 1.98, Value: verdict.Inconclusive, Reason: verdict.ReasonStraddles,
		Needs: &verdict.Need{Rounds: 14, Budget: 10, Calibrate: true}}
	if got, want := report.ComparisonWhy(v, c), "p95 +20.0% (95% CI −33.0% … +116.0%) [noise between runs not measured by one round: the default bound, a pair's log-sd 0.3]: the interval straddles the +10.0% tolerance; the smallest slowdown one round could call a regression is +98.0%"; got != want {
		t.Errorf("why\n got %q\nwant %q", got, want)
	}
	if got, want := report.ComparisonNeed(v, c), "≈ 14 rounds (now 1), more than the budget's 10: the budget is the limit, or a calibration of this machine (loadgate calibrate) in place of the default noise bound"; got != want {
		t.Errorf("need\n got %q\nwant %q", got, want)
	}
	f := verdict.Comparison{Metric: "p95", Rounds: 5, Ratio: 1.3, CILow: 1.12, CIHigh: 1.5, Interval: verdict.IntervalRounds,
		Value: verdict.Inconclusive, Reason: verdict.ReasonFamily, Family: &verdict.FamilyTest{P: 0.004, Rank: 3, Of: 20, Level: 0.0013889}}
	if got := report.ComparisonWhy(v, f); !strings.Contains(got, "not among the gate's comparisons (Holm: p 0.4%, rank 3 of 20, needs ≤ 0.139%)") {
		t.Errorf("family why %q", got)
	}
	if got := report.NoiseNote(v); !strings.Contains(got, "is not used: it was measured on another machine (here runner-2") {
		t.Errorf("noise note %q", got)
	}
	// The same VM name and size on another processor (a regression: sessions'
	// VMs were "vm", 2 CPUs on an Intel Xeon one day, an AMD EPYC the next).
	w := v
	w.Noise = &verdict.NoiseUse{Source: verdict.NoiseDefault, SD: 0.3, Pairs: 10, Rejected: verdict.NoiseOtherMachine,
		Here:  verdict.NoiseSetting{Machine: result.Machine{Host: "vm", CPUModel: "AMD EPYC", CPUs: 2, OS: "linux", Arch: "amd64"}},
		There: verdict.NoiseSetting{Machine: result.Machine{Host: "vm", CPUModel: "Intel(R) Xeon(R) Processor", CPUs: 2, OS: "linux", Arch: "amd64"}}}
	if got := report.NoiseNote(w); !strings.Contains(got, "vm, AMD EPYC (2 CPUs, linux/amd64)") || !strings.Contains(got, "vm, Intel(R) Xeon(R) Processor (2 CPUs, linux/amd64)") {
		t.Errorf("noise note names no processor: %q", got)
	}
	v.Sequential = &verdict.SeqDecision{Look: 2, Looks: 4, Rounds: 6, MaxRounds: 10, Spending: verdict.SpendOBF, Nominal: 0.95, Level: 0.0049, Spent: 0.0055, Stop: verdict.StopDecided}
	if got := report.SequentialNote(v); !strings.Contains(got, "look 2 of at most 4 after 6 rounds") || !strings.Contains(got, "stopped: every judged comparison is decided") {
		t.Errorf("sequential note %q", got)
	}
}

// The generator's behind-schedule warning is worded here, from the numbers
// gate/result returns, with this package's formatters: counts grouped,
// percentages and milliseconds to 3 significant digits.
func ExampleGeneratorWhy() {
	r := &result.Result{Schema: result.Schema, Offered: 3724, Late: 2122,
		LatenessMS: result.Summary{Count: 3724, P99: 833.023}}
	fmt.Println(report.GeneratorWhy(*r.GeneratorBehind()))
	r.Late, r.LatenessMS.P99 = 0, 5.01 // over the p99 limit only
	fmt.Println(report.GeneratorWhy(*r.GeneratorBehind()))
	// Output:
	// generator behind schedule: 57% of requests late (2 122 of 3 724, limit 1%), lateness p99 833 ms (n=3 724, limit 5 ms)
	// generator behind schedule: 0% of requests late (0 of 3 724, limit 1%), lateness p99 5.01 ms (n=3 724, limit 5 ms)
}

// What loadgate overrode in a pinned stack's compose model is recorded as
// values (result.Topology.Overrides) and worded here, as the result's
// pinned_reason once said it: the report reads the same for a new result
// and for one of an older loadgate that carried the words.
func TestOverridesWordedFromValues(t *testing.T) {
	const want = `pinned yes (stack: overrode: service api: cpuset "0-1" replaced by the stack's "2-5"; service web: host port 8080 for 80/tcp made ephemeral), cpuset overridden`
	topo := result.Topology{StackCPUs: "2-5", LoadCPUs: "0-1", Pinned: true, CPUsetOverridden: true, TargetPath: "container-network",
		Overrides: []result.Override{
			{Service: "api", Kind: result.OverrideCPUSet, From: "0-1", To: "2-5"},
			{Service: "web", Kind: result.OverrideHostPort, From: "8080", Target: 80, Protocol: "tcp"},
		}}
	old := topo
	old.Overrides = nil
	old.PinnedReason = `stack: overrode: service api: cpuset "0-1" replaced by the stack's "2-5"; service web: host port 8080 for 80/tcp made ephemeral`
	for name, tp := range map[string]result.Topology{"values": topo, "older words": old} {
		r := &result.Result{Schema: result.Schema, Scenario: result.Scenario{Name: "demo-api"}, Topology: tp, Usable: true}
		// As result.json carries them.
		var enc bytes.Buffer
		if err := r.Encode(&enc); err != nil {
			t.Fatal(err)
		}
		r, err := result.Decode(&enc)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := report.Markdown(&b, r, verdict.Verdict{Value: verdict.Pass, Workloads: []verdict.WorkloadVerdict{}}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), want) {
			t.Errorf("%s: the report lacks %q:\n%s", name, want, b.String())
		}
	}
	// A result whose generator was not pinned says both.
	topo.Pinned, topo.PinnedReason = false, "generator thread 12 runs on cpus 0-3, not 0-1"
	r := &result.Result{Schema: result.Schema, Topology: topo, Usable: true}
	var b bytes.Buffer
	if err := report.Markdown(&b, r, verdict.Verdict{Value: verdict.Pass, Workloads: []verdict.WorkloadVerdict{}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `made ephemeral; generator thread 12 runs on cpus 0-3, not 0-1)`) {
		t.Errorf("an unpinned result's report lacks the overrides or the reason:\n%s", b.String())
	}
}

// Regression test: a sequential gate's first look (four rounds, all behind
// schedule, intervals at 99.999%) printed "99.999% CI −100.0% …
// +10 468 444 702.9%" and "the smallest slowdown 4 rounds could call a
// regression is +13 169 162 963.4%". Past 100× the words say only that.
func TestRegression_AstronomicalIntervalPrinted(t *testing.T) {
	v := verdict.Verdict{Tolerance: 0.1, Confidence: 0.99999}
	c := verdict.Comparison{Metric: "p95", Rounds: 4, Ratio: 0.874, CILow: 0.0001, CIHigh: 104684448.03,
		Reason: verdict.ReasonStraddles, Detectable: 131691630.63}
	got := report.ComparisonWhy(v, c)
	want := "p95 −12.6% (99.999% CI −100.0% … more than +9\u2009900.0%): the interval straddles the +10.0% tolerance; the smallest slowdown 4 rounds could call a regression is more than +9\u2009900.0%"
	if got != want {
		t.Errorf("why %q\nwant %q", got, want)
	}
	c.CIHigh, c.Detectable = 1.6, 1.43
	if got := report.ComparisonWhy(v, c); !strings.Contains(got, "… +60.0%)") || !strings.Contains(got, "is +43.0%") {
		t.Errorf("an ordinary interval: %q", got)
	}
}

// Regression test: a comparison with no interval (one paired round, too
// few successes) headlined as "`search` p95 — (no interval, …) is too close
// to the ±10% tolerance to call": a dash for the change, and a closeness
// nothing was measured to show.
func TestRegression_NoIntervalHeadline(t *testing.T) {
	c := verdict.Comparison{Phase: "sustain", Workload: "search", Metric: "p95", Value: verdict.Inconclusive,
		BaseN: 45, HeadN: 45, Rounds: 1, Reason: verdict.ReasonTooFewSamples}
	v := verdict.Verdict{Value: verdict.Inconclusive, Tolerance: 0.1,
		Workloads: []verdict.WorkloadVerdict{{Phase: "sustain", Workload: "search", Value: verdict.Inconclusive, Comparisons: []verdict.Comparison{c}}}}
	got := report.Headline(rounds.Outcome{Rounds: 1, Scenario: result.Scenario{Name: "demo-gate"}, Verdict: v})
	want := "Inconclusive: search p95 has no interval yet (1 paired round, 45 requests a side)"
	if got != want {
		t.Errorf("headline %q\nwant      %q", got, want)
	}
}
