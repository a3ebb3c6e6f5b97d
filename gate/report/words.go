package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

// Explain returns a copy of v with its Why, Need and Reason words filled in.
func Explain(v verdict.Verdict) verdict.Verdict {
	out := v
	out.Workloads = make([]verdict.WorkloadVerdict, len(v.Workloads))
	for i, wv := range v.Workloads {
		wv.Why = WorkloadWhy(wv)
		if wv.Checks != nil {
			checks := make([]verdict.Check, len(wv.Checks))
			for j, c := range wv.Checks {
				c.Why = CheckWhy(c)
				checks[j] = c
			}
			wv.Checks = checks
		}
		cs := make([]verdict.Comparison, len(wv.Comparisons))
		for j, c := range wv.Comparisons {
			c.Why, c.Need = ComparisonWhy(v, c), ComparisonNeed(v, c)
			cs[j] = c
		}
		if wv.Comparisons == nil {
			cs = nil
		}
		wv.Comparisons = cs
		out.Workloads[i] = wv
	}
	if v.Untrusted != nil {
		out.Untrusted = make([]verdict.UntrustedRound, len(v.Untrusted))
		for i, u := range v.Untrusted {
			u.Generator.Reason = GeneratorWhy(u.Generator)
			out.Untrusted[i] = u
		}
	}
	return out
}

func roundName(r verdict.RoundRef) string {
	if r.Round == 0 {
		return r.Side
	}
	return fmt.Sprintf("%s round %d", r.Side, r.Round)
}

// ComparisonWhy words why a comparison of v has its value, with its numbers.
func ComparisonWhy(v verdict.Verdict, c verdict.Comparison) string {
	conf := Confidence(v.Confidence)
	var s string
	switch c.Reason {
	case verdict.ReasonNotOffered:
		s = fmt.Sprintf("%s: no request of %s offered in phase %s", roundName(*c.At), c.Workload, c.Phase)
	case verdict.ReasonNoSuccess:
		s = fmt.Sprintf("%s: no successful request (0 of %s offered succeeded)", roundName(*c.At), Count(c.At.N))
	case verdict.ReasonTooFewSamples:
		s = tooFewWhy(c, conf)
	case verdict.ReasonOneRound, verdict.ReasonSlower, verdict.ReasonFaster, verdict.ReasonWithin, verdict.ReasonStraddles:
		s = latencyWhy(v, c, conf)
	case verdict.ReasonFamily:
		s = fmt.Sprintf("%s %s (%s CI %s … %s)", c.Metric, SignedPercent(c.Ratio), conf, SignedPercent(c.CILow), boundPercent(c.CIHigh))
		if c.Metric == verdict.MetricErrorRate {
			s = errorRateChange(c, conf)
		}
		s += ": beyond the tolerance on its own, not among the gate's comparisons"
		if f := c.Family; f != nil {
			s += fmt.Sprintf(" (Holm: p %s, rank %d of %d, needs ≤ %s)", pValue(f.P), f.Rank, f.Of, pValue(f.Level))
		}
	case verdict.ReasonNoneCompleted:
		s = fmt.Sprintf("%s: no request completed in phase %s", roundName(*c.At), c.Phase)
	case verdict.ReasonNoFailure:
		s = "no failure on either side"
	case verdict.ReasonMoreErrors, verdict.ReasonFewerErrors, verdict.ReasonNoMoreErrors:
		s = errorRateWhy(v, c, conf)
	default:
		s = string(c.Reason)
	}
	if c.Undecided != "" {
		s += fmt.Sprintf(" — not called %s: the generator fell behind its schedule in %s (see the notes)", withArticle(c.Undecided), untrustedList(v.Untrusted))
	}
	return s
}

// tooFewWhy names the first rounds with too few samples for a bound.
func tooFewWhy(c verdict.Comparison, conf string) string {
	list := make([]string, 0, 3)
	for _, o := range c.Open[:min(len(c.Open), 2)] {
		list = append(list, fmt.Sprintf("%s (n=%s)", roundName(o), Count(o.N)))
	}
	s := fmt.Sprintf("the %s of too few samples has no %s order-statistics bound: %s", c.Metric, conf, strings.Join(list, ", "))
	if len(c.Open) > 2 {
		s += fmt.Sprintf(" and %d more", len(c.Open)-2)
	}
	return s
}

func latencyWhy(v verdict.Verdict, c verdict.Comparison, conf string) string {
	tol := comparisonTolerance(v, c)
	s := fmt.Sprintf("%s %s (%s CI %s … %s)", c.Metric, SignedPercent(c.Ratio), conf, SignedPercent(c.CILow), boundPercent(c.CIHigh))
	if src := noiseSource(v, c); src != "" {
		s += " " + src
	}
	switch c.Reason {
	case verdict.ReasonOneRound:
		s += ": one round measures the percentiles' sampling noise only, not the machine's noise between rounds"
	case verdict.ReasonSlower:
		s += ": slower beyond the " + tol + " tolerance"
	case verdict.ReasonFaster:
		s += ": faster beyond the " + tol + " tolerance"
	case verdict.ReasonWithin:
		s += ": no slowdown beyond the " + tol + " tolerance"
	case verdict.ReasonStraddles:
		s += ": the interval straddles the " + tol + " tolerance"
	}
	if c.Reason == verdict.ReasonStraddles && c.Detectable > 0 {
		s += "; " + detectable(c)
	}
	return s
}

// comparisonTolerance words the tolerance a latency comparison was judged
// at: the gate's, or the absolute floor's where it is wider ("+16.7% (the
// 0.05 ms floor)").
func comparisonTolerance(v verdict.Verdict, c verdict.Comparison) string {
	if c.Tolerance > 0 && v.ToleranceFloorMs > 0 {
		return fmt.Sprintf("%s (the %s ms floor)", SignedPercent(1+c.Tolerance), strconv.FormatFloat(v.ToleranceFloorMs, 'f', -1, 64))
	}
	return SignedPercent(1 + v.Tolerance)
}

func errorRateChange(c verdict.Comparison, conf string) string {
	return fmt.Sprintf("error rate %s → %s (%s points, %s CI %s … %s)", Percent(c.Base), Percent(c.Head),
		SignedPoints(c.Diff), conf, SignedPoints(c.CILow), SignedPoints(c.CIHigh))
}

func errorRateWhy(v verdict.Verdict, c verdict.Comparison, conf string) string {
	s := errorRateChange(c, conf)
	switch c.Reason {
	case verdict.ReasonMoreErrors:
		s += ": a significant increase"
	case verdict.ReasonFewerErrors:
		s += ": a significant decrease"
	case verdict.ReasonNoMoreErrors:
		s += ": no significant increase"
	}
	if c.Reason != verdict.ReasonNoMoreErrors {
		if d := v.Tolerance * c.Base; d > 0 {
			s += fmt.Sprintf(" beyond the tolerance (%s points)", SignedPoints(d))
		}
	}
	return s
}

// ComparisonNeed words what would decide an inconclusive comparison, or "".
func ComparisonNeed(v verdict.Verdict, c verdict.Comparison) string {
	n := c.Needs
	if n == nil {
		return ""
	}
	tol := comparisonTolerance(v, c)
	switch {
	case n.TrustedRounds:
		return trustedNeed()
	case c.Reason == verdict.ReasonOneRound:
		return fmt.Sprintf("at least %d rounds", n.Rounds)
	case c.Reason == verdict.ReasonTooFewSamples:
		return fmt.Sprintf("at least %s successes per round and side for a %s (fewest now %s): a sustain ≈ %s× longer",
			Count(n.SuccessesPerRound), c.Metric, Count(n.FewestSuccesses), factor(n.SustainFactor))
	case n.OnTolerance:
		return fmt.Sprintf("nothing practical: the estimate sits on the %s tolerance", tol)
	}
	var parts []string
	switch {
	case n.MoreThanRounds > 0:
		parts = append(parts, fmt.Sprintf("more than %d rounds (now %d): the change is close to the %s tolerance", n.MoreThanRounds, c.Rounds, tol))
	case n.Rounds > 0:
		parts = append(parts, fmt.Sprintf("≈ %d rounds (now %d)", n.Rounds, c.Rounds))
	}
	if n.Budget > 0 {
		parts[len(parts)-1] += fmt.Sprintf(", more than the budget's %d: the budget is the limit", n.Budget)
	}
	if n.SustainFactor > 0 {
		parts = append(parts, fmt.Sprintf("or %d rounds with a sustain ≈ %s× longer", c.Rounds, factor(n.SustainFactor)))
	}
	if n.Calibrate {
		parts = append(parts, "or a calibration of this machine (loadgate calibrate) in place of the default noise bound")
	}
	return strings.Join(parts, ", ")
}

func trustedNeed() string {
	return fmt.Sprintf("rounds whose generator keeps its schedule (at most %s of requests late, a lateness p99 of at most %s ms): give the generator its own, quiet cores (--load-cpus) or lower the rate",
		Percent(result.LateShareLimit), exact(result.LatenessP99LimitMS))
}

// untrustedName is "head round 2", or "base rounds 1–5 (one result)".
func untrustedName(u verdict.UntrustedRound) string {
	if len(u.Rounds) > 1 {
		return fmt.Sprintf("%s rounds %s (one result)", u.Side, ranges(u.Rounds))
	}
	return fmt.Sprintf("%s round %d", u.Side, u.Round)
}

// untrustedList names the untrusted rounds as ranges per side: "rounds 1–8, 10 of both sides".
func untrustedList(us []verdict.UntrustedRound) string {
	var sides []string
	bySide := map[string][]verdict.UntrustedRound{}
	for _, u := range us {
		if _, ok := bySide[u.Side]; !ok {
			sides = append(sides, u.Side)
		}
		bySide[u.Side] = append(bySide[u.Side], u)
	}
	rounds := func(side string) []int {
		var ns []int
		for _, u := range bySide[side] {
			if len(u.Rounds) > 0 {
				ns = append(ns, u.Rounds...)
			} else {
				ns = append(ns, u.Round)
			}
		}
		return slices.Compact(slices.Sorted(slices.Values(ns)))
	}
	single := func(side string) bool { return len(bySide[side]) == 1 && len(bySide[side][0].Rounds) > 1 }
	name := func(ns []int) string {
		if len(ns) == 1 {
			return fmt.Sprintf("round %d", ns[0])
		}
		return "rounds " + ranges(ns)
	}
	if len(sides) == 2 && !single(sides[0]) && !single(sides[1]) {
		if a := rounds(sides[0]); len(a) > 1 && slices.Equal(a, rounds(sides[1])) {
			return name(a) + " of both sides"
		}
	}
	parts := make([]string, len(sides))
	for i, side := range sides {
		if single(side) {
			parts[i] = untrustedName(bySide[side][0])
		} else {
			parts[i] = side + " " + name(rounds(side))
		}
	}
	return strings.Join(parts, " and ")
}

func untrustedNote(u verdict.UntrustedRound) string {
	need := trustedNeed()
	if s := u.Generator.StealShare; s != nil {
		need += stealShareAdvice(*s)
	}
	return fmt.Sprintf("%s is not trustworthy: %s%s; no regression, improvement or pass is called on it (its latency includes the generator's own delay); to decide, %s",
		untrustedName(u), GeneratorWhy(u.Generator), latenessCheckText(u.Lateness, "could"), need)
}

// latenessCheckText is "; its lateness at p99 (4 ms) could explain the change
// at p95 (sustain/api p95 10 → 20 ms)", or "" without a check; modal: "could", "cannot".
func latenessCheckText(ck *verdict.LatenessCheck, modal string) string {
	if ck == nil {
		return ""
	}
	at := ck.LatenessAt
	if at == "" { // a verdict.json of before lateness_at: read at the judged percentile
		at = ck.Metric
	}
	return fmt.Sprintf("; its lateness at %s (%s ms) %s explain the change at %s (%s/%s %s %s → %s ms)",
		at, MS(ck.LatenessMS), modal, ck.Metric, ck.Phase, ck.Workload, ck.Metric, MS(ck.BaseMS), MS(ck.HeadMS))
}

// latenessNotedText words NoteLatenessNoted: a round behind its schedule, judged.
func latenessNotedText(n verdict.Note) string {
	u := n.Behind
	if u == nil {
		return fmt.Sprintf("%s round %d fell behind its schedule, by too little to explain the change it shows: judged", n.Side, n.Round)
	}
	return fmt.Sprintf("%s fell behind its schedule (%s of requests late)%s: judged",
		untrustedName(*u), Percent(u.Generator.LateShare), latenessCheckText(u.Lateness, "cannot"))
}

func withArticle(v verdict.Value) string {
	if v == "" {
		return ""
	}
	if strings.ContainsRune("aeiou", rune(string(v)[0])) {
		return "an " + string(v)
	}
	return "a " + string(v)
}

func noiseSource(v verdict.Verdict, c verdict.Comparison) string {
	switch c.Interval {
	case verdict.IntervalNoise:
		return fmt.Sprintf("[noise between runs not measured by %s: the default bound, a pair's log-sd %s]", roundsWord(c.Rounds), exact(c.NoiseSD))
	case verdict.IntervalCalibration:
		s := fmt.Sprintf("[noise between runs from this machine's calibration, a pair's log-sd %s", sig3(c.NoiseSD))
		if v.Noise != nil && !v.Noise.Date.IsZero() {
			s += " of " + date(v.Noise.Date)
		}
		return s + "]"
	}
	return ""
}

func roundsWord(r int) string {
	if r == 1 {
		return "one round"
	}
	return fmt.Sprintf("%d rounds", r)
}

func detectable(c verdict.Comparison) string {
	return fmt.Sprintf("the smallest slowdown %s could call a regression is %s", roundsWord(c.Rounds), boundPercent(c.Detectable))
}

// pValue formats a p-value as a percentage: 0.0042 → "0.42%".
func pValue(p float64) string {
	if p < 1e-6 {
		return "< 0.0001%"
	}
	return Percent(p)
}

// NoiseNote words an unused calibration or the default bound standing in, or "".
func NoiseNote(v verdict.Verdict) string {
	u := v.Noise
	if u == nil {
		return ""
	}
	if u.Rejected == verdict.NoiseDuet {
		return fmt.Sprintf("the noise calibration of %s (%d pairs) is not used: it ran one side at a time, but %s round %d ran in a duet. The default bound stands in where the rounds fall short (log-sd %s)",
			date(u.Date), u.Pairs, u.Here.Side, u.Here.Round, exact(u.SD))
	}
	if u.Rejected != "" {
		what := map[string]string{verdict.NoiseOtherScenario: "another load (scenario hash)",
			verdict.NoiseOtherMachine: "another machine", verdict.NoiseOtherTopology: "another topology"}[u.Rejected]
		return fmt.Sprintf("the noise calibration of %s (%d pairs) is not used: it was measured on %s (here %s, there %s). The default bound stands in where the rounds fall short (a pair's log-sd %s)",
			date(u.Date), u.Pairs, what, noiseSettingWords(u.Rejected, u.Here), noiseSettingWords(u.Rejected, u.There), exact(u.SD))
	}
	if u.Source == verdict.NoiseDefault {
		return fmt.Sprintf("the rounds cannot measure the noise between runs (one pair, or one baseline result): a default stands in, a pair's log-sd %s (one run ≈ ±%s); loadgate calibrate replaces it",
			exact(u.SD), Percent(math.Expm1(u.SD/math.Sqrt2)))
	}
	return fmt.Sprintf("the noise between runs where the rounds cannot measure it: this machine's calibration of %s (%d pairs)", date(u.Date), u.Pairs)
}

func noiseSettingWords(rejected string, s verdict.NoiseSetting) string {
	switch rejected {
	case verdict.NoiseOtherMachine:
		m := s.Machine
		return fmt.Sprintf("%s%s (%d CPUs, %s/%s)", m.Host, modelText(m.CPUModel), m.CPUs, m.OS, m.Arch)
	case verdict.NoiseOtherTopology:
		t := s.Topology
		p := "not pinned"
		if t.Pinned {
			p = "pinned"
		}
		return fmt.Sprintf("stack CPUs %q, load CPUs %q, %s, %s, generator %s", t.StackCPUs, t.LoadCPUs, p, t.TargetPath, t.Scheduling())
	}
	return s.Hash
}

// spendingWords says how a spending function shares the error rate between looks.
func spendingWords(sp string) string {
	switch sp {
	case verdict.SpendOBF:
		return "strict at early looks, most of it kept for the last"
	case verdict.SpendPocock:
		return "shared about evenly between the looks"
	}
	return sp + " spending"
}

// SequentialNote words a sequential gate's last look; "" for fixed rounds.
func SequentialNote(v verdict.Verdict) string {
	d := v.Sequential
	if d == nil {
		return ""
	}
	s := fmt.Sprintf("sequential rounds: look %d of at most %d after %d rounds (at most %d); this look's intervals at %s, %s of the %s error rate spent so far (%s)",
		d.Look, d.Looks, d.Rounds, d.MaxRounds, Percent(1-d.Level), Percent(d.Spent), Percent(1-d.Nominal), spendingWords(d.Spending))
	switch d.Stop {
	case verdict.StopDecided:
		s += "; stopped: every judged comparison is decided"
	case verdict.StopRegression:
		s += fmt.Sprintf("; stopped: a comparison is a regression, so the gate fails whatever the %d undecided become", d.Open)
	case verdict.StopMaxRounds:
		s += fmt.Sprintf("; stopped at the maximum of rounds with %d comparison(s) undecided", d.Open)
	case verdict.StopBudget:
		s += fmt.Sprintf("; stopped: the budget allows no further look, %d comparison(s) undecided", d.Open)
	case verdict.StopUntrusted:
		s += "; stopped: a round's generator fell behind its schedule, more rounds do not make it trustworthy"
	case verdict.StopUnusable:
		s += "; stopped: unusable"
	default:
		s += fmt.Sprintf("; %d comparison(s) undecided: the gate runs another pair", d.Open)
	}
	return s
}

// FamilyNote words how the comparisons were tested together, "" for one.
func FamilyNote(v verdict.Verdict) string {
	f := v.Family
	if f == nil || f.Tests < 2 {
		return ""
	}
	return fmt.Sprintf("%d comparisons tested together (Holm): the chance that any of them is a false regression is at most %s", f.Tests, Percent(f.Alpha))
}
