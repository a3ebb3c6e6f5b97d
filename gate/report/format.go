package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

// dash stands in for a number that does not exist.
const dash = "—"

// GroupSep groups digits: a thin space (U+2009), a digit wide in monospace.
const GroupSep = "\u2009"

// minus is U+2212, as wide as "+".
const minus = "−"

// group groups the integer part's digits and writes minus: "-1234" → "−1 234".
func group(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = minus, s[1:]
	} else if strings.HasPrefix(s, "+") {
		sign, s = "+", s[1:]
	}
	intPart, frac := s, ""
	if i := strings.IndexByte(s, '.'); i >= 0 {
		intPart, frac = s[:i], s[i:]
	}
	if len(intPart) <= 3 {
		return sign + s
	}
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteString(GroupSep)
		}
		b.WriteRune(c)
	}
	return sign + b.String() + frac
}

// sig3 formats v with 3 significant digits, grouped: 0.412, 12.3, 1 520.
func sig3(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return dash
	}
	if v == 0 {
		return "0"
	}
	e := strconv.FormatFloat(v, 'e', 2, 64) // "-1.52e+03"
	i := strings.IndexByte(e, 'e')
	exp, _ := strconv.Atoi(e[i+1:])
	rounded, _ := strconv.ParseFloat(e, 64)
	dec := max(2-exp, 0)
	return group(strconv.FormatFloat(rounded, 'f', dec, 64))
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// MS formats milliseconds, without the unit, to the histograms' precision.
func MS(v float64) string { return sig3(v) }

// Count formats a count with grouped digits: 2 811.
func Count(n int64) string { return group(strconv.FormatInt(n, 10)) }

// Percent formats a fraction as a percentage, ≤ 3 significant digits.
func Percent(frac float64) string { return trimZeros(sig3(frac*100)) + "%" }

// Confidence is Percent, but a level below 1 never reads "100%".
func Confidence(frac float64) string {
	s := Percent(frac)
	if frac >= 1 || s != "100%" {
		return s
	}
	for d := 1.0e3; d <= 1e9; d *= 10 {
		if f := math.Floor(frac*100*d) / d; f < 100 && f > 99.9 {
			return trimZeros(strconv.FormatFloat(f, 'f', -1, 64)) + "%"
		}
	}
	return "99.99…%"
}

// boundPercent is SignedPercent, "more than +9 900.0%" above 100×.
func boundPercent(ratio float64) string {
	if ratio > 100 || math.IsInf(ratio, 1) {
		return "more than " + SignedPercent(100)
	}
	return SignedPercent(ratio)
}

func SignedPercent(ratio float64) string {
	d := (ratio - 1) * 100
	if math.Abs(d) < 0.05 {
		return "+0.0%"
	}
	s := group(strconv.FormatFloat(d, 'f', 1, 64))
	if d > 0 {
		s = "+" + s
	}
	return s + "%"
}

// SignedPoints formats a difference of fractions in points, without the unit.
func SignedPoints(d float64) string {
	s := group(strconv.FormatFloat(d*100, 'f', 2, 64))
	if !strings.HasPrefix(s, minus) {
		s = "+" + s
	}
	return s
}

func scenarioHash(h string) string {
	if h == "" {
		return "(no hash)"
	}
	return result.ShortHash(h)
}

func commitText(c string) string { return orUnknown(result.ShortHash(c)) }

func fixed1(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return dash
	}
	return group(strconv.FormatFloat(v, 'f', 1, 64))
}

func rate(v float64) string { return fixed1(v) }

// exact formats a limit as written (shortest form), digits grouped.
func exact(v float64) string { return group(strconv.FormatFloat(v, 'f', -1, 64)) }

// factor formats a multiplier as verdict rounded it: 1.5, 14.
func factor(k float64) string { return strconv.FormatFloat(k, 'f', -1, 64) }

func wallBoundText(r *result.Result) string {
	return "wall-time bound " + seconds(r.WallBoundS) + " (warm-up + phases + drain + 2 s): the load never runs longer"
}

func seconds(s float64) string {
	if s == 0 {
		return "0 s"
	}
	if s >= 100 {
		return group(strconv.FormatFloat(math.Round(s), 'f', -1, 64)) + " s"
	}
	return trimZeros(sig3(s)) + " s"
}

// ranges writes sorted round numbers as ranges: [1 2 3 5] → "1–3, 5".
func ranges(ns []int) string {
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		switch {
		case j == i:
			parts = append(parts, strconv.Itoa(ns[i]))
		case j == i+1:
			parts = append(parts, strconv.Itoa(ns[i]), strconv.Itoa(ns[j]))
		default:
			parts = append(parts, strconv.Itoa(ns[i])+"–"+strconv.Itoa(ns[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

func date(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func classes(m map[string]int64) string {
	type kv struct {
		k string
		v int64
	}
	var kvs []kv
	for k, v := range m {
		if v != 0 {
			kvs = append(kvs, kv{k, v})
		}
	}
	sort.Slice(kvs, func(i, j int) bool {
		if kvs[i].v != kvs[j].v {
			return kvs[i].v > kvs[j].v
		}
		return kvs[i].k < kvs[j].k
	})
	parts := make([]string, len(kvs))
	for i, x := range kvs {
		parts[i] = x.k + " " + Count(x.v)
	}
	return strings.Join(parts, ", ")
}

func failed(w result.Workload) string {
	s := Count(w.Failed)
	if c := classes(w.Failures); c != "" {
		s += " (" + c + ")"
	}
	return s
}

func title(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

type totals struct {
	offered, completed   int64
	offeredPS, complPS   float64
	succeeded, failedN   int64
	abandoned, lateCount int64
}

func phaseTotals(p result.Phase) totals {
	var t totals
	for _, w := range p.Workloads {
		t.offered += w.Offered
		t.completed += w.Completed
		t.offeredPS += w.Throughput.OfferedPerS
		t.complPS += w.Throughput.CompletedPerS
		t.succeeded += w.Succeeded
		t.failedN += w.Failed
		t.abandoned += w.Abandoned
		t.lateCount += w.Late
	}
	return t
}

func judgedMark(p result.Phase) string {
	switch {
	case p.Judged && p.Recover:
		return "judged (recovery)"
	case p.Judged:
		return "judged"
	case p.Recover:
		return "judged (recovery)"
	}
	return ""
}

func sectionTitle(p result.Phase) string {
	if p.Recover && !p.Judged {
		return title(p.Name) + " (judged, recovery)"
	}
	return title(p.Name) + " (judged)"
}

func unusableReasons(r *result.Result, v verdict.Verdict) []string {
	if r.Usable && r.Offered == r.Recorded && v.Value != verdict.Unusable {
		return nil
	}
	var rs []string
	seen := map[string]bool{}
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			rs = append(rs, s)
		}
	}
	switch d := r.Offered - r.Recorded; {
	case d > 0:
		add(fmt.Sprintf("%s offered request(s) left no record", Count(d)))
	case d < 0:
		add(fmt.Sprintf("%s more record(s) than offered requests", Count(-d)))
	}
	// The first reason already says it; result.Check words it so.
	mismatch := resultDetail(fmt.Sprintf("offered %d != recorded %d", r.Offered, r.Recorded))
	for _, s := range r.Unusable {
		add(s)
	}
	if v.Value == verdict.Unusable {
		for _, s := range NoteTexts(v.Notes) {
			if !strings.HasPrefix(s, mismatch) {
				add(s)
			}
		}
	}
	if len(rs) == 0 {
		add("the result is marked unusable")
	}
	return rs
}

func measuredSentence(r *result.Result) string {
	s := "due-time and service-time latency of successes, failures by class, abandoned requests, offered and completed throughput per workload and phase, schedule lateness and stalls"
	if r.Stack != nil {
		s += ", and the stack's CPU and memory"
	}
	return s
}

func syntheticLoad(scenario string) string {
	return fmt.Sprintf("the load: requests generated by loadgate from the scenario %q on a fixed schedule, not production traffic", scenario)
}

// verdictWhy is valueWhy, except for a gate whose generator fell behind.
func verdictWhy(v verdict.Verdict) string {
	if v.Value == verdict.Inconclusive && len(v.Untrusted) > 0 {
		return "a round's generator fell behind its schedule, so no regression, improvement or pass is called (warning, not a failure)"
	}
	if why := recoveryWhy(v); why != "" { // faults.go
		return why
	}
	return valueWhy(v.Value)
}

func valueWhy(v verdict.Value) string {
	switch v {
	case verdict.Pass:
		return "every judged workload is within its thresholds"
	case verdict.Fail:
		return "an absolute threshold is broken"
	case verdict.NotMeasured:
		return "something judged was not measured, and not measured is never a pass"
	case verdict.Regression:
		return "head is slower than base beyond the noise"
	case verdict.Improvement:
		return "head is faster than base beyond the noise"
	case verdict.Inconclusive:
		return "the difference is within the noise (warning, not a failure)"
	case verdict.Unusable:
		return "the run cannot be judged"
	}
	return "unknown verdict value"
}

// checkText renders one check: "p95 312 ms > 300 ms (n=2 811)".
func checkText(c verdict.Check) string {
	unit := func(x float64) string { return MS(x) + " ms" }
	limit := exact(c.Limit) + " ms"
	if c.Metric == verdict.MetricErrorRate {
		unit = Percent
		limit = Percent(c.Limit)
	}
	var s string
	switch c.Value {
	case verdict.NotMeasured:
		s = fmt.Sprintf("%s not measured (limit %s, n=%s)", c.Metric, limit, Count(c.Count))
	case verdict.Fail:
		s = fmt.Sprintf("%s %s > %s (n=%s)", c.Metric, unit(c.Observed), limit, Count(c.Count))
	case verdict.Pass:
		s = fmt.Sprintf("%s %s ≤ %s (n=%s)", c.Metric, unit(c.Observed), limit, Count(c.Count))
	default:
		s = fmt.Sprintf("%s %s, limit %s (n=%s): %s", c.Metric, unit(c.Observed), limit, Count(c.Count), c.Value)
	}
	if why := CheckWhy(c); why != "" && c.Value != verdict.NotMeasured {
		s += ", " + why
	}
	return s
}

func checksText(wv verdict.WorkloadVerdict, sep string) string {
	var parts []string
	if why := WorkloadWhy(wv); why != "" && (wv.Value == verdict.NotMeasured || len(wv.Checks) == 0) {
		if wv.Value == verdict.NotMeasured {
			why = "not measured: " + why
		}
		parts = append(parts, why)
	}
	for _, c := range wv.Checks {
		parts = append(parts, checkText(c))
	}
	return strings.Join(parts, sep)
}

func generatorBehind(r *result.Result) string {
	if g := r.GeneratorBehind(); g != nil {
		return generatorText(*g)
	}
	return ""
}

// GeneratorWhy words a behind-schedule warning (an untrusted round's Reason).
func GeneratorWhy(g result.Generator) string {
	return "generator behind schedule: " + generatorText(g)
}

func generatorText(g result.Generator) string {
	s := fmt.Sprintf("%s of requests late (%s of %s, limit %s), lateness p99 %s ms (n=%s, limit %s ms)",
		Percent(g.LateShare), Count(g.Late), Count(g.Offered), Percent(g.LateShareLimit), MS(g.LatenessP99MS), Count(g.LatenessCount), exact(g.LatenessP99LimitMS))
	if g.StealShare != nil {
		s += ", " + stealText(*g.StealShare, "the generator's cores")
	}
	return s
}

func stealText(share float64, of string) string {
	if share == 0 {
		return "no hypervisor steal on " + of
	}
	return "the hypervisor took " + Percent(share) + " of " + of + " (steal)"
}

func stealAdvice(st *result.Steal) string {
	if st == nil {
		return ""
	}
	return stealShareAdvice(st.Load.Share)
}

func stealShareAdvice(share float64) string {
	if share < 0.01 {
		return ""
	}
	return "; the steal is other guests' work on this machine's host, which no pinning avoids: only a quieter host does (a duet gate makes both sides meet it alike)"
}

// StealLine words the steal shares for a header; "" when not read.
func StealLine(st *result.Steal) string {
	if st == nil {
		return ""
	}
	s := fmt.Sprintf("generator's cores (%s) %s", st.Load.CPUs, Percent(st.Load.Share))
	if st.Stack != nil {
		s += fmt.Sprintf(" · stack's cores (%s) %s", st.Stack.CPUs, Percent(st.Stack.Share))
	}
	return s + fmt.Sprintf(" of their time over the measured %s s, taken by the hypervisor for other work", exact(math.Round(st.WindowS*10)/10))
}

func untrustedText(v verdict.Verdict) string {
	var parts []string
	for _, u := range v.Untrusted {
		parts = append(parts, untrustedName(u)+": "+generatorText(u.Generator))
	}
	return strings.Join(parts, "; ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return Count(int64(n)) + " " + many
}
