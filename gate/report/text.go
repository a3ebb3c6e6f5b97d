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

// table writes tab-separated rows aligned, each line indented by indent.
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

// Text writes a compact report of r and v for a terminal, in the same order
// as Markdown, the verdict last.
func Text(w io.Writer, r *result.Result, v verdict.Verdict) error {
	if r == nil {
		return errNilResult
	}
	var b txt
	if rs := unusableReasons(r, v); rs != nil {
		b.line("UNUSABLE RUN — offered %s, recorded %s: %s (exit 3)", count(r.Offered), count(r.Recorded), strings.Join(rs, "; "))
	}
	if r.Interrupted {
		b.line("INTERRUPTED — the run stopped before its schedule ended; numbers describe only what ran")
	}
	head := fmt.Sprintf("loadgate %s %s · %s · target %s", r.Scenario.Name, shortHash(r.Scenario.Hash), date(r.StartedAt), orUnknown(r.Target))
	if r.Side != "" || r.Commit != "" {
		head += " · side " + strings.ReplaceAll(sideText(r), "`", "")
	}
	b.line("%s", head)
	b.line("machine %s", machineText(r.Machine))
	b.line("topology %s", topologyText(r.Topology, ""))
	prec := "precision " + orUnknown(r.Precision)
	if s := r.Scenario.Scale; s != 0 && s != 1 {
		prec += " · scale " + exact(s)
	}
	b.line("%s", prec)
	b.line("%s", warmupText(r))
	b.line("late %s · stalled %s · lateness %s", lateText(r), seconds(r.Stalled), latenessText(r))
	b.line("")

	rows := [][]string{{"phase", "pattern", "duration", "offered", "offered/s", "completed/s", ""}}
	for _, p := range r.Phases {
		t := phaseTotals(p)
		rows = append(rows, []string{p.Name, orUnknown(p.Pattern), seconds(p.DurationS), count(t.offered), rate(t.offeredPS), rate(t.complPS), judgedMark(p)})
	}
	b.table("", rows)

	for _, p := range r.Phases {
		if p.Judged {
			textPhase(&b, p)
		}
	}
	for _, p := range r.Phases {
		if p.Recover && !p.Judged {
			textPhase(&b, p)
		}
	}

	var other [][]string
	for _, p := range r.Phases {
		if p.Judged || p.Recover {
			continue
		}
		for _, w := range p.Workloads {
			p50, p99 := dash, dash
			if w.LatencyMS.Count > 0 {
				p50, p99 = ms(w.LatencyMS.P50), ms(w.LatencyMS.P99)
			}
			other = append(other, []string{p.Name, w.Name, "p50 " + p50, "p99 " + p99 + " ms", "n=" + count(w.LatencyMS.Count), "failed " + failed(w), "abandoned " + count(w.Abandoned)})
		}
	}
	if len(other) > 0 {
		b.line("")
		b.line("other phases (not judged)")
		b.table("  ", other)
	}

	if r.Stack != nil {
		b.line("")
		b.line("stack (CPU %% of one core, from CPU-time deltas)")
		rows := [][]string{{"service", "cpu avg %", "cpu peak %", "mem peak MiB", "samples"}}
		for _, s := range stackRows(r.Stack) {
			rows = append(rows, []string{s.Name, cpuPct(s.CPUAvgPct), cpuPct(s.CPUPeakPct), mib(s.MemPeakBytes), count(int64(s.Samples))})
		}
		b.table("  ", rows)
	}

	b.line("")
	if len(r.NotMeasured) == 0 {
		b.line("not measured: nothing listed; measured %s", measuredSentence(r))
	} else {
		b.line("not measured: %s", strings.Join(r.NotMeasured, "; "))
	}
	b.line("synthetic: %s", strings.Join(append([]string{syntheticLoad(r)}, r.Synthetic...), "; "))

	b.line("")
	b.line("verdict: %s (exit %d): %s", strings.ToUpper(string(v.Value)), v.ExitCode(), valueWhy(v.Value))
	var vrows [][]string
	for _, wv := range v.Workloads {
		vrows = append(vrows, []string{wv.Phase, wv.Workload, string(wv.Value), checksText(wv, "; ")})
	}
	b.table("  ", vrows)
	label := "note"
	if v.Value == verdict.Unusable {
		label = "why"
	}
	for _, s := range v.Reasons {
		b.line("  %s: %s", label, s)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func textPhase(b *txt, p result.Phase) {
	t := phaseTotals(p)
	b.line("")
	b.line("%s: %s %s, offered %s (%s/s), completed %s/s", strings.ToLower(sectionTitle(p)[:1])+sectionTitle(p)[1:],
		seconds(p.DurationS), orUnknown(p.Pattern), count(t.offered), rate(t.offeredPS), rate(t.complPS))
	if len(p.Workloads) == 0 {
		b.line("  no workload ran in this phase")
		return
	}
	rows := [][]string{{"workload", "ok", "failed", "abandoned", "p50", "p90", "p95", "p99", "p99.9", "max ms", "n", "service p99", "completed/s"}}
	for _, w := range p.Workloads {
		l := w.LatencyMS
		row := []string{w.Name, count(w.Succeeded), failed(w), count(w.Abandoned)}
		if l.Count == 0 {
			row = append(row, dash, dash, dash, dash, dash, dash, "n=0 (not measured)", dash)
		} else {
			row = append(row, ms(l.P50), ms(l.P90), ms(l.P95), ms(l.P99), ms(l.P999), ms(l.Max), "n="+count(l.Count), serviceP99(w))
		}
		row = append(row, rate(w.Throughput.CompletedPerS))
		rows = append(rows, row)
	}
	b.table("  ", rows)
}
