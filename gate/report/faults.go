package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

func faultRow(f result.Fault) []string {
	planned := fmt.Sprintf("%s (%s + %s, for %s)", runClock(f.PlannedS), f.Phase, seconds(f.PlannedAtS), seconds(f.PlannedForS))
	if f.StartedS <= 0 { // never issued
		return []string{f.Action, f.Service, planned, dash, dash, dash, dash, "not injected"}
	}
	issued := runClock(f.StartedS) + " (" + signedMS(f.StartedS-f.PlannedS) + ")"
	if f.AppliedS <= 0 { // issued, refused or failed: nothing was in effect, nothing to undo
		failed := dash
		if f.EndedS >= f.StartedS {
			failed = "failed after " + MS((f.EndedS-f.StartedS)*1000) + " ms"
		}
		return []string{f.Action, f.Service, planned, issued, failed, dash, dash, "not injected"}
	}
	undo, back := dash, dash
	if f.UndoStartedS > 0 {
		undo = runClock(f.UndoStartedS)
		if f.EndedS >= f.UndoStartedS {
			back = "after " + MS((f.EndedS-f.UndoStartedS)*1000) + " ms"
		}
	}
	return []string{f.Action, f.Service, planned, issued,
		"after " + MS((f.AppliedS-f.StartedS)*1000) + " ms", undo, back, orUnknown(f.Undo)}
}

func faultHeader() []string {
	return []string{"action", "service", "planned", "issued", "in effect", "undo issued", "back", "undone by"}
}

// runClock is an instant on the run's clock, to the millisecond: "163.652 s".
func runClock(s float64) string { return group(strconv.FormatFloat(s, 'f', 3, 64)) + " s" }

func signedMS(s float64) string {
	v := s * 1000
	if v < 0 {
		return minus + MS(-v) + " ms"
	}
	return "+" + MS(v) + " ms"
}

// targetsText words a recovery declaration: "within 15 s: error_rate 0%, p95 300 ms".
func targetsText(t result.RecoveryTargets) string {
	var parts []string
	if t.ErrorRate != nil {
		parts = append(parts, "error_rate "+Percent(*t.ErrorRate))
	}
	for _, p := range []struct {
		name string
		ms   float64
	}{{"p50", t.P50MS}, {"p90", t.P90MS}, {"p95", t.P95MS}, {"p99", t.P99MS}, {"p99.9", t.P999MS}} {
		if p.ms > 0 {
			parts = append(parts, p.name+" "+MS(p.ms)+" ms")
		}
	}
	return "within " + seconds(t.WithinS) + ": " + strings.Join(parts, ", ")
}

func recoveryText(rv verdict.RecoveryVerdict) string {
	switch rv.Value {
	case verdict.Pass:
		return "recovered after " + seconds(float64(rv.AfterS))
	case verdict.Fail:
		return "**did not recover unattended within " + seconds(rv.WithinS) + "**"
	}
	if rv.NotObserved > 0 {
		return "not measured (" + seconds(float64(rv.NotObserved)) + " of the window past the run's end)"
	}
	return "not measured (no request in the window)"
}

// recoveryWhy explains a failing verdict's failed recovery ("" when none).
func recoveryWhy(v verdict.Verdict) string {
	if v.Value != verdict.Fail || !slices.ContainsFunc(v.Recovery, func(rv verdict.RecoveryVerdict) bool { return rv.Value == verdict.Fail }) {
		return ""
	}
	if slices.ContainsFunc(v.Workloads, func(w verdict.WorkloadVerdict) bool { return w.Value == verdict.Fail }) {
		return "an absolute threshold is broken, and a workload did not recover unattended within its declared recovery"
	}
	return "a workload did not recover unattended within its declared recovery (every threshold holds)"
}

// marksLegend explains timeline's marks.
const marksLegend = "✓ met, ✗ broke a target, · no request due, ○ not observed: past the run's end"

func timeline(secs []verdict.SecondVerdict) string {
	var b strings.Builder
	for _, s := range secs {
		switch {
		case !s.Observed:
			b.WriteString("○")
		case !s.Measured:
			b.WriteString("·")
		case s.Met:
			b.WriteString("✓")
		default:
			b.WriteString("✗")
		}
	}
	return b.String()
}

// brokenText details the last few seconds that broke a target.
func brokenText(rv verdict.RecoveryVerdict, w result.FaultWorkload, t result.RecoveryTargets) string {
	const most = 3
	var parts []string
	for i := len(rv.Seconds) - 1; i >= 0 && len(parts) < most; i-- {
		s := rv.Seconds[i]
		if !s.Measured || s.Met || i >= len(w.Seconds) {
			continue
		}
		sec := w.Seconds[i]
		var why []string
		for _, m := range s.Broken {
			if m == verdict.MetricErrorRate {
				why = append(why, "error rate "+Percent(s.ErrorRate)+" of "+Count(s.Count))
				continue
			}
			if sec.Succeeded == 0 {
				why = append(why, m+": no success")
				continue
			}
			why = append(why, fmt.Sprintf("%s: %s of %s over %s ms", m, Count(sec.Over[m]), Count(sec.Succeeded), MS(limitOf(t, m))))
		}
		parts = append([]string{"s" + strconv.Itoa(i) + ": " + strings.Join(why, ", ")}, parts...)
	}
	return strings.Join(parts, "; ")
}

func limitOf(t result.RecoveryTargets, metric string) float64 {
	switch metric {
	case "p50":
		return t.P50MS
	case "p90":
		return t.P90MS
	case "p95":
		return t.P95MS
	case "p99":
		return t.P99MS
	case "p999":
		return t.P999MS
	}
	return 0
}

// recoveryOf finds w's verdict after f; the verdict skips faults not injected.
func recoveryOf(v verdict.Verdict, f result.Fault, w string) (verdict.RecoveryVerdict, bool) {
	for _, rv := range v.Recovery {
		if rv.Phase == f.Phase && rv.Action == f.Action && rv.Service == f.Service && rv.Workload == w {
			return rv, true
		}
	}
	return verdict.RecoveryVerdict{}, false
}

func mdFaults(b *md, r *result.Result, v verdict.Verdict) {
	if len(r.Faults) == 0 {
		return
	}
	b.line("## Faults")
	b.line("")
	b.line("Injected through the Docker engine; times in s from the schedule's start, warm-up included. \"In effect\" and \"back\": when the engine reported the action and its undoing done.")
	b.line("")
	if generatorBehind(r) != "" {
		b.line("**The generator fell behind its schedule in this run** (see the banner): the recovery seconds include its delay, so a \"did not recover\" may be the generator's.")
		b.line("")
	}
	b.header("llllllll", faultHeader()...)
	for _, f := range r.Faults {
		b.row(faultRow(f)...)
	}
	b.line("")
	for _, f := range r.Faults {
		if f.Error != "" {
			b.line("- **%s %s could not be injected or undone**: %s", mdEsc(f.Action), mdEsc(f.Service), mdEsc(f.Error))
		}
	}
	for _, f := range r.Faults {
		if f.Error != "" {
			continue
		}
		b.line("### %s %s in %s: during and after", mdEsc(f.Action), mdEsc(f.Service), mdEsc(f.Phase))
		b.line("")
		b.line("Requests due from %s to %s and until recovered are judged per second by the recovery (%s), not %s's thresholds; those due before stay in the phase, failed or not. Marks: %s.",
			runClock(f.StartedS), runClock(f.EndedS), targetsText(f.Recovery), mdEsc(f.Phase), marksLegend)
		b.line("")
		b.header("lrrlrllll", "workload", "during: offered", "ok", "failed", "until recovered: offered", "failed", "recovery", "seconds", "broken seconds")
		for _, w := range f.Workloads {
			rv, ok := recoveryOf(v, f, w.Name)
			rec, line, broken := dash, dash, ""
			if ok {
				rec, line, broken = recoveryText(rv), timeline(rv.Seconds), brokenText(rv, w, f.Recovery)
			}
			b.row(w.Name, Count(w.During.Offered), Count(w.During.Succeeded), failed(w.During),
				Count(w.Recovering.Offered), failed(w.Recovering), rec, line, broken)
		}
		b.line("")
	}
}

func textFaults(b *txt, r *result.Result, v verdict.Verdict) {
	if len(r.Faults) == 0 {
		return
	}
	b.line("")
	b.line("faults (times on the run's clock, from the start of the schedule)")
	rows := [][]string{faultHeader()}
	for _, f := range r.Faults {
		rows = append(rows, faultRow(f))
	}
	b.table("  ", rows)
	if generatorBehind(r) != "" {
		b.line("  the generator fell behind its own schedule: the recovery seconds include its own delay")
	}
	for _, f := range r.Faults {
		if f.Error != "" {
			b.line("  %s %s could not be injected or undone: %s", f.Action, f.Service, f.Error)
			continue
		}
		b.line("  %s %s in %s: recovery %s (%s)", f.Action, f.Service, f.Phase, targetsText(f.Recovery), marksLegend)
		b.line("    due during the fault and until recovered: judged by recovery, out of the phase's numbers; due just before it and failed during it: in them")
		rows := [][]string{{"workload", "during: offered", "ok", "failed", "until recovered: offered", "failed", "recovery", "seconds"}}
		for _, w := range f.Workloads {
			rv, ok := recoveryOf(v, f, w.Name)
			rec, line := dash, dash
			if ok {
				rec, line = strings.ReplaceAll(recoveryText(rv), "**", ""), timeline(rv.Seconds)
				if bt := brokenText(rv, w, f.Recovery); bt != "" && rv.Value == verdict.Fail {
					line += "  " + bt
				}
			}
			rows = append(rows, []string{w.Name, Count(w.During.Offered), Count(w.During.Succeeded), failed(w.During),
				Count(w.Recovering.Offered), failed(w.Recovering), rec, line})
		}
		b.table("    ", rows)
	}
}
