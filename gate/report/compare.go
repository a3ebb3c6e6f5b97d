package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/mdtext"
)

// gateReport is a gate's outcome as the renderers read it.
type gateReport rounds.Outcome

// explained is o normalized and Explained: what every gate renderer starts from.
func explained(o rounds.Outcome) gateReport {
	g := gateReport(o)
	g.normalize()
	g.Verdict = Explain(g.Verdict)
	return g
}

func (g *gateReport) normalize() {
	if g.Base.Name == "" {
		g.Base.Name = "base"
	}
	if g.Head.Name == "" {
		g.Head.Name = "head"
	}
	if g.Rounds == 0 {
		g.Rounds = max(len(g.Head.Results), len(g.Base.Results))
	}
	if g.Scenario.Hash == "" && g.Scenario.Name == "" {
		if r := g.first(); r != nil {
			g.Scenario = r.Scenario
		}
	}
}

func (g *gateReport) first() *result.Result {
	for _, s := range []rounds.SideResults{g.Base, g.Head} {
		for _, r := range s.Results {
			if r != nil {
				return r
			}
		}
	}
	return nil
}

func (g *gateReport) sides() []rounds.SideResults { return []rounds.SideResults{g.Base, g.Head} }

// roundOrder is who went first per round and whether the idle side paused.
type roundOrder struct {
	baseFirst []bool // per paired round; nil when any round's order is unknown
	alternate bool   // the first side alternated (ABBA)
	perInst   bool   // not alternate, but within each stack instance it did (a windows gate of 2 instances)
	byTime    bool   // some round's order comes from start times, not result.Round
	paused    bool   // every round says the other side's stack was paused
	oneBase   bool   // one base result paired with every head round (a stored baseline)
	duet      bool   // every round ran both sides at the same instants (result.RoundDuet)
}

func (g *gateReport) order() roundOrder {
	var o roundOrder
	if len(g.Base.Results) == 1 && len(g.Head.Results) > 1 {
		o.oneBase = true
		return o
	}
	n := min(len(g.Base.Results), len(g.Head.Results))
	if n == 0 {
		return o
	}
	o.duet = true
	for i := range n {
		b, h := g.Base.Results[i], g.Head.Results[i]
		o.duet = o.duet && b != nil && h != nil && b.Round != nil && h.Round != nil && b.Round.Mode == result.RoundDuet && h.Round.Mode == result.RoundDuet
	}
	if o.duet {
		return o
	}
	o.paused = true
	first := make([]bool, 0, n)
	for i := range n {
		b, h := g.Base.Results[i], g.Head.Results[i]
		if b == nil || h == nil {
			return roundOrder{}
		}
		o.paused = o.paused && b.Round != nil && h.Round != nil && b.Round.OtherPaused && h.Round.OtherPaused
		switch {
		case b.Round != nil && h.Round != nil && b.Round.First != h.Round.First:
			first = append(first, b.Round.First)
		case !b.StartedAt.IsZero() && !h.StartedAt.IsZero() && !b.StartedAt.Equal(h.StartedAt):
			first = append(first, b.StartedAt.Before(h.StartedAt))
			o.byTime = true
		default:
			return roundOrder{paused: o.paused}
		}
	}
	o.baseFirst = first
	o.alternate = n > 1
	for i := 1; i < n; i++ {
		o.alternate = o.alternate && first[i] != first[i-1]
	}
	if !o.alternate && n > 1 {
		o.perInst = alternatesPerInstance(g.Head.Results[:n], first)
	}
	return o
}

// alternatesPerInstance: each instance's rounds alternate which side went first.
func alternatesPerInstance(head []*result.Result, first []bool) bool {
	last := map[int]bool{}
	for i, h := range head {
		if h.Round == nil || h.Round.Instance <= 0 {
			return false
		}
		if f, ok := last[h.Round.Instance]; ok && f == first[i] {
			return false
		}
		last[h.Round.Instance] = first[i]
	}
	return len(last) > 1
}

func (o roundOrder) label() string {
	switch {
	case o.duet:
		return "duet"
	case o.oneBase:
		return "head rounds against one base result"
	case o.baseFirst == nil:
		return "order not recorded"
	case o.alternate:
		return "ABBA"
	case o.perInst:
		return "ABBA on each stack instance"
	case !slices.Contains(o.baseFirst, false):
		return "base first"
	case !slices.Contains(o.baseFirst, true):
		return "head first"
	}
	return "mixed order"
}

// plain is the order for a reader who does not know "ABBA".
func (o roundOrder) plain() string {
	switch l := o.label(); l {
	case "duet":
		return "both sides at once (duet)"
	case "ABBA":
		return "alternating which side ran first"
	case "ABBA on each stack instance":
		return "alternating which side ran first on each stack instance"
	default:
		return l
	}
}

func (o roundOrder) spell(g *gateReport) string {
	parts := make([]string, len(o.baseFirst))
	for i, bf := range o.baseFirst {
		a, b := g.Base.Name, g.Head.Name
		if !bf {
			a, b = b, a
		}
		parts[i] = fmt.Sprintf("%d %s→%s", i+1, a, b)
	}
	return strings.Join(parts, " · ")
}

func (o roundOrder) sentence(g *gateReport) string {
	var s string
	switch {
	case o.oneBase:
		s = fmt.Sprintf("Every %s round is paired with the same %s result (a stored baseline): nothing alternated.", g.Head.Name, g.Base.Name)
		return s
	case o.duet:
		return "Each round ran in duet: both sides ran at the same instants (one schedule start), both stacks up and neither paused."
	case o.baseFirst == nil:
		s = "The results do not record in what order the sides ran"
	case o.alternate:
		s = "Each round ran both sides one after the other, alternating which went first (ABBA)"
	case o.perInst:
		s = "Each round ran both sides one after the other, alternating which went first on each stack instance"
	default:
		s = fmt.Sprintf("Each round ran both sides one after the other, %s", o.label())
	}
	if o.byTime {
		s += " (as their start times say)"
	}
	if o.paused {
		return s + "; the idle side's stack was paused."
	}
	return s + "; the results do not say that the idle side's stack was paused."
}

// instancesText says on which stack instances the rounds ran, when more
// than one ("" otherwise, or when a round does not record it).
func (g *gateReport) instancesText() string {
	n := min(len(g.Base.Results), len(g.Head.Results))
	ids := make([]string, 0, n)
	seen := map[int]bool{}
	for i := range n {
		h := g.Head.Results[i]
		if h == nil || h.Round == nil || h.Round.Instance <= 0 {
			return ""
		}
		seen[h.Round.Instance] = true
		ids = append(ids, strconv.Itoa(h.Round.Instance))
	}
	if len(seen) < 2 {
		return ""
	}
	return fmt.Sprintf(" The rounds ran on %d stack instances a side (each round's instance: %s); the interval carries the variance between them.", len(seen), strings.Join(ids, " "))
}

func (g *gateReport) judgedPhases() []result.Phase {
	r := g.first()
	if r == nil {
		return nil
	}
	return judgedPhases(r.Phases)
}

// pooledSummary pools a side's judged rounds as the verdict does; !ok: a bad histogram.
func pooledSummary(s rounds.SideResults, leftOut []int, phase, workload string) (result.Summary, bool) {
	h, err := result.PoolLatency(judgedRounds(s.Results, leftOut), phase, workload)
	if err != nil {
		return result.Summary{}, false
	}
	return result.Summarize(h), true
}

func pooledRounds(rounds int, leftOut []int) string {
	if len(leftOut) == 0 {
		return fmt.Sprintf("%d round(s)", rounds)
	}
	ns := make([]string, len(leftOut))
	for i, n := range leftOut {
		ns[i] = strconv.Itoa(n)
	}
	word := "round"
	if len(leftOut) > 1 {
		word = "rounds"
	}
	return fmt.Sprintf("%d of %d rounds (%s %s left out)", rounds-len(leftOut), rounds, word, strings.Join(ns, ", "))
}

func judgedRounds(rs []*result.Result, leftOut []int) []*result.Result {
	if len(leftOut) == 0 {
		return rs
	}
	var out []*result.Result
	for i, r := range rs {
		n := i + 1
		if r != nil && r.Round != nil && r.Round.Number > 0 {
			n = r.Round.Number
		}
		if !slices.Contains(leftOut, n) {
			out = append(out, r)
		}
	}
	return out
}

func (g *gateReport) workloadNames(phase string) []string {
	var names []string
	for _, s := range g.sides() {
		for _, r := range s.Results {
			if r == nil {
				continue
			}
			if p := r.PhaseNamed(phase); p != nil {
				for _, w := range p.Workloads {
					if !slices.Contains(names, w.Name) {
						names = append(names, w.Name)
					}
				}
			}
		}
	}
	return names
}

func topo(s rounds.SideResults, f func(result.Topology) string) string {
	var vals []string
	for _, r := range s.Results {
		if r == nil {
			continue
		}
		if v := f(r.Topology); !slices.Contains(vals, v) {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return "unknown"
	}
	return strings.Join(vals, " / ")
}

func stackCPUs(t result.Topology) string {
	if t.StackCPUs == "" {
		return "none"
	}
	return t.StackCPUs
}

func loadCPUs(t result.Topology) string { return orUnknown(t.LoadCPUs) }

func pinnedText(t result.Topology) string {
	if t.Pinned {
		return "yes"
	}
	return "no"
}

func sideCommit(s rounds.SideResults) string {
	if s.Commit != "" {
		return s.Commit
	}
	for _, r := range s.Results {
		if r != nil && r.Commit != "" {
			return r.Commit
		}
	}
	return ""
}

func (g *gateReport) warnings() []string { return g.notes(true) }

// notes are the warnings; !full leaves out what the comment says before them.
func (g *gateReport) notes(full bool) []string {
	var ws []string
	add := func(s string) {
		if s != "" && !slices.Contains(ws, s) {
			ws = append(ws, s)
		}
	}
	for _, w := range g.notPinned() {
		add(w)
	}
	for _, s := range g.sides() {
		add(warmupNote(s))
		add(resourceNote(s))
	}
	if a, b := topo(g.Base, stackCPUs), topo(g.Head, stackCPUs); a != b {
		add(fmt.Sprintf("the sides' stacks ran on different CPUs (base %s, head %s)", a, b))
	}
	for _, n := range g.Notes {
		if !full && (n.Code == verdict.NoteContinued || n.Code == verdict.NoteNotContinued) {
			continue // the comment's limits say it
		}
		add(NoteText(n))
	}
	add(storedNote(g.Stored, g.Verdict))
	if g.Verdict.Value != verdict.Unusable {
		for _, s := range NoteTexts(g.Verdict.Notes) {
			add(s)
		}
		for _, u := range g.Verdict.Untrusted {
			add(untrustedNote(u))
		}
		add(NoiseNote(g.Verdict))
		add(SequentialNote(g.Verdict))
		if full {
			add(FamilyNote(g.Verdict))
		}
	}
	for _, wv := range g.Verdict.Workloads {
		for _, c := range wv.Comparisons {
			// An untrusted round's need is in its note; the comment's limits say the others.
			if full && c.Value == verdict.Inconclusive && c.Needs != nil && !c.Needs.TrustedRounds {
				add(fmt.Sprintf("%s/%s %s inconclusive: to decide, %s", c.Phase, c.Workload, c.Metric, ComparisonNeed(g.Verdict, c)))
			}
		}
	}
	return ws
}

// storedNote shows a re-measured baseline's numbers as recorded, beside the
// gate's, one per latency comparison: shown, never judged.
func storedNote(b *result.Result, v verdict.Verdict) string {
	if b == nil {
		return ""
	}
	var figs []string
	for _, wv := range v.Workloads {
		for _, c := range wv.Comparisons {
			q, ok := verdict.Quantile(c.Metric)
			if !ok {
				continue
			}
			h, err := result.PoolMetric([]*result.Result{b}, c.Phase, c.Workload, c.Metric)
			if err != nil || h.TotalCount() == 0 {
				figs = append(figs, fmt.Sprintf("%s %s not measured", c.Workload, c.Metric))
				continue
			}
			figs = append(figs, fmt.Sprintf("%s %s %s ms (n=%s)", c.Workload, c.Metric, MS(float64(result.Quantile(h, q))/1000), Count(h.TotalCount())))
		}
	}
	if len(figs) == 0 {
		return ""
	}
	return fmt.Sprintf("the baseline as stored, at recording time, on %s (%s, commit %s): %s; shown, not judged (both sides above ran here)",
		machineText(b.Machine), date(b.StartedAt), result.ShortHash(b.Commit), strings.Join(figs, ", "))
}

func warmupNote(s rounds.SideResults) string {
	var failed, of int64
	by := map[string]int64{}
	var rounds []int
	for i, r := range s.Results {
		if r == nil || r.Warmup.Failed == 0 {
			continue
		}
		rounds = append(rounds, i+1)
		failed += r.Warmup.Failed
		of += r.Warmup.Recorded
		for k, n := range r.Warmup.Failures {
			by[k] += n
		}
	}
	if failed == 0 {
		return ""
	}
	which := fmt.Sprintf("round %d", rounds[0])
	if len(rounds) > 1 {
		which = "rounds " + ranges(rounds)
	}
	return fmt.Sprintf("%s warm-up (%s): %s; excluded from every number, but the service failed requests before the measured phases", s.Name, which, warmupFailed(failed, of, by))
}

func (g *gateReport) notPinned() []string {
	type group struct {
		reason string
		rounds [2][]int // base, head
	}
	var groups []*group
	for si, s := range g.sides() {
		for i, r := range s.Results {
			if r == nil || r.Topology.Pinned {
				continue
			}
			why := pinnedWhy(r.Topology)
			k := slices.IndexFunc(groups, func(x *group) bool { return x.reason == why })
			if k < 0 {
				groups = append(groups, &group{reason: why})
				k = len(groups) - 1
			}
			groups[k].rounds[si] = append(groups[k].rounds[si], i+1)
		}
	}
	var out []string
	for _, gr := range groups {
		why := ""
		if gr.reason != "" {
			why = " (" + gr.reason + ")"
		}
		b, h := gr.rounds[0], gr.rounds[1]
		if len(b) > 1 && slices.Equal(b, h) {
			out = append(out, fmt.Sprintf("rounds %s of both sides were not pinned%s: their numbers carry more of the machine's noise", ranges(b), why))
			continue
		}
		var parts []string
		plural := len(b)+len(h) > 1
		for si, rs := range gr.rounds {
			switch len(rs) {
			case 0:
			case 1:
				parts = append(parts, fmt.Sprintf("%s round %d", g.sides()[si].Name, rs[0]))
			default:
				parts = append(parts, fmt.Sprintf("%s rounds %s", g.sides()[si].Name, ranges(rs)))
			}
		}
		if plural {
			out = append(out, fmt.Sprintf("%s were not pinned%s: their numbers carry more of the machine's noise", strings.Join(parts, " and "), why))
		} else {
			out = append(out, fmt.Sprintf("%s was not pinned%s: its numbers carry more of the machine's noise", parts[0], why))
		}
	}
	return out
}

// resourceNote says which resources a side's compose file set and loadgate
// removed (they are loadgate's, alike for both sides), or "".
func resourceNote(s rounds.SideResults) string {
	var changes []string
	for _, r := range s.Results {
		if r == nil {
			continue
		}
		for _, o := range r.Topology.Overrides {
			if o.Kind == result.OverrideResource && !slices.Contains(changes, o.String()) {
				changes = append(changes, o.String())
			}
		}
	}
	if len(changes) == 0 {
		return ""
	}
	return fmt.Sprintf("%s's compose file set resources loadgate overrode (they are loadgate's, alike for both sides): %s", s.Name, strings.Join(changes, "; "))
}

func (g *gateReport) unusableGate() []string {
	if g.Verdict.Value != verdict.Unusable {
		return nil
	}
	if len(g.Verdict.Notes) == 0 {
		return []string{"a side is unusable"}
	}
	return NoteTexts(g.Verdict.Notes)
}

func (g *gateReport) comparisons(phase string) []verdict.Comparison {
	var cs []verdict.Comparison
	for _, wv := range g.Verdict.Workloads {
		if wv.Phase == phase {
			cs = append(cs, wv.Comparisons...)
		}
	}
	return cs
}

// delta is the Δ column, "~" marking a non-significant change.
func delta(c verdict.Comparison) string {
	if c.Interval == "" {
		return dash
	}
	s := SignedPercent(c.Ratio)
	if c.Metric == verdict.MetricErrorRate {
		s = SignedPoints(c.Diff) + " pts"
	}
	if !c.Significant {
		s += " ~"
	}
	return s
}

// DeltaText is a comparison's Δ as the tables print it.
func DeltaText(c verdict.Comparison) string { return delta(c) }

// CIText is a comparison's interval as tables print it, "—" when none.
func CIText(c verdict.Comparison) string { return ciText(c) }

func ciText(c verdict.Comparison) string {
	if c.Interval == "" {
		return dash
	}
	if c.Metric == verdict.MetricErrorRate {
		return SignedPoints(c.CILow) + " … " + SignedPoints(c.CIHigh) + " pts"
	}
	return SignedPercent(c.CILow) + " … " + boundPercent(c.CIHigh)
}

func sideValue(c verdict.Comparison, v float64, n int64) string {
	if n == 0 {
		return dash
	}
	if c.Metric == verdict.MetricErrorRate {
		return Percent(v)
	}
	return MS(v)
}

func metricName(c verdict.Comparison) string {
	if c.Metric == verdict.MetricErrorRate {
		return "error rate"
	}
	return c.Metric + " ms"
}

// CompareMarkdown writes the full gate report, the verdict last.
func CompareMarkdown(w io.Writer, o rounds.Outcome) error {
	g := explained(o)
	v := g.Verdict
	var b md
	b.line("# loadgate gate: %s", mdEsc(g.Scenario.Name))
	b.line("")
	mdAnswer(&b, &g) // headline.go
	if rs := g.unusableGate(); rs != nil {
		b.line("> **UNUSABLE GATE** — %s Nothing is compared with half a result (exit 3).", sentence(strings.Join(mdEscAll(rs), "; ")))
		b.line("")
	}
	if u := untrustedText(v); u != "" {
		b.line("> **GENERATOR BEHIND SCHEDULE** — %s. These rounds are not trustworthy (their latency includes the generator's own delay): no regression, improvement or pass is called on them.", u)
		b.line("")
	}
	b.line("%s", scenarioLine(g.Scenario))
	b.line("- **compared** %s `%s` → %s `%s`", g.Base.Name, commitText(sideCommit(g.Base)), g.Head.Name, commitText(sideCommit(g.Head)))
	if o := g.order(); o.baseFirst != nil {
		b.line("- **rounds** %d paired, %s (round: first→second): %s", g.Rounds, o.label(), o.spell(&g))
	} else {
		b.line("- **rounds** %d paired, %s", g.Rounds, o.label())
	}
	b.line("- **method** %s", methodText(v))
	if r := g.first(); r != nil {
		b.line("- **date** %s", date(r.StartedAt))
		b.line("- **machine** %s", machineText(r.Machine))
		b.line("- **precision** %s", orUnknown(r.Precision))
	}
	b.line("")

	b.line("## What ran")
	b.line("")
	b.header("llllllllr", "side", "ref", "commit", "stack CPUs", "load CPUs", "pinned", "target path", "target", "rounds")
	for _, s := range g.sides() {
		b.row(s.Name, mdEsc(orUnknown(s.Ref)), "`"+commitText(sideCommit(s))+"`", mdEsc(topo(s, stackCPUs)), mdEsc(topo(s, loadCPUs)),
			topo(s, pinnedText), mdEsc(topo(s, func(t result.Topology) string { return orUnknown(t.TargetPath) })),
			targets(s), strconv.Itoa(len(s.Results)))
	}
	b.line("")
	b.line("%s%s", g.order().sentence(&g), g.instancesText())
	b.line("")

	for _, p := range g.judgedPhases() {
		mdComparePhase(&b, &g, p)
	}
	mdCompareStack(&b, &g)
	mdGateCounting(&b, &g) // gatecounted.go

	mdNotes(&b, g.warnings())
	mdCompareNotMeasured(&b, &g)

	mdVerdictSection(&b, v, "gate", "checks and comparisons", gateWhy, "Why:", g.unusableGate())
	return b.flush(w)
}

func methodText(v verdict.Verdict) string {
	if v.Rounds == 0 && v.Tolerance == 0 {
		return "no comparison"
	}
	perc := "each workload's threshold percentiles, else p95"
	if v.Percentile != "" {
		perc = v.Percentile
	}
	tol := Percent(v.Tolerance)
	if v.ToleranceFloorMs > 0 {
		tol += fmt.Sprintf(", at least ±%s ms", strconv.FormatFloat(v.ToleranceFloorMs, 'f', -1, 64))
	}
	return fmt.Sprintf("head/base ratio of %s, %s CI from the paired rounds (t) floored by order statistics; tolerance ±%s; error rates: per-round differences (t) floored by Newcombe's score interval",
		perc, Confidence(v.Confidence), tol)
}

func targets(s rounds.SideResults) string {
	var vals []string
	for _, r := range s.Results {
		if r != nil && !slices.Contains(vals, orUnknown(r.Target)) {
			vals = append(vals, orUnknown(r.Target))
		}
	}
	if len(vals) == 0 {
		return "unknown"
	}
	for i, v := range vals {
		vals[i] = mdtext.Code(v)
	}
	return strings.Join(vals, ", ")
}

func gateWhy(wv verdict.WorkloadVerdict, sep string) string {
	var parts []string
	if s := checksText(wv, sep); s != "" && !(len(wv.Checks) == 0 && WorkloadWhy(wv) == "no thresholds") {
		parts = append(parts, s)
	}
	for _, c := range wv.Comparisons {
		parts = append(parts, fmt.Sprintf("%s %s: %s (n=%s, %s)", c.Metric, c.Value, c.Why, Count(c.BaseN), Count(c.HeadN)))
	}
	return strings.Join(parts, sep)
}

var chartPercentiles = []string{"p50", "p90", "p95", "p99", "p99.9"}

func summaryValues(s result.Summary) []float64 {
	return []float64{s.P50, s.P90, s.P95, s.P99, s.P999}
}

func mdComparePhase(b *md, g *gateReport, p result.Phase) {
	b.line("## %s", mdSectionTitle(p))
	b.line("")
	cs := g.comparisons(p.Name)
	if len(cs) == 0 && g.Verdict.Value == verdict.Unusable {
		b.line("No comparison: the gate is unusable.")
		b.line("")
	} else if len(cs) == 0 {
		b.line("No comparison in this phase.")
		b.line("")
	} else {
		conf := Confidence(g.Verdict.Confidence)
		b.line("Latency in ms from due time, successes only, nearest-rank, pooled over %s per side. Δ: head/base, geometric mean of round ratios (error rate: points), %s CI; ~ not significant.", pooledRounds(g.Rounds, g.Verdict.LeftOut), conf)
		b.line("")
		b.header("llrrrlrrll", "workload", "metric", g.Base.Name, g.Head.Name, "Δ", conf+" CI", "n "+g.Base.Name, "n "+g.Head.Name, "CI from", "verdict")
		for _, c := range cs {
			b.row(mdEsc(c.Workload), metricName(c), sideValue(c, c.Base, c.BaseN), sideValue(c, c.Head, c.HeadN), delta(c), ciText(c),
				Count(c.BaseN), Count(c.HeadN), orDash(c.Interval), "**"+string(c.Value)+"**")
		}
		b.line("")
		var per []string
		for _, c := range cs {
			if len(c.RoundRatios) > 1 {
				rs := make([]string, len(c.RoundRatios))
				for i, r := range c.RoundRatios {
					rs[i] = strconv.FormatFloat(r, 'f', 3, 64)
				}
				per = append(per, fmt.Sprintf("%s %s: %s", mdEsc(c.Workload), c.Metric, strings.Join(rs, " ")))
			}
		}
		if len(per) > 0 {
			b.line("Per-round ratios head/base: %s.", strings.Join(per, " · "))
			b.line("")
		}
	}
	mdPhaseCharts(b, g, p)
}

func mdPhaseCharts(b *md, g *gateReport, p result.Phase) {
	if g.Verdict.Value == verdict.Unusable {
		return // no number of an unusable gate is drawn
	}
	for _, name := range g.workloadNames(p.Name) {
		sb, okb := pooledSummary(g.Base, g.Verdict.LeftOut, p.Name, name)
		sh, okh := pooledSummary(g.Head, g.Verdict.LeftOut, p.Name, name)
		if !okb || !okh || sb.Count == 0 || sh.Count == 0 {
			continue
		}
		lo, hi := math.Inf(1), 0.0
		for _, x := range append(summaryValues(sb), summaryValues(sh)...) {
			lo, hi = min(lo, x), max(hi, x)
		}
		// mermaid's axis is linear: span the values, not from 0.
		ya, yb, _ := logRange(lo, hi)
		b.line("%s latency by percentile, ms (first line %s n=%s, second line %s n=%s):", mdEsc(name), g.Base.Name, Count(sb.Count), g.Head.Name, Count(sh.Count))
		b.line("")
		b.line("```mermaid")
		b.line("xychart-beta")
		b.line("    title \"%s · %s: latency by percentile (ms)\"", mdtext.Mermaid(p.Name), mdtext.Mermaid(name))
		b.line("    x-axis [%s]", strings.Join(chartPercentiles, ", "))
		b.line("    y-axis \"ms\" %s --> %s", plain(ya), plain(yb))
		b.line("    line [%s]", joinPlain(summaryValues(sb)))
		b.line("    line [%s]", joinPlain(summaryValues(sh)))
		b.line("```")
		b.line("")
	}
}

func orDash(s string) string {
	if s == "" {
		return dash
	}
	return s
}

// plain formats a number for mermaid (no digit grouping).
func plain(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func joinPlain(vs []float64) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = plain(v)
	}
	return strings.Join(s, ", ")
}

func mdCompareStack(b *md, g *gateReport) {
	sb, sh := result.PoolServices(g.Base.Results), result.PoolServices(g.Head.Results)
	if len(sb) == 0 && len(sh) == 0 {
		return
	}
	b.line("## Stack")
	b.line("")
	b.line("Per service, over all rounds of each side: CPU in percent of one core from cumulative CPU-time deltas (average weighted by samples, peak the highest interval), memory the peak.")
	b.line("")
	b.header("lrrrrrrr", "service", "CPU avg % "+g.Base.Name, "CPU avg % "+g.Head.Name, "CPU peak % "+g.Base.Name, "CPU peak % "+g.Head.Name,
		"mem peak MiB "+g.Base.Name, "mem peak MiB "+g.Head.Name, "samples")
	var names []string
	for _, s := range append(slices.Clone(sb), sh...) {
		if !slices.Contains(names, s.Name) {
			names = append(names, s.Name)
		}
	}
	find := func(ss []result.Service, name string) (result.Service, bool) {
		i := slices.IndexFunc(ss, func(s result.Service) bool { return s.Name == name })
		if i < 0 {
			return result.Service{}, false
		}
		return ss[i], true
	}
	for _, name := range names {
		x, okx := find(sb, name)
		y, oky := find(sh, name)
		cell := func(ok bool, f func() string) string {
			if !ok {
				return dash
			}
			return f()
		}
		b.row(mdEsc(name),
			cell(okx, func() string { return cpuPct(x.CPUAvgPct) }), cell(oky, func() string { return cpuPct(y.CPUAvgPct) }),
			cell(okx, func() string { return cpuPct(x.CPUPeakPct) }), cell(oky, func() string { return cpuPct(y.CPUPeakPct) }),
			cell(okx, func() string { return mib(x.MemPeakBytes) }), cell(oky, func() string { return mib(y.MemPeakBytes) }),
			Count(int64(x.Samples))+" / "+Count(int64(y.Samples)))
	}
	b.line("")
}

func (g *gateReport) lists() (nm, syn []string) {
	for _, s := range g.sides() {
		for _, r := range s.Results {
			if r == nil {
				continue
			}
			for _, x := range r.NotMeasured {
				if !slices.Contains(nm, x) {
					nm = append(nm, x)
				}
			}
			for _, x := range r.Synthetic {
				if !slices.Contains(syn, x) {
					syn = append(syn, x)
				}
			}
		}
	}
	return nm, syn
}

func mdCompareNotMeasured(b *md, g *gateReport) {
	nm, syn := g.lists()
	mdUnmeasured(b, "Nothing is listed as not measured.", nm, g.Scenario.Name, syn)
}

func mdNotes(b *md, ws []string) {
	if len(ws) == 0 {
		return
	}
	b.line("## Notes")
	b.line("")
	b.list(ws)
	b.line("")
}

// CompareText writes a compact gate report for a terminal, verdict last.
func CompareText(w io.Writer, o rounds.Outcome) error {
	g := explained(o)
	v := g.Verdict
	var b txt
	textAnswer(&b, &g) // headline.go
	if rs := g.unusableGate(); rs != nil {
		b.line("UNUSABLE GATE — %s (exit 3)", strings.Join(rs, "; "))
	}
	if u := untrustedText(v); u != "" {
		b.line("GENERATOR BEHIND SCHEDULE — %s: not trustworthy, no regression, improvement or pass is called on these rounds", u)
	}
	b.line("loadgate gate %s %s · %d rounds, %s · %s %s → %s %s", g.Scenario.Name, scenarioHash(g.Scenario.Hash), g.Rounds, g.order().label(),
		g.Base.Name, commitText(sideCommit(g.Base)), g.Head.Name, commitText(sideCommit(g.Head)))
	b.line("method %s", methodText(v))
	rows := [][]string{{"side", "ref", "commit", "stack CPUs", "load CPUs", "pinned", "rounds"}}
	for _, s := range g.sides() {
		rows = append(rows, []string{s.Name, orUnknown(s.Ref), commitText(sideCommit(s)), topo(s, stackCPUs), topo(s, loadCPUs), topo(s, pinnedText), strconv.Itoa(len(s.Results))})
	}
	b.table("", rows)
	for _, p := range g.judgedPhases() {
		b.line("")
		b.line("%s", strings.ToLower(sectionTitle(p)))
		cs := g.comparisons(p.Name)
		if len(cs) == 0 {
			b.line("  no comparison")
			continue
		}
		rows := [][]string{{"workload", "metric", g.Base.Name, g.Head.Name, "Δ", "CI", "n " + g.Base.Name, "n " + g.Head.Name, "verdict"}}
		for _, c := range cs {
			rows = append(rows, []string{c.Workload, metricName(c), sideValue(c, c.Base, c.BaseN), sideValue(c, c.Head, c.HeadN),
				delta(c), ciText(c), "n=" + Count(c.BaseN), "n=" + Count(c.HeadN), string(c.Value)})
		}
		b.table("  ", rows)
	}
	if sb, sh := result.PoolServices(g.Base.Results), result.PoolServices(g.Head.Results); len(sb)+len(sh) > 0 {
		b.line("")
		b.line("stack (CPU avg %% of one core, mem peak MiB; %s / %s)", g.Base.Name, g.Head.Name)
		rows := [][]string{}
		for _, x := range sb {
			row := []string{x.Name, cpuPct(x.CPUAvgPct), mib(x.MemPeakBytes)}
			if i := slices.IndexFunc(sh, func(s result.Service) bool { return s.Name == x.Name }); i >= 0 {
				row = []string{x.Name, "cpu " + cpuPct(x.CPUAvgPct) + " / " + cpuPct(sh[i].CPUAvgPct), "mem " + mib(x.MemPeakBytes) + " / " + mib(sh[i].MemPeakBytes)}
			}
			rows = append(rows, row)
		}
		b.table("  ", rows)
	}
	textGateCounting(&b, &g) // gatecounted.go
	b.line("")
	for _, s := range g.warnings() {
		b.line("note: %s", s)
	}
	nm, syn := g.lists()
	if len(nm) > 0 {
		b.line("not measured: %s", strings.Join(nm, "; "))
	}
	b.line("synthetic: %s", strings.Join(append([]string{syntheticLoad(g.Scenario.Name)}, syn...), "; "))
	b.verdict(v, gateWhy, "why", g.unusableGate())
	_, err := io.WriteString(w, b.String())
	return err
}
