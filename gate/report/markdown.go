// Package report renders a Result and its Verdict: Markdown (job summary,
// pull request comment), compact Text (a terminal after a run) and JSON
// (verdict.json).
//
// Every rendering is deterministic (no map order leaks), states its sample
// counts beside every percentile, says what is not measured and what is
// synthetic, and puts the verdict last.
package report

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

var errNilResult = errors.New("report: nil result")

// md accumulates Markdown.
type md struct{ strings.Builder }

func (b *md) line(format string, a ...any) {
	fmt.Fprintf(&b.Builder, format, a...)
	b.WriteByte('\n')
}

// cell escapes text for a table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
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

// Markdown writes the report of r and v: banners, header, what ran, the
// judged and recover phases, other phases, the stack, what is not measured
// and what is synthetic, and the verdict last.
func Markdown(w io.Writer, r *result.Result, v verdict.Verdict) error {
	if r == nil {
		return errNilResult
	}
	var b md
	mdBanners(&b, r, v)
	mdHeader(&b, r)
	mdWhatRan(&b, r)
	for _, p := range r.Phases {
		if p.Judged {
			mdPhase(&b, p)
		}
	}
	for _, p := range r.Phases {
		if p.Recover && !p.Judged {
			mdPhase(&b, p)
		}
	}
	mdOtherPhases(&b, r)
	mdStack(&b, r)
	mdNotMeasured(&b, r)
	mdVerdict(&b, v)
	_, err := io.WriteString(w, strings.TrimRight(b.String(), "\n")+"\n")
	return err
}

func mdBanners(b *md, r *result.Result, v verdict.Verdict) {
	if rs := unusableReasons(r, v); rs != nil {
		b.line("> **UNUSABLE RUN** — offered %s, recorded %s: %s. No number below can be trusted for a verdict (exit 3).",
			count(r.Offered), count(r.Recorded), strings.Join(rs, "; "))
		b.line("")
	}
	if r.Interrupted {
		b.line("> **INTERRUPTED** — the run stopped before its schedule ended; later phases are short or missing, and every number describes only what ran.")
		b.line("")
	}
}

func mdHeader(b *md, r *result.Result) {
	b.line("# loadgate: %s", r.Scenario.Name)
	b.line("")
	scen := fmt.Sprintf("- **scenario** %s `%s`", r.Scenario.Name, shortHash(r.Scenario.Hash))
	if r.Scenario.File != "" {
		scen += fmt.Sprintf(" (`%s`)", r.Scenario.File)
	}
	b.line("%s", scen)
	when := "- **date** " + date(r.StartedAt)
	if d := r.FinishedAt.Sub(r.StartedAt); !r.StartedAt.IsZero() && d > 0 {
		when += ", ran " + seconds(d.Seconds())
	}
	b.line("%s", when)
	if r.Side != "" || r.Commit != "" {
		b.line("- **side** %s", sideText(r))
	}
	b.line("- **target** `%s`", orUnknown(r.Target))
	b.line("- **machine** %s", machineText(r.Machine))
	b.line("- **topology** %s", topologyText(r.Topology, "**"))
	b.line("- **load** max_in_flight %s · timeout %s ms", count(int64(r.Scenario.MaxInFlight)), exact(r.Scenario.TimeoutMS))
	b.line("- **precision** %s", orUnknown(r.Precision))
	if s := r.Scenario.Scale; s != 0 && s != 1 {
		b.line("- **scale** %s: rates and durations scaled; compare only with runs at the same scale", exact(s))
	}
	b.line("")
}

func sideText(r *result.Result) string {
	s := orUnknown(r.Side)
	if r.Commit != "" {
		c := r.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		s += " at `" + c + "`"
	}
	return s
}

func machineText(m result.Machine) string {
	s := fmt.Sprintf("%s · %d CPUs · kernel %s · %s", orUnknown(m.Host), m.CPUs, orUnknown(m.Kernel), orUnknown(m.Go))
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
	if t.PinnedReason != "" {
		pinned += " (" + t.PinnedReason + ")"
	}
	if t.CPUsetOverridden {
		pinned += ", cpuset overridden"
	}
	return fmt.Sprintf("stack CPUs %s · load CPUs %s · GOMAXPROCS %d · pinned %s · target path %s",
		stack, orUnknown(t.LoadCPUs), t.GOMAXPROCS, pinned, orUnknown(t.TargetPath))
}

func warmupText(r *result.Result) string {
	wu := r.Warmup
	if wu.DurationS == 0 && wu.Offered == 0 {
		return "no warm-up"
	}
	s := fmt.Sprintf("warm-up %s: %s requests, excluded from every number", seconds(wu.DurationS), count(wu.Offered))
	if wu.Recorded != wu.Offered {
		s += fmt.Sprintf(" (%s recorded)", count(wu.Recorded))
	}
	return s
}

func lateText(r *result.Result) string {
	s := fmt.Sprintf("%s of %s offered", count(r.Late), count(r.Offered))
	if r.LateAfterMS > 0 {
		s += fmt.Sprintf(" (sent more than %s ms after their due time)", exact(r.LateAfterMS))
	}
	return s
}

func latenessText(r *result.Result) string {
	l := r.LatenessMS
	if l.Count == 0 {
		return "no request sent (n=0)"
	}
	return fmt.Sprintf("p50 %s ms, p99 %s ms, max %s ms (n=%s)", ms(l.P50), ms(l.P99), ms(l.Max), count(l.Count))
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
		b.row(p.Name, orUnknown(p.Pattern), seconds(p.DurationS), count(t.offered), rate(t.offeredPS), rate(t.complPS), mark)
	}
	b.line("")
	b.line("%s.", title(warmupText(r)))
	b.line("")
	b.line("Schedule health:")
	b.line("")
	b.line("- late: %s", lateText(r))
	b.line("- stalled: %s waiting for an in-flight permit (max_in_flight %s)", seconds(r.Stalled), count(int64(r.Scenario.MaxInFlight)))
	b.line("- lateness (send time − due time): %s", latenessText(r))
	b.line("")
}

func mdPhase(b *md, p result.Phase) {
	t := phaseTotals(p)
	b.line("## %s", sectionTitle(p))
	b.line("")
	b.line("%s %s · offered %s (%s/s) · completed %s/s · %s ok, %s failed, %s abandoned",
		seconds(p.DurationS), orUnknown(p.Pattern), count(t.offered), rate(t.offeredPS), rate(t.complPS),
		count(t.succeeded), count(t.failedN), count(t.abandoned))
	b.line("")
	if len(p.Workloads) == 0 {
		b.line("No workload ran in this phase.")
		b.line("")
		return
	}
	b.header("lrrlrrrr", "workload", "offered", "ok", "failed", "abandoned", "late", "completed/s", "offered/s")
	for _, w := range p.Workloads {
		b.row(w.Name, count(w.Offered), count(w.Succeeded), failed(w), count(w.Abandoned), count(w.Late),
			rate(w.Throughput.CompletedPerS), rate(w.Throughput.OfferedPerS))
	}
	b.line("")
	b.line("Latency in ms from the due time, successes only, nearest-rank; service time from the send time.")
	b.line("")
	b.header("lrrrrrrrr", "workload", "n", "p50", "p90", "p95", "p99", "p99.9", "max", "service p99")
	for _, w := range p.Workloads {
		l := w.LatencyMS
		name := w.Name
		if l.Count == 0 {
			name += " (not measured)"
			b.row(name, "0", dash, dash, dash, dash, dash, dash, dash)
			continue
		}
		b.row(name, count(l.Count), ms(l.P50), ms(l.P90), ms(l.P95), ms(l.P99), ms(l.P999), ms(l.Max), serviceP99(w))
	}
	b.line("")
}

// serviceP99 is the service-time p99, with its own count when it differs
// from the due-time count beside it.
func serviceP99(w result.Workload) string {
	s := w.ServiceMS
	if s.Count == 0 {
		return dash + " (n=0)"
	}
	out := ms(s.P99)
	if s.Count != w.LatencyMS.Count {
		out += " (n=" + count(s.Count) + ")"
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
			b.row(p.Name, "(none)", "0", "0", dash, dash, "0", "0")
		}
		for _, w := range p.Workloads {
			p50, p99 := dash, dash
			if w.LatencyMS.Count > 0 {
				p50, p99 = ms(w.LatencyMS.P50), ms(w.LatencyMS.P99)
			}
			b.row(p.Name, w.Name, count(w.Offered), count(w.LatencyMS.Count), p50, p99, failed(w), count(w.Abandoned))
		}
	}
	b.line("")
}

func mib(bytes int64) string {
	return group(fmt.Sprintf("%.1f", float64(bytes)/(1<<20)))
}

func cpuPct(v float64) string { return group(fmt.Sprintf("%.1f", v)) }

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
	for _, s := range stackRows(r.Stack) {
		b.row(s.Name, cpuPct(s.CPUAvgPct), cpuPct(s.CPUPeakPct), mib(s.MemPeakBytes), count(int64(s.Samples)))
	}
	b.line("")
}

func mdNotMeasured(b *md, r *result.Result) {
	b.line("## Not measured")
	b.line("")
	if len(r.NotMeasured) == 0 {
		b.line("Nothing is listed as not measured. This run measured %s.", measuredSentence(r))
	}
	for _, s := range r.NotMeasured {
		b.line("- %s", s)
	}
	b.line("")
	b.line("## Synthetic")
	b.line("")
	b.line("- %s", syntheticLoad(r))
	for _, s := range r.Synthetic {
		b.line("- %s", s)
	}
	b.line("")
}

func mdVerdict(b *md, v verdict.Verdict) {
	why, label := v.Reasons, "Notes:"
	if v.Value == verdict.Unusable {
		label = "Why:"
	}
	mdVerdictSection(b, v, "run", "checks", checksText, label, why)
}

// mdVerdictSection is the last section of a run's or a gate's report: the
// value, the per-workload table (describe renders a workload's checks), and
// the reasons under label.
func mdVerdictSection(b *md, v verdict.Verdict, what, column string, describe func(verdict.WorkloadVerdict, string) string, label string, reasons []string) {
	b.line("## Verdict")
	b.line("")
	b.line("**%s** (exit %d): %s.", strings.ToUpper(string(v.Value)), v.ExitCode(), valueWhy(v.Value))
	b.line("")
	if len(v.Workloads) > 0 {
		b.header("llll", "phase", "workload", "verdict", column)
		for _, wv := range v.Workloads {
			b.row(wv.Phase, wv.Workload, "**"+string(wv.Value)+"**", describe(wv, "; "))
		}
		b.line("")
	} else if v.Value == verdict.Unusable {
		b.line("No workload is judged: the %s is unusable.", what)
		b.line("")
	}
	if len(reasons) > 0 {
		b.line("%s", label)
		b.line("")
		for _, s := range reasons {
			b.line("- %s", s)
		}
		b.line("")
	}
}

// stackRows are the stack's services, then the generator's own row.
func stackRows(st *result.Stack) []result.Service {
	rows := append([]result.Service(nil), st.Services...)
	if st.Generator != nil {
		rows = append(rows, *st.Generator)
	}
	return rows
}
