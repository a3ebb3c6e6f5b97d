// Package report renders results and verdicts as Markdown, text, SVG and
// JSON. Every rendering is deterministic, states sample counts beside
// percentiles, says what is not measured or synthetic, and puts the verdict last.
package report

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/mdtext"
)

var errNilResult = errors.New("report: nil result")

type md struct{ strings.Builder }

func (b *md) line(format string, a ...any) {
	fmt.Fprintf(&b.Builder, format, a...)
	b.WriteByte('\n')
}

// cell makes text a table cell: newlines become spaces, '|' is escaped.
func cell(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if !strings.Contains(s, "|") {
		return s
	}
	var b strings.Builder
	backslashes := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '|' && backslashes%2 == 0 {
			b.WriteByte('\\')
		}
		if s[i] == '\\' {
			backslashes++
		} else {
			backslashes = 0
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mdEsc makes untrusted text plain, one-line Markdown (mdtext.Escape).
func mdEsc(s string) string { return mdtext.Escape(s) }

func mdEscAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = mdEsc(s)
	}
	return out
}

func mdSectionTitle(p result.Phase) string {
	p.Name = mdEsc(p.Name)
	return sectionTitle(p)
}

func sentence(s string) string {
	if strings.HasSuffix(s, ".") || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "!") {
		return s
	}
	return s + "."
}

// list writes each of ss, escaped, as a bullet.
func (b *md) list(ss []string) {
	for _, s := range ss {
		b.line("- %s", mdEsc(s))
	}
}

// flush writes b to w, ending in exactly one newline.
func (b *md) flush(w io.Writer) error {
	_, err := io.WriteString(w, strings.TrimRight(b.String(), "\n")+"\n")
	return err
}

func (b *md) row(cells ...string) {
	for i := range cells {
		cells[i] = cell(cells[i])
	}
	b.line("| %s |", strings.Join(cells, " | "))
}

// header writes a table header; align is one of "l" or "r" per column.
func (b *md) header(align string, cells ...string) {
	b.row(cells...)
	seps := make([]string, len(cells))
	for i := range seps {
		seps[i] = "---"
		if i < len(align) && align[i] == 'r' {
			seps[i] = "--:"
		}
	}
	b.line("| %s |", strings.Join(seps, " | "))
}

// Markdown writes the report of r and v, the verdict last.
func Markdown(w io.Writer, r *result.Result, v verdict.Verdict) error {
	if r == nil {
		return errNilResult
	}
	var b md
	mdBanners(&b, r, v)
	mdHeader(&b, r)
	mdWhatRan(&b, r)
	for _, p := range judgedPhases(r.Phases) {
		mdPhase(&b, p)
	}
	mdFaults(&b, r, v) // faults.go
	mdOtherPhases(&b, r)
	mdStack(&b, r)
	mdCounting(&b, r)
	mdNotMeasured(&b, r)
	mdVerdict(&b, v)
	return b.flush(w)
}

func mdBanners(b *md, r *result.Result, v verdict.Verdict) {
	if rs := unusableReasons(r, v); rs != nil {
		b.line("> **UNUSABLE RUN** — offered %s, recorded %s: %s No number below can be trusted for a verdict (exit 3).",
			Count(r.Offered), Count(r.Recorded), sentence(strings.Join(mdEscAll(rs), "; ")))
		b.line("")
	}
	if r.Interrupted {
		b.line("> **INTERRUPTED** — the run stopped before its schedule ended; later phases are short or missing, and every number describes only what ran.")
		b.line("")
	}
	if g := generatorBehind(r); g != "" {
		b.line("> **GENERATOR BEHIND SCHEDULE** — %s. Latency includes the generator's delay, so a gate calls no regression on it: give it its own cores (`--load-cpus`) or lower the rate%s.", g, stealAdvice(r.Steal))
		b.line("")
	}
}

func mdHeader(b *md, r *result.Result) {
	b.line("# loadgate: %s", mdEsc(r.Scenario.Name))
	b.line("")
	b.line("%s", scenarioLine(r.Scenario))
	when := "- **date** " + date(r.StartedAt)
	if d := r.FinishedAt.Sub(r.StartedAt); !r.StartedAt.IsZero() && d > 0 {
		when += ", ran " + seconds(d.Seconds())
	}
	b.line("%s", when)
	if r.Side != "" || r.Commit != "" {
		b.line("- **side** %s", sideText(r))
	}
	b.line("- **target** %s", mdtext.Code(orUnknown(r.Target)))
	b.line("- **machine** %s", machineText(r.Machine))
	b.line("- **topology** %s", topologyText(r.Topology, "**"))
	if st := StealLine(r.Steal); st != "" {
		b.line("- **steal** %s", st)
	}
	b.line("- **load** max_in_flight %s · timeout %s ms", Count(int64(r.Scenario.MaxInFlight)), exact(r.Scenario.TimeoutMS))
	b.line("- **precision** %s", orUnknown(r.Precision))
	if s := r.Scenario.Scale; s != 0 && s != 1 {
		b.line("- **scale** %s: rates and durations scaled; compare only with runs at the same scale", exact(s))
	}
	b.line("")
}

// judgedPhases are the judged phases, then the recover phase.
func judgedPhases(phases []result.Phase) []result.Phase {
	var ps []result.Phase
	for _, p := range phases {
		if p.Judged {
			ps = append(ps, p)
		}
	}
	for _, p := range phases {
		if p.Recover && !p.Judged {
			ps = append(ps, p)
		}
	}
	return ps
}

func scenarioLine(sc result.Scenario) string {
	s := fmt.Sprintf("- **scenario** %s `%s`", mdEsc(sc.Name), scenarioHash(sc.Hash))
	if sc.File != "" {
		s += fmt.Sprintf(" (%s)", mdtext.Code(sc.File))
	}
	return s
}

func sideText(r *result.Result) string {
	s := orUnknown(r.Side)
	if r.Commit != "" {
		s += " at `" + result.ShortHash(r.Commit) + "`"
	}
	return s
}

func modelPrefix(model string) string {
	if model == "" {
		return ""
	}
	return model + " · "
}

func modelText(model string) string {
	if model == "" {
		return ""
	}
	return ", " + model
}

func machineText(m result.Machine) string {
	s := fmt.Sprintf("%s · %s%d CPUs · kernel %s · %s", orUnknown(m.Host), modelPrefix(m.CPUModel), m.CPUs, orUnknown(m.Kernel), orUnknown(m.Go))
	if m.OS != "" || m.Arch != "" {
		s += " · " + m.OS + "/" + m.Arch
	}
	return s
}

// topologyText renders the topology; em wraps an unpinned "no".
func topologyText(t result.Topology, em string) string {
	stack := t.StackCPUs
	if stack == "" {
		stack = "none (no stack)"
	}
	pinned := "yes"
	if !t.Pinned {
		pinned = em + "no" + em
	}
	if why := pinnedWhy(t); why != "" {
		pinned += " (" + why + ")"
	}
	if t.CPUsetOverridden {
		pinned += ", cpuset overridden"
	}
	return fmt.Sprintf("stack CPUs %s · load CPUs %s · GOMAXPROCS %d · pinned %s%s · target path %s",
		stack, orUnknown(t.LoadCPUs), t.GOMAXPROCS, pinned, schedulingText(t), orUnknown(t.TargetPath))
}

func schedulingText(t result.Topology) string {
	if t.LoadScheduling == "" && t.LoadSchedulingWhy == "" {
		return ""
	}
	s := " · generator " + orUnknown(t.LoadScheduling)
	if t.LoadSchedulingWhy != "" {
		s += " (" + t.LoadSchedulingWhy + ")"
	}
	return s
}

// pinnedWhy is why a run was not pinned and what was overridden, or "".
func pinnedWhy(t result.Topology) string {
	var parts []string
	if len(t.Overrides) > 0 {
		changes := make([]string, len(t.Overrides))
		for i, o := range t.Overrides {
			changes[i] = o.String()
		}
		parts = append(parts, "stack: overrode: "+strings.Join(changes, "; "))
	}
	if t.PinnedReason != "" {
		parts = append(parts, t.PinnedReason)
	}
	return strings.Join(parts, "; ")
}

func warmupText(r *result.Result) string {
	wu := r.Warmup
	if wu.DurationS == 0 && wu.Offered == 0 {
		return "no warm-up"
	}
	s := fmt.Sprintf("warm-up %s: %s requests, excluded from every number", seconds(wu.DurationS), Count(wu.Offered))
	if wu.Recorded != wu.Offered {
		s += fmt.Sprintf(" (%s recorded)", Count(wu.Recorded))
	}
	if wu.Failed > 0 {
		s += "; " + warmupFailed(wu.Failed, wu.Recorded, wu.Failures)
	}
	return s
}

func warmupFailed(failed, of int64, by map[string]int64) string {
	s := fmt.Sprintf("%s of %s failed", Count(failed), Count(of))
	if c := classes(by); c != "" {
		s += " (" + c + ")"
	}
	return s
}

func lateText(r *result.Result) string {
	s := fmt.Sprintf("%s of %s offered", Count(r.Late), Count(r.Offered))
	if r.LateAfterMS > 0 {
		s += fmt.Sprintf(" (the generator sent them more than %s ms late; a wait for a free worker at max_in_flight is the target's)", exact(r.LateAfterMS))
	}
	return s
}

func latenessText(r *result.Result) string {
	l := r.LatenessMS
	if l.Count == 0 {
		return "no request sent (n=0)"
	}
	return fmt.Sprintf("p50 %s ms, p99 %s ms, max %s ms (n=%s)", MS(l.P50), MS(l.P99), MS(l.Max), Count(l.Count))
}

func mdWhatRan(b *md, r *result.Result) {
	b.line("## What ran")
	b.line("")
	b.header("llrrrrl", "phase", "pattern", "duration", "offered", "offered/s", "completed/s", "judged")
	for _, p := range r.Phases {
		t := phaseTotals(p)
		mark := judgedMark(p)
		if mark != "" {
			mark = "**" + mark + "**"
		}
		b.row(mdEsc(p.Name), mdEsc(orUnknown(p.Pattern)), seconds(p.DurationS), Count(t.offered), rate(t.offeredPS), rate(t.complPS), mark)
	}
	b.line("")
	b.line("%s.", title(warmupText(r)))
	b.line("")
	b.line("Schedule health:")
	b.line("")
	b.line("- late: %s", lateText(r))
	b.line("- stalled: %s waiting for an in-flight permit (max_in_flight %s)", seconds(r.Stalled), Count(int64(r.Scenario.MaxInFlight)))
	b.line("- lateness (send time − due time): %s", latenessText(r))
	if r.WallBoundS > 0 {
		b.line("- %s", wallBoundText(r))
	}
	b.line("")
}

func mdPhase(b *md, p result.Phase) {
	t := phaseTotals(p)
	b.line("## %s", mdSectionTitle(p))
	b.line("")
	b.line("%s %s · offered %s (%s/s) · completed %s/s · %s ok, %s failed, %s abandoned",
		seconds(p.DurationS), orUnknown(p.Pattern), Count(t.offered), rate(t.offeredPS), rate(t.complPS),
		Count(t.succeeded), Count(t.failedN), Count(t.abandoned))
	b.line("")
	if len(p.Workloads) == 0 {
		b.line("No workload ran in this phase.")
		b.line("")
		return
	}
	b.header("lrrlrrrr", "workload", "offered", "ok", "failed", "abandoned", "late", "completed/s", "offered/s")
	for _, w := range p.Workloads {
		b.row(mdEsc(w.Name), Count(w.Offered), Count(w.Succeeded), mdEsc(failed(w)), Count(w.Abandoned), Count(w.Late),
			rate(w.Throughput.CompletedPerS), rate(w.Throughput.OfferedPerS))
	}
	b.line("")
	b.line("Latency in ms from the due time, successes only, nearest-rank; service time from the send time.")
	b.line("")
	b.header("lrrrrrrrr", "workload", "n", "p50", "p90", "p95", "p99", "p99.9", "max", "service p99")
	for _, w := range p.Workloads {
		l := w.LatencyMS
		name := mdEsc(w.Name)
		if l.Count == 0 {
			name += " (not measured)"
			b.row(name, "0", dash, dash, dash, dash, dash, dash, dash)
			continue
		}
		b.row(name, Count(l.Count), MS(l.P50), MS(l.P90), MS(l.P95), MS(l.P99), MS(l.P999), MS(l.Max), serviceP99(w))
	}
	b.line("")
	mdSessions(b, p) // session.go
}

// serviceP99 is the service-time p99, with its own count when it differs.
func serviceP99(w result.Workload) string {
	s := w.ServiceMS
	if s.Count == 0 {
		return dash + " (n=0)"
	}
	out := MS(s.P99)
	if s.Count != w.LatencyMS.Count {
		out += " (n=" + Count(s.Count) + ")"
	}
	return out
}

func mdOtherPhases(b *md, r *result.Result) {
	var others []result.Phase
	for _, p := range r.Phases {
		if !p.Judged && !p.Recover {
			others = append(others, p)
		}
	}
	if len(others) == 0 {
		return
	}
	b.line("## Other phases")
	b.line("")
	b.line("Not judged. Latency in ms from the due time, successes only.")
	b.line("")
	b.header("llrrrrlr", "phase", "workload", "offered", "n", "p50", "p99", "failed", "abandoned")
	for _, p := range others {
		if len(p.Workloads) == 0 {
			b.row(mdEsc(p.Name), "(none)", "0", "0", dash, dash, "0", "0")
		}
		for _, w := range p.Workloads {
			p50, p99 := dash, dash
			if w.LatencyMS.Count > 0 {
				p50, p99 = MS(w.LatencyMS.P50), MS(w.LatencyMS.P99)
			}
			b.row(mdEsc(p.Name), mdEsc(w.Name), Count(w.Offered), Count(w.LatencyMS.Count), p50, p99, mdEsc(failed(w)), Count(w.Abandoned))
		}
	}
	b.line("")
}

func mib(bytes int64) string { return fixed1(float64(bytes) / (1 << 20)) }

func cpuPct(v float64) string { return fixed1(v) }

func mdStack(b *md, r *result.Result) {
	if r.Stack == nil {
		return
	}
	b.line("## Stack")
	b.line("")
	if len(r.Stack.Services) == 0 {
		b.line("No service was sampled.")
		b.line("")
		return
	}
	b.line("CPU in percent of one core, from cumulative CPU-time deltas per sampling interval, over the measured phases (sampling starts when the warm-up ends).")
	b.line("")
	b.header("lrrrr", "service", "CPU avg %", "CPU peak %", "mem peak MiB", "samples")
	for _, s := range stackRows(r) {
		b.row(append([]string{mdEsc(s.Name)}, stackCells(s)...)...)
	}
	b.line("")
}

func mdNotMeasured(b *md, r *result.Result) {
	mdUnmeasured(b, "Nothing is listed as not measured. This run measured "+measuredSentence(r)+".", r.NotMeasured, r.Scenario.Name, r.Synthetic)
}

// mdUnmeasured writes "Not measured" (none when nm is empty) and "Synthetic".
func mdUnmeasured(b *md, none string, nm []string, scenario string, syn []string) {
	b.line("## Not measured")
	b.line("")
	if len(nm) == 0 {
		b.line("%s", none)
	}
	b.list(nm)
	b.line("")
	b.line("## Synthetic")
	b.line("")
	b.list(append([]string{syntheticLoad(scenario)}, syn...))
	b.line("")
}

func mdVerdict(b *md, v verdict.Verdict) {
	why, label := NoteTexts(v.Notes), "Notes:"
	if v.Value == verdict.Unusable {
		label = "Why:"
	}
	mdVerdictSection(b, v, "run", "checks", checksText, label, why)
}

func mdVerdictSection(b *md, v verdict.Verdict, what, column string, describe func(verdict.WorkloadVerdict, string) string, label string, reasons []string) {
	b.line("## Verdict")
	b.line("")
	b.line("**%s** (exit %d): %s.", strings.ToUpper(string(v.Value)), v.ExitCode(), verdictWhy(v))
	b.line("")
	if len(v.Workloads) > 0 {
		b.header("llll", "phase", "workload", "verdict", column)
		for _, wv := range v.Workloads {
			b.row(mdEsc(wv.Phase), mdEsc(wv.Workload), "**"+string(wv.Value)+"**", describe(wv, "; "))
		}
		b.line("")
	} else if v.Value == verdict.Unusable {
		b.line("No workload is judged: the %s is unusable.", what)
		b.line("")
	}
	if len(reasons) > 0 {
		b.line("%s", label)
		b.line("")
		b.list(reasons)
		b.line("")
	}
}

// A duet round's generator figures cover both sides' loads.
const (
	DuetGeneratorRow = "loadgate (generator, both sides of the duet)"
)

func stackCells(s result.Service) []string {
	return []string{cpuPct(s.CPUAvgPct), cpuPct(s.CPUPeakPct), mib(s.MemPeakBytes), Count(int64(s.Samples))}
}

func stackRows(r *result.Result) []result.Service {
	st := r.Stack
	rows := append([]result.Service(nil), st.Services...)
	if st.Generator != nil {
		gen := *st.Generator
		if r.Round != nil && r.Round.Mode == result.RoundDuet {
			gen.Name = DuetGeneratorRow
		}
		rows = append(rows, gen)
	}
	return rows
}
