package verdict

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/loadgate/loadgate/gate/result"
)

// ErrHashMismatch is wrapped by Compare and Gate when the results are of
// different scenarios (different hashes): the same load or no comparison
// (rule 15). The message names both hashes. It is a usage error (exit 2),
// never a verdict.
var ErrHashMismatch = errors.New("verdict: different scenario hashes: results of different loads are never compared")

// Defaults of CompareOptions (a zero field takes its default).
const (
	DefaultTolerance  = 0.10
	DefaultConfidence = 0.95
	DefaultPercentile = MetricP95
	// MaxNeedRounds caps the rounds an inconclusive comparison suggests.
	MaxNeedRounds = 100
)

// CompareOptions set how base and head are compared.
type CompareOptions struct {
	// Tolerance τ: a latency ratio head/base within [1/(1+τ), 1+τ] is no
	// change worth a verdict; error rates may grow by τ of base's rate.
	// 0 means DefaultTolerance (10%); it must be in [0, 10).
	Tolerance float64
	// Confidence of every interval, two-sided. 0 means DefaultConfidence
	// (95%); it must be in [0.5, 1).
	Confidence float64
	// Percentile judged for latency: "p50", "p90", "p95", "p99" or "p99.9"
	// (also "p999") for every workload. "" means each workload's latency
	// threshold percentiles from the scenario (all of them), and p95 for a
	// workload without a latency threshold.
	Percentile string
	// Noise is a calibration of this machine's noise between runs
	// (baselines/<scenario>/noise.json, DecodeNoise). It is used only when
	// it matches every result of both sides (Noise.Match), and only where
	// the rounds cannot measure the noise themselves (one pair, a result
	// repeated over rounds) or measure it with fewer degrees of freedom
	// than the calibration has. nil: DefaultNoiseSD where needed.
	Noise *Noise
	// MaxRounds is the most paired rounds the gate's budget allows: what
	// an inconclusive comparison asks for is capped by it, saying so. 0
	// means MaxNeedRounds.
	MaxRounds int

	// holmLevel, when set, is the level Holm's procedure tests the
	// one-sided share a of its α at (a sequential look's boundary at a);
	// nil: a itself.
	holmLevel func(a float64) float64
}

// withDefaults fills zero fields and checks the rest.
func (o CompareOptions) withDefaults() (CompareOptions, error) {
	if o.Tolerance == 0 {
		o.Tolerance = DefaultTolerance
	}
	if o.Confidence == 0 {
		o.Confidence = DefaultConfidence
	}
	if !(o.Tolerance > 0 && o.Tolerance < 10) {
		return o, fmt.Errorf("verdict: tolerance %v: must be > 0 and < 10 (a fraction: 0.1 is 10%%)", o.Tolerance)
	}
	if o.MaxRounds <= 0 || o.MaxRounds > MaxNeedRounds {
		o.MaxRounds = MaxNeedRounds
	}
	if !(o.Confidence >= 0.5 && o.Confidence < 1) {
		return o, fmt.Errorf("verdict: confidence %v: must be in [0.5, 1) (a fraction: 0.95 is 95%%)", o.Confidence)
	}
	switch o.Percentile {
	case "", MetricP50, MetricP90, MetricP95, MetricP99, MetricP999:
	case "p999":
		o.Percentile = MetricP999
	default:
		return o, fmt.Errorf("verdict: percentile %q: want p50, p90, p95, p99 or p99.9", o.Percentile)
	}
	return o, nil
}

// ErrorRates is one side's error rate in a phase, pooled over the rounds.
type ErrorRates struct {
	Failed int64   `json:"failed"`
	N      int64   `json:"n"`    // succeeded + failed (abandoned excluded)
	Rate   float64 `json:"rate"` // Failed / N, 0 when N is 0
	Low    float64 `json:"low"`  // Wilson score interval at the gate's confidence
	High   float64 `json:"high"`
}

// Interval sources of a Comparison.
const (
	IntervalRounds   = "rounds"   // t interval over the per-round log ratios (the machine's noise)
	IntervalSampling = "sampling" // order-statistics floor: the percentiles' own sampling noise
	IntervalScore    = "score"    // Newcombe hybrid score interval (error rates)
	// IntervalNoise: the default bound on the noise between runs
	// (DefaultNoiseSD), where the rounds cannot measure it.
	IntervalNoise = "noise"
	// IntervalCalibration: a matching calibration's noise between runs
	// (CompareOptions.Noise).
	IntervalCalibration = "calibration"
	// IntervalDuet: the t interval over duet rounds alone (every result's
	// Round.Mode is duet and there are at least DuetMinRounds rounds): no
	// order-statistics floor (duet.go).
	IntervalDuet = "duet"
)

// Comparison is one base/head comparison of one workload in one phase: a
// latency percentile (Metric "p95", ...) or the error rate ("error_rate").
// Every float is finite (JSON-safe); a number that does not exist is 0 and
// Interval says whether the interval does.
type Comparison struct {
	Phase    string `json:"phase"`
	Workload string `json:"workload"`
	Metric   string `json:"metric"`
	// Base and Head: latency, the nearest-rank percentile of all rounds'
	// successes pooled (exact histogram merge), ms; error_rate, the pooled
	// fraction failed / (succeeded + failed).
	Base float64 `json:"base"`
	Head float64 `json:"head"`
	// BaseN and HeadN: the samples each side's number stands on, over all
	// rounds: successes for latency, succeeded + failed for error_rate.
	BaseN  int64 `json:"base_n"`
	HeadN  int64 `json:"head_n"`
	Rounds int   `json:"rounds"`
	// Ratio (latency): head/base, the geometric mean of the per-round
	// ratios (the centre of the interval). 0 for error_rate.
	Ratio float64 `json:"ratio"`
	// Diff (error_rate): head − base rate. 0 for latency.
	Diff float64 `json:"diff"`
	// CILow, CIHigh: the interval of Ratio (latency) or of Diff (error_rate)
	// at the gate's confidence; both 0 when Interval is "".
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
	// Interval: what set the interval's width: IntervalRounds,
	// IntervalSampling, IntervalDuet, IntervalNoise, IntervalCalibration,
	// IntervalScore, or "" when there is none.
	Interval string `json:"interval"`
	// Significant: the interval excludes "no change" (1 for a ratio, 0 for
	// a difference). A report prints "~" beside the estimate when it is false.
	Significant bool `json:"significant"`
	// NoiseSD: the sd of a pair's log ratio the interval assumed for the
	// noise between runs (Interval noise or calibration, or a bound that
	// was smaller than what set the width); 0 when the rounds measured it.
	NoiseSD float64 `json:"noise_sd,omitempty"`
	// Detectable (latency, with an interval): the smallest ratio head/base
	// this comparison could have called a regression at its rounds and
	// noise, exp(ln(1+τ) + half-width): a true change of this size is
	// called about half of the time, a smaller one less often.
	Detectable float64 `json:"detectable,omitempty"`
	// Family: how the gate's many comparisons were accounted for (Holm),
	// for a comparison that was tested for a regression or improvement.
	Family *FamilyTest `json:"family,omitempty"`
	// RoundRatios: head_i/base_i of each round (latency).
	RoundRatios []float64 `json:"round_ratios,omitempty"`
	Value       Value     `json:"value"`
	// Reason: why the comparison has its value, as a code; package report
	// words it from the numbers here and the Verdict's tolerance and
	// confidence.
	Reason Reason `json:"reason"`
	// At: the side and round a not-measured reason names (N: what that
	// round offered).
	At *RoundRef `json:"at,omitempty"`
	// Open (ReasonTooFewSamples): the rounds whose percentile has no
	// order-statistics bound, with their sample counts.
	Open []RoundRef `json:"open,omitempty"`
	// Needs: for inconclusive, what would decide it (more rounds, a longer
	// sustain), as numbers.
	Needs *Need `json:"needs,omitempty"`
	// Undecided: the value the numbers gave (regression, improvement or
	// pass) when an untrusted round left the comparison inconclusive; ""
	// otherwise.
	Undecided Value `json:"undecided,omitempty"`
	// Why and Need are the words for Reason and Needs. Package verdict
	// leaves them empty; report.Explain fills them (verdict.json carries
	// them, for tools that read words).
	Why     string      `json:"why"`
	Need    string      `json:"need,omitempty"`
	ErrBase *ErrorRates `json:"err_base,omitempty"` // error_rate only
	ErrHead *ErrorRates `json:"err_head,omitempty"`

	test *test // how to test it at another level (Holm); nil when it is not tested
}

// Reason is why a comparison has its value: a code, worded by package
// report.
type Reason string

// Reasons of a latency comparison.
const (
	ReasonNotOffered    Reason = "not_offered"     // not measured: At's round offered no request of the workload
	ReasonNoSuccess     Reason = "no_success"      // not measured: At's round had no successful request (At.N offered)
	ReasonTooFewSamples Reason = "too_few_samples" // inconclusive: the percentile of Open's rounds has no order-statistics bound
	ReasonOneRound      Reason = "one_round"       // inconclusive: one round measures no noise between rounds
	ReasonSlower        Reason = "slower"          // regression: the interval lies above 1+τ
	ReasonFaster        Reason = "faster"          // improvement: the interval lies below 1/(1+τ)
	ReasonWithin        Reason = "within"          // pass: the interval's high end is at most 1+τ
	ReasonStraddles     Reason = "straddles"       // inconclusive: the interval contains 1+τ
	// ReasonFamily: inconclusive: the interval alone clears the tolerance
	// (it would be a regression), but not at the level Holm's procedure
	// gives it among the gate's comparisons (Family).
	ReasonFamily Reason = "family"
)

// Reasons of an error-rate comparison.
const (
	ReasonNoneCompleted Reason = "none_completed" // not measured: At's side completed no request in the phase
	ReasonNoFailure     Reason = "no_failure"     // pass: no failure on either side
	ReasonMoreErrors    Reason = "more_errors"    // regression: the interval's low end exceeds τ·base rate
	ReasonFewerErrors   Reason = "fewer_errors"   // improvement: the interval's high end is below −τ·base rate
	ReasonNoMoreErrors  Reason = "no_more_errors" // pass: no significant increase
)

// RoundRef names one side's round: Side "base" or "head", Round 1-based
// (0: the side as a whole), N a count that goes with it (samples, offered).
type RoundRef struct {
	Side  string `json:"side"`
	Round int    `json:"round,omitempty"`
	N     int64  `json:"n"`
}

// Need is what would decide an inconclusive comparison, as numbers; the
// fields that apply are set.
type Need struct {
	// Rounds: ≈ this many paired rounds would (ReasonOneRound: at least
	// this many).
	Rounds int `json:"rounds,omitempty"`
	// MoreThanRounds: not even this many (MaxNeedRounds) would; the change
	// is close to the tolerance.
	MoreThanRounds int `json:"more_than_rounds,omitempty"`
	// SustainFactor: the same rounds with a sustain this many times longer
	// would (ReasonTooFewSamples: the sustain needed for the successes).
	SustainFactor float64 `json:"sustain_factor,omitempty"`
	// SuccessesPerRound (ReasonTooFewSamples): the successes per round and
	// side the percentile needs; FewestSuccesses, the fewest now.
	SuccessesPerRound int64 `json:"successes_per_round,omitempty"`
	FewestSuccesses   int64 `json:"fewest_successes,omitempty"`
	// OnTolerance: the estimate sits on the tolerance; nothing practical
	// decides it.
	OnTolerance bool `json:"on_tolerance,omitempty"`
	// TrustedRounds: rounds whose generator keeps its schedule (the
	// comparison was left undecided by untrusted rounds).
	TrustedRounds bool `json:"trusted_rounds,omitempty"`
	// Budget: the rounds the gate's budget allows (CompareOptions.MaxRounds)
	// when that is what limits Rounds/MoreThanRounds: more would be needed.
	Budget int `json:"budget,omitempty"`
	// Calibrate: a calibration of this machine (loadgate calibrate) would
	// replace the default noise bound that set the interval's width.
	Calibrate bool `json:"calibrate,omitempty"`
}

// Compare compares paired rounds of base and head (round i is base[i],
// head[i]; ABBA order is the caller's) per workload, on every judged phase
// and on the recover phase: the latency percentile(s) (see
// CompareOptions.Percentile) as a head/base ratio with a confidence interval,
// and the error rate as a difference of proportions. The method is in
// the README ("How a gate decides"); in short:
//
//   - per round, r_i = ln(head_i / base_i) of the nearest-rank percentile;
//   - the interval is mean(r) ± max(t_{R−1}·s/√R, z·√(Σ v_i)/R), where s is
//     the rounds' standard deviation (the machine's noise) and v_i the
//     sampling variance of r_i from order statistics of the histograms (a
//     floor: never narrower than the percentiles' own uncertainty);
//   - duet rounds (every result's Round.Mode is duet), at least
//     DuetMinRounds of them: the t interval alone (IntervalDuet): the two
//     sides' percentiles are measured at the same instants and strongly
//     correlated, so the independent-sides floor does not hold (duet.go);
//   - where the rounds cannot measure the noise between runs (one pair of
//     rounds, a result repeated over rounds) a bound of it is a part of
//     the width too: a matching calibration (CompareOptions.Noise), else
//     DefaultNoiseSD (noise.go); a calibration with more degrees of
//     freedom than the rounds stands in for their t interval;
//   - ratio interval entirely above 1+τ: regression; entirely below
//     1/(1+τ): improvement; at most 1+τ: pass; else inconclusive with
//     Need and the smallest change it could call (Detectable);
//   - the regressions and improvements of all comparisons are tested
//     together by Holm's procedure (family.go): one that does not hold in
//     the family is inconclusive (ReasonFamily) or a pass;
//   - error rates: Newcombe's hybrid score interval of head − base;
//     regression when its low end exceeds τ·base rate, improvement when its
//     high end is below −τ·base rate, else pass;
//   - a workload with no success in some round on either side is not
//     measured (it fails).
//
// A round whose generator fell behind its own schedule
// (result.GeneratorBehind) is not trustworthy: its due-time latency carries
// the generator's delay. When any round of either side is, the rounds stay
// in the numbers, but no comparison is decided on them: every regression,
// improvement or pass becomes inconclusive, with the value it would have
// had in Undecided and Needs.TrustedRounds; the rounds are listed in
// Verdict.Untrusted. Not measured stays not measured.
//
// Results of different scenario hashes return an error wrapping
// ErrHashMismatch. An unusable side (no rounds, unequal round counts, a
// result that is unusable, a histogram that does not decode or does not hold
// the successes) gives Value Unusable with reasons naming the side and round,
// and no comparison at all.
//
// Duet rounds whose two sides' services kept the stack cpus more than
// DuetBusyPct busy (DuetStackBusy over the judged rounds) get a
// NoteDuetStackBusy.
//
// The returned Verdict has one WorkloadVerdict per phase and workload,
// carrying Comparisons and no Checks; its Value is the worst of theirs.
func Compare(base, head []*result.Result, opt CompareOptions) (Verdict, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return Verdict{}, err
	}
	if err := checkHashes(base, head); err != nil {
		return Verdict{}, err
	}
	v := Verdict{Workloads: []WorkloadVerdict{}, Notes: []Note{},
		Rounds: len(head), Tolerance: opt.Tolerance, Confidence: opt.Confidence, Percentile: opt.Percentile}
	if rs := sidesUnusable(base, head); len(rs) > 0 {
		v.Value, v.Notes = Unusable, rs
		return v, nil
	}
	base, head, left := leaveOutSharedStalls(base, head)
	c := comparer{opt: opt, base: base, head: head, z: normQuantile(0.5 + opt.Confidence/2),
		untrusted: behindSchedule(base, head), duet: allDuet(base, head)}
	var use NoiseUse
	c.cal, use = noiseFor(opt.Noise, base, head)
	wvs, notes, values, bad := c.all()
	if len(bad) > 0 {
		v.Value, v.Notes = Unusable, bad
		return v, nil
	}
	for _, l := range left {
		notes = append(notes, Note{Code: NoteDuetRoundLeftOut, Round: l.round, Side: l.side, Rounds: len(base)})
		v.LeftOut = append(v.LeftOut, l.round)
	}
	if c.duet {
		if busy, cpus, ok := DuetStackBusy(base, head); ok && busy > DuetBusyPct {
			notes = append(notes, Note{Code: NoteDuetStackBusy, BusyPct: busy, StackCPUs: cpus})
		}
	}
	v.Workloads, v.Notes, v.Untrusted = wvs, notes, c.untrusted
	if c.floorUsed || use.Rejected != "" {
		v.Noise = &use
	}
	v.Family = holm(v.Workloads, opt.Confidence, opt.holmLevel)
	values = values[:0]
	for _, wv := range v.Workloads {
		values = append(values, wv.Value)
	}
	values = append(values, c.phaseValues...)
	v.Value = Worst(values...)
	return v, nil
}

// Gate is a gate's whole verdict: the absolute thresholds of head's scenario
// (Thresholds) on the exact merge of head's rounds (result.Merge; without
// the duet rounds Compare left out), and
// Compare of base and head, per workload on the judged and recover phases.
// Each workload's value is the worst of its threshold checks and its
// comparisons; the overall value is Worst(thresholds, comparisons).
// Errors and unusable sides are as in Compare.
func Gate(base, head []*result.Result, opt CompareOptions) (Verdict, error) {
	cv, err := Compare(base, head, opt)
	if err != nil || cv.Value == Unusable {
		return cv, err
	}
	// The rounds Compare left out (a duet's shared stalls) are left out of
	// the thresholds' merge too: a stall of the machine would otherwise
	// break an absolute threshold that the comparisons did not judge on.
	_, kept, _ := leaveOutSharedStalls(base, head)
	merged := kept[0]
	for i, r := range kept[1:] {
		if merged, err = result.Merge(merged, r); err != nil {
			cv.Value, cv.Workloads = Unusable, []WorkloadVerdict{}
			cv.Notes = []Note{{Code: NoteMerge, Side: "head", Round: roundNo(r, i+1), Detail: err.Error()}}
			return cv, nil
		}
	}
	tv := Thresholds(merged)
	if tv.Value == Unusable {
		cv.Value, cv.Workloads = Unusable, []WorkloadVerdict{}
		cv.Notes = make([]Note, len(tv.Notes))
		for i, n := range tv.Notes {
			n.Side, n.Merged = "head", true
			cv.Notes[i] = n
		}
		return cv, nil
	}
	v := cv
	v.Workloads = []WorkloadVerdict{}
	v.Notes = []Note{}
	used := make([]bool, len(cv.Workloads))
	take := func(phase, workload string) []Comparison {
		for i, wv := range cv.Workloads {
			if !used[i] && wv.Phase == phase && wv.Workload == workload {
				used[i] = true
				return wv.Comparisons
			}
		}
		return nil
	}
	for _, wv := range tv.Workloads {
		wv.Comparisons = take(wv.Phase, wv.Workload)
		vals := []Value{wv.Value}
		for _, c := range wv.Comparisons {
			vals = append(vals, c.Value)
		}
		wv.Value = Worst(vals...)
		v.Workloads = append(v.Workloads, wv)
	}
	for i, wv := range cv.Workloads {
		if !used[i] {
			v.Workloads = append(v.Workloads, wv)
		}
	}
	for _, n := range append(tv.Notes, cv.Notes...) {
		v.Notes = addNote(v.Notes, n)
	}
	v.Value = Worst(tv.Value, cv.Value)
	return v, nil
}

// checkHashes refuses results of different scenarios, naming both hashes.
func checkHashes(base, head []*result.Result) error {
	var first *result.Result
	var firstAt string
	for _, side := range []struct {
		name string
		rs   []*result.Result
	}{{"base", base}, {"head", head}} {
		for i, r := range side.rs {
			if r == nil {
				continue
			}
			at := fmt.Sprintf("%s round %d", side.name, i+1)
			if first == nil {
				first, firstAt = r, at
				continue
			}
			if r.Scenario.Hash != first.Scenario.Hash {
				return fmt.Errorf("%w: %s has %s (%s), %s has %s (%s)", ErrHashMismatch,
					firstAt, orNone(first.Scenario.Hash), first.Scenario.Name, at, orNone(r.Scenario.Hash), r.Scenario.Name)
			}
		}
	}
	return nil
}

func orNone(h string) string {
	if h == "" {
		return "no hash"
	}
	return h
}

// sidesUnusable says why the sides cannot be compared, naming side and
// round: missing or unequal rounds, unusable results, phases that differ.
func sidesUnusable(base, head []*result.Result) []Note {
	var rs []Note
	if len(base) == 0 {
		rs = append(rs, Note{Code: NoteNoResult, Side: "base"})
	}
	if len(head) == 0 {
		rs = append(rs, Note{Code: NoteNoResult, Side: "head"})
	}
	if len(base) != len(head) && len(base) > 0 && len(head) > 0 {
		rs = append(rs, Note{Code: NoteUnpairedRounds, BaseRounds: len(base), HeadRounds: len(head)})
	}
	var ref []string
	for _, side := range []struct {
		name string
		rs   []*result.Result
	}{{"base", base}, {"head", head}} {
		for i, r := range side.rs {
			rs = append(rs, at(side.name, i+1, unusable(r))...)
			if r == nil {
				continue
			}
			names := make([]string, 0, len(r.Phases))
			for _, p := range r.Phases {
				if p.Judged || p.Recover {
					names = append(names, p.Name)
				}
			}
			if ref == nil {
				ref = names
			} else if !slices.Equal(ref, names) && !r.Interrupted {
				rs = append(rs, Note{Code: NotePhasesDiffer, Side: side.name, Round: i + 1, Phases: names, RefPhases: ref})
			}
		}
	}
	return rs
}

// comparer holds one comparison's inputs.
type comparer struct {
	opt        CompareOptions
	base, head []*result.Result
	z          float64          // normal quantile of the two-sided confidence
	untrusted  []UntrustedRound // rounds whose generator fell behind its schedule
	cal        *Noise           // a matching calibration, or nil
	duet       bool             // every result of both sides ran in a duet round (allDuet)
	floorUsed  bool             // some interval used the noise bound or the calibration
	// phaseValues: values that belong to no workload (an interrupted round,
	// a phase where nothing ran).
	phaseValues []Value
}

// UntrustedRound is a round whose generator fell behind its own schedule
// (result.GeneratorBehind: more late requests or a higher lateness p99 than
// the documented limits). Its latency, measured from the due time, carries
// the generator's own delay, so no comparison that uses it is decided.
type UntrustedRound struct {
	Side   string `json:"side"`   // "base" or "head"
	Round  int    `json:"round"`  // 1-based, as paired
	Rounds []int  `json:"rounds"` // every round this result is paired in (a stored baseline: all of them)
	// Generator is the result's behind-schedule warning: its numbers, its
	// limits and its reason in words.
	Generator result.Generator `json:"generator"`
}

// behindSchedule lists the rounds of both sides whose generator fell behind
// its schedule, base first, each result once.
func behindSchedule(base, head []*result.Result) []UntrustedRound {
	var us []UntrustedRound
	for _, side := range []struct {
		name string
		rs   []*result.Result
	}{{"base", base}, {"head", head}} {
		at := map[*result.Result]int{} // result → index in us
		for i, r := range side.rs {
			g := r.GeneratorBehind()
			if g == nil {
				continue
			}
			if k, ok := at[r]; ok {
				us[k].Rounds = append(us[k].Rounds, roundNo(r, i))
				continue
			}
			at[r] = len(us)
			us = append(us, UntrustedRound{Side: side.name, Round: roundNo(r, i), Rounds: []int{roundNo(r, i)}, Generator: *g})
		}
	}
	return us
}

// distrust turns a decided comparison (regression, improvement or pass)
// into inconclusive when any round of either side is untrusted, naming the
// rounds and why: the whole comparison is marked, no round is dropped (the
// pairing of ABBA rounds stays intact and the numbers stay what was
// measured). Not measured stays not measured.
func (c *comparer) distrust(cmp *Comparison) {
	if len(c.untrusted) == 0 {
		return
	}
	switch cmp.Value {
	case Regression, Improvement, Pass:
	default:
		return
	}
	cmp.Undecided, cmp.Value = cmp.Value, Inconclusive
	cmp.Needs = &Need{TrustedRounds: true}
}

// all compares every workload of every judged and recover phase. bad lists
// why the inputs are unusable (a histogram that does not decode).
func (c *comparer) all() (wvs []WorkloadVerdict, notes []Note, values []Value, bad []Note) {
	wvs = []WorkloadVerdict{}
	notes = []Note{}
	for _, side := range []struct {
		name string
		rs   []*result.Result
	}{{"base", c.base}, {"head", c.head}} {
		for i, r := range side.rs {
			if r.Interrupted {
				notes = append(notes, Note{Code: NoteRoundInterrupted, Side: side.name, Round: roundNo(r, i)})
				values = append(values, NotMeasured)
				c.phaseValues = append(c.phaseValues, NotMeasured)
			}
		}
	}
	if len(c.base) < 3 {
		notes = append(notes, Note{Code: NoteFewRounds, Rounds: len(c.base)})
	}
	thr := c.head[0].Scenario.Thresholds
	for _, p := range c.base[0].Phases {
		if !p.Judged && !p.Recover {
			continue
		}
		names := c.workloadNames(p.Name)
		if len(names) == 0 {
			notes = append(notes, Note{Code: NoteNoWorkloadEitherSide, Phase: p.Name})
			values = append(values, NotMeasured)
			c.phaseValues = append(c.phaseValues, NotMeasured)
		}
		for _, name := range names {
			wv := WorkloadVerdict{Phase: p.Name, Workload: name, Checks: []Check{}}
			for _, metric := range c.metrics(thr[name]) {
				cmp, err := c.latency(p.Name, name, metric)
				if err != nil {
					bad = append(bad, histogramNote(p.Name, name, err))
					continue
				}
				wv.Comparisons = append(wv.Comparisons, cmp)
			}
			wv.Comparisons = append(wv.Comparisons, c.errorRate(p.Name, name))
			vals := make([]Value, len(wv.Comparisons))
			for i := range wv.Comparisons {
				c.distrust(&wv.Comparisons[i])
				vals[i] = wv.Comparisons[i].Value
			}
			wv.Value = Worst(vals...)
			values = append(values, wv.Value)
			wvs = append(wvs, wv)
		}
	}
	return wvs, notes, values, bad
}

// workloadNames lists the workloads of a phase on either side, base's order
// first.
func (c *comparer) workloadNames(phase string) []string {
	var names []string
	for _, rs := range [][]*result.Result{c.base, c.head} {
		for _, r := range rs {
			for _, w := range phaseWorkloads(r.PhaseNamed(phase)) {
				if !slices.Contains(names, w.Name) {
					names = append(names, w.Name)
				}
			}
		}
	}
	return names
}

func phaseWorkloads(p *result.Phase) []result.Workload {
	if p == nil {
		return nil
	}
	return p.Workloads
}

// metrics lists the latency percentiles judged for a workload.
func (c *comparer) metrics(t result.Thr) []string {
	if c.opt.Percentile != "" {
		return []string{c.opt.Percentile}
	}
	var ms []string
	for _, m := range thresholdChecks(t) {
		if m.Metric != MetricErrorRate {
			ms = append(ms, m.Metric)
		}
	}
	if len(ms) == 0 {
		ms = []string{DefaultPercentile}
	}
	return ms
}

// quantileOf maps a metric ("p95", "first_message_p95") to its q.
func quantileOf(metric string) float64 {
	metric = strings.TrimPrefix(strings.TrimPrefix(metric, MetricFirstMessagePrefix), MetricConnectPrefix)
	switch metric {
	case MetricP50:
		return 0.50
	case MetricP90:
		return 0.90
	case MetricP95:
		return 0.95
	case MetricP99:
		return 0.99
	case MetricP999:
		return 0.999
	}
	return 0.95
}

// sideRound is one side's workload in one round of a phase.
type sideRound struct {
	w     *result.Workload // nil when absent
	h     *hdrhistogram.Histogram
	side  string
	round int // 1-based
}

// ref names the round, with a count.
func (sr sideRound) ref(n int64) *RoundRef {
	return &RoundRef{Side: sr.side, Round: sr.round, N: n}
}

// rounds decodes the latency histograms of one side's rounds.
// metric picks the histogram (result.MetricHistogram): a session's
// first_message_/connect_ percentiles are judged on their own histograms.
func (c *comparer) rounds(side string, rs []*result.Result, phase, workload, metric string) ([]sideRound, error) {
	out := make([]sideRound, len(rs))
	for i, r := range rs {
		sr := sideRound{side: side, round: i + 1}
		sr.w = r.PhaseNamed(phase).Workload(workload)
		if sr.w != nil {
			h, want, err := sr.w.MetricHistogram(metric)
			if err != nil {
				return nil, &histogramError{Side: side, Round: i + 1, Phase: phase, Workload: workload, Err: err}
			}
			if n := h.TotalCount(); n != want { // latency: successes less cancelled sessions
				return nil, &histogramError{Side: side, Round: i + 1, Phase: phase, Workload: workload, Samples: n, Successes: want}
			}
			sr.h = h
		}
		out[i] = sr
	}
	return out, nil
}

// latency compares one latency percentile of one workload in one phase.
func (c *comparer) latency(phase, workload, metric string) (Comparison, error) {
	q := quantileOf(metric)
	R := len(c.base)
	cmp := Comparison{Phase: phase, Workload: workload, Metric: metric, Rounds: R}
	bs, err := c.rounds("base", c.base, phase, workload, metric)
	if err != nil {
		return cmp, err
	}
	hs, err := c.rounds("head", c.head, phase, workload, metric)
	if err != nil {
		return cmp, err
	}
	if cmp.Base, cmp.BaseN, err = pooled(c.base, phase, workload, metric, q); err != nil {
		return cmp, err
	}
	if cmp.Head, cmp.HeadN, err = pooled(c.head, phase, workload, metric, q); err != nil {
		return cmp, err
	}
	for i := range R {
		for _, sr := range []sideRound{bs[i], hs[i]} {
			if sr.w == nil || sr.w.Offered == 0 {
				cmp.Value, cmp.Reason, cmp.At = NotMeasured, ReasonNotOffered, sr.ref(0)
				return cmp, nil
			}
			if sr.h.TotalCount() == 0 {
				cmp.Value, cmp.Reason, cmp.At = NotMeasured, ReasonNoSuccess, sr.ref(sr.w.Offered)
				return cmp, nil
			}
		}
	}

	// Per round: the log ratio of the percentile and its sampling variance.
	logs := make([]float64, R)
	var open []RoundRef // rounds whose percentile has no order-statistics bound
	needN := int64(0)
	// The same result in several rounds (a stored baseline paired with every
	// head round) is one sample, not k independent ones: its error enters
	// the sum of the log ratios k times over, so it adds (k·se)², not k·se².
	type source struct {
		se float64
		k  int
	}
	sources := map[*result.Workload]*source{}
	var order []*result.Workload
	for i := range R {
		b := max(result.Quantile(bs[i].h, q), 1)
		h := max(result.Quantile(hs[i].h, q), 1)
		logs[i] = math.Log(float64(h) / float64(b))
		cmp.RoundRatios = append(cmp.RoundRatios, round6(float64(h)/float64(b)))
		for _, sr := range []sideRound{bs[i], hs[i]} {
			if src := sources[sr.w]; src != nil {
				src.k++
				continue
			}
			se, ok, need := logSE(sr.h, q, c.z)
			if !ok {
				open = append(open, *sr.ref(sr.h.TotalCount()))
				needN = max(needN, need)
			}
			sources[sr.w] = &source{se: se, k: 1}
			order = append(order, sr.w)
		}
	}
	var vsum, wsum float64
	for _, w := range order {
		src := sources[w]
		vsum += float64(src.k*src.k) * src.se * src.se
		wsum += float64(src.k*src.k) / float64(R*R)
	}
	m := mean(logs)
	cmp.Ratio = math.Exp(m)
	if len(open) > 0 {
		minN := minSucceeded(bs, hs)
		cmp.Value, cmp.Reason, cmp.Open = Inconclusive, ReasonTooFewSamples, open
		cmp.Needs = &Need{SuccessesPerRound: needN, FewestSuccesses: minN,
			SustainFactor: roundUp(float64(needN) / float64(max(minN, 1)))}
		return cmp, nil
	}
	s := 0.0
	if R >= 2 {
		s = stddev(logs, m)
	}
	// own: R independent pairs, every result in one round only: the
	// rounds measure the noise between runs themselves.
	own := R >= 2 && len(order) == 2*R
	mdl := c.model(phase, workload, metric, R, own, s, vsum, wsum/2)
	half, interval := mdl.half(c.opt.Confidence)
	cmp.Interval = interval
	if mdl.floor != nil {
		cmp.NoiseSD = mdl.floorSD
		c.floorUsed = true
	}
	cmp.CILow, cmp.CIHigh = math.Exp(m-half), math.Exp(m+half)
	cmp.Significant = cmp.CILow > 1 || cmp.CIHigh < 1
	cmp.Detectable = round6(math.Exp(math.Log1p(c.opt.Tolerance) + half))
	cmp.test = &test{m: m, up: math.Log1p(c.opt.Tolerance), parts: mdl.parts()}
	up, down := 1+c.opt.Tolerance, 1/(1+c.opt.Tolerance)
	switch {
	case cmp.CILow > up:
		cmp.Value, cmp.Reason = Regression, ReasonSlower
	case cmp.CIHigh < down:
		cmp.Value, cmp.Reason = Improvement, ReasonFaster
	case cmp.CIHigh <= up:
		cmp.Value, cmp.Reason = Pass, ReasonWithin
	default:
		cmp.Value, cmp.Reason = Inconclusive, ReasonStraddles
		cmp.Needs = c.need(mdl, m, c.opt.Confidence)
	}
	return cmp, nil
}

// part is one component of a latency interval: a standard error of the
// mean log ratio and the degrees of freedom of its quantile (+Inf: normal).
type part struct {
	se, df float64
	what   string // IntervalRounds, IntervalSampling, IntervalNoise, IntervalCalibration
}

// quantile is the two-sided quantile of a part at confidence conf.
func (p part) quantile(conf float64) float64 {
	if math.IsInf(p.df, 1) {
		return normQuantile(0.5 + conf/2)
	}
	return tQuantile(0.5+conf/2, p.df)
}

// noiseModel is how one latency comparison's interval is made: the
// half-width is the largest of its parts' (each a valid interval on its
// own, so their largest is too), as in the README.
type noiseModel struct {
	R       int
	own     *part // the t interval over the rounds (nil: one pair, or a result repeated over rounds)
	ownZ    *part // the rounds' spread with a normal quantile, beside a calibration with more df
	floor   *part // the noise between runs from a calibration or the default bound
	floorSD float64
	samp    part    // the order-statistics floor
	s       float64 // the rounds' spread (0 with one round)
	vbar    float64 // sampling variance per round
	entry   *NoiseEntry
	stored  bool // base is one result paired with every head round (a stored baseline)
	// duet: R independent pairs of duet rounds; from DuetMinRounds on the
	// interval is theirs alone (duetOnly).
	duet bool
}

// duetOnly: the t interval over the rounds is the whole model (no
// order-statistics floor): duet rounds, at least DuetMinRounds of them.
func (mdl noiseModel) duetOnly() bool { return mdl.duet && mdl.R >= DuetMinRounds && mdl.own != nil }

func (mdl noiseModel) parts() []part {
	if mdl.duetOnly() {
		return []part{*mdl.own}
	}
	ps := []part{mdl.samp}
	for _, p := range []*part{mdl.own, mdl.ownZ, mdl.floor} {
		if p != nil {
			ps = append(ps, *p)
		}
	}
	return ps
}

// half is the half-width at conf and the part that set it.
func (mdl noiseModel) half(conf float64) (float64, string) {
	best, what := -1.0, ""
	for _, p := range mdl.parts() {
		if h := p.quantile(conf) * p.se; h > best {
			best, what = h, p.what
		}
	}
	return best, what
}

// model builds the noise model of one latency comparison of R rounds:
// spread s of the per-round log ratios, summed sampling variance vsum and
// w = Σ(k/R)²/2 over the distinct results (k: the rounds each stands in),
// so that the noise between runs adds σ²·w to the variance of the mean
// log ratio for a pair sd σ (w = 1/R for R independent pairs).
//
//   - the rounds measure it (own) and no calibration has more degrees of
//     freedom: the t interval over the rounds, as before;
//   - own, and a matching calibration with more degrees of freedom (few
//     rounds): the calibration's sd with its t quantile, beside the
//     rounds' own spread with a normal quantile (whichever is wider: a
//     gate noisier than its calibration is not narrowed by it);
//   - not own (one pair; a result repeated over rounds, whose own run's
//     noise no number of rounds averages away): the calibration's sd, else
//     DefaultNoiseSD with a normal quantile, beside the rounds' t interval
//     when there are two or more;
//   - own duet rounds (c.duet), at least DuetMinRounds: the t interval over
//     the rounds alone, IntervalDuet (no calibration matches a duet's
//     results: Noise.Match).
//
// The order-statistics floor is a part in every case but the last.
func (c *comparer) model(phase, workload, metric string, R int, own bool, s, vsum, w float64) noiseModel {
	mdl := noiseModel{R: R, s: s, vbar: vsum / float64(R),
		samp:   part{se: math.Sqrt(vsum) / float64(R), df: math.Inf(1), what: IntervalSampling},
		stored: R >= 2 && c.storedBaseline(), duet: c.duet && own}
	if c.cal != nil {
		mdl.entry = c.cal.Entry(phase, workload, metric)
	}
	if R >= 2 {
		mdl.own = &part{se: s / math.Sqrt(float64(R)), df: float64(R - 1), what: IntervalRounds}
	}
	if mdl.duetOnly() {
		mdl.own.what = IntervalDuet
		return mdl
	}
	floor := func() {
		if e := mdl.entry; e != nil {
			mdl.floor = &part{se: e.SD * math.Sqrt(w), df: float64(e.DF), what: IntervalCalibration}
			mdl.floorSD = e.SD
			return
		}
		mdl.floor = &part{se: DefaultNoiseSD * math.Sqrt(w), df: math.Inf(1), what: IntervalNoise}
		mdl.floorSD = DefaultNoiseSD
	}
	switch {
	case own && (mdl.entry == nil || R-1 >= mdl.entry.DF):
	case own:
		floor()
		mdl.ownZ = &part{se: s / math.Sqrt(float64(R)), df: math.Inf(1), what: IntervalRounds}
		mdl.own = nil
	default:
		floor()
	}
	return mdl
}

// storedBaseline: base is one result paired with every round.
func (c *comparer) storedBaseline() bool {
	for _, r := range c.base[1:] {
		if r != c.base[0] {
			return false
		}
	}
	return true
}

// future is the model of the same comparison after r paired rounds of a
// gate (independent pairs; with a stored baseline, the baseline stays one
// result), the spread and per-round sampling variance staying what they
// were (the default bound or calibration standing for the spread where the
// rounds could not measure it).
func (mdl noiseModel) future(r int) noiseModel {
	sd := mdl.s
	if mdl.own == nil && mdl.ownZ == nil {
		sd = mdl.floorSD
	}
	w := 1 / float64(r)
	if mdl.stored {
		w = (1 + 1/float64(r)) / 2
	}
	f := noiseModel{R: r, s: sd, vbar: mdl.vbar, entry: mdl.entry, stored: mdl.stored, floorSD: mdl.floorSD, duet: mdl.duet,
		samp: part{se: math.Sqrt(mdl.vbar*float64(r)) / float64(r), df: math.Inf(1), what: IntervalSampling}}
	if mdl.stored {
		f.samp.se = math.Sqrt(mdl.vbar * w * 2)
	}
	tpart := &part{se: sd * math.Sqrt(w), df: float64(r - 1), what: IntervalRounds}
	if f.duet && r >= DuetMinRounds {
		tpart.what = IntervalDuet
		f.own = tpart
		return f
	}
	switch {
	case mdl.stored && mdl.floor != nil:
		f.floor = &part{se: mdl.floorSD * math.Sqrt(w), df: mdl.floor.df, what: mdl.floor.what}
		f.own = tpart
	case mdl.entry != nil && r-1 < mdl.entry.DF:
		f.floor = &part{se: mdl.entry.SD * math.Sqrt(w), df: float64(mdl.entry.DF), what: IntervalCalibration}
		f.ownZ = &part{se: tpart.se, df: math.Inf(1), what: IntervalRounds}
	default:
		f.own = tpart
	}
	return f
}

// need estimates what would decide an inconclusive comparison at
// confidence conf: the interval must not contain 1+τ, so its half-width
// must fall below the distance d of the estimate from ln(1+τ). Every part
// of the width shrinks as 1/√rounds (a stored baseline's own run excepted);
// the sampling part also as 1/√(samples per round), i.e. sustain length.
// It assumes the spread and the per-round sampling variance stay what they
// were. Rounds beyond the budget (CompareOptions.MaxRounds) are named with
// Budget set: the budget is the limit.
func (c *comparer) need(mdl noiseModel, m, conf float64) *Need {
	d := math.Abs(m - math.Log1p(c.opt.Tolerance))
	if d < 1e-9 {
		return &Need{OnTolerance: true}
	}
	n := &Need{Calibrate: mdl.floor != nil && mdl.floor.what == IntervalNoise}
	for r := max(mdl.R+1, 3); r <= MaxNeedRounds; r++ {
		if half, _ := mdl.future(r).half(conf); half < d {
			n.Rounds = r
			break
		}
	}
	if n.Rounds == 0 {
		n.MoreThanRounds = MaxNeedRounds
	}
	if n.MoreThanRounds > 0 || n.Rounds > c.opt.MaxRounds {
		if c.opt.MaxRounds < MaxNeedRounds {
			n.Budget = c.opt.MaxRounds
		}
	}
	// A longer sustain helps only when the spread between runs is already narrow enough.
	var between float64
	for _, p := range []*part{mdl.own, mdl.ownZ, mdl.floor} {
		if p != nil {
			between = max(between, p.quantile(conf)*p.se)
		}
	}
	// (Not for duet rounds past DuetMinRounds: the floor is no part of their width.)
	if wPart := mdl.samp.quantile(conf) * mdl.samp.se; !mdl.duetOnly() && between < d && wPart >= d {
		n.SustainFactor = roundUp((wPart / d) * (wPart / d))
	}
	return n
}

// logSE is the standard error of ln(q-quantile) of h from order statistics:
// the ranks of a distribution-free confidence interval for the q-quantile
// of n samples are n·q ± z·√(n·q·(1−q)) (the binomial count of samples
// below the quantile, normal approximation); read the values at those ranks
// off the histogram and take (ln hi − ln lo)/(2z). ok is false when a rank
// falls outside 1..n (too few samples for this quantile: the interval is
// open-ended); need is then the fewest samples for which it would not.
func logSE(h *hdrhistogram.Histogram, q, z float64) (se float64, ok bool, need int64) {
	n := h.TotalCount()
	lo, hi := osRanks(n, q, z)
	if lo < 1 || hi > n {
		n0 := int64(z * z * math.Max(q/(1-q), (1-q)/q))
		for need = max(n0, 1); need < n0+100000; need++ {
			if l, u := osRanks(need, q, z); l >= 1 && u <= need {
				break
			}
		}
		return 0, false, need
	}
	nf := float64(n)
	vlo := max(result.Quantile(h, float64(lo)/nf), 1)
	vhi := max(result.Quantile(h, float64(hi)/nf), 1)
	return (math.Log(float64(vhi)) - math.Log(float64(vlo))) / (2 * z), true, 0
}

// osRanks are the order-statistic ranks bounding the q-quantile of n samples.
func osRanks(n int64, q, z float64) (lo, hi int64) {
	nf := float64(n)
	sd := math.Sqrt(nf * q * (1 - q))
	return int64(math.Floor(nf*q - z*sd)), int64(math.Ceil(nf*q + z*sd))
}

// errorRate compares the pooled error rates of one workload in one phase.
func (c *comparer) errorRate(phase, workload string) Comparison {
	cmp := Comparison{Phase: phase, Workload: workload, Metric: MetricErrorRate, Rounds: len(c.base)}
	side := func(rs []*result.Result) *ErrorRates {
		e := &ErrorRates{}
		seen := map[*result.Result]bool{} // a result repeated over rounds counts once
		for _, r := range rs {
			if seen[r] {
				continue
			}
			seen[r] = true
			if w := r.PhaseNamed(phase).Workload(workload); w != nil {
				e.Failed += w.Failed
				e.N += w.Succeeded + w.Failed
			}
		}
		if e.N > 0 {
			e.Rate = float64(e.Failed) / float64(e.N)
			e.Low, e.High = wilson(e.Failed, e.N, c.z)
		}
		return e
	}
	eb, eh := side(c.base), side(c.head)
	cmp.ErrBase, cmp.ErrHead = eb, eh
	cmp.Base, cmp.Head, cmp.BaseN, cmp.HeadN = eb.Rate, eh.Rate, eb.N, eh.N
	switch {
	case eb.N == 0:
		cmp.Value, cmp.Reason, cmp.At = NotMeasured, ReasonNoneCompleted, &RoundRef{Side: "base"}
		return cmp
	case eh.N == 0:
		cmp.Value, cmp.Reason, cmp.At = NotMeasured, ReasonNoneCompleted, &RoundRef{Side: "head"}
		return cmp
	}
	cmp.Diff, cmp.CILow, cmp.CIHigh = newcombe(eb.Failed, eb.N, eh.Failed, eh.N, c.z)
	cmp.Interval = IntervalScore
	cmp.Significant = cmp.CILow > 0 || cmp.CIHigh < 0
	delta := c.opt.Tolerance * eb.Rate
	if eb.Failed > 0 || eh.Failed > 0 {
		cmp.test = &test{m: cmp.Diff, up: delta, score: [4]int64{eb.Failed, eb.N, eh.Failed, eh.N}, isScore: true}
	}
	switch {
	case eb.Failed == 0 && eh.Failed == 0:
		cmp.Value, cmp.Reason = Pass, ReasonNoFailure
	case cmp.CILow > delta:
		cmp.Value, cmp.Reason = Regression, ReasonMoreErrors
	case cmp.CIHigh < -delta:
		cmp.Value, cmp.Reason = Improvement, ReasonFewerErrors
	default:
		cmp.Value, cmp.Reason = Pass, ReasonNoMoreErrors
	}
	return cmp
}

// pooled is a side's nearest-rank q-quantile in ms over all its rounds
// (result.PoolLatency: an exact merge, a result repeated over rounds
// counted once) and the sample count.
func pooled(rs []*result.Result, phase, workload, metric string, q float64) (float64, int64, error) {
	h, err := result.PoolMetric(rs, phase, workload, metric)
	if err != nil {
		return 0, 0, err
	}
	if h.TotalCount() == 0 {
		return 0, 0, nil
	}
	return float64(result.Quantile(h, q)) / 1000, h.TotalCount(), nil
}

func minSucceeded(sets ...[]sideRound) int64 {
	m := int64(math.MaxInt64)
	for _, srs := range sets {
		for _, sr := range srs {
			m = min(m, sr.h.TotalCount())
		}
	}
	return m
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// RoundSD is the sample standard deviation of ln(head_i/base_i) over a
// latency comparison's rounds (its RoundRatios): the spread its rounds
// interval stood on, and what a calibration stores for one-side-at-a-time
// rounds. NaN with fewer than two rounds.
func RoundSD(c Comparison) float64 {
	if len(c.RoundRatios) < 2 {
		return math.NaN()
	}
	logs := make([]float64, len(c.RoundRatios))
	for i, r := range c.RoundRatios {
		logs[i] = math.Log(r)
	}
	return stddev(logs, mean(logs))
}

// stddev is the sample standard deviation (n−1) of xs around m.
func stddev(xs []float64, m float64) float64 {
	var s float64
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(xs)-1))
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// roundUp rounds a multiplier up: to a tenth below 10, to a whole number
// from 10 (2.1, 14), so that what it suggests is enough.
func roundUp(k float64) float64 {
	if k >= 10 {
		return math.Ceil(k)
	}
	return math.Ceil(k*10) / 10
}
