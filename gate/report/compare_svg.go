package report

import (
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/loadgate/loadgate/gate/verdict"
)

// SVG geometry of ComparePlotSVG: one panel per judged (then recover) phase
// and workload, stacked.
const (
	svgW      = 640
	svgPanelH = 280
	svgTop    = 76 // verdict, title and legend
	svgPadL   = 64
	svgPadR   = 24
	svgPadT   = 46 // panel heading and the judged percentile's label
	svgPadB   = 44
	svgBase   = "#1f77b4"
	svgHead   = "#d62728"
	svgJudged = "#8a6d00"
)

// chartQ are the quantiles of chartPercentiles, for the x axis.
var chartQ = []float64{0.5, 0.9, 0.95, 0.99, 0.999}

// verdictColor is the colour of the verdict word.
func verdictColor(v verdict.Value) string {
	switch v {
	case verdict.Pass, verdict.Improvement:
		return "#1a7f37"
	case verdict.Inconclusive:
		return "#9a6700"
	}
	return "#cf222e"
}

// logRange is the latency axis: from a 1-2-5 step at or below lo to one at
// or above hi, with its ticks.
func logRange(lo, hi float64) (float64, float64, []float64) {
	lo = max(lo, 0.001)
	hi = max(hi, lo)
	step := func(v float64, up bool) float64 {
		p := math.Pow(10, math.Floor(math.Log10(v)))
		ms := []float64{1, 2, 5, 10}
		if up {
			for _, m := range ms {
				if m*p >= v*(1-1e-12) {
					return m * p
				}
			}
		}
		for i := len(ms) - 1; i >= 0; i-- {
			if ms[i]*p <= v*(1+1e-12) {
				return ms[i] * p
			}
		}
		return p
	}
	a, b := step(lo, false), step(hi, true)
	if b <= a {
		b = step(a*1.01, true)
	}
	var ticks []float64
	for p := math.Pow(10, math.Floor(math.Log10(a))); p <= b; p *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if t := m * p; t >= a*(1-1e-12) && t <= b*(1+1e-12) {
				ticks = append(ticks, t)
			}
		}
	}
	return a, b, ticks
}

// ComparePlotSVG writes a self-contained SVG (no script, no external font or
// style) of latency by percentile, base against head, for every workload of
// the judged and recover phases: nearest-rank percentiles of all rounds
// pooled per side, in ms on a log axis (so p50 … p95, the judged ones, are
// not squashed under p99.9), with the x axis on a log scale of 1/(1−q) so
// p50 … p99.9 are evenly readable. The verdict word leads the title; the
// judged percentile is marked with its Δ and value. Each point carries a
// tooltip with its value and sample count. A workload not measured on a
// side is drawn as text, not as a line.
func ComparePlotSVG(w io.Writer, g GateReport) error {
	g.normalize()
	g.Verdict = Explain(g.Verdict)
	v := g.Verdict
	type panel struct {
		phase, name string
		base, head  []float64
		nb, nh      int64
		judged      []verdict.Comparison
	}
	var panels []panel
	for _, p := range g.judgedPhases() {
		if v.Value == verdict.Unusable {
			break // no number of an unusable gate is drawn
		}
		for _, name := range g.workloadNames(p.Name) {
			sb, _ := pooledSummary(g.Base, p.Name, name)
			sh, _ := pooledSummary(g.Head, p.Name, name)
			pn := panel{phase: p.Name, name: name, base: summaryValues(sb), head: summaryValues(sh), nb: sb.Count, nh: sh.Count}
			for _, c := range g.comparisons(p.Name) {
				if c.Workload == name && c.Metric != verdict.MetricErrorRate {
					pn.judged = append(pn.judged, c)
				}
			}
			panels = append(panels, pn)
		}
	}
	h := svgTop + max(len(panels), 1)*svgPanelH
	var b strings.Builder
	f := func(format string, a ...any) { fmt.Fprintf(&b, format, a...); b.WriteByte('\n') }
	f(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`, svgW, h, svgW, h)
	f(`<rect width="100%%" height="100%%" fill="#ffffff"/>`)
	// The verdict word first, on its own line: it is never cut.
	f(`<text x="%d" y="24" font-size="17" font-weight="bold"><tspan fill="%s">%s</tspan><tspan dx="8" font-weight="normal" fill="#333">· gate %s</tspan></text>`,
		svgPadL, verdictColor(v.Value), esc(strings.ToUpper(string(v.Value))), esc(g.Scenario.Name))
	f(`<text x="%d" y="44" fill="#333">%s</text>`, svgPadL, esc(fmt.Sprintf("latency by percentile, %s vs %s, %d round(s), %s",
		g.Base.Name, g.Head.Name, g.Rounds, g.order().label())))
	f(`<line x1="%d" y1="60" x2="%d" y2="60" stroke="%s" stroke-width="2" stroke-dasharray="6 3"/><text x="%d" y="64">%s %s</text>`,
		svgPadL, svgPadL+24, svgBase, svgPadL+30, esc(g.Base.Name), esc(commitText(sideCommit(g.Base))))
	f(`<line x1="%d" y1="60" x2="%d" y2="60" stroke="%s" stroke-width="2"/><text x="%d" y="64">%s %s</text>`,
		svgPadL+200, svgPadL+224, svgHead, svgPadL+230, esc(g.Head.Name), esc(commitText(sideCommit(g.Head))))
	if len(panels) == 0 {
		f(`<text x="%d" y="%d">%s</text>`, svgPadL, svgTop+40, esc(noPanels(g)))
	}
	plotW := float64(svgW - svgPadL - svgPadR)
	xFrac := func(q float64) float64 {
		lo, hi := math.Log10(1/(1-chartQ[0])), math.Log10(1/(1-chartQ[len(chartQ)-1]))
		return (math.Log10(1/(1-q)) - lo) / (hi - lo)
	}
	xOf := func(q float64) float64 { return svgPadL + xFrac(q)*plotW }
	for i, p := range panels {
		top := float64(svgTop + i*svgPanelH + svgPadT)
		bottom := float64(svgTop + (i+1)*svgPanelH - svgPadB)
		f(`<g>`)
		f(`<text x="%d" y="%s"><tspan font-weight="bold">%s</tspan><tspan dx="8">%s</tspan></text>`, svgPadL, num(top-26), esc(p.phase+" · "+p.name),
			esc(fmt.Sprintf("n %s=%s, %s=%s", g.Base.Name, Count(p.nb), g.Head.Name, Count(p.nh))))
		lo, hi := math.Inf(1), 0.0
		for k, vals := range [][]float64{p.base, p.head} {
			if (k == 0 && p.nb == 0) || (k == 1 && p.nh == 0) {
				continue
			}
			for _, x := range vals {
				if x > 0 {
					lo, hi = min(lo, x), max(hi, x)
				}
			}
		}
		if hi == 0 {
			lo, hi = 1, 10
		}
		a, z, ticks := logRange(lo, hi)
		yOf := func(v float64) float64 {
			v = min(max(v, a), z)
			return bottom - (math.Log10(v)-math.Log10(a))/(math.Log10(z)-math.Log10(a))*(bottom-top)
		}
		// axes and grid
		for _, t := range ticks {
			y := yOf(t)
			f(`<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#e5e5e5"/><text x="%d" y="%s" text-anchor="end">%s</text>`,
				svgPadL, num(y), svgW-svgPadR, num(y), svgPadL-6, num(y+4), esc(trimZeros(MS(t))))
		}
		for k, q := range chartQ {
			x := xOf(q)
			f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e5e5e5"/><text x="%s" y="%s" text-anchor="middle">%s</text>`,
				num(x), num(top), num(x), num(bottom), num(x), num(bottom+16), chartPercentiles[k])
		}
		// The judged percentile(s): a band, and the comparison above the plot.
		for _, c := range p.judged {
			k := slices.Index(chartPercentiles, c.Metric)
			if k < 0 {
				continue
			}
			x := xOf(chartQ[k])
			f(`<rect x="%s" y="%s" width="12" height="%s" fill="%s" fill-opacity="0.12"/><line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.5"/>`,
				num(x-6), num(top), num(bottom-top), svgJudged, num(x), num(top), num(x), num(bottom), svgJudged)
			// Centred over its line, kept inside the plot's width (≈ 7.5 px
			// a character of bold 12 px sans-serif).
			label := judgedLabel(c)
			wide := 7.5 * float64(utf8.RuneCountInString(label))
			lx := max(svgPadL, min(x-wide/2, svgW-svgPadR-wide))
			f(`<text x="%s" y="%s" fill="%s" font-weight="bold">%s</text>`, num(lx), num(top-8), svgJudged, esc(label))
		}
		f(`<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#333"/><line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#333"/>`,
			svgPadL, num(top), svgPadL, num(bottom), svgPadL, num(bottom), svgW-svgPadR, num(bottom))
		f(`<text x="14" y="%s" transform="rotate(-90 14 %s)" text-anchor="middle">ms (log scale)</text>`, num((top+bottom)/2), num((top+bottom)/2))
		f(`<text x="%d" y="%s" text-anchor="middle" fill="#555">percentile (log scale of 1/(1−q)), nearest-rank, all rounds pooled</text>`, (svgPadL+svgW-svgPadR)/2, num(bottom+34))
		for _, s := range []struct {
			name  string
			vals  []float64
			n     int64
			color string
			dash  string
		}{{g.Head.Name, p.head, p.nh, svgHead, ""}, {g.Base.Name, p.base, p.nb, svgBase, ` stroke-dasharray="6 3"`}} { // base on top: dashed, it shows where the lines coincide
			if s.n == 0 {
				y := top + 14
				if s.color == svgHead {
					y += 16
				}
				f(`<text x="%d" y="%s" fill="%s">%s: not measured (n=0)</text>`, svgPadL+10, num(y), s.color, esc(s.name))
				continue
			}
			pts := make([]string, len(s.vals))
			for k, v := range s.vals {
				pts[k] = num(xOf(chartQ[k])) + "," + num(yOf(v))
			}
			f(`<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`, s.color, s.dash, strings.Join(pts, " "))
			for k, v := range s.vals {
				f(`<circle cx="%s" cy="%s" r="3.5" fill="%s"><title>%s</title></circle>`, num(xOf(chartQ[k])), num(yOf(v)), s.color,
					esc(fmt.Sprintf("%s %s %s ms (n=%s)", s.name, chartPercentiles[k], MS(v), Count(s.n))))
			}
		}
		f(`</g>`)
	}
	f(`</svg>`)
	_, err := io.WriteString(w, b.String())
	return err
}

// judgedLabel marks a judged percentile: "judged p95: Δ +31.1% ·
// regression", and why a measured change was not called (c has been
// through Explain).
func judgedLabel(c verdict.Comparison) string {
	if c.Value == verdict.NotMeasured {
		return fmt.Sprintf("judged %s: not measured (%s)", c.Metric, c.Why)
	}
	s := fmt.Sprintf("judged %s: Δ %s · %s", c.Metric, delta(c), c.Value)
	if c.Undecided != "" {
		s += fmt.Sprintf(" (%s not called: generator behind)", c.Undecided)
	}
	return s
}

func noPanels(g GateReport) string {
	if g.Verdict.Value == verdict.Unusable {
		return "the gate is unusable: nothing is drawn"
	}
	return "no judged workload to draw"
}

// num formats an SVG coordinate with one decimal.
func num(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func esc(s string) string { return html.EscapeString(s) }
