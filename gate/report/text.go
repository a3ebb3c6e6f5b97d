package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

// txt accumulates plain text; tables go through a tabwriter.
type txt struct{ strings.Builder }

func (b *txt) line(format string, a ...any) {
	fmt.Fprintf(&b.Builder, format, a...)
	b.WriteByte('\n')
}

func (b *txt) table(indent string, rows [][]string) {
	var sb strings.Builder
	tw := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s%s\n", indent, strings.Join(r, "\t"))
	}
	tw.Flush()
	for _, l := range strings.SplitAfter(sb.String(), "\n") {
		if l != "" {
			b.WriteString(strings.TrimRight(l, " \n") + "\n")
		}
	}
}

// Text writes a compact terminal report of r and v, the verdict last.
func Text(w io.Writer, r *result.Result, v verdict.Verdict) error {
	if r == nil {
		return errNilResult
	}
	var b txt
	textHeader(&b, r, v)
	rows := [][]string{{"phase", "pattern", "duration", "offered", "offered/s", "completed/s", ""}}
	for _, p := range r.Phases {
		t := phaseTotals(p)
		rows = append(rows, []string{p.Name, orUnknown(p.Pattern), seconds(p.DurationS), Count(t.offered), rate(t.offeredPS), rate(t.complPS), judgedMark(p)})
	}
	b.table("", rows)

	for _, p := range judgedPhases(r.Phases) {
		textPhase(&b, p)
	}
	textFaults(&b, r, v) // faults.go
	textOtherPhases(&b, r)
	textStack(&b, r)
	textCounting(&b, r)
	b.line("")
	if len(r.NotMeasured) == 0 {
		b.line("not measured: nothing listed; measured %s", measuredSentence(r))
	} else {
		b.line("not measured: %s", strings.Join(r.NotMeasured, "; "))
	}
	b.line("synthetic: %s", strings.Join(append([]string{syntheticLoad(r.Scenario.Name)}, r.Synthetic...), "; "))

	label := "note"
	if v.Value == verdict.Unusable {
		label = "why"
	}
	b.verdict(v, checksText, label, NoteTexts(v.Notes))
	_, err := io.WriteString(w, b.String())
	return err
}

func textHeader(b *txt, r *result.Result, v verdict.Verdict) {
	if rs := unusableReasons(r, v); rs != nil {
		b.line("UNUSABLE RUN — offered %s, recorded %s: %s (exit 3)", Count(r.Offered), Count(r.Recorded), strings.Join(rs, "; "))
	}
	if r.Interrupted {
		b.line("INTERRUPTED — the run stopped before its schedule ended; numbers describe only what ran")
	}
	if g := generatorBehind(r); g != "" {
		b.line("GENERATOR BEHIND SCHEDULE — %s: latency includes the generator's own delay (give it quiet cores with --load-cpus, or lower the rate%s)", g, stealAdvice(r.Steal))
	}
	head := fmt.Sprintf("loadgate %s %s · %s · target %s", r.Scenario.Name, scenarioHash(r.Scenario.Hash), date(r.StartedAt), orUnknown(r.Target))
	if r.Side != "" || r.Commit != "" {
		head += " · side " + strings.ReplaceAll(sideText(r), "`", "")
	}
	b.line("%s", head)
	b.line("machine %s", machineText(r.Machine))
	b.line("topology %s", topologyText(r.Topology, ""))
	if st := StealLine(r.Steal); st != "" {
		b.line("steal    %s", st)
	}
	prec := "precision " + orUnknown(r.Precision)
	if s := r.Scenario.Scale; s != 0 && s != 1 {
		prec += " · scale " + exact(s)
	}
	b.line("%s", prec)
	b.line("%s", warmupText(r))
	b.line("late %s · stalled %s · lateness %s", lateText(r), seconds(r.Stalled), latenessText(r))
	if r.WallBoundS > 0 {
		b.line("%s", wallBoundText(r))
	}
	b.line("")
}

func textOtherPhases(b *txt, r *result.Result) {
	var other [][]string
	for _, p := range r.Phases {
		if p.Judged || p.Recover {
			continue
		}
		for _, w := range p.Workloads {
			p50, p99 := dash, dash
			if w.LatencyMS.Count > 0 {
				p50, p99 = MS(w.LatencyMS.P50), MS(w.LatencyMS.P99)
			}
			other = append(other, []string{p.Name, w.Name, "p50 " + p50, "p99 " + p99 + " ms", "n=" + Count(w.LatencyMS.Count), "failed " + failed(w), "abandoned " + Count(w.Abandoned)})
		}
	}
	if len(other) > 0 {
		b.line("")
		b.line("other phases (not judged)")
		b.table("  ", other)
	}
}

func textStack(b *txt, r *result.Result) {
	if r.Stack == nil {
		return
	}
	b.line("")
	b.line("stack (CPU %% of one core, from CPU-time deltas)")
	rows := [][]string{{"service", "cpu avg %", "cpu peak %", "mem peak MiB", "samples"}}
	for _, s := range stackRows(r) {
		rows = append(rows, append([]string{s.Name}, stackCells(s)...))
	}
	b.table("  ", rows)
}

// verdict writes the verdict last: value, one row per workload, reasons.
func (b *txt) verdict(v verdict.Verdict, describe func(verdict.WorkloadVerdict, string) string, label string, reasons []string) {
	b.line("")
	b.line("verdict: %s (exit %d): %s", strings.ToUpper(string(v.Value)), v.ExitCode(), verdictWhy(v))
	var rows [][]string
	for _, wv := range v.Workloads {
		rows = append(rows, []string{wv.Phase, wv.Workload, string(wv.Value), describe(wv, "; ")})
	}
	b.table("  ", rows)
	for _, s := range reasons {
		b.line("  %s: %s", label, s)
	}
}

func textPhase(b *txt, p result.Phase) {
	t := phaseTotals(p)
	b.line("")
	b.line("%s: %s %s, offered %s (%s/s), completed %s/s", strings.ToLower(sectionTitle(p)[:1])+sectionTitle(p)[1:],
		seconds(p.DurationS), orUnknown(p.Pattern), Count(t.offered), rate(t.offeredPS), rate(t.complPS))
	if len(p.Workloads) == 0 {
		b.line("  no workload ran in this phase")
		return
	}
	rows := [][]string{{"workload", "ok", "failed", "abandoned", "p50", "p90", "p95", "p99", "p99.9", "max ms", "n", "service p99", "completed/s"}}
	for _, w := range p.Workloads {
		l := w.LatencyMS
		row := []string{w.Name, Count(w.Succeeded), failed(w), Count(w.Abandoned)}
		if l.Count == 0 {
			row = append(row, dash, dash, dash, dash, dash, dash, "n=0 (not measured)", dash)
		} else {
			row = append(row, MS(l.P50), MS(l.P90), MS(l.P95), MS(l.P99), MS(l.P999), MS(l.Max), "n="+Count(l.Count), serviceP99(w))
		}
		row = append(row, rate(w.Throughput.CompletedPerS))
		rows = append(rows, row)
	}
	b.table("  ", rows)
	textSessions(b, p) // session.go
}
