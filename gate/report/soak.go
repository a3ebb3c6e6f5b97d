package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/soak"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/mdtext"
)

// MiBPerHour formats a growth rate in MiB/h, signed, one decimal: "+281.3 MiB/h".
func MiBPerHour(bytesPerHour float64) string {
	v := bytesPerHour / (1 << 20)
	s := fixed1(math.Abs(v))
	switch {
	case s == "0.0":
		return "0.0 MiB/h"
	case v < 0:
		return minus + s + " MiB/h"
	}
	return "+" + s + " MiB/h"
}

func soakDur(s float64) string {
	return (time.Duration(math.Round(s)) * time.Second).String()
}

// SoakTooShort warns, before a soak starts, that it cannot conclude.
func SoakTooShort(duration, warmup time.Duration) string {
	return fmt.Sprintf("a %s soak cannot conclude: its window after the first quarter is under %s; the verdict will be INCONCLUSIVE (at least %s is needed; the %s warm-up does not count)",
		soakDur(duration.Seconds()), soak.MinWindow, soak.MinWindow*4/3, soakDur(warmup.Seconds()))
}

// GrowthWhy says, in words, why a process got its growth verdict.
func GrowthWhy(g soak.Growth) string {
	var parts []string
	for _, w := range g.Why {
		switch w {
		case soak.WhyNoSamples:
			parts = append(parts, fmt.Sprintf("no memory sample was taken (at least %d over a window of at least %s are needed)", soak.MinSamples, soak.MinWindow))
		case soak.WhyShortWindow:
			parts = append(parts, fmt.Sprintf("the window after the first quarter is %s, under %s (a soak of at least %s can conclude)",
				soakDur(g.WindowS), soak.MinWindow, soak.MinWindow*4/3))
		case soak.WhyFewSamples:
			parts = append(parts, fmt.Sprintf("the window holds %s samples, under %d", Count(int64(g.WindowSamples)), soak.MinSamples))
		case soak.WhySlopeOver:
			parts = append(parts, fmt.Sprintf("fitted slope %s is above %s", MiBPerHour(g.SlopeBytesPerHour), thresholdText(g.ThresholdBytesPerHour)))
		case soak.WhyQuartilesOver:
			parts = append(parts, fmt.Sprintf("quartile medians grow %s, above %s", MiBPerHour(g.QuartileBytesPerHour), thresholdText(g.ThresholdBytesPerHour)))
		case soak.WhyExited:
			parts = append(parts, fmt.Sprintf("the process exited (or its pid came to name another process) %s after its first sample: a partial window is not judged, and a process that went away is not a stable one",
				soakDur(g.ExitedAfterS)))
		case soak.WhyNeitherOver:
			parts = append(parts, fmt.Sprintf("neither the fitted slope (%s) nor the quartile medians (%s) are above %s",
				MiBPerHour(g.SlopeBytesPerHour), MiBPerHour(g.QuartileBytesPerHour), thresholdText(g.ThresholdBytesPerHour)))
		default:
			parts = append(parts, w)
		}
	}
	s := strings.Join(parts, "; ")
	switch {
	case g.Verdict == soak.Stable && len(g.Why) == 1 && g.Why[0] != soak.WhyNeitherOver:
		s += ": a leak needs both"
	case g.Verdict == soak.Inconclusive:
		s = "refuses to conclude: " + s
	}
	return s
}

func thresholdText(bytesPerHour float64) string {
	return strings.TrimPrefix(MiBPerHour(bytesPerHour), "+")
}

// SoakEstimate is one process's current growth estimate, for the progress line.
type SoakEstimate struct {
	Name         string
	BytesPerHour float64
	OK           bool // false: not enough samples yet
}

// SoakProgress is a soak's progress line with each process's fitted slope.
func SoakProgress(phase string, elapsed, total time.Duration, offeredPS, completedPS float64, ests []SoakEstimate) string {
	var b strings.Builder
	fmt.Fprintf(&b, "soak %s / %s · %s · offered %s/s · completed %s/s", soakDur(elapsed.Seconds()), soakDur(total.Seconds()), phase, rate(offeredPS), rate(completedPS))
	for _, e := range ests {
		if e.OK {
			fmt.Fprintf(&b, " · %s %s", e.Name, MiBPerHour(e.BytesPerHour))
		} else {
			fmt.Fprintf(&b, " · %s —", e.Name)
		}
	}
	return b.String()
}

// SoakSummary is the soak's verdict in one line, naming each process leaked or unjudged.
func SoakSummary(s *soak.Result) string {
	return soakHead(s) + soakWhy(s, plainText)
}

func soakVerdictWord(s *soak.Result) string {
	if !s.Usable {
		return "UNUSABLE"
	}
	return strings.ToUpper(string(s.Verdict))
}

func soakHead(s *soak.Result) string {
	head := "soak: " + soakVerdictWord(s)
	if s.Interrupted {
		head += " (INTERRUPTED after " + soakDur(s.RanS) + " of " + soakDur(s.WarmupS+s.DurationS) + ")"
	}
	if !s.Usable || s.Verdict == soak.Inconclusive {
		return head + " — "
	}
	return head + ": "
}

func plainText(s string) string { return s }

// soakWhy is SoakSummary without its head; esc renders untrusted strings.
func soakWhy(s *soak.Result, esc func(string) string) string {
	var bad []string
	for _, p := range s.Processes {
		switch p.Growth.Verdict {
		case soak.Leak:
			bad = append(bad, fmt.Sprintf("%s leaks %s (fitted; quartile medians %s)", esc(p.Name), MiBPerHour(p.Growth.SlopeBytesPerHour), MiBPerHour(p.Growth.QuartileBytesPerHour)))
		case soak.Inconclusive:
			bad = append(bad, fmt.Sprintf("%s INCONCLUSIVE: %s", esc(p.Name), GrowthWhy(p.Growth)))
		}
	}
	var memory string
	switch s.Verdict {
	case soak.Stable:
		memory = fmt.Sprintf("no process grows faster than %s over %s", thresholdText(s.ThresholdBytesPerHour), soakDur(s.RanS-s.WarmupS))
	case soak.Inconclusive:
		if len(bad) == 0 {
			bad = append(bad, "no process was sampled")
		}
		memory = "NOT a pass, no leak was ruled out: " + strings.Join(bad, "; ")
	default:
		memory = strings.Join(bad, "; ")
	}
	if s.Usable {
		return memory
	}
	why := make([]string, len(s.Unusable))
	for i, u := range s.Unusable {
		why[i] = esc(u)
	}
	if len(why) == 0 {
		why = []string{"the run is marked unusable"}
	}
	return fmt.Sprintf("the run is unusable (%s), so no verdict is drawn from it: NOT a pass; memory alone read %s: %s",
		strings.Join(why, "; "), strings.ToUpper(string(s.Verdict)), memory)
}

// SoakMarkdown writes the soak's report; exit is the verdict's exit code.
func SoakMarkdown(w io.Writer, s *soak.Result, r *result.Result, exit int) error {
	if s == nil || r == nil {
		return errNilResult
	}
	var b md
	if !s.Usable && r.Usable { // else mdBanners says it, with the run's reasons
		b.line("> **UNUSABLE SOAK** — %s No verdict is drawn from it (exit %d).", sentence(strings.Join(mdEscAll(s.Unusable), "; ")), exit)
		b.line("")
	}
	if s.Verdict == soak.Inconclusive {
		b.line("> **INCONCLUSIVE SOAK** — %s. This is not a pass: no leak was ruled out.", inconclusiveList(s))
		b.line("")
	}
	mdBanners(&b, r, verdict.Verdict{})
	mdHeader(&b, r)
	b.line("## Soak")
	b.line("")
	b.line("- **steady load** %s/s for %s after a %s warm-up (ran %s)", rate(s.RatePerS), soakDur(s.DurationS), soakDur(s.WarmupS), soakDur(s.RanS))
	b.line("- **memory** sampled every %s per process after warm-up, judged past the first quarter: a leak needs the slope **and** the quartile medians' rate above %s (`--leak-threshold`)",
		seconds(s.SampleIntervalS), thresholdText(s.ThresholdBytesPerHour))
	b.line("- **conclusive** only with at least %d samples over at least %s of window", soak.MinSamples, soak.MinWindow)
	b.line("")
	b.header("llrrrrrrrl", "process", "verdict", "fitted", "quartiles", "first → last MiB", "peak MiB", "window", "samples", "CPU avg %", "why")
	for _, p := range s.Processes {
		g := p.Growth
		name := mdEsc(p.Name)
		if p.Exited {
			name += " (exited)"
		}
		b.row(name, "**"+string(g.Verdict)+"**", MiBPerHour(g.SlopeBytesPerHour), MiBPerHour(g.QuartileBytesPerHour),
			mib(p.MemFirst)+" → "+mib(p.MemLast), mib(p.MemPeakBytes), soakDur(g.WindowS), Count(int64(g.WindowSamples))+" of "+Count(int64(g.Samples)),
			cpuPct(p.CPUAvgPct), GrowthWhy(g))
	}
	b.line("")
	b.line("Memory over time (MiB; the judged window starts at the `┃`; soak.svg has the plot):")
	b.line("")
	for _, p := range s.Processes {
		b.line("- %s", mdPlot(p))
	}
	b.line("")
	for _, p := range r.Phases {
		mdSoakPhase(&b, p)
	}
	mdStack(&b, r)
	mdNotMeasured(&b, r)
	b.line("## Verdict")
	b.line("")
	verdictWord := soakVerdictWord(s)
	if s.Interrupted {
		verdictWord += ", INTERRUPTED"
	}
	b.line("**%s** (exit %d): %s.", verdictWord, exit, soakWhy(s, mdEsc))
	return b.flush(w)
}

func inconclusiveList(s *soak.Result) string {
	var parts []string
	for _, p := range s.Processes {
		if p.Growth.Verdict == soak.Inconclusive {
			parts = append(parts, mdEsc(p.Name)+" "+GrowthWhy(p.Growth))
		}
	}
	if len(parts) == 0 {
		return "no process was sampled"
	}
	return strings.Join(parts, "; ")
}

var sparkBlocks = []rune("▁▂▃▄▅▆▇█")

func mdPlot(p soak.Process) string {
	name := mdEsc(p.Name)
	if len(p.Series) == 0 {
		return name + " (no samples)"
	}
	line, lo, hi, span := sparkline(p)
	return fmt.Sprintf("%s %s %s–%s MiB over %s", name, mdtext.Code(line), mib(lo), mib(hi), soakDur(span))
}

// sparkline is p's memory in ≤ 60 blocks; '┃' marks the judged window ('|' shows escaped).
func sparkline(p soak.Process) (line string, lo, hi int64, spanS float64) {
	const cols = 60
	lo, hi = p.Series[0].MemBytes, p.Series[0].MemBytes
	for _, s := range p.Series {
		lo, hi = min(lo, s.MemBytes), max(hi, s.MemBytes)
	}
	spanS = p.Series[len(p.Series)-1].TS
	var b strings.Builder
	mark := false
	for c := range min(cols, len(p.Series)) {
		i := c * (len(p.Series) - 1) / max(min(cols, len(p.Series))-1, 1)
		s := p.Series[i]
		if !mark && spanS > 0 && s.TS >= p.Growth.WindowStartS {
			b.WriteRune('┃')
			mark = true
		}
		k := 0
		if hi > lo {
			k = int(float64(s.MemBytes-lo) / float64(hi-lo) * float64(len(sparkBlocks)-1))
		}
		b.WriteRune(sparkBlocks[k])
	}
	return b.String(), lo, hi, spanS
}

func mdSoakPhase(b *md, p result.Phase) {
	var pb md
	mdPhase(&pb, p)
	body := pb.String()
	if _, rest, ok := strings.Cut(body, "\n"); ok {
		body = rest
	}
	b.line("## %s", title(p.Name))
	b.WriteString(body)
}
