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
	// IntervalSampling, IntervalScore, or "" when there is none.
	Interval string `json:"interval"`
	// Significant: the interval excludes "no change" (1 for a ratio, 0 for
	// a difference). A report prints "~" when it is false.
	Significant bool `json:"significant"`
	// RoundRatios: head_i/base_i of each round (latency).
	RoundRatios []float64 `json:"round_ratios,omitempty"`
	Value       Value     `json:"value"`
	Why         string    `json:"why"`
	// Need: for inconclusive, what it would take to decide (more rounds, a
	// longer sustain).
	Need    string      `json:"need,omitempty"`
	ErrBase *ErrorRates `json:"err_base,omitempty"` // error_rate only
	ErrHead *ErrorRates `json:"err_head,omitempty"`
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
//   - ratio interval entirely above 1+τ: regression; entirely below
//     1/(1+τ): improvement; at most 1+τ: pass; else inconclusive with Need.
//     One round is always inconclusive (no measure of the machine's noise);
//   - error rates: Newcombe's hybrid score interval of head − base;
//     regression when its low end exceeds τ·base rate, improvement when its
//     high end is below −τ·base rate, else pass;
//   - a workload with no success in some round on either side is not
//     measured (it fails).
//
// Results of different scenario hashes return an error wrapping
// ErrHashMismatch. An unusable side (no rounds, unequal round counts, a
// result that is unusable, a histogram that does not decode or does not hold
// the successes) gives Value Unusable with reasons naming the side and round,
// and no comparison at all.
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
	v := Verdict{Workloads: []WorkloadVerdict{}, Reasons: []string{},
		Rounds: len(head), Tolerance: opt.Tolerance, Confidence: opt.Confidence, Percentile: opt.Percentile}
	if rs := sidesUnusable(base, head); len(rs) > 0 {
		v.Value, v.Reasons = Unusable, rs
		return v, nil
	}
	c := comparer{opt: opt, base: base, head: head, z: normQuantile(0.5 + opt.Confidence/2)}
	wvs, notes, values, bad := c.all()
	if len(bad) > 0 {
		v.Value, v.Reasons = Unusable, bad
		return v, nil
	}
	v.Workloads, v.Reasons = wvs, notes
	v.Value = Worst(values...)
	return v, nil
}

// Gate is a gate's whole verdict: the absolute thresholds of head's scenario
// (Thresholds) on the exact merge of head's rounds (result.Merge), and
// Compare of base and head, per workload on the judged and recover phases.
// Each workload's value is the worst of its threshold checks and its
// comparisons; the overall value is Worst(thresholds, comparisons).
// Errors and unusable sides are as in Compare.
func Gate(base, head []*result.Result, opt CompareOptions) (Verdict, error) {
	cv, err := Compare(base, head, opt)
	if err != nil || cv.Value == Unusable {
		return cv, err
	}
	merged := head[0]
	for i, r := range head[1:] {
		if merged, err = result.Merge(merged, r); err != nil {
			cv.Value, cv.Workloads = Unusable, []WorkloadVerdict{}
			cv.Reasons = []string{fmt.Sprintf("head: round %d cannot be merged with the earlier rounds: %v", i+2, err)}
			return cv, nil
		}
	}
	tv := Thresholds(merged)
	if tv.Value == Unusable {
		cv.Value, cv.Workloads = Unusable, []WorkloadVerdict{}
		cv.Reasons = prefixed("head (rounds merged): ", tv.Reasons)
		return cv, nil
	}
	v := cv
	v.Workloads = []WorkloadVerdict{}
	v.Reasons = []string{}
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
	for _, s := range append(tv.Reasons, cv.Reasons...) {
		if !slices.Contains(v.Reasons, s) {
			v.Reasons = append(v.Reasons, s)
		}
	}
	v.Value = Worst(tv.Value, cv.Value)
	return v, nil
}

func prefixed(p string, ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = p + s
	}
	return out
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
func sidesUnusable(base, head []*result.Result) []string {
	var rs []string
	if len(base) == 0 {
		rs = append(rs, "base: no result")
	}
	if len(head) == 0 {
		rs = append(rs, "head: no result")
	}
	if len(base) != len(head) && len(base) > 0 && len(head) > 0 {
		rs = append(rs, fmt.Sprintf("base has %d round(s), head %d: rounds are paired, nothing is compared with half a result", len(base), len(head)))
	}
	var ref []string
	for _, side := range []struct {
		name string
		rs   []*result.Result
	}{{"base", base}, {"head", head}} {
		for i, r := range side.rs {
			at := fmt.Sprintf("%s round %d", side.name, i+1)
			if r != nil && r.Commit != "" {
				c := r.Commit
				if len(c) > 12 {
					c = c[:12]
				}
				at += " (" + c + ")"
			}
			for _, s := range unusable(r) {
				rs = append(rs, at+": "+s)
			}
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
				rs = append(rs, fmt.Sprintf("%s: judged phases %q differ from base round 1's %q", at, names, ref))
			}
		}
	}
	return rs
}

// comparer holds one comparison's inputs.
type comparer struct {
	opt        CompareOptions
	base, head []*result.Result
	z          float64 // normal quantile of the two-sided confidence
}

// all compares every workload of every judged and recover phase. bad lists
// why the inputs are unusable (a histogram that does not decode).
func (c *comparer) all() (wvs []WorkloadVerdict, notes []string, values []Value, bad []string) {
	wvs = []WorkloadVerdict{}
	notes = []string{}
	for _, side := range []struct {
		name string
		rs   []*result.Result
	}{{"base", c.base}, {"head", c.head}} {
		for i, r := range side.rs {
			if r.Interrupted {
				notes = append(notes, fmt.Sprintf("%s round %d was interrupted before its schedule ended: what it did not reach is not measured", side.name, i+1))
				values = append(values, NotMeasured)
			}
		}
	}
	if len(c.base) < 3 {
		notes = append(notes, fmt.Sprintf("%d round(s): at least 3 are needed to measure the machine's noise between rounds; with fewer the verdict is at best inconclusive or rests on wide intervals", len(c.base)))
	}
	thr := c.head[0].Scenario.Thresholds
	for _, p := range c.base[0].Phases {
		if !p.Judged && !p.Recover {
			continue
		}
		names := c.workloadNames(p.Name)
		if len(names) == 0 {
			notes = append(notes, fmt.Sprintf("phase %s: no workload ran on either side", p.Name))
			values = append(values, NotMeasured)
		}
		for _, name := range names {
			wv := WorkloadVerdict{Phase: p.Name, Workload: name, Checks: []Check{}}
			for _, metric := range c.metrics(thr[name]) {
				cmp, err := c.latency(p.Name, name, metric)
				if err != nil {
					bad = append(bad, err.Error())
					continue
				}
				wv.Comparisons = append(wv.Comparisons, cmp)
			}
			wv.Comparisons = append(wv.Comparisons, c.errorRate(p.Name, name))
			vals := make([]Value, len(wv.Comparisons))
			for i, cmp := range wv.Comparisons {
				vals[i] = cmp.Value
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

// quantileOf maps a metric to its q.
func quantileOf(metric string) float64 {
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
	w    *result.Workload // nil when absent
	h    *hdrhistogram.Histogram
	name string // "base round 2"
}

// rounds decodes the latency histograms of one side's rounds.
func (c *comparer) rounds(side string, rs []*result.Result, phase, workload string) ([]sideRound, error) {
	out := make([]sideRound, len(rs))
	for i, r := range rs {
		sr := sideRound{name: fmt.Sprintf("%s round %d", side, i+1)}
		sr.w = r.PhaseNamed(phase).Workload(workload)
		if sr.w != nil {
			h, err := sr.w.LatencyHistogram()
			if err != nil {
				return nil, fmt.Errorf("%s: %s/%s: latency histogram: %v", sr.name, phase, workload, err)
			}
			if n := h.TotalCount(); n != sr.w.Succeeded {
				return nil, fmt.Errorf("%s: %s/%s: the latency histogram holds %d samples for %d successes", sr.name, phase, workload, n, sr.w.Succeeded)
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
	bs, err := c.rounds("base", c.base, phase, workload)
	if err != nil {
		return cmp, err
	}
	hs, err := c.rounds("head", c.head, phase, workload)
	if err != nil {
		return cmp, err
	}
	cmp.Base, cmp.BaseN = pooled(bs, q)
	cmp.Head, cmp.HeadN = pooled(hs, q)
	for i := range R {
		for _, sr := range []sideRound{bs[i], hs[i]} {
			if sr.w == nil || sr.w.Offered == 0 {
				cmp.Value, cmp.Why = NotMeasured, fmt.Sprintf("%s: no request of %s offered in phase %s", sr.name, workload, phase)
				return cmp, nil
			}
			if sr.w.Succeeded == 0 {
				cmp.Value, cmp.Why = NotMeasured, fmt.Sprintf("%s: no successful request (0 of %d offered succeeded)", sr.name, sr.w.Offered)
				return cmp, nil
			}
		}
	}

	// Per round: the log ratio of the percentile and its sampling variance.
	logs := make([]float64, R)
	var open []string // rounds whose percentile has no order-statistics bound
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
				open = append(open, fmt.Sprintf("%s (n=%d)", sr.name, sr.h.TotalCount()))
				needN = max(needN, need)
			}
			sources[sr.w] = &source{se: se, k: 1}
			order = append(order, sr.w)
		}
	}
	var vsum float64
	for _, w := range order {
		src := sources[w]
		vsum += float64(src.k*src.k) * src.se * src.se
	}
	m := mean(logs)
	cmp.Ratio = math.Exp(m)
	if len(open) > 0 {
		cmp.Value = Inconclusive
		list := strings.Join(open[:min(len(open), 2)], ", ")
		if len(open) > 2 {
			list += fmt.Sprintf(" and %d more", len(open)-2)
		}
		cmp.Why = fmt.Sprintf("the %s of too few samples has no %g%% order-statistics bound: %s", metric, 100*c.opt.Confidence, list)
		minN := minSucceeded(bs, hs)
		cmp.Need = fmt.Sprintf("at least %d successes per round and side for a %s (fewest now %d): a sustain ≈ %s× longer",
			needN, metric, minN, factor(float64(needN)/float64(max(minN, 1))))
		return cmp, nil
	}
	s := 0.0
	if R >= 2 {
		s = stddev(logs, m)
	}
	half, interval := c.halfWidth(R, s, vsum)
	cmp.Interval = interval
	cmp.CILow, cmp.CIHigh = math.Exp(m-half), math.Exp(m+half)
	cmp.Significant = cmp.CILow > 1 || cmp.CIHigh < 1
	up, down := 1+c.opt.Tolerance, 1/(1+c.opt.Tolerance)
	desc := fmt.Sprintf("%s %s (%g%% CI %s … %s)", metric, signedPct(cmp.Ratio), 100*c.opt.Confidence, signedPct(cmp.CILow), signedPct(cmp.CIHigh))
	tol := signedPct(up)
	switch {
	case R < 2:
		cmp.Value = Inconclusive
		cmp.Why = desc + ": one round measures the percentiles' sampling noise only, not the machine's noise between rounds"
		cmp.Need = "at least 3 rounds"
	case cmp.CILow > up:
		cmp.Value = Regression
		cmp.Why = desc + ": slower beyond the " + tol + " tolerance"
	case cmp.CIHigh < down:
		cmp.Value = Improvement
		cmp.Why = desc + ": faster beyond the " + tol + " tolerance"
	case cmp.CIHigh <= up:
		cmp.Value = Pass
		cmp.Why = desc + ": no slowdown beyond the " + tol + " tolerance"
	default:
		cmp.Value = Inconclusive
		cmp.Why = desc + ": the interval straddles the " + tol + " tolerance"
		cmp.Need = c.need(R, m, s, vsum)
	}
	return cmp, nil
}

// halfWidth is the half-width, in log ratio, of the interval of the mean of
// R per-round log ratios with standard deviation s and summed sampling
// variance vsum: the larger of the t interval over the rounds and the
// normal interval of the sampling variance alone.
func (c *comparer) halfWidth(R int, s, vsum float64) (float64, string) {
	w := c.z * math.Sqrt(vsum) / float64(R)
	if R < 2 {
		return w, IntervalSampling
	}
	t := tQuantile(0.5+c.opt.Confidence/2, float64(R-1)) * s / math.Sqrt(float64(R))
	if t >= w {
		return t, IntervalRounds
	}
	return w, IntervalSampling
}

// need estimates what would decide an inconclusive comparison: the interval
// must not contain 1+τ, so its half-width must fall below the distance d of
// the estimate from ln(1+τ). Both parts of the width shrink as 1/√rounds;
// the sampling part also as 1/√(samples per round), i.e. sustain length. It
// assumes the rounds' spread s and the per-round sampling variance stay
// what they were.
func (c *comparer) need(R int, m, s, vsum float64) string {
	d := math.Abs(m - math.Log1p(c.opt.Tolerance))
	vbar := vsum / float64(R) // per-round sampling variance
	if d < 1e-9 {
		return fmt.Sprintf("nothing practical: the estimate sits on the %s tolerance", signedPct(1+c.opt.Tolerance))
	}
	rounds := 0
	for r := max(R+1, 3); r <= MaxNeedRounds; r++ {
		half, _ := c.halfWidth(r, s, vbar*float64(r))
		if half < d {
			rounds = r
			break
		}
	}
	var parts []string
	if rounds == 0 {
		parts = append(parts, fmt.Sprintf("more than %d rounds (now %d): the change is close to the %s tolerance", MaxNeedRounds, R, signedPct(1+c.opt.Tolerance)))
	} else {
		parts = append(parts, fmt.Sprintf("≈ %d rounds (now %d)", rounds, R))
	}
	// A longer sustain helps only when the rounds' spread is already narrow enough.
	tPart := tQuantile(0.5+c.opt.Confidence/2, float64(R-1)) * s / math.Sqrt(float64(R))
	if wPart := c.z * math.Sqrt(vsum) / float64(R); tPart < d && wPart >= d {
		k := (wPart / d) * (wPart / d)
		parts = append(parts, fmt.Sprintf("or %d rounds with a sustain ≈ %s× longer", R, factor(k)))
	}
	return strings.Join(parts, ", ")
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
		cmp.Value, cmp.Why = NotMeasured, "base: no request completed in phase "+phase
		return cmp
	case eh.N == 0:
		cmp.Value, cmp.Why = NotMeasured, "head: no request completed in phase "+phase
		return cmp
	}
	cmp.Diff, cmp.CILow, cmp.CIHigh = newcombe(eb.Failed, eb.N, eh.Failed, eh.N, c.z)
	cmp.Interval = IntervalScore
	cmp.Significant = cmp.CILow > 0 || cmp.CIHigh < 0
	delta := c.opt.Tolerance * eb.Rate
	desc := fmt.Sprintf("error rate %s → %s (%s points, %g%% CI %s … %s)", ratePct(eb.Rate), ratePct(eh.Rate),
		signedPoints(cmp.Diff), 100*c.opt.Confidence, signedPoints(cmp.CILow), signedPoints(cmp.CIHigh))
	switch {
	case eb.Failed == 0 && eh.Failed == 0:
		cmp.Value, cmp.Why = Pass, "no failure on either side"
	case cmp.CILow > delta:
		cmp.Value, cmp.Why = Regression, desc+": a significant increase"
	case cmp.CIHigh < -delta:
		cmp.Value, cmp.Why = Improvement, desc+": a significant decrease"
	default:
		cmp.Value, cmp.Why = Pass, desc+": no significant increase"
	}
	if cmp.Value != Pass && delta > 0 {
		cmp.Why += fmt.Sprintf(" beyond the tolerance (%s points)", signedPoints(delta))
	}
	return cmp
}

// pooled merges a side's histograms (an exact merge) and returns the
// nearest-rank q-quantile in ms and the sample count.
func pooled(srs []sideRound, q float64) (float64, int64) {
	var acc *hdrhistogram.Histogram
	seen := map[*result.Workload]bool{} // a result repeated over rounds counts once
	for _, sr := range srs {
		if sr.h == nil || sr.h.TotalCount() == 0 || seen[sr.w] {
			continue
		}
		seen[sr.w] = true
		if acc == nil {
			acc = result.NewHistogram()
		}
		acc.Merge(sr.h)
	}
	if acc == nil {
		return 0, 0
	}
	return float64(result.Quantile(acc, q)) / 1000, acc.TotalCount()
}

func minSucceeded(sets ...[]sideRound) int64 {
	m := int64(math.MaxInt64)
	for _, srs := range sets {
		for _, sr := range srs {
			m = min(m, sr.w.Succeeded)
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

// stddev is the sample standard deviation (n−1) of xs around m.
func stddev(xs []float64, m float64) float64 {
	var s float64
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(xs)-1))
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// signedPct formats a ratio as a signed percentage change: 1.312 → "+31.2%".
func signedPct(ratio float64) string {
	d := (ratio - 1) * 100
	if math.Abs(d) < 0.05 {
		return "+0.0%"
	}
	return fmt.Sprintf("%+.1f%%", d)
}

// signedPoints formats a difference of fractions in percentage points.
func signedPoints(d float64) string {
	return fmt.Sprintf("%+.2f", d*100)
}

// ratePct formats a fraction as a percentage.
func ratePct(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", f*100), "0"), ".") + "%"
}

// factor formats a multiplier: 2.1, 14.
func factor(k float64) string {
	if k >= 10 {
		return fmt.Sprintf("%.0f", math.Ceil(k))
	}
	return fmt.Sprintf("%.1f", math.Ceil(k*10)/10)
}
