package report

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"

	"github.com/loadgate/loadgate/gate/verdict"
)

// SVG geometry of ComparePlotSVG: one panel per judged (then recover) phase
// and workload, stacked.
const (
	svgW      = 640
	svgPanelH = 260
	svgTop    = 56 // title and legend
	svgPadL   = 64
	svgPadR   = 24
	svgPadT   = 30
	svgPadB   = 44
	svgBase   = "#1f77b4"
	svgHead   = "#d62728"
)

// chartQ are the quantiles of chartPercentiles, for the x axis.
var chartQ = []float64{0.5, 0.9, 0.95, 0.99, 0.999}

// ComparePlotSVG writes a self-contained SVG (no script, no external font or
// style) of latency by percentile, base against head, for every workload of
// the judged and recover phases: nearest-rank percentiles of all rounds
// pooled per side, in ms, with the x axis on a log scale of 1/(1−q) so
// p50 … p99.9 are evenly readable. Each point carries a tooltip with its
// value and sample count. A workload not measured on a side is drawn as
// text, not as a line.
func ComparePlotSVG(w io.Writer, g GateReport) error {
	g.normalize()
	type panel struct {
		phase, name string
		base, head  []float64
		nb, nh      int64
	}
	var panels []panel
	for _, p := range g.judgedPhases() {
		if g.Verdict.Value == verdict.Unusable {
			break // no number of an unusable gate is drawn
		}
		for _, name := range g.workloadNames(p.Name) {
			sb, _ := pooledSummary(g.Base, p.Name, name)
			sh, _ := pooledSummary(g.Head, p.Name, name)
			panels = append(panels, panel{p.Name, name, summaryValues(sb), summaryValues(sh), sb.Count, sh.Count})
		}
	}
	h := svgTop + max(len(panels), 1)*svgPanelH
	var b strings.Builder
	f := func(format string, a ...any) { fmt.Fprintf(&b, format, a...); b.WriteByte('\n') }
	f(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`, svgW, h, svgW, h)
	f(`<rect width="100%%" height="100%%" fill="#ffffff"/>`)
	f(`<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`, svgPadL, esc(fmt.Sprintf("loadgate gate %s: latency by percentile, %s vs %s (%d rounds, %s)",
		g.Scenario.Name, g.Base.Name, g.Head.Name, g.Rounds, strings.ToUpper(string(g.Verdict.Value)))))
	f(`<line x1="%d" y1="40" x2="%d" y2="40" stroke="%s" stroke-width="2" stroke-dasharray="6 3"/><text x="%d" y="44">%s %s</text>`,
		svgPadL, svgPadL+24, svgBase, svgPadL+30, esc(g.Base.Name), esc(shortCommit(sideCommit(g.Base))))
	f(`<line x1="%d" y1="40" x2="%d" y2="40" stroke="%s" stroke-width="2"/><text x="%d" y="44">%s %s</text>`,
		svgPadL+200, svgPadL+224, svgHead, svgPadL+230, esc(g.Head.Name), esc(shortCommit(sideCommit(g.Head))))
	if len(panels) == 0 {
		f(`<text x="%d" y="%d">%s</text>`, svgPadL, svgTop+40, esc(noPanels(g)))
	}
	xOf := func(q float64) float64 {
		lo, hi := math.Log10(1/(1-chartQ[0])), math.Log10(1/(1-chartQ[len(chartQ)-1]))
		return svgPadL + (math.Log10(1/(1-q))-lo)/(hi-lo)*float64(svgW-svgPadL-svgPadR)
	}
	for i, p := range panels {
		top := float64(svgTop + i*svgPanelH + svgPadT)
		bottom := float64(svgTop + (i+1)*svgPanelH - svgPadB)
		f(`<g>`)
		f(`<text x="%d" y="%s" font-weight="bold">%s</text>`, svgPadL, num(top-10), esc(fmt.Sprintf("%s · %s (n %s=%s, %s=%s)",
			p.phase, p.name, g.Base.Name, count(p.nb), g.Head.Name, count(p.nh))))
		hi := 0.0
		for _, v := range append(append([]float64{}, p.base...), p.head...) {
			hi = max(hi, v)
		}
		top0 := niceCeil(hi)
		yOf := func(v float64) float64 { return bottom - v/top0*(bottom-top) }
		// axes and grid
		for k := 0; k <= 4; k++ {
			v := top0 * float64(k) / 4
			y := yOf(v)
			f(`<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#e5e5e5"/><text x="%d" y="%s" text-anchor="end">%s</text>`,
				svgPadL, num(y), svgW-svgPadR, num(y), svgPadL-6, num(y+4), esc(ms(v)))
		}
		for k, q := range chartQ {
			x := xOf(q)
			f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e5e5e5"/><text x="%s" y="%s" text-anchor="middle">%s</text>`,
				num(x), num(top), num(x), num(bottom), num(x), num(bottom+16), chartPercentiles[k])
		}
		f(`<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#333"/><line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#333"/>`,
			svgPadL, num(top), svgPadL, num(bottom), svgPadL, num(bottom), svgW-svgPadR, num(bottom))
		f(`<text x="14" y="%s" transform="rotate(-90 14 %s)" text-anchor="middle">ms</text>`, num((top+bottom)/2), num((top+bottom)/2))
		f(`<text x="%d" y="%s" text-anchor="middle" fill="#555">percentile (log scale of 1/(1−q)), nearest-rank, all rounds pooled</text>`, (svgPadL+svgW-svgPadR)/2, num(bottom+34))
		for _, s := range []struct {
			name  string
			vals  []float64
			n     int64
			color string
			dash  string
		}{{g.Base.Name, p.base, p.nb, svgBase, ` stroke-dasharray="6 3"`}, {g.Head.Name, p.head, p.nh, svgHead, ""}} {
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
					esc(fmt.Sprintf("%s %s %s ms (n=%s)", s.name, chartPercentiles[k], ms(v), count(s.n))))
			}
		}
		f(`</g>`)
	}
	f(`</svg>`)
	_, err := io.WriteString(w, b.String())
	return err
}

func noPanels(g GateReport) string {
	if g.Verdict.Value == verdict.Unusable {
		return "the gate is unusable: nothing is drawn"
	}
	return "no judged workload to draw"
}

// num formats an SVG coordinate with one decimal.
func num(v float64) string { return fmt.Sprintf("%.1f", v) }

func esc(s string) string { return html.EscapeString(s) }
