package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

// GateSide is one side of a gate: a checkout and its rounds.
type GateSide struct {
	Name    string           // "base" or "head"
	Ref     string           // the git ref as given ("main", "HEAD", "pr-42")
	Commit  string           // the commit it resolved to
	Results []*result.Result // one per round, in round order; topology and stack are read from them
}

// GateReport is what a gate report renders: both sides, the rounds, the
// scenario and the verdict (verdict.Gate).
type GateReport struct {
	Scenario result.Scenario // zero: taken from the first result
	Base     GateSide
	Head     GateSide
	Rounds   int    // paired rounds; 0: len(Head.Results)
	Order    string // how rounds alternated; "" means "ABBA"
	Verdict  verdict.Verdict
	Notes    []string // the caller's warnings, printed with the verdict's notes
}

func (g *GateReport) normalize() {
	if g.Base.Name == "" {
		g.Base.Name = "base"
	}
	if g.Head.Name == "" {
		g.Head.Name = "head"
	}
	if g.Rounds == 0 {
		g.Rounds = max(len(g.Head.Results), len(g.Base.Results))
	}
	if g.Order == "" {
		g.Order = "ABBA"
	}
	if g.Scenario.Hash == "" && g.Scenario.Name == "" {
		if r := g.first(); r != nil {
			g.Scenario = r.Scenario
		}
	}
}

func (g *GateReport) first() *result.Result {
	for _, s := range []GateSide{g.Base, g.Head} {
		for _, r := range s.Results {
			if r != nil {
				return r
			}
		}
	}
	return nil
}

func (g *GateReport) sides() []GateSide { return []GateSide{g.Base, g.Head} }

// roundOrder spells the order of sides in each round: ABBA alternates
// which side runs first.
func (g *GateReport) roundOrder() string {
	var parts []string
	for i := range g.Rounds {
		a, b := g.Base.Name, g.Head.Name
		if g.Order == "ABBA" && i%2 == 1 {
			a, b = b, a
		}
		parts = append(parts, fmt.Sprintf("%d %s→%s", i+1, a, b))
	}
	return strings.Join(parts, " · ")
}

// judgedPhases are the phases the gate judges, from the first result.
func (g *GateReport) judgedPhases() []result.Phase {
	r := g.first()
	if r == nil {
		return nil
	}
	var ps []result.Phase
	for _, p := range r.Phases {
		if p.Judged {
			ps = append(ps, p)
		}
	}
	for _, p := range r.Phases {
		if p.Recover && !p.Judged {
			ps = append(ps, p)
		}
	}
	return ps
}

// pooledSummary merges a side's latency histograms of one workload in one
// phase over all rounds and summarizes them (nearest-rank). ok is false when
// a histogram does not decode.
func pooledSummary(s GateSide, phase, workload string) (result.Summary, bool) {
	acc := result.NewHistogram()
	for _, r := range s.Results {
		if r == nil {
			continue
		}
		w := r.PhaseNamed(phase).Workload(workload)
		if w == nil {
			continue
		}
		h, err := w.LatencyHistogram()
		if err != nil {
			return result.Summary{}, false
		}
		acc.Merge(h)
	}
	return result.Summarize(acc), true
}

// workloadNames lists a phase's workloads on either side, base's first.
func (g *GateReport) workloadNames(phase string) []string {
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

// topo summarizes a side's topology over its rounds: the value when every
// round agrees, else the distinct values joined.
func topo(s GateSide, f func(result.Topology) string) string {
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

func shortCommit(c string) string {
	if c == "" {
		return "unknown"
	}
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// sideCommit is the side's commit, from the side or its first result.
func sideCommit(s GateSide) string {
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

// pooledStack merges a side's stack services over its rounds: average CPU
// weighted by samples, peaks the maximum (as result.Merge does).
func pooledStack(s GateSide) []result.Service {
	var out []result.Service
	for _, r := range s.Results {
		if r == nil || r.Stack == nil {
			continue
		}
		for _, sv := range r.Stack.Services {
			i := slices.IndexFunc(out, func(x result.Service) bool { return x.Name == sv.Name })
			if i < 0 {
				out = append(out, sv)
				continue
			}
			o := &out[i]
			if n := o.Samples + sv.Samples; n > 0 {
				o.CPUAvgPct = (o.CPUAvgPct*float64(o.Samples) + sv.CPUAvgPct*float64(sv.Samples)) / float64(n)
			}
			o.Samples += sv.Samples
			o.CPUPeakPct = max(o.CPUPeakPct, sv.CPUPeakPct)
			o.MemPeakBytes = max(o.MemPeakBytes, sv.MemPeakBytes)
		}
	}
	return out
}

// warnings are the report's own notes: pinning that did not hold, sides on
// different cpusets, the caller's notes and the verdict's.
func (g *GateReport) warnings() []string {
	var ws []string
	add := func(s string) {
		if s != "" && !slices.Contains(ws, s) {
			ws = append(ws, s)
		}
	}
	for _, s := range g.sides() {
		for i, r := range s.Results {
			if r != nil && !r.Topology.Pinned {
				w := fmt.Sprintf("%s round %d was not pinned", s.Name, i+1)
				if r.Topology.PinnedReason != "" {
					w += " (" + r.Topology.PinnedReason + ")"
				}
				add(w + ": its numbers carry more of the machine's noise")
			}
		}
	}
	if a, b := topo(g.Base, stackCPUs), topo(g.Head, stackCPUs); a != b {
		add(fmt.Sprintf("the sides' stacks ran on different CPUs (base %s, head %s)", a, b))
	}
	for _, s := range g.Notes {
		add(s)
	}
	if g.Verdict.Value != verdict.Unusable {
		for _, s := range g.Verdict.Reasons {
			add(s)
		}
	}
	for _, wv := range g.Verdict.Workloads {
		for _, c := range wv.Comparisons {
			if c.Value == verdict.Inconclusive && c.Need != "" {
				add(fmt.Sprintf("%s/%s %s inconclusive: to decide, %s", c.Phase, c.Workload, c.Metric, c.Need))
			}
		}
	}
	return ws
}

// unusableGate returns why the gate is unusable, or nil.
func (g *GateReport) unusableGate() []string {
	if g.Verdict.Value != verdict.Unusable {
		return nil
	}
	if len(g.Verdict.Reasons) == 0 {
		return []string{"a side is unusable"}
	}
	return g.Verdict.Reasons
}

// comparisons of one phase, in verdict order.
func (g *GateReport) comparisons(phase string) []verdict.Comparison {
	var cs []verdict.Comparison
	for _, wv := range g.Verdict.Workloads {
		if wv.Phase == phase {
			cs = append(cs, wv.Comparisons...)
		}
	}
	return cs
}

// delta is the Δ column: the change, or "~" when not significant.
func delta(c verdict.Comparison) string {
	switch {
	case c.Interval == "":
		return dash
	case !c.Significant:
		return "~"
	case c.Metric == verdict.MetricErrorRate:
		return points(c.Diff) + " pts"
	}
	return signedRatio(c.Ratio)
}

// ciText is the interval column.
func ciText(c verdict.Comparison) string {
	if c.Interval == "" {
		return dash
	}
	if c.Metric == verdict.MetricErrorRate {
		return points(c.CILow) + " … " + points(c.CIHigh) + " pts"
	}
	return signedRatio(c.CILow) + " … " + signedRatio(c.CIHigh)
}

// signedRatio formats a ratio as a signed change: 1.312 → "+31.2%".
func signedRatio(r float64) string {
	d := (r - 1) * 100
	if math.Abs(d) < 0.05 {
		return "+0.0%"
	}
	return fmt.Sprintf("%+.1f%%", d)
}

// points formats a difference of fractions in signed percentage points.
func points(d float64) string {
	s := strconv.FormatFloat(d*100, 'f', 2, 64)
	if !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s
}

// sideValue formats a comparison's base or head number.
func sideValue(c verdict.Comparison, v float64, n int64) string {
	if n == 0 {
		return dash
	}
	if c.Metric == verdict.MetricErrorRate {
		return pct(v)
	}
	return ms(v)
}

func metricName(c verdict.Comparison) string {
	if c.Metric == verdict.MetricErrorRate {
		return "error rate"
	}
	return c.Metric + " ms"
}

// CompareMarkdown writes the gate report: what ran where (both sides,
// commits, cpusets, pinning, rounds and their order), per judged phase
// (then recover) a base → head table with Δ, its interval and the sample
// counts per side ("~" when not significant) and a latency-by-percentile
// chart (mermaid xychart-beta), the stack per service per side, notes, what
// is not measured and synthetic, and the verdict last.
func CompareMarkdown(w io.Writer, g GateReport) error {
	g.normalize()
	v := g.Verdict
	var b md
	if rs := g.unusableGate(); rs != nil {
		b.line("> **UNUSABLE GATE** — %s. Nothing is compared with half a result (exit 3).", strings.Join(rs, "; "))
		b.line("")
	}
	b.line("# loadgate gate: %s", g.Scenario.Name)
	b.line("")
	scen := fmt.Sprintf("- **scenario** %s `%s`", g.Scenario.Name, shortHash(g.Scenario.Hash))
	if g.Scenario.File != "" {
		scen += fmt.Sprintf(" (`%s`)", g.Scenario.File)
	}
	b.line("%s", scen)
	b.line("- **compared** %s `%s` → %s `%s`", g.Base.Name, shortCommit(sideCommit(g.Base)), g.Head.Name, shortCommit(sideCommit(g.Head)))
	b.line("- **rounds** %d paired, %s order (round: first→second): %s", g.Rounds, g.Order, g.roundOrder())
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
		b.row(s.Name, orUnknown(s.Ref), "`"+shortCommit(sideCommit(s))+"`", topo(s, stackCPUs), topo(s, loadCPUs),
			topo(s, pinnedText), topo(s, func(t result.Topology) string { return orUnknown(t.TargetPath) }),
			targets(s), strconv.Itoa(len(s.Results)))
	}
	b.line("")
	b.line("Each round ran both sides one after the other, alternating which went first (%s); the idle side's stack was paused.", g.Order)
	b.line("")

	for _, p := range g.judgedPhases() {
		mdComparePhase(&b, &g, p)
	}
	mdCompareStack(&b, &g)

	if ws := g.warnings(); len(ws) > 0 {
		b.line("## Notes")
		b.line("")
		for _, s := range ws {
			b.line("- %s", s)
		}
		b.line("")
	}
	mdCompareNotMeasured(&b, &g)

	mdVerdictSection(&b, v, "gate", "checks and comparisons", gateWhy, "Why:", g.unusableGate())
	_, err := io.WriteString(w, strings.TrimRight(b.String(), "\n")+"\n")
	return err
}

func methodText(v verdict.Verdict) string {
	if v.Rounds == 0 && v.Tolerance == 0 {
		return "no comparison"
	}
	perc := "each workload's threshold percentiles, else p95"
	if v.Percentile != "" {
		perc = v.Percentile
	}
	return fmt.Sprintf("head/base ratio of %s, %s CI from the paired rounds (t) floored by order statistics; tolerance ±%s; error rates: Newcombe score interval",
		perc, pct(v.Confidence), pct(v.Tolerance))
}

func targets(s GateSide) string {
	var vals []string
	for _, r := range s.Results {
		if r != nil && !slices.Contains(vals, orUnknown(r.Target)) {
			vals = append(vals, orUnknown(r.Target))
		}
	}
	if len(vals) == 0 {
		return "unknown"
	}
	return "`" + strings.Join(vals, "`, `") + "`"
}

// gateWhy renders a workload verdict's checks and comparisons.
func gateWhy(wv verdict.WorkloadVerdict, sep string) string {
	var parts []string
	if s := checksText(wv, sep); s != "" && !(len(wv.Checks) == 0 && wv.Why == "no thresholds") {
		parts = append(parts, s)
	}
	for _, c := range wv.Comparisons {
		s := c.Metric + " " + string(c.Value) + ": " + c.Why
		if c.Metric == verdict.MetricErrorRate && c.Value == verdict.Pass && c.ErrBase != nil && c.ErrBase.Failed == 0 && c.ErrHead.Failed == 0 {
			s = fmt.Sprintf("error_rate pass: no failure on either side (n=%s, %s)", count(c.BaseN), count(c.HeadN))
		} else {
			s += fmt.Sprintf(" (n=%s, %s)", count(c.BaseN), count(c.HeadN))
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, sep)
}

// chartPercentiles are the chart's x axis.
var chartPercentiles = []string{"p50", "p90", "p95", "p99", "p99.9"}

func summaryValues(s result.Summary) []float64 {
	return []float64{s.P50, s.P90, s.P95, s.P99, s.P999}
}

func mdComparePhase(b *md, g *GateReport, p result.Phase) {
	b.line("## %s", sectionTitle(p))
	b.line("")
	cs := g.comparisons(p.Name)
	if len(cs) == 0 && g.Verdict.Value == verdict.Unusable {
		b.line("No comparison: the gate is unusable.")
		b.line("")
	} else if len(cs) == 0 {
		b.line("No comparison in this phase.")
		b.line("")
	} else {
		conf := pct(g.Verdict.Confidence)
		b.line("Latency in ms from the due time, successes only, nearest-rank, pooled over %d round(s) per side. Δ is head/base, the geometric mean of the per-round ratios, with its %s CI (\"~\": not significant); the error rate's Δ is in percentage points. n is per side over all rounds.", g.Rounds, conf)
		b.line("")
		b.header("llrrrlrrll", "workload", "metric", g.Base.Name, g.Head.Name, "Δ", conf+" CI", "n "+g.Base.Name, "n "+g.Head.Name, "CI from", "verdict")
		for _, c := range cs {
			b.row(c.Workload, metricName(c), sideValue(c, c.Base, c.BaseN), sideValue(c, c.Head, c.HeadN), delta(c), ciText(c),
				count(c.BaseN), count(c.HeadN), orDash(c.Interval), "**"+string(c.Value)+"**")
		}
		b.line("")
		var per []string
		for _, c := range cs {
			if len(c.RoundRatios) > 1 {
				rs := make([]string, len(c.RoundRatios))
				for i, r := range c.RoundRatios {
					rs[i] = strconv.FormatFloat(r, 'f', 3, 64)
				}
				per = append(per, fmt.Sprintf("%s %s: %s", c.Workload, c.Metric, strings.Join(rs, " ")))
			}
		}
		if len(per) > 0 {
			b.line("Per-round ratios head/base: %s.", strings.Join(per, " · "))
			b.line("")
		}
	}
	if g.Verdict.Value == verdict.Unusable {
		return // no number of an unusable gate is drawn
	}
	for _, name := range g.workloadNames(p.Name) {
		sb, okb := pooledSummary(g.Base, p.Name, name)
		sh, okh := pooledSummary(g.Head, p.Name, name)
		if !okb || !okh || sb.Count == 0 || sh.Count == 0 {
			continue
		}
		hi := 0.0
		for _, x := range append(summaryValues(sb), summaryValues(sh)...) {
			hi = max(hi, x)
		}
		b.line("%s latency by percentile, ms (first line %s n=%s, second line %s n=%s):", name, g.Base.Name, count(sb.Count), g.Head.Name, count(sh.Count))
		b.line("")
		b.line("```mermaid")
		b.line("xychart-beta")
		b.line("    title \"%s · %s: latency by percentile (ms)\"", p.Name, name)
		b.line("    x-axis [%s]", strings.Join(chartPercentiles, ", "))
		b.line("    y-axis \"ms\" 0 --> %s", plain(niceCeil(hi)))
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

// niceCeil rounds v up to 1, 2 or 5 × a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func mdCompareStack(b *md, g *GateReport) {
	sb, sh := pooledStack(g.Base), pooledStack(g.Head)
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
		b.row(name,
			cell(okx, func() string { return cpuPct(x.CPUAvgPct) }), cell(oky, func() string { return cpuPct(y.CPUAvgPct) }),
			cell(okx, func() string { return cpuPct(x.CPUPeakPct) }), cell(oky, func() string { return cpuPct(y.CPUPeakPct) }),
			cell(okx, func() string { return mib(x.MemPeakBytes) }), cell(oky, func() string { return mib(y.MemPeakBytes) }),
			count(int64(x.Samples))+" / "+count(int64(y.Samples)))
	}
	b.line("")
}

// notMeasured and synthetic lists, over both sides.
func (g *GateReport) lists() (nm, syn []string) {
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

func mdCompareNotMeasured(b *md, g *GateReport) {
	nm, syn := g.lists()
	b.line("## Not measured")
	b.line("")
	if len(nm) == 0 {
		b.line("Nothing is listed as not measured.")
	}
	for _, s := range nm {
		b.line("- %s", s)
	}
	b.line("")
	b.line("## Synthetic")
	b.line("")
	b.line("- the load: requests generated by loadgate from the scenario %q on a fixed schedule, not production traffic", g.Scenario.Name)
	for _, s := range syn {
		b.line("- %s", s)
	}
	b.line("")
}

// CompareText writes a compact gate report for a terminal, in the same
// order as CompareMarkdown, the verdict last.
func CompareText(w io.Writer, g GateReport) error {
	g.normalize()
	v := g.Verdict
	var b txt
	if rs := g.unusableGate(); rs != nil {
		b.line("UNUSABLE GATE — %s (exit 3)", strings.Join(rs, "; "))
	}
	b.line("loadgate gate %s %s · %d rounds %s · %s %s → %s %s", g.Scenario.Name, shortHash(g.Scenario.Hash), g.Rounds, g.Order,
		g.Base.Name, shortCommit(sideCommit(g.Base)), g.Head.Name, shortCommit(sideCommit(g.Head)))
	b.line("method %s", methodText(v))
	rows := [][]string{{"side", "ref", "commit", "stack CPUs", "load CPUs", "pinned", "rounds"}}
	for _, s := range g.sides() {
		rows = append(rows, []string{s.Name, orUnknown(s.Ref), shortCommit(sideCommit(s)), topo(s, stackCPUs), topo(s, loadCPUs), topo(s, pinnedText), strconv.Itoa(len(s.Results))})
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
				delta(c), ciText(c), "n=" + count(c.BaseN), "n=" + count(c.HeadN), string(c.Value)})
		}
		b.table("  ", rows)
	}
	if sb, sh := pooledStack(g.Base), pooledStack(g.Head); len(sb)+len(sh) > 0 {
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
	b.line("")
	for _, s := range g.warnings() {
		b.line("note: %s", s)
	}
	nm, syn := g.lists()
	if len(nm) > 0 {
		b.line("not measured: %s", strings.Join(nm, "; "))
	}
	b.line("synthetic: %s", strings.Join(append([]string{"the load (generated by loadgate, not production traffic)"}, syn...), "; "))
	b.line("")
	b.line("verdict: %s (exit %d): %s", strings.ToUpper(string(v.Value)), v.ExitCode(), valueWhy(v.Value))
	var vrows [][]string
	for _, wv := range v.Workloads {
		vrows = append(vrows, []string{wv.Phase, wv.Workload, string(wv.Value), gateWhy(wv, "; ")})
	}
	b.table("  ", vrows)
	for _, s := range g.unusableGate() {
		b.line("  why: %s", s)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// gateFile is a gate's verdict.json (schema loadgate/verdict/v1, the same
// keys as a run's first, then the gate's).
type gateFile struct {
	Schema     string                    `json:"schema"`
	Value      verdict.Value             `json:"value"`
	ExitCode   int                       `json:"exit_code"`
	Workloads  []verdict.WorkloadVerdict `json:"workloads"`
	Reasons    []string                  `json:"reasons"`
	Scenario   gateScenario              `json:"scenario"`
	Rounds     int                       `json:"rounds"`
	Order      string                    `json:"order"`
	Tolerance  float64                   `json:"tolerance"`
	Confidence float64                   `json:"confidence"`
	Percentile string                    `json:"percentile"`
	Sides      []gateSideJSON            `json:"sides"`
	Notes      []string                  `json:"notes"`
}

type gateScenario struct {
	Name string `json:"name"`
	Hash string `json:"hash"`
}

type gateSideJSON struct {
	Name      string `json:"name"`
	Ref       string `json:"ref"`
	Commit    string `json:"commit"`
	Rounds    int    `json:"rounds"`
	StackCPUs string `json:"stack_cpus"`
	LoadCPUs  string `json:"load_cpus"`
	Pinned    bool   `json:"pinned"` // every round pinned
}

// CompareJSON writes a gate's verdict.json: the run verdict's keys (schema
// loadgate/verdict/v1, value, exit code, workloads with their checks and
// comparisons, reasons), then the scenario, rounds, order, tolerance,
// confidence, percentile option, both sides and the notes. Indented, keys in
// a stable order, no nulls.
func CompareJSON(w io.Writer, g GateReport) error {
	g.normalize()
	v := g.Verdict
	f := gateFile{
		Schema: VerdictSchema, Value: v.Value, ExitCode: v.ExitCode(),
		Workloads: make([]verdict.WorkloadVerdict, 0, len(v.Workloads)),
		Reasons:   append([]string{}, v.Reasons...),
		Scenario:  gateScenario{Name: g.Scenario.Name, Hash: g.Scenario.Hash},
		Rounds:    g.Rounds, Order: g.Order, Tolerance: v.Tolerance, Confidence: v.Confidence, Percentile: v.Percentile,
		Sides: []gateSideJSON{}, Notes: append([]string{}, g.warnings()...),
	}
	for _, wv := range v.Workloads {
		wv.Checks = append([]verdict.Check{}, wv.Checks...)
		f.Workloads = append(f.Workloads, wv)
	}
	for _, s := range g.sides() {
		pinned := len(s.Results) > 0
		for _, r := range s.Results {
			pinned = pinned && r != nil && r.Topology.Pinned
		}
		f.Sides = append(f.Sides, gateSideJSON{Name: s.Name, Ref: s.Ref, Commit: sideCommit(s), Rounds: len(s.Results),
			StackCPUs: topo(s, stackCPUs), LoadCPUs: topo(s, loadCPUs), Pinned: pinned})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(f)
}
