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

	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

// Geometry of ComparePlotSVG: one panel per phase and workload, stacked.
const (
	svgW      = 800 // within GitHub's ~900 px column at its own size
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

var chartQ = []float64{0.5, 0.9, 0.95, 0.99, 0.999}

func verdictColor(v verdict.Value) string {
	switch v {
	case verdict.Pass, verdict.Improvement:
		return "#1a7f37"
	case verdict.Inconclusive:
		return "#9a6700"
	}
	return "#cf222e"
}

// ComparePlotSVG writes an SVG of each judged workload's latency by percentile, base against head.
func ComparePlotSVG(w io.Writer, o rounds.Outcome) error {
	g := explained(o)
	panels := comparePanels(g)
	d := newSVG(svgTop + max(len(panels), 1)*svgPanelH)
	compareHeader(d, g)
	if len(panels) == 0 {
		d.f(`<text x="%d" y="%d">%s</text>`, svgPadL, svgTop+40, esc(noPanels(g)))
	}
	for i, p := range panels {
		drawComparePanel(d, g, i, p)
	}
	return d.end(w)
}

type comparePanel struct {
	phase, name string
	base, head  []float64
	nb, nh      int64
	judged      []verdict.Comparison
}

// comparePanels pools each judged workload's percentiles per side; none if unusable.
func comparePanels(g gateReport) []comparePanel {
	if g.Verdict.Value == verdict.Unusable {
		return nil
	}
	var panels []comparePanel
	for _, p := range g.judgedPhases() {
		for _, name := range g.workloadNames(p.Name) {
			sb, _ := pooledSummary(g.Base, g.Verdict.LeftOut, p.Name, name)
			sh, _ := pooledSummary(g.Head, g.Verdict.LeftOut, p.Name, name)
			pn := comparePanel{phase: p.Name, name: name, base: summaryValues(sb), head: summaryValues(sh), nb: sb.Count, nh: sh.Count}
			for _, c := range g.comparisons(p.Name) {
				if c.Workload == name && c.Metric != verdict.MetricErrorRate {
					pn.judged = append(pn.judged, c)
				}
			}
			panels = append(panels, pn)
		}
	}
	return panels
}

func compareHeader(d *svgDoc, g gateReport) {
	f := d.f
	d.verdictTitle(verdictColor(g.Verdict.Value), strings.ToUpper(string(g.Verdict.Value)), "· gate "+g.Scenario.Name)
	f(`<text x="%d" y="44" fill="#333">%s</text>`, svgPadL, esc(fmt.Sprintf("latency by percentile, %s vs %s, %d round(s), %s",
		g.Base.Name, g.Head.Name, g.Rounds, g.order().plain())))
	f(`<line x1="%d" y1="60" x2="%d" y2="60" stroke="%s" stroke-width="2" stroke-dasharray="6 3"/><text x="%d" y="64">%s %s</text>`,
		svgPadL, svgPadL+24, svgBase, svgPadL+30, esc(g.Base.Name), esc(commitText(sideCommit(g.Base))))
	f(`<line x1="%d" y1="60" x2="%d" y2="60" stroke="%s" stroke-width="2"/><text x="%d" y="64">%s %s</text>`,
		svgPadL+200, svgPadL+224, svgHead, svgPadL+230, esc(g.Head.Name), esc(commitText(sideCommit(g.Head))))
}

// percentileX is the x of quantile q: log scale of 1/(1−q) over chartQ.
func percentileX(q float64) float64 {
	lo, hi := math.Log10(1/(1-chartQ[0])), math.Log10(1/(1-chartQ[len(chartQ)-1]))
	plotW := float64(svgW - svgPadL - svgPadR)
	return svgPadL + (math.Log10(1/(1-q))-lo)/(hi-lo)*plotW
}

func drawComparePanel(d *svgDoc, g gateReport, i int, p comparePanel) {
	f := d.f
	top := float64(svgTop + i*svgPanelH + svgPadT)
	bottom := float64(svgTop + (i+1)*svgPanelH - svgPadB)
	f(`<g>`)
	f(`<text x="%d" y="%s"><tspan font-weight="bold">%s</tspan><tspan dx="8">%s</tspan></text>`, svgPadL, num(top-26), esc(p.phase+" · "+p.name),
		esc(fmt.Sprintf("n %s=%s, %s=%s", g.Base.Name, Count(p.nb), g.Head.Name, Count(p.nh))))
	ax := newLatencyAxis(top, bottom)
	if p.nb > 0 {
		ax.add(p.base...)
	}
	if p.nh > 0 {
		ax.add(p.head...)
	}
	ax.fix()
	ax.grid(d)
	for k, q := range chartQ {
		d.xGridLine(percentileX(q), top, bottom, chartPercentiles[k])
	}
	for _, c := range p.judged {
		drawJudged(d, c, top, bottom)
	}
	d.axes(top, bottom)
	d.yTitle(top, bottom, "ms (log scale)")
	d.xTitle(bottom, "percentile (log scale of 1/(1−q)), nearest-rank, all rounds pooled")
	// Base last, dashed on top: it shows where the lines coincide.
	drawCompareSide(d, g.Head.Name, p.head, p.nh, svgHead, "", top, ax.y)
	drawCompareSide(d, g.Base.Name, p.base, p.nb, svgBase, ` stroke-dasharray="6 3"`, top, ax.y)
	f(`</g>`)
}

func drawJudged(d *svgDoc, c verdict.Comparison, top, bottom float64) {
	k := slices.Index(chartPercentiles, c.Metric)
	if k < 0 {
		return
	}
	x := percentileX(chartQ[k])
	d.f(`<rect x="%s" y="%s" width="12" height="%s" fill="%s" fill-opacity="0.12"/><line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.5"/>`,
		num(x-6), num(top), num(bottom-top), svgJudged, num(x), num(top), num(x), num(bottom), svgJudged)
	// Centred inside the plot (≈ 7.5 px per bold character); squeezed, never cut.
	label := judgedLabel(c)
	wide := 7.5 * float64(utf8.RuneCountInString(label))
	fit := ""
	if plotW := float64(svgW - svgPadL - svgPadR); wide > plotW {
		wide, fit = plotW, fmt.Sprintf(` textLength="%s" lengthAdjust="spacingAndGlyphs"`, num(plotW))
	}
	lx := max(svgPadL, min(x-wide/2, svgW-svgPadR-wide))
	d.f(`<text x="%s" y="%s" fill="%s" font-weight="bold"%s>%s</text>`, num(lx), num(top-8), svgJudged, fit, esc(label))
}

func drawCompareSide(d *svgDoc, name string, vals []float64, n int64, color, dash string, top float64, yOf func(float64) float64) {
	if n == 0 {
		y := top + 14
		if color == svgHead {
			y += 16
		}
		d.f(`<text x="%d" y="%s" fill="%s">%s: not measured (n=0)</text>`, svgPadL+10, num(y), color, esc(name))
		return
	}
	pts := make([]string, len(vals))
	for k, v := range vals {
		pts[k] = num(percentileX(chartQ[k])) + "," + num(yOf(v))
	}
	d.f(`<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`, color, dash, strings.Join(pts, " "))
	for k, v := range vals {
		d.f(`<circle cx="%s" cy="%s" r="3.5" fill="%s"><title>%s</title></circle>`, num(percentileX(chartQ[k])), num(yOf(v)), color,
			esc(fmt.Sprintf("%s %s %s ms (n=%s)", name, chartPercentiles[k], MS(v), Count(n))))
	}
}

// judgedLabel marks a judged percentile; c has been through Explain.
func judgedLabel(c verdict.Comparison) string {
	if c.Value == verdict.NotMeasured {
		return fmt.Sprintf("judged %s: not measured (%s)", c.Metric, c.Why)
	}
	s := fmt.Sprintf("judged %s: %s · %s", c.Metric, change(c), c.Value)
	if c.Undecided != "" {
		s += fmt.Sprintf(" (%s not called: generator behind)", c.Undecided)
	}
	return s
}

func noPanels(g gateReport) string {
	if g.Verdict.Value == verdict.Unusable {
		return "the gate is unusable: nothing is drawn"
	}
	return "no judged workload to draw"
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func esc(s string) string { return html.EscapeString(s) }
