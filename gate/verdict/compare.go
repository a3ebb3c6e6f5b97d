package verdict

import (
	"gonum.org/v1/gonum/stat"

	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/loadgate/loadgate/gate/result"
)

// ErrHashMismatch (results of different scenarios) is a usage error, never a verdict.
var ErrHashMismatch = errors.New("verdict: different scenario hashes: results of different loads are never compared")

// Defaults of CompareOptions (a zero field takes its default).
const (
	DefaultTolerance  = 0.10
	DefaultConfidence = 0.95
	DefaultPercentile = MetricP95
	MaxNeedRounds     = 100 // the most rounds an inconclusive comparison suggests
	MaxToleranceFloor = time.Second
	// DefaultToleranceFloor is a gate's absolute floor of the latency
	// tolerance where neither base's scenario nor the operator sets one
	// (docs/gate.md, "Tolerance"); CompareOptions' zero is no floor.
	DefaultToleranceFloor = 50 * time.Microsecond
)

// tolerance is the relative tolerance of a latency comparison whose pooled
// base percentile is baseMs: τ, or floor/base where the floor is wider.
func (o CompareOptions) tolerance(baseMs float64) float64 {
	floorMs := float64(o.ToleranceFloor) / float64(time.Millisecond)
	if floorMs > 0 && baseMs > 0 && floorMs/baseMs > o.Tolerance {
		return floorMs / baseMs
	}
	return o.Tolerance
}

// CompareOptions set how base and head are compared.
type CompareOptions struct {
	// Tolerance τ, in (0, 10) (0: DefaultTolerance): a head/base latency ratio
	// within [1/(1+τ), 1+τ] is no change; error rates may grow by τ of base's rate.
	Tolerance float64
	// ToleranceFloor is the absolute floor of the latency tolerance: a change
	// within ±max(τ·base, floor) is no change (0: no floor), so a 0.3 ms
	// endpoint is not held to ±30 µs, below the machine's own jitter.
	ToleranceFloor time.Duration
	Confidence     float64 // of every two-sided interval, in [0.5, 1) (0: DefaultConfidence)
	// Percentile judged for latency: p50, p90, p95, p99 or p99.9; "": each
	// workload's threshold percentiles, p95 without one.
	Percentile string
	// Noise is a calibration, used where it matches every result and the
	// rounds cannot measure the noise themselves; nil: DefaultNoiseSD.
	Noise     *Noise
	MaxRounds int    // cap on the rounds an inconclusive comparison asks for (≤ 0 or above MaxNeedRounds: MaxNeedRounds)
	Estimator string // of a latency shift: EstimatorMeanT, EstimatorHL, EstimatorTrimmed ("": DefaultEstimator)
	// InstanceSD is the least sd of one instance pair's offset carried where
	// every result records its instance (instances.go); 0: DefaultInstanceSD,
	// < 0: none (the gate's own instances still count).
	InstanceSD float64
	holmLevel  func(a float64) float64 // one-sided share of α → Holm's test level (nil: a)
}

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
	if o.ToleranceFloor < 0 || o.ToleranceFloor > MaxToleranceFloor {
		return o, fmt.Errorf("verdict: tolerance floor %s: must be ≥ 0 and ≤ %s", o.ToleranceFloor, MaxToleranceFloor)
	}
	if o.Estimator == "" {
		o.Estimator = DefaultEstimator
	}
	switch {
	case o.InstanceSD == 0:
		o.InstanceSD = DefaultInstanceSD
	case o.InstanceSD < 0:
		o.InstanceSD = 0
	case !(o.InstanceSD < 1):
		return o, fmt.Errorf("verdict: instance sd %v: must be below 1 (a log-ratio sd: 0.03 is ≈ 3%%)", o.InstanceSD)
	}
	if err := checkEstimator(o.Estimator); err != nil {
		return o, err
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
	IntervalRounds      = "rounds"      // t interval over the per-round log ratios or error-rate differences (the machine's noise)
	IntervalSampling    = "sampling"    // order-statistics floor: the percentiles' own sampling noise
	IntervalScore       = "score"       // Newcombe hybrid score interval of the pooled counts (error rates: one round, or the floor)
	IntervalNoise       = "noise"       // DefaultNoiseSD, where the rounds cannot measure the noise
	IntervalCalibration = "calibration" // a matching calibration (CompareOptions.Noise)
	IntervalDuet        = "duet"        // t interval over ≥ DuetMinRounds duet rounds, no floor
)

// Comparison is one base/head comparison of a latency percentile or the
// error rate of one workload in one phase. Every float is finite (0: none).
type Comparison struct {
	Phase    string `json:"phase"`
	Workload string `json:"workload"`
	Metric   string `json:"metric"`
	// Base and Head: the pooled nearest-rank percentile in ms, or the pooled
	// error rate; BaseN and HeadN the samples they stand on.
	Base   float64 `json:"base"`
	Head   float64 `json:"head"`
	BaseN  int64   `json:"base_n"`
	HeadN  int64   `json:"head_n"`
	Rounds int     `json:"rounds"`
	// Ratio (latency): head/base, the geometric mean of the round ratios or
	// the Estimator's centre; Diff (error rate): head − base.
	Ratio    float64 `json:"ratio"`
	Diff     float64 `json:"diff"`
	CILow    float64 `json:"ci_low"`
	CIHigh   float64 `json:"ci_high"`
	Interval string  `json:"interval"` // the Interval* source that set the width
	// Tolerance (latency): the relative tolerance applied where the absolute
	// floor is wider than the gate's, floor/base (0: the gate's).
	Tolerance   float64 `json:"tolerance,omitempty"`
	Significant bool    `json:"significant"`        // the interval excludes "no change"
	NoiseSD     float64 `json:"noise_sd,omitempty"` // the pair sd assumed where the rounds could not measure it
	// Detectable (latency): the smallest ratio called a regression about half the time.
	Detectable  float64     `json:"detectable,omitempty"`
	Family      *FamilyTest `json:"family,omitempty"`
	RoundRatios []float64   `json:"round_ratios,omitempty"`
	RoundDiffs  []float64   `json:"round_diffs,omitempty"` // error rate: head − base per round
	Value       Value       `json:"value"`
	Reason      Reason      `json:"reason"`
	At          *RoundRef   `json:"at,omitempty"`   // the round a not-measured reason names
	Open        []RoundRef  `json:"open,omitempty"` // rounds with no order-statistics bound
	Needs       *Need       `json:"needs,omitempty"`
	Undecided   Value       `json:"undecided,omitempty"` // what an untrusted round kept from being decided
	Why         string      `json:"why"`                 // Why and Need word Reason and Needs; report.Explain fills them
	Need        string      `json:"need,omitempty"`
	ErrBase     *ErrorRates `json:"err_base,omitempty"` // error_rate only
	ErrHead     *ErrorRates `json:"err_head,omitempty"`

	test *test // how to test it at another level (Holm); nil when it is not tested
}

// Reason is why a comparison has its value, worded by package report.
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
	ReasonFamily        Reason = "family"          // inconclusive: a regression alone, not at its Holm level
)

// Reasons of an error-rate comparison.
const (
	ReasonNoneCompleted Reason = "none_completed" // not measured: At's side completed no request in the phase
	ReasonNoFailure     Reason = "no_failure"     // pass: no failure on either side
	ReasonMoreErrors    Reason = "more_errors"    // regression: the interval's low end exceeds τ·base rate
	ReasonFewerErrors   Reason = "fewer_errors"   // improvement: the interval's high end is below −τ·base rate
	ReasonNoMoreErrors  Reason = "no_more_errors" // pass: no significant increase
)

// RoundRef names one side's round (1-based; 0: the whole side) and a count.
type RoundRef struct {
	Side  string `json:"side"`
	Round int    `json:"round,omitempty"`
	N     int64  `json:"n"`
}

// Need is what would decide an inconclusive comparison: about Rounds paired
// rounds (MoreThanRounds: not even that many), a sustain SustainFactor times
// longer, SuccessesPerRound, rounds on schedule, or a calibration. Budget is
// set when CompareOptions.MaxRounds limits Rounds.
type Need struct {
	Rounds            int     `json:"rounds,omitempty"`
	MoreThanRounds    int     `json:"more_than_rounds,omitempty"`
	SustainFactor     float64 `json:"sustain_factor,omitempty"`
	SuccessesPerRound int64   `json:"successes_per_round,omitempty"`
	FewestSuccesses   int64   `json:"fewest_successes,omitempty"`
	OnTolerance       bool    `json:"on_tolerance,omitempty"` // the estimate sits on τ: nothing decides it
	TrustedRounds     bool    `json:"trusted_rounds,omitempty"`
	Budget            int     `json:"budget,omitempty"`
	Calibrate         bool    `json:"calibrate,omitempty"`
}

// Compare compares paired rounds base[i], head[i] per workload of the judged
// and recover phases: latency percentiles as head/base ratios, error rates
// as differences, each with an interval (docs/gate.md, "How a gate decides").
// A round behind its schedule leaves every decision inconclusive. Different
// scenario hashes return ErrHashMismatch; unusable sides give Value Unusable
// with notes and no comparisons, not an error.
func Compare(base, head []*result.Result, opt CompareOptions) (Verdict, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return Verdict{}, err
	}
	if err := checkHashes(base, head); err != nil {
		return Verdict{}, err
	}
	v := Verdict{Workloads: []WorkloadVerdict{}, Notes: []Note{},
		Rounds: len(head), Tolerance: opt.Tolerance, Confidence: opt.Confidence, Percentile: opt.Percentile,
		ToleranceFloorMs: float64(opt.ToleranceFloor) / float64(time.Millisecond)}
	if rs := sidesUnusable(base, head); len(rs) > 0 {
		v.Value, v.Notes = Unusable, rs
		return v, nil
	}
	base, head, left := leaveOutSharedStalls(base, head)
	c := comparer{opt: opt, base: base, head: head, z: normQuantile(0.5 + opt.Confidence/2), duet: allDuet(base, head)}
	untrusted, noted := c.behindSchedule()
	c.untrusted = untrusted
	var use NoiseUse
	c.cal, use = noiseFor(opt.Noise, base, head)
	wvs, notes, values, bad := c.all()
	if len(bad) > 0 {
		v.Value, v.Notes = Unusable, bad
		return v, nil
	}
	for _, u := range noted {
		notes = append(notes, Note{Code: NoteLatenessNoted, Side: u.Side, Round: u.Round, Behind: &u})
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

// Gate is head's Thresholds on its merged rounds and Compare of base and head.
func Gate(base, head []*result.Result, opt CompareOptions) (Verdict, error) {
	cv, err := Compare(base, head, opt)
	if err != nil || cv.Value == Unusable {
		return cv, err
	}
	// A stall left out of the comparisons must not break a threshold either.
	_, kept, _ := leaveOutSharedStalls(base, head)
	merged, err := result.MergeAll(kept)
	if err != nil {
		i := len(kept) - 1
		if me := (*result.MergeError)(nil); errors.As(err, &me) {
			i = me.Index
		}
		cv.Value, cv.Workloads = Unusable, []WorkloadVerdict{}
		cv.Notes = []Note{{Code: NoteMerge, Side: "head", Round: roundNo(kept[i], i), Detail: err.Error()}}
		return cv, nil
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

// sidesUnusable says why the sides cannot be compared, naming side and round.
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

type comparer struct {
	opt         CompareOptions
	base, head  []*result.Result
	z           float64          // normal quantile of the two-sided confidence
	untrusted   []UntrustedRound // rounds whose generator fell behind its schedule
	cal         *Noise           // a matching calibration, or nil
	duet        bool             // every result of both sides ran in a duet round (allDuet)
	floorUsed   bool             // some interval used the noise bound or the calibration
	phaseValues []Value          // values that belong to no workload
}

// UntrustedRound is a round whose generator fell behind its schedule
// (result.GeneratorBehind) by enough to explain the change it shows
// (LatenessExplains): its latency carries the generator's delay.
type UntrustedRound struct {
	Side      string           `json:"side"`   // "base" or "head"
	Round     int              `json:"round"`  // 1-based, as paired
	Rounds    []int            `json:"rounds"` // every round this result is paired in
	Generator result.Generator `json:"generator"`
	// Lateness is the cell whose change the lateness could explain (untrusted),
	// or, in a NoteLatenessNoted, the one it came nearest to explaining.
	Lateness *LatenessCheck `json:"lateness,omitempty"`
}

// behindSchedule lists the rounds behind their schedule of both sides, each
// result once: untrusted where its lateness could explain the change some
// judged cell shows, noted (judged all the same) where it could not.
func (c *comparer) behindSchedule() (untrusted, noted []UntrustedRound) {
	type entry struct {
		u         UntrustedRound
		explained bool
	}
	for _, side := range []struct {
		name string
		rs   []*result.Result
	}{{"base", c.base}, {"head", c.head}} {
		var order []*entry
		at := map[*result.Result]*entry{}
		for i, r := range side.rs {
			g := r.GeneratorBehind()
			if g == nil || i >= len(c.base) || i >= len(c.head) {
				continue
			}
			explains, nearest := c.roundLateness(i)
			var ck *LatenessCheck
			for k := range explains {
				if explains[k].Side == side.name {
					ck = &explains[k]
					break
				}
			}
			e, ok := at[r]
			if !ok {
				e = &entry{u: UntrustedRound{Side: side.name, Round: roundNo(r, i), Generator: *g}}
				at[r] = e
				order = append(order, e)
			}
			e.u.Rounds = append(e.u.Rounds, roundNo(r, i))
			switch {
			case ck != nil && !e.explained:
				e.explained, e.u.Lateness = true, ck
			case !e.explained && e.u.Lateness == nil && nearest != nil && nearest.Side == side.name:
				e.u.Lateness = nearest
			}
		}
		for _, e := range order {
			if e.explained {
				untrusted = append(untrusted, e.u)
			} else {
				noted = append(noted, e.u)
			}
		}
	}
	return untrusted, noted
}

// distrust makes a decided comparison inconclusive when any round is
// untrusted; no round is dropped, so the ABBA pairing stays intact.
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

// all compares every workload of every judged and recover phase; bad says why not.
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
	if q, ok := Quantile(metric); ok {
		return q
	}
	return 0.95
}

// Quantile is the quantile a latency metric names (p95 → 0.95; a session
// metric's first_message_ or connect_ prefix aside), ok false for another metric.
func Quantile(metric string) (float64, bool) {
	switch strings.TrimPrefix(strings.TrimPrefix(metric, MetricFirstMessagePrefix), MetricConnectPrefix) {
	case MetricP50:
		return 0.50, true
	case MetricP90:
		return 0.90, true
	case MetricP95:
		return 0.95, true
	case MetricP99:
		return 0.99, true
	case MetricP999, "p999":
		return 0.999, true
	}
	return 0, false
}

type sideRound struct {
	w     *result.Workload // nil when absent
	h     *hdrhistogram.Histogram
	side  string
	round int // 1-based
}

func (sr sideRound) ref(n int64) *RoundRef {
	return &RoundRef{Side: sr.side, Round: sr.round, N: n}
}

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
	if unmeasured(&cmp, bs, hs) {
		return cmp, nil
	}
	pr := c.perRound(bs, hs, q)
	cmp.RoundRatios = pr.ratios
	m, rank, trim := c.estimate(pr.logs)
	cmp.Ratio = math.Exp(m)
	if len(pr.open) > 0 {
		minN := minSucceeded(bs, hs)
		cmp.Value, cmp.Reason, cmp.Open = Inconclusive, ReasonTooFewSamples, pr.open
		cmp.Needs = &Need{SuccessesPerRound: pr.needN, FewestSuccesses: minN,
			SustainFactor: roundUp(float64(pr.needN) / float64(max(minN, 1)))}
		return cmp, nil
	}
	s := 0.0
	if R >= 2 {
		s = stddev(pr.logs, m)
	}
	own := R >= 2 && pr.sources == 2*R // independent pairs measure the noise themselves
	mdl := c.model(phase, workload, metric, R, own, s, pr.vsum, pr.wsum/2)
	switch {
	case rank != nil:
		mdl = mdl.ranked(rank, robustSD(pr.logs, m), c.opt.Confidence)
	case trim != nil:
		mdl = mdl.trim(trim.se, trim.df)
	}
	if ids := instanceOf(c.base, c.head); ids != nil && own {
		fit := fitInstances(pr.logs, ids, c.opt.InstanceSD)
		mdl.inst, mdl.instFit = fit.part(), &fit
		if rank == nil && trim == nil && fit.I >= 2 { // mean-t: each instance weighs alike
			m = fit.mean
			cmp.Ratio = math.Exp(m)
		}
	}
	c.judge(&cmp, mdl, m)
	return cmp, nil
}

// unmeasured marks cmp not measured at the first round a side offered nothing or had no success.
func unmeasured(cmp *Comparison, bs, hs []sideRound) bool {
	for i := range bs {
		for _, sr := range []sideRound{bs[i], hs[i]} {
			if sr.w == nil || sr.w.Offered == 0 {
				cmp.Value, cmp.Reason, cmp.At = NotMeasured, ReasonNotOffered, sr.ref(0)
				return true
			}
			if sr.h.TotalCount() == 0 {
				cmp.Value, cmp.Reason, cmp.At = NotMeasured, ReasonNoSuccess, sr.ref(sr.w.Offered)
				return true
			}
		}
	}
	return false
}

type roundLogs struct {
	logs, ratios []float64
	open         []RoundRef // rounds whose percentile has no order-statistics bound
	needN        int64      // the successes per round the open ones need
	vsum, wsum   float64    // the sampling variance's sum and weight
	sources      int        // distinct results the rounds read
}

// perRound is, per round, the log ratio of the q-percentile and its sampling
// variance. A result in k rounds (a stored baseline) is one sample: its
// error adds (k·se)², not k·se².
func (c *comparer) perRound(bs, hs []sideRound, q float64) roundLogs {
	R := len(bs)
	pr := roundLogs{logs: make([]float64, R)}
	type source struct {
		se float64
		k  int
	}
	sources := map[*result.Workload]*source{}
	var order []*result.Workload
	for i := range R {
		b := max(result.Quantile(bs[i].h, q), 1)
		h := max(result.Quantile(hs[i].h, q), 1)
		pr.logs[i] = math.Log(float64(h) / float64(b))
		pr.ratios = append(pr.ratios, round6(float64(h)/float64(b)))
		for _, sr := range []sideRound{bs[i], hs[i]} {
			if src := sources[sr.w]; src != nil {
				src.k++
				continue
			}
			se, ok, need := logSE(sr.h, q, c.z)
			if !ok {
				pr.open = append(pr.open, *sr.ref(sr.h.TotalCount()))
				pr.needN = max(pr.needN, need)
			}
			sources[sr.w] = &source{se: se, k: 1}
			order = append(order, sr.w)
		}
	}
	for _, w := range order {
		src := sources[w]
		pr.vsum += float64(src.k*src.k) * src.se * src.se
		pr.wsum += float64(src.k*src.k) / float64(R*R)
	}
	pr.sources = len(order)
	return pr
}

func (c *comparer) estimate(logs []float64) (float64, *signedRank, *part) {
	m := mean(logs)
	switch {
	case c.opt.Estimator == EstimatorHL && len(logs) >= 2:
		rank := newSignedRank(logs)
		return rank.estimate(), rank, nil
	case c.opt.Estimator == EstimatorTrimmed:
		if tm, se, df, ok := trimmed(logs); ok {
			return tm, nil, &part{se: se, df: df}
		}
	}
	return m, nil, nil
}

// judge sets cmp's interval around m and its value against the tolerance.
func (c *comparer) judge(cmp *Comparison, mdl noiseModel, m float64) {
	lo, hi, half, interval := mdl.bounds(m, c.opt.Confidence)
	cmp.Interval = interval
	if mdl.floor != nil {
		cmp.NoiseSD = mdl.floorSD
		c.floorUsed = true
	}
	cmp.CILow, cmp.CIHigh = math.Exp(lo), math.Exp(hi)
	cmp.Significant = cmp.CILow > 1 || cmp.CIHigh < 1
	tol := c.opt.tolerance(cmp.Base)
	if tol != c.opt.Tolerance {
		cmp.Tolerance = round6(tol) // the floor set it
	}
	cmp.Detectable = round6(math.Exp(math.Log1p(tol) + half))
	cmp.test = &test{m: m, up: math.Log1p(tol), parts: mdl.parts()}
	up, down := 1+tol, 1/(1+tol)
	switch {
	case cmp.CILow > up:
		cmp.Value, cmp.Reason = Regression, ReasonSlower
	case cmp.CIHigh < down:
		cmp.Value, cmp.Reason = Improvement, ReasonFaster
	case cmp.CIHigh <= up:
		cmp.Value, cmp.Reason = Pass, ReasonWithin
	default:
		cmp.Value, cmp.Reason = Inconclusive, ReasonStraddles
		cmp.Needs = c.need(mdl, m, tol, c.opt.Confidence)
	}
}

// part is one component of a latency interval: a standard error of the mean
// log ratio with the df of its quantile (+Inf: normal), or a signed-rank interval.
type part struct {
	se, df float64
	what   string // an Interval* source
	rank   *signedRank
}

func (p part) bounds(m, conf float64) (lo, hi float64) {
	if p.rank != nil {
		lo, hi, _ = p.rank.interval(conf)
		return lo, hi
	}
	h := p.quantile(conf) * p.se
	return m - h, m + h
}

func (p part) halfWidth(conf float64) float64 {
	if p.rank != nil {
		lo, hi := p.bounds(0, conf)
		return (hi - lo) / 2
	}
	return p.quantile(conf) * p.se
}

func (p part) quantile(conf float64) float64 {
	if math.IsInf(p.df, 1) {
		return normQuantile(0.5 + conf/2)
	}
	return tQuantile(0.5+conf/2, p.df)
}

// noiseModel makes a latency interval: the half-width is the largest of
// its parts', each a valid interval on its own.
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
	stored  bool         // base is one result paired with every head round (a stored baseline)
	duet    bool         // R independent duet pairs
	inst    *part        // the two-level model's interval (instances.go); nil: results without instances
	instFit *instanceFit // what inst was fitted from, for future looks
}

// duetOnly: the t interval over ≥ DuetMinRounds duet rounds is the whole model.
func (mdl noiseModel) duetOnly() bool { return mdl.duet && mdl.R >= DuetMinRounds && mdl.own != nil }

func (mdl noiseModel) parts() []part {
	if mdl.duetOnly() {
		if mdl.inst != nil {
			return []part{*mdl.own, *mdl.inst}
		}
		return []part{*mdl.own}
	}
	ps := []part{mdl.samp}
	for _, p := range []*part{mdl.own, mdl.ownZ, mdl.floor, mdl.inst} {
		if p != nil {
			ps = append(ps, *p)
		}
	}
	return ps
}

func (mdl noiseModel) half(conf float64) (float64, string) {
	best, what := -1.0, ""
	for _, p := range mdl.parts() {
		if h := p.halfWidth(conf); h > best {
			best, what = h, p.what
		}
	}
	return best, what
}

// bounds is the union of the parts' intervals around m, and the part that set the width.
func (mdl noiseModel) bounds(m, conf float64) (lo, hi, half float64, what string) {
	half, what = mdl.half(conf)
	lo, hi = m-half, m+half
	ps := mdl.parts()
	if !slices.ContainsFunc(ps, func(p part) bool { return p.rank != nil }) {
		return lo, hi, half, what
	}
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, p := range ps {
		l, h := p.bounds(m, conf)
		lo, hi = min(lo, l), max(hi, h)
	}
	return lo, hi, (hi - lo) / 2, what
}

// ranked puts the robust spread sd in place of the rounds' spread, and the
// signed-rank interval in place of their t interval where it can reach conf
// (2⁻ᴿ ≤ (1−conf)/2).
func (mdl noiseModel) ranked(rank *signedRank, sd, conf float64) noiseModel {
	mdl.s = sd
	if mdl.ownZ != nil {
		mdl.ownZ = &part{se: sd / math.Sqrt(float64(mdl.R)), df: math.Inf(1), what: IntervalRounds}
	}
	if mdl.own == nil {
		return mdl
	}
	if _, _, ok := rank.interval(conf); !ok {
		return mdl
	}
	mdl.own = &part{rank: rank, what: IntervalRank}
	return mdl
}

// model builds the noise model of R rounds from their spread s, summed
// sampling variance vsum and w = Σ(k/R)²/2 over the distinct results. The
// calibration or DefaultNoiseSD stands in where the rounds cannot measure
// the noise or have fewer df than it.
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

func (c *comparer) storedBaseline() bool {
	for _, r := range c.base[1:] {
		if r != c.base[0] {
			return false
		}
	}
	return true
}

// future is the model after r paired rounds, spread and sampling variance unchanged.
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
	if mdl.instFit != nil {
		f.inst, f.instFit = mdl.instFit.future(r), mdl.instFit
	}
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

// need estimates what would decide: more rounds (every part shrinks as
// 1/√rounds) or a longer sustain (the sampling part as 1/√samples).
func (c *comparer) need(mdl noiseModel, m, tol, conf float64) *Need {
	d := math.Abs(m - math.Log1p(tol))
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
	// A longer sustain helps only when the spread between runs is narrow
	// enough, and not for duet rounds (the floor is no part of their width).
	var between float64
	for _, p := range []*part{mdl.own, mdl.ownZ, mdl.floor, mdl.inst} {
		if p != nil {
			between = max(between, p.halfWidth(conf))
		}
	}
	if wPart := mdl.samp.halfWidth(conf); !mdl.duetOnly() && between < d && wPart >= d {
		n.SustainFactor = roundUp((wPart / d) * (wPart / d))
	}
	return n
}

// logSE is the order-statistics standard error of ln(q-quantile) of h:
// (ln hi − ln lo)/(2z) at ranks n·q ± z·√(n·q·(1−q)). Off 1..n it is not ok,
// and need is the fewest samples enough.
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

func osRanks(n int64, q, z float64) (lo, hi int64) {
	nf := float64(n)
	sd := math.Sqrt(nf * q * (1 - q))
	return int64(math.Floor(nf*q - z*sd)), int64(math.Ceil(nf*q + z*sd))
}

// errorRate judges the change in a workload's error rate from per-round
// paired differences d_i = rate(head_i) − rate(base_i), not pooled requests:
// the round is the unit that repeats (issue 45), and failures come in bursts,
// so pooling every request of every round makes one round's burst of 503s a
// tight "regression". The interval is the t interval over the rounds,
// mean(d) ± t(R−1)·s/√R (R − 1 df protect against an s small by luck), and
// never narrower than Newcombe's hybrid score interval of the pooled counts:
// with few failures the d_i are discrete and s can be 0 (1 of 1 000 in every
// head round), and the binomial noise of the counts is then the floor, as the
// order-statistics floor is for latency. One round (or a result repeated over
// rounds) measures no spread between rounds: the score interval alone.
// A burst in one of R rounds moves mean(d) by burst/R and s by about
// burst/√R, so the t interval contains 0 whatever the burst's size (for
// R ≥ 3 at 95%: |mean|/(s/√R) = 1 < t); an increase in every round is called.
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
	if eb.Failed == 0 && eh.Failed == 0 {
		cmp.Value, cmp.Reason = Pass, ReasonNoFailure // no interval: nothing to estimate
		return cmp
	}
	diff, slo, shi := newcombe(eb.Failed, eb.N, eh.Failed, eh.N, c.z)
	cmp.Diff, cmp.CILow, cmp.CIHigh, cmp.Interval = diff, slo, shi, IntervalScore
	delta := c.opt.Tolerance * eb.Rate
	t := &test{m: diff, up: delta, score: [4]int64{eb.Failed, eb.N, eh.Failed, eh.N}, isScore: true}
	if d := roundDiffs(c.base, c.head, phase, workload); len(d) >= 2 && !c.storedBaseline() {
		R := len(d)
		m := mean(d)
		se := stddev(d, m) / math.Sqrt(float64(R))
		tp := part{se: se, df: float64(R - 1), what: IntervalRounds}
		h := tp.halfWidth(c.opt.Confidence)
		// The score interval's widths, around the rounds' mean.
		lo, hi := max(m-max(h, diff-slo), -1), min(m+max(h, shi-diff), 1)
		if h > max(diff-slo, shi-diff) {
			cmp.Interval = IntervalRounds
		}
		cmp.Diff, cmp.CILow, cmp.CIHigh, cmp.RoundDiffs = m, lo, hi, roundAll(d)
		t.m, t.parts = m, []part{tp}
	}
	cmp.test = t
	cmp.Significant = cmp.CILow > 0 || cmp.CIHigh < 0
	switch {
	case cmp.CILow > delta:
		cmp.Value, cmp.Reason = Regression, ReasonMoreErrors
	case cmp.CIHigh < -delta:
		cmp.Value, cmp.Reason = Improvement, ReasonFewerErrors
	default:
		cmp.Value, cmp.Reason = Pass, ReasonNoMoreErrors
	}
	return cmp
}

// roundDiffs is, per paired round, head's error rate less base's in the
// phase; a round where either side completed nothing is left out.
func roundDiffs(base, head []*result.Result, phase, workload string) []float64 {
	rate := func(r *result.Result) (float64, bool) {
		w := r.PhaseNamed(phase).Workload(workload)
		if w == nil || w.Succeeded+w.Failed == 0 {
			return 0, false
		}
		return float64(w.Failed) / float64(w.Succeeded+w.Failed), true
	}
	var d []float64
	for i := range min(len(base), len(head)) {
		b, okb := rate(base[i])
		h, okh := rate(head[i])
		if okb && okh {
			d = append(d, h-b)
		}
	}
	return d
}

func roundAll(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = round6(x)
	}
	return out
}

// pooled is a side's nearest-rank q-quantile in ms over its rounds, and its samples.
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

func mean(xs []float64) float64 { return stat.Mean(xs, nil) }

// RoundSD is the sample sd of a comparison's log RoundRatios (NaN below two).
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

func stddev(xs []float64, m float64) float64 {
	var s float64
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(xs)-1))
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// roundUp rounds a multiplier up: to a tenth below 10, else whole.
func roundUp(k float64) float64 {
	if k >= 10 {
		return math.Ceil(k)
	}
	return math.Ceil(k*10) / 10
}
