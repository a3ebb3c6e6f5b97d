package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/loadgate/loadgate/gate/soak"
	"github.com/loadgate/loadgate/gate/verdict"
)

// SVG geometry of SoakSVG: one panel per process, stacked.
const (
	soakPanelH = 220
	soakTop    = 56
)

func soakColor(v soak.Verdict) string {
	switch v {
	case soak.Stable:
		return verdictColor(verdict.Pass)
	case soak.Inconclusive:
		return verdictColor(verdict.Inconclusive)
	}
	return verdictColor(verdict.Regression)
}

// SoakSVG writes an SVG of memory over time, a panel per process, the judged window shaded.
func SoakSVG(w io.Writer, s *soak.Result) error {
	if s == nil {
		return errNilResult
	}
	d := newSVG(soakTop + max(len(s.Processes), 1)*soakPanelH)
	f := d.f
	head, color := soakVerdictWord(s), soakColor(s.Verdict)
	if !s.Usable {
		color = verdictColor(verdict.Unusable)
	}
	if s.Interrupted {
		head += " (INTERRUPTED)"
	}
	d.verdictTitle(color, head, "· soak "+s.Scenario)
	f(`<text x="%d" y="44" fill="#333">%s</text>`, svgPadL, esc(fmt.Sprintf("memory over time at %s/s for %s; leak threshold %s; judged window shaded",
		rate(s.RatePerS), soakDur(s.DurationS), thresholdText(s.ThresholdBytesPerHour))))
	if len(s.Processes) == 0 {
		f(`<text x="%d" y="%d" fill="#333">no process was sampled</text>`, svgPadL, soakTop+40)
	}
	for i, p := range s.Processes {
		soakPanel(f, p, soakTop+i*soakPanelH)
	}
	return d.end(w)
}

func soakPanel(f func(string, ...any), p soak.Process, top int) {
	g := p.Growth
	x0, x1 := float64(svgPadL), float64(svgW-svgPadR)
	y0, y1 := float64(top+svgPadT), float64(top+soakPanelH-svgPadB)
	f(`<text x="%d" y="%d" font-weight="bold"><tspan fill="%s">%s</tspan><tspan dx="6" fill="#333" font-weight="normal">%s</tspan></text>`,
		svgPadL, top+22, soakColor(g.Verdict), esc(strings.ToUpper(string(g.Verdict))), esc(p.Name))
	f(`<text x="%d" y="%d" fill="#555" font-size="11">%s</text>`, svgPadL, top+38,
		esc(fmt.Sprintf("fitted %s · quartile medians %s · window %s, %s samples", MiBPerHour(g.SlopeBytesPerHour), MiBPerHour(g.QuartileBytesPerHour), soakDur(g.WindowS), Count(int64(g.WindowSamples)))))
	f(`<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#999"/>`, num(x0), num(y0), num(x1-x0), num(y1-y0))
	if len(p.Series) == 0 {
		f(`<text x="%s" y="%s" fill="#333" text-anchor="middle">no samples</text>`, num((x0+x1)/2), num((y0+y1)/2))
		return
	}
	span := p.Series[len(p.Series)-1].TS
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range p.Series {
		v := float64(s.MemBytes) / (1 << 20)
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	lo, hi, yticks := linRange(math.Max(0, lo-(hi-lo)*0.1), hi+(hi-lo)*0.1+0.5)
	unit, udiv := "min", 60.0
	if span >= 3*3600 {
		unit, udiv = "h", 3600
	}
	_, xhi, xticks := linRange(0, math.Max(span/udiv, 1.0/udiv))
	xs := func(t float64) float64 { return x0 + t/udiv/xhi*(x1-x0) }
	ys := func(v float64) float64 { return y1 - (v-lo)/(hi-lo)*(y1-y0) }
	if ws := g.WindowStartS; span > 0 {
		f(`<rect x="%s" y="%s" width="%s" height="%s" fill="#f2f2f2"/>`, num(xs(ws)), num(y0+0.5), num(xs(span)-xs(ws)), num(y1-y0-1))
		f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#999" stroke-dasharray="4 3"/>`, num(xs(ws)), num(y0), num(xs(ws)), num(y1))
	}
	for _, t := range yticks {
		f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e5e5e5"/><text x="%s" y="%s" text-anchor="end" fill="#555" font-size="11">%s</text>`,
			num(x0), num(ys(t)), num(x1), num(ys(t)), num(x0-6), num(ys(t)+4), esc(plain(t)))
	}
	for _, t := range xticks {
		f(`<text x="%s" y="%s" text-anchor="middle" fill="#555" font-size="11">%s</text>`, num(xs(t*udiv)), num(y1+16), esc(plain(t)))
	}
	f(`<text x="%s" y="%s" text-anchor="middle" fill="#555" font-size="11">%s since the warm-up ended</text>`, num((x0+x1)/2), num(y1+32), unit)
	f(`<text x="%d" y="%s" fill="#555" font-size="11" transform="rotate(-90 %d %s)" text-anchor="middle">MiB</text>`, svgPadL-44, num((y0+y1)/2), svgPadL-44, num((y0+y1)/2))
	var pts []string
	for _, s := range p.Series {
		pts = append(pts, num(xs(s.TS))+","+num(ys(float64(s.MemBytes)/(1<<20))))
	}
	f(`<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`, svgBase, strings.Join(pts, " "))
}

// SoakText writes the soak's verdict per process, for the terminal.
func SoakText(w io.Writer, s *soak.Result) error {
	if s == nil {
		return errNilResult
	}
	var b txt
	b.line("loadgate soak: %s — %s/s for %s (ran %s)", s.Scenario, rate(s.RatePerS), soakDur(s.DurationS), soakDur(s.RanS))
	var rows [][]string
	rows = append(rows, []string{"process", "verdict", "fitted", "quartiles", "first → last MiB", "window", "samples"})
	for _, p := range s.Processes {
		g := p.Growth
		rows = append(rows, []string{p.Name, strings.ToUpper(string(g.Verdict)), MiBPerHour(g.SlopeBytesPerHour), MiBPerHour(g.QuartileBytesPerHour),
			mib(p.MemFirst) + " → " + mib(p.MemLast), soakDur(g.WindowS), Count(int64(g.WindowSamples))})
	}
	b.table("  ", rows)
	for _, p := range s.Processes {
		b.line("  %s: %s", p.Name, GrowthWhy(p.Growth))
	}
	b.line("%s", SoakSummary(s))
	_, err := io.WriteString(w, b.String())
	return err
}
