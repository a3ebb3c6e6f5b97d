package report

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/loadgate/loadgate/gate/sweep"
)

var errNilSweep = errors.New("report: nil sweep")

// Rate formats a rate in requests per second, one decimal: "76.0".
func Rate(v float64) string { return rate(v) }

// SweepStepLine is a step in one line, for a terminal's progress.
func SweepStepLine(s sweep.Step) string {
	line := fmt.Sprintf("%s req/s · offered %s/s · completed %s/s · %s", rate(s.Rate), rate(s.OfferedPerS), rate(s.CompletedPerS), heldText(s))
	if s.Manner != "" {
		line += " · " + string(s.Manner)
	}
	return line
}

func heldText(s sweep.Step) string {
	if s.Held {
		return "held"
	}
	why := make([]string, len(s.NotHeld))
	for i, r := range s.NotHeld {
		why[i] = reasonText(r)
	}
	return "did not hold (" + strings.Join(why, ", ") + ")"
}

// stepLatenessText says what a step's lateness could account for, "" when not known.
func stepLatenessText(l *sweep.Lateness) string {
	switch {
	case l == nil:
		return ""
	case len(l.Explains) == 0:
		return fmt.Sprintf("; its lateness (p95 %s ms, max %s ms) cannot explain what the step measured: the step is judged on it", MS(l.LatenessMS.P95), MS(l.LatenessMS.Max))
	}
	what := make([]string, len(l.Explains))
	for i, e := range l.Explains {
		switch e {
		case sweep.ExplainRate:
			what[i] = "the rate (a mean lateness of up to " + MS(sweep.MeanBoundMS(l.LatenessMS)) + " ms)"
		case sweep.ExplainCompletions:
			what[i] = "the completions missing"
		case sweep.ExplainBursts:
			what[i] = "refusals in bursts of late sends"
		default:
			what[i] = "the " + strings.TrimPrefix(e, "threshold ") + " threshold"
		}
	}
	return "; its lateness could explain " + strings.Join(what, ", ")
}

func reasonText(r sweep.Reason) string {
	switch r {
	case sweep.ReasonCompletionsBehind:
		return "completions fell behind"
	case sweep.ReasonThresholds:
		return "a threshold failed"
	case sweep.ReasonGenerator:
		return "generator behind schedule"
	case sweep.ReasonUnusable:
		return "unusable"
	case sweep.ReasonInterrupted:
		return "interrupted"
	case sweep.ReasonNothingOffered:
		return "nothing offered"
	}
	return string(r)
}

func conclusion(sw *sweep.Sweep) string {
	var parts []string
	if sw.SustainableRate != nil {
		parts = append(parts, "sustainable "+rate(*sw.SustainableRate)+" req/s")
	} else {
		parts = append(parts, "no step held: sustainable rate not found")
	}
	switch {
	case sw.DegradesAt != nil:
		parts = append(parts, "degrades at "+rate(*sw.DegradesAt)+" req/s")
		if sw.Manner != "" {
			parts = append(parts, "manner: "+string(sw.Manner))
		} else {
			parts = append(parts, "manner: not classified")
		}
	case sw.SustainableRate != nil && !sw.Interrupted:
		parts = append(parts, "held at every step: the capacity is above the highest rate asked for")
	}
	if sw.Interrupted {
		parts = append(parts, "interrupted")
	}
	return strings.Join(parts, " · ")
}

func mannerWhy(m sweep.Manner) string {
	switch m {
	case sweep.HonestRefusal:
		return "the stack refused what it could not serve, fast (503, 429 or connection refused), and the latency of its successes stayed flat"
	case sweep.Queueing:
		return "requests waited: completions fell behind, requests timed out or were abandoned, or the latency of the successes grew"
	case sweep.Errors:
		return "failures of other classes than fast refusals and timeouts"
	case sweep.Collapse:
		return "the successes per second fell below an earlier step's: more load got less done"
	case sweep.GeneratorLimit:
		return "the generator fell behind its schedule without waiting at max_in_flight, so the limit found may be loadgate's, not the stack's: give it its own quiet cores (--load-cpus)"
	}
	return ""
}

// accounted formats a percentile, "≥ 5 000" when among the unfinished requests.
func accounted(v float64, over bool) string {
	if over {
		return "≥ " + MS(v)
	}
	return MS(v)
}

func accountedN(a sweep.Accounted) string {
	s := Count(a.Count)
	if a.Unfinished > 0 {
		s += " (" + Count(a.Unfinished) + " unfinished)"
	}
	return s
}

func failuresText(n int64, m map[string]int64) string {
	s := Count(n)
	if c := classes(m); c != "" {
		s += " (" + c + ")"
	}
	return s
}

func stepsRan(sw *sweep.Sweep) string {
	rs := make([]string, len(sw.Rates))
	for i, r := range sw.Rates {
		rs[i] = rate(r)
	}
	return fmt.Sprintf("%s req/s planned, %s ran · each step %s after a %s warm-up at its rate",
		strings.Join(rs, ", "), Count(int64(len(sw.Steps))), seconds(sw.StepS), seconds(sw.WarmupS))
}

func holdRuleText(h sweep.HoldRule) string {
	return fmt.Sprintf("completions inside the window at least %s of offered · no latency or error threshold of the scenario fails · the generator kept its schedule",
		Percent(h.CompletionsShare))
}

// SweepMarkdown writes sweep.md; svg is the plot's path relative to it, or "".
func SweepMarkdown(w io.Writer, sw *sweep.Sweep, svg string) error {
	if sw == nil {
		return errNilSweep
	}
	var b md
	mdSweepBanners(&b, sw)
	mdSweepHeader(&b, sw)
	mdSweepSteps(&b, sw)
	if svg != "" {
		b.line("![latency and throughput against the offered rate](%s)", svg)
		b.line("")
	}
	mdSweepChecks(&b, sw)
	mdSweepStack(&b, sw)
	mdSweepUnmeasured(&b, sw)
	b.line("Each step's own result.json and report.md: %s.", stepFiles(sw))
	return b.flush(w)
}

func mdSweepBanners(b *md, sw *sweep.Sweep) {
	if sw.Interrupted {
		b.line("> **INTERRUPTED** — the sweep was cut short: the steps below are what was measured; the last one is incomplete and the stairs above it never ran (exit 3).")
		b.line("")
	}
	for _, s := range sw.Steps {
		if !s.Usable && !s.Interrupted {
			b.line("> **UNUSABLE STEP %d** — %s. Its numbers cannot be trusted (exit 3).", s.Number, strings.Join(s.Unusable, "; "))
			b.line("")
		}
		if s.Generator != nil {
			b.line("> **GENERATOR BEHIND SCHEDULE at step %d** — %s%s.", s.Number, generatorText(*s.Generator), stepLatenessText(s.Lateness))
			b.line("")
		}
	}
}

func mdSweepHeader(b *md, sw *sweep.Sweep) {
	b.line("# loadgate sweep: %s", sw.Scenario.Name)
	b.line("")
	b.line("%s", scenarioLine(sw.Scenario))
	when := "- **date** " + date(sw.StartedAt)
	if d := sw.FinishedAt.Sub(sw.StartedAt); !sw.StartedAt.IsZero() && d > 0 {
		when += ", ran " + seconds(d.Seconds())
	}
	b.line("%s", when)
	b.line("- **target** `%s`", orUnknown(sw.Target))
	b.line("- **machine** %s", machineText(sw.Machine))
	b.line("- **topology** %s", topologyText(sw.Topology, "**"))
	b.line("- **load** max_in_flight %s · timeout %s ms", Count(int64(sw.Scenario.MaxInFlight)), exact(sw.Scenario.TimeoutMS))
	b.line("- **stairs** %s", stepsRan(sw))
	b.line("- **a step holds when** %s", holdRuleText(sw.HoldRule))
	if s := sw.Scenario.Scale; s != 0 && s != 1 {
		b.line("- **scale** %s", exact(s))
	}
	b.line("")
	b.line("## Sustainable rate")
	b.line("")
	b.line("**%s**", conclusion(sw))
	if sw.Manner != "" {
		b.line("")
		b.line("Manner (step %d): %s.", sw.MannerStep, mannerWhy(sw.Manner))
	}
}

func mdSweepSteps(b *md, sw *sweep.Sweep) {
	b.line("")
	b.line("## Steps")
	b.line("")
	b.line("Offered and completed per second of each step's window (completions of any outcome inside it); successes/s is completed/s × the success share.")
	b.line("")
	one := oneWorkload(sw)
	if one {
		b.header("rrrrrrrrrrl", "step", "rate", "offered/s", "completed/s", "successes/s", "failed", "late", "p50 ms", "p95 ms", "p99 ms", "n", "held")
	} else {
		b.header("rrrrrrrl", "step", "rate", "offered/s", "completed/s", "successes/s", "failed", "late", "held")
	}
	for _, s := range sw.Steps {
		cells := []string{Count(int64(s.Number)), rate(s.Rate), rate(s.OfferedPerS), rate(s.CompletedPerS), rate(s.GoodputPerS),
			failuresText(s.Failed+s.Abandoned, withAbandoned(s.Failures, s.Abandoned)), stepLateText(s)}
		if one {
			a := s.Workloads[0].AccountedMS
			cells = append(cells, accounted(a.P50, a.P50Over), accounted(a.P95, a.P95Over), accounted(a.P99, a.P99Over), accountedN(a))
		}
		held := heldText(s)
		if s.Manner != "" {
			held += " · " + string(s.Manner)
		}
		b.row(append(cells, held)...)
	}
	b.line("")
	if !one {
		for _, name := range sweepWorkloads(sw) {
			b.line("### Latency of %s", name)
			b.line("")
			b.header("rrrrrr", "step", "rate", "p50 ms", "p95 ms", "p99 ms", "n")
			for _, s := range sw.Steps {
				for _, wl := range s.Workloads {
					if wl.Name == name {
						a := wl.AccountedMS
						b.row(Count(int64(s.Number)), rate(s.Rate), accounted(a.P50, a.P50Over), accounted(a.P95, a.P95Over), accounted(a.P99, a.P99Over), accountedN(a))
					}
				}
			}
			b.line("")
		}
	}
	b.line("Latency from due time over successes and unfinished requests (timed out, abandoned), n counting both; ≥: their least wait, min(timeout, drain). Fast failures are not timed.")
	b.line("")
}

func mdSweepUnmeasured(b *md, sw *sweep.Sweep) {
	b.line("## Not measured")
	b.line("")
	b.line("- latency of failed requests (failures are counted by class, not timed)")
	b.line("- the stairs between the steps: the capacity lies between the sustainable rate and the rate it degrades at")
	for _, s := range sw.NotMeasured {
		b.line("- %s", s)
	}
	b.line("")
	if len(sw.Synthetic) > 0 {
		b.line("## Synthetic")
		b.line("")
		for _, s := range sw.Synthetic {
			b.line("- %s", s)
		}
		b.line("")
	}
}

func stepLateText(s sweep.Step) string {
	if s.StalledS > 0 {
		return Count(s.Late) + " (stalled " + seconds(s.StalledS) + ")"
	}
	return Count(s.Late)
}

func stepFiles(sw *sweep.Sweep) string {
	if len(sw.Steps) == 0 {
		return "none (no step ran)"
	}
	dirs := make([]string, len(sw.Steps))
	for i, s := range sw.Steps {
		dirs[i] = "`" + strings.TrimSuffix(s.Result, "/result.json") + "/`"
	}
	return strings.Join(dirs, ", ")
}

// mdSweepChecks lists the thresholds each step that did not hold broke.
func mdSweepChecks(b *md, sw *sweep.Sweep) {
	if !slices.ContainsFunc(sw.Steps, func(s sweep.Step) bool { return len(s.Checks) > 0 }) {
		return
	}
	b.line("## Thresholds that failed")
	b.line("")
	for _, s := range sw.Steps {
		for _, c := range s.Checks {
			b.line("- step %d (%s req/s) · %s: %s", s.Number, rate(s.Rate), c.Workload, checkText(c))
		}
	}
	b.line("")
}

func mdSweepStack(b *md, sw *sweep.Sweep) {
	if !slices.ContainsFunc(sw.Steps, func(s sweep.Step) bool { return len(s.Services) > 0 }) {
		return
	}
	b.line("## Stack per step")
	b.line("")
	b.line("CPU in percent of one core, from cumulative CPU-time deltas per sampling interval, over each step's window (sampling starts when its warm-up ends).")
	b.line("")
	b.header("rrlrrrr", "step", "rate", "service", "CPU avg %", "CPU peak %", "mem peak MiB", "samples")
	for _, s := range sw.Steps {
		for _, sv := range s.Services {
			b.row(Count(int64(s.Number)), rate(s.Rate), sv.Name, cpuPct(sv.CPUAvgPct), cpuPct(sv.CPUPeakPct), mib(sv.MemPeakBytes), Count(int64(sv.Samples)))
		}
	}
	b.line("")
}

// SweepText is the terminal summary after a sweep.
func SweepText(w io.Writer, sw *sweep.Sweep) error {
	if sw == nil {
		return errNilSweep
	}
	var b strings.Builder
	fmt.Fprintf(&b, "loadgate sweep %s (%s)\n", sw.Scenario.Name, scenarioHash(sw.Scenario.Hash))
	for _, s := range sw.Steps {
		fmt.Fprintf(&b, "  step %d  %s", s.Number, SweepStepLine(s))
		for _, wl := range s.Workloads {
			a := wl.AccountedMS
			fmt.Fprintf(&b, " · %s p99 %s ms (n=%s", wl.Name, accounted(a.P99, a.P99Over), Count(a.Count))
			if a.Unfinished > 0 {
				fmt.Fprintf(&b, ", %s unfinished", Count(a.Unfinished))
			}
			b.WriteByte(')')
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "%s\n", conclusion(sw))
	_, err := io.WriteString(w, b.String())
	return err
}

func oneWorkload(sw *sweep.Sweep) bool {
	names := sweepWorkloads(sw)
	if len(names) != 1 {
		return false
	}
	for _, s := range sw.Steps {
		if len(s.Workloads) != 1 {
			return false
		}
	}
	return true
}

func sweepWorkloads(sw *sweep.Sweep) []string {
	var names []string
	seen := map[string]bool{}
	for _, s := range sw.Steps {
		for _, w := range s.Workloads {
			if !seen[w.Name] {
				seen[w.Name] = true
				names = append(names, w.Name)
			}
		}
	}
	return names
}

// withAbandoned adds the abandoned requests as a failure class.
func withAbandoned(failures map[string]int64, abandoned int64) map[string]int64 {
	if abandoned == 0 {
		return failures
	}
	m := make(map[string]int64, len(failures)+1)
	for k, v := range failures {
		m[k] = v
	}
	m["abandoned"] += abandoned
	return m
}
