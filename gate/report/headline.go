package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

// DocsURL explains how a gate decides; absolute, for PR comments.
const DocsURL = "https://github.com/loadgate/loadgate/blob/main/docs/gate.md"

// answer is a gate in brief; every rendering takes its headline and limits from it.
type answer struct {
	g      *gateReport
	rows   []verdict.Comparison // ranked: regression, not measured, inconclusive, improvement, pass
	lead   *verdict.Comparison  // the largest change of the worst kind; nil without comparisons
	phases bool                 // more than one phase compared: rows name their phase
}

// rank orders comparison values for a reader: what needs action first.
func rank(c verdict.Comparison) int {
	switch c.Value {
	case verdict.Regression:
		return 0
	case verdict.NotMeasured:
		return 1
	case verdict.Inconclusive:
		return 2
	case verdict.Improvement:
		return 3
	}
	return 4
}

// size is how large a comparison's change is, latency before error rate.
func size(c verdict.Comparison) float64 {
	if c.Metric == verdict.MetricErrorRate {
		return math.Abs(c.Diff)
	}
	if c.Ratio <= 0 {
		return 0
	}
	return 10 + math.Abs(math.Log(c.Ratio))
}

func answerOf(g *gateReport) answer {
	a := answer{g: g}
	var phases []string
	for _, wv := range g.Verdict.Workloads {
		for _, c := range wv.Comparisons {
			a.rows = append(a.rows, c)
			if !slices.Contains(phases, c.Phase) {
				phases = append(phases, c.Phase)
			}
		}
	}
	a.phases = len(phases) > 1
	slices.SortStableFunc(a.rows, func(x, y verdict.Comparison) int {
		if d := rank(x) - rank(y); d != 0 {
			return d
		}
		if x.Value == verdict.Pass {
			return 0 // passes stay in the report's order
		}
		switch sx, sy := size(x), size(y); {
		case sx > sy:
			return -1
		case sx < sy:
			return 1
		}
		return 0
	})
	if len(a.rows) > 0 {
		// The lead has the gate's own value when a comparison does, the largest.
		lead, found := a.rows[0], false
		for _, c := range a.rows {
			if c.Value == g.Verdict.Value && (!found || size(c) > size(lead)) {
				lead, found = c, true
			}
		}
		if !found && lead.Value == verdict.Pass {
			for _, c := range a.rows {
				if size(c) > size(lead) {
					lead = c
				}
			}
		}
		a.lead = &lead
	}
	return a
}

type style struct {
	code func(string) string // a workload's name
	mark bool                // a symbol before the verdict
}

var (
	mdStyle   = style{code: func(s string) string { return "`" + strings.ReplaceAll(s, "`", "'") + "`" }, mark: true}
	textStyle = style{code: func(s string) string { return s }}
)

func symbol(v verdict.Value) string {
	switch v {
	case verdict.Pass:
		return "✅"
	case verdict.Improvement:
		return "🚀"
	case verdict.Inconclusive:
		return "❔"
	case verdict.Unusable:
		return "⛔"
	}
	return "❌"
}

func (a answer) what(c verdict.Comparison, st style) string {
	s := st.code(c.Workload) + " " + metricWord(c)
	if a.phases {
		s += " in " + c.Phase
	}
	return s
}

func metricWord(c verdict.Comparison) string {
	if c.Metric == verdict.MetricErrorRate {
		return "error rate"
	}
	return c.Metric
}

func change(c verdict.Comparison) string {
	if c.Interval == "" {
		return dash
	}
	if c.Metric == verdict.MetricErrorRate {
		return SignedPoints(c.Diff) + " points"
	}
	return SignedPercent(c.Ratio)
}

func interval(c verdict.Comparison) string {
	if c.Interval == "" {
		return "no interval"
	}
	if c.Metric == verdict.MetricErrorRate {
		return SignedPoints(c.CILow) + " … " + SignedPoints(c.CIHigh) + " points"
	}
	return SignedPercent(c.CILow) + " … " + boundPercent(c.CIHigh)
}

func evidence(c verdict.Comparison) string {
	n := Count(c.BaseN) + " / " + Count(c.HeadN) + " requests"
	if c.BaseN == c.HeadN {
		n = Count(c.BaseN) + " requests a side"
	}
	r := "paired rounds"
	if c.Rounds == 1 {
		r = "paired round"
	}
	return fmt.Sprintf("%d %s, %s", c.Rounds, r, n)
}

// others counts the other comparisons by value: "1 inconclusive, 4 unchanged".
func (a answer) others() string {
	n := map[verdict.Value]int{}
	for _, c := range a.rows {
		n[c.Value]++
	}
	if a.lead != nil && (a.lead.Value == verdict.Regression || a.lead.Value == verdict.Improvement) {
		n[a.lead.Value] = 0 // the headline counted them
	} else if a.lead != nil {
		n[a.lead.Value]--
	}
	var parts []string
	add := func(v verdict.Value, one, many string) {
		switch k := n[v]; {
		case k == 1:
			parts = append(parts, "1 "+one)
		case k > 1:
			parts = append(parts, fmt.Sprintf("%d %s", k, many))
		}
	}
	more := ""
	if a.lead != nil && a.lead.Value != verdict.Pass {
		more = "more "
	}
	v := verdict.Value("")
	if a.lead != nil {
		v = a.lead.Value
	}
	for _, x := range []struct {
		v         verdict.Value
		one, many string
	}{
		{verdict.Regression, "regression", "regressions"},
		{verdict.NotMeasured, "not measured", "not measured"},
		{verdict.Inconclusive, "inconclusive", "inconclusive"},
		{verdict.Improvement, "improvement", "improvements"},
		{verdict.Pass, "within tolerance", "within tolerance"},
	} {
		one, many := x.one, x.many
		if x.v == v && more != "" {
			one, many = more+one, more+many
		}
		add(x.v, one, many)
	}
	return strings.Join(parts, ", ")
}

// headline is the verdict in one sentence: the lead's change, interval and evidence.
func (a answer) headline(st style) string {
	v := a.g.Verdict
	mark := ""
	if st.mark {
		mark = symbol(v.Value) + " "
	}
	if rs := a.g.unusableGate(); rs != nil {
		return mark + "Unusable gate: nothing was compared — " + rs[0]
	}
	if a.lead == nil {
		if v.Value == verdict.Fail {
			return mark + "Failed: " + verdictWhy(v)
		}
		return mark + strings.ToUpper(string(v.Value[:1])) + string(v.Value[1:]) + ": no comparison"
	}
	c := *a.lead
	k := 0
	for _, x := range a.rows {
		if x.Value == c.Value {
			k++
		}
	}
	evid := " (" + interval(c) + ", " + evidence(c) + ")"
	var s string
	switch c.Value {
	case verdict.Regression, verdict.Improvement:
		word := string(c.Value)
		if k > 1 {
			word += "s"
		}
		s = fmt.Sprintf("%d %s: %s %s%s", k, word, a.what(c, st), change(c), evid)
	case verdict.NotMeasured:
		s = fmt.Sprintf("Not measured: %s could not be compared, %s", a.what(c, st), c.Why)
	case verdict.Inconclusive:
		switch {
		case c.Undecided != "":
			s = fmt.Sprintf("Inconclusive: %s %s%s is not called %s: the load generator fell behind its schedule", a.what(c, st), change(c), evid, withArticle(c.Undecided))
		case c.Interval == "":
			s = fmt.Sprintf("Inconclusive: %s has no interval yet (%s)", a.what(c, st), evidence(c))
		default:
			s = fmt.Sprintf("Inconclusive: %s %s%s is too close to the %s tolerance to call", a.what(c, st), change(c), evid, tolerance(v))
		}
	default:
		s = fmt.Sprintf("No regression: the largest change is %s %s%s", a.what(c, st), change(c), evid)
		if v.Value == verdict.Fail {
			s = "Failed: " + verdictWhy(v) + "; " + strings.ToLower(s[:1]) + s[1:]
		}
	}
	if o := a.others(); o != "" {
		s += " — " + o
	}
	if v.Value == verdict.Fail && c.Value != verdict.Pass {
		s += "; " + verdictWhy(v)
	}
	return mark + s
}

func tolerance(v verdict.Verdict) string { return "±" + Percent(v.Tolerance) }

// limits are what a reader must know beside the headline, in plain text.
func (a answer) limits(st style) []string {
	g, v := a.g, a.g.Verdict
	var out []string
	if l := shardsLine(g); l != "" { // shards.go: a merged gate says who gave its rounds
		out = append(out, l)
	}
	for _, n := range g.Notes { // a re-run says it continued the earlier attempt's rounds
		if n.Code == verdict.NoteContinued || n.Code == verdict.NoteNotContinued {
			out = append(out, sentence(NoteText(n)))
		}
	}
	if rs := g.unusableGate(); rs != nil {
		for _, r := range rs[1:] {
			out = append(out, "Also: "+r)
		}
		return append(out, "Nothing is compared with half a result: fix the cause above and run the gate again.")
	}
	if u := untrustedList(v.Untrusted); u != "" {
		out = append(out, fmt.Sprintf("Load generator behind schedule in %s: no regression, improvement or pass is called on those rounds. Give it its own quiet cores (--load-cpus) or lower the rate.", u))
	}
	if len(v.LeftOut) > 0 {
		out = append(out, fmt.Sprintf("Left out: %s, where the load generator fell behind its schedule; the comparisons use the others.", leftOutWords(v.LeftOut)))
	}
	for _, c := range a.rows {
		switch {
		case c.Value == verdict.NotMeasured:
			out = append(out, fmt.Sprintf("Not measured: %s — %s.", a.what(c, st), c.Why))
		case c.Value == verdict.Inconclusive && c.Need != "" && (c.Needs == nil || !c.Needs.TrustedRounds):
			out = append(out, fmt.Sprintf("Inconclusive: %s; to decide, %s.", a.what(c, st), c.Need))
		}
	}
	return out
}

func leftOutWords(ns []int) string {
	if len(ns) == 1 {
		return fmt.Sprintf("round %d", ns[0])
	}
	return "rounds " + ranges(ns)
}

func mdAnswer(b *md, g *gateReport) {
	a := answerOf(g)
	b.line("**%s**", mdEscKeep(a.headline(mdStyle)))
	b.line("")
	if g.Accepted != nil {
		b.line("> **%s**", mdEscKeep(AcceptedText(*g.Accepted)))
		b.line("")
	}
	if len(a.rows) > 0 {
		conf := Confidence(g.Verdict.Confidence)
		b.header("llrrlrl", "workload", "measure", g.Base.Name, g.Head.Name, "change ("+conf+" interval)", "rounds · requests", "verdict")
		for _, c := range a.rows {
			w := mdEsc(c.Workload)
			if a.phases {
				w += " (" + mdEsc(c.Phase) + ")"
			}
			ch := dash
			if c.Interval != "" {
				ch = change(c) + " (" + strings.TrimSuffix(interval(c), " points") + ")"
			}
			baseV, headV := sideValue(c, c.Base, c.BaseN), sideValue(c, c.Head, c.HeadN)
			if c.Metric != verdict.MetricErrorRate {
				// no-break space keeps the unit with its number
				if baseV != dash {
					baseV += "\u00a0ms"
				}
				if headV != dash {
					headV += "\u00a0ms"
				}
			}
			b.row(w, metricWord(c), baseV, headV, ch,
				fmt.Sprintf("%d · %s / %s", c.Rounds, Count(c.BaseN), Count(c.HeadN)), symbol(c.Value)+" "+string(c.Value))
		}
		b.line("")
	}
	for _, l := range a.limits(mdStyle) {
		b.line("- %s", mdEscKeep(l))
	}
	if len(a.limits(mdStyle)) > 0 {
		b.line("")
	}
}

// mdEscKeep escapes s for Markdown, keeping the headline's code spans.
func mdEscKeep(s string) string {
	parts := strings.Split(s, "`")
	for i := range parts {
		if i%2 == 0 {
			parts[i] = mdEsc(parts[i])
		} else {
			parts[i] = "`" + parts[i] + "`"
		}
	}
	if len(parts)%2 == 0 { // an odd number of backticks: no code span
		return mdEsc(s)
	}
	return strings.Join(parts, "")
}

func textAnswer(b *txt, g *gateReport) {
	a := answerOf(g)
	b.line("%s", a.headline(textStyle))
	if g.Accepted != nil {
		b.line("%s", AcceptedText(*g.Accepted))
	}
	for _, l := range a.limits(textStyle) {
		b.line("  %s", l)
	}
	b.line("")
}

// Headline is the gate's verdict in one line of plain text.
func Headline(o rounds.Outcome) string {
	g := explained(o)
	return answerOf(&g).headline(textStyle)
}

func (b *md) details(summary string) {
	b.line("<details><summary>%s</summary>", summary)
	b.line("")
}

func (b *md) endDetails() {
	b.line("</details>")
	b.line("")
}

// CompareSummary writes the PR comment and job summary: the answer and one
// chart, then the rest collapsed; CompareMarkdown is the full account.
func CompareSummary(w io.Writer, o rounds.Outcome) error {
	g := explained(o)
	v := g.Verdict
	var b md
	b.line("# loadgate gate: %s", mdEsc(g.Scenario.Name))
	b.line("")
	mdAnswer(&b, &g)
	a := answerOf(&g)
	mdChangeChart(&b, a) // comment.go

	if v.Value != verdict.Unusable && len(v.Workloads) > 0 {
		b.details("How to read this")
		mdMeaning(&b, &g)
		b.endDetails()
	}

	b.details("What ran: commits, machine, rounds")
	mdRan(&b, &g)
	b.endDetails()

	if v.Value != verdict.Unusable {
		var rest md
		if mdRoundTable(&rest, a) {
			b.details("Each round's change")
			b.WriteString(rest.String())
			b.endDetails()
		}
	}

	var rest md
	mdCompareStack(&rest, &g)
	mdGateCounting(&rest, &g)
	if rest.Len() > 0 {
		b.details("Services: CPU, memory, counts")
		b.WriteString(rest.String())
		b.endDetails()
	}

	var notes md
	mdNotes(&notes, g.notes(false))
	if mdThresholds(&notes, a) {
		b.details("Notes, thresholds, what is not measured or synthetic")
	} else {
		b.details("Notes, what is not measured or synthetic")
	}
	b.WriteString(notes.String())
	mdCompareNotMeasured(&b, &g)
	b.endDetails()
	return b.flush(w)
}

func mdRan(b *md, g *gateReport) {
	b.line("%s", scenarioLine(g.Scenario))
	if r := g.first(); r != nil {
		b.line("- **date** %s", date(r.StartedAt))
		b.line("- **machine** %s", machineText(r.Machine))
	}
	b.line("")
	b.line("%s", g.order().sentence(g))
	b.line("")
	b.header("llllllll", "side", "ref", "commit", "stack CPUs", "load CPUs", "pinned", "target", "rounds")
	for _, s := range g.sides() {
		b.row(s.Name, mdEsc(orUnknown(s.Ref)), "`"+commitText(sideCommit(s))+"`", mdEsc(topo(s, stackCPUs)), mdEsc(topo(s, loadCPUs)),
			topo(s, pinnedText), targets(s), fmt.Sprint(len(s.Results)))
	}
	b.line("")
}

func mdMeaning(b *md, g *gateReport) {
	v := g.Verdict
	conf := Confidence(v.Confidence)
	b.line("- **change**: head ÷ base of each workload's judged latency percentile, averaged over the rounds ([how](%s)). Error rates: a difference in percentage points ([how](%s)).",
		DocsURL+"#latency-the-ratio-headbase-of-the-judged-percentile", DocsURL+"#error-rates-a-difference-of-proportions")
	b.line("- **interval**: the range the true change lies in with %s confidence, from how much the rounds disagree; the more rounds and requests, the narrower it is.", conf)
	tol := "+" + Percent(v.Tolerance)
	b.line("- **verdict**: regression when the whole interval lies above %s (the tolerance), improvement when below it the other way, pass when its top is at most %s; else inconclusive.", tol, tol)
	if f := v.Family; f != nil && f.Tests > 1 {
		b.line("- **many comparisons**: each of the %d comparisons is held to a stricter bar (Holm's method), so the chance of any false regression stays at most %s ([how](%s#many-comparisons)).", f.Tests, Percent(f.Alpha), DocsURL)
	} else if f != nil {
		b.line("- **many comparisons**: each is held to a stricter bar so that, together, a false alarm stays rare ([how](%s#many-comparisons)).", DocsURL)
	}
	if v.Sequential != nil {
		b.line("- **stopping early**: the gate looked at the rounds as they came and stopped once the answer was clear, with a stricter bar at early looks ([how](%s)).", DocsURL+"#sequential-rounds---rounds-auto")
	}
	switch o := g.order(); {
	case o.duet:
		b.line("- **rounds**: each round ran base and head at the same instants on the same machine (duet), so both saw the same noise ([how](%s#duet-rounds)).", DocsURL)
	case o.alternate:
		b.line("- **rounds**: each round ran base and head one after the other, alternating which went first, so a drift of the machine falls on both ([how](%s#duet-or-abba-rounds)).", DocsURL)
	}
	b.line("")
}

// AcceptedText says who accepted a failing verdict, on which head, and what it changes.
func AcceptedText(a verdict.Acceptance) string {
	return fmt.Sprintf("Accepted by @%s (%s access) with the label %s on head %s, %s: this check passes (exit %d, the verdict's %d); the verdict and its numbers are as measured.",
		a.By, a.Permission, a.Label, result.ShortHash(a.HeadSHA), a.LabeledAt.UTC().Format("2006-01-02 15:04 UTC"), a.ExitCode, a.VerdictExitCode)
}
