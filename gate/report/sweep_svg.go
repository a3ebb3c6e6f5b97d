package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/loadgate/loadgate/gate/sweep"
)

// Dashed lines show where they coincide with the solid line beneath.
var (
	sweepColors = map[string]string{
		"p50": "#1f77b4", "p95": "#8a6d00", "p99": "#d62728",
		"offered": "#777777", "completed": "#1f77b4", "successes": "#1a7f37",
	}
	sweepDashes = map[string]string{"p95": ` stroke-dasharray="6 3"`, "offered": ` stroke-dasharray="6 3"`}
)

// SweepPlotSVG writes an SVG of a sweep's latency and throughput against the offered rate.
func SweepPlotSVG(w io.Writer, sw *sweep.Sweep) error {
	if sw == nil {
		return errNilSweep
	}
	names := sweepWorkloads(sw)
	d := newSVG(svgTop + (len(names)+1)*svgPanelH)
	d.f(`<text x="%d" y="24" font-size="17" font-weight="bold">%s</text>`, svgPadL, esc("sweep "+sw.Scenario.Name))
	for i, l := range wrapDots(conclusion(sw), 80) {
		d.f(`<text x="%d" y="%d" fill="#333">%s</text>`, svgPadL, 44+16*i, esc(l))
	}
	pl := newSweepPlot(d, sw)
	if len(sw.Steps) == 0 {
		d.f(`<text x="%d" y="%d">no step ran: nothing is drawn</text>`, svgPadL, svgTop+40)
	}
	for i, name := range names {
		pl.latencyPanel(i, name)
	}
	pl.throughputPanel(len(names))
	return d.end(w)
}

type sweepPlot struct {
	d      *svgDoc
	sw     *sweep.Sweep
	xTop   float64
	xTicks []float64
}

// sweepPoint is one marker of a series; over marks a lower bound.
type sweepPoint struct {
	x, v  float64
	over  bool
	label string
}

func newSweepPlot(d *svgDoc, sw *sweep.Sweep) *sweepPlot {
	xHi := 0.0
	for _, s := range sw.Steps {
		xHi = max(xHi, s.Rate, s.OfferedPerS)
	}
	if xHi == 0 {
		for _, r := range sw.Rates {
			xHi = max(xHi, r)
		}
	}
	_, xTop, xTicks := linRange(0, xHi)
	return &sweepPlot{d: d, sw: sw, xTop: xTop, xTicks: xTicks}
}

func (pl *sweepPlot) xOf(v float64) float64 {
	plotW := float64(svgW - svgPadL - svgPadR)
	return svgPadL + v/pl.xTop*plotW
}

func panelBounds(i int) (top, bottom float64) {
	return float64(svgTop + i*svgPanelH + svgPadT), float64(svgTop + (i+1)*svgPanelH - svgPadB)
}

func (pl *sweepPlot) marks(top, bottom float64) {
	d, sw := pl.d, pl.sw
	for _, t := range pl.xTicks {
		d.xGridLine(pl.xOf(t), top, bottom, esc(trimZeros(rate(t))))
	}
	d.xTitle(bottom, "offered rate, req/s")
	if sw.SustainableRate != nil {
		x := pl.xOf(*sw.SustainableRate)
		d.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#1a7f37" stroke-width="1.5" stroke-dasharray="2 3"/><text x="%s" y="%s" text-anchor="end" fill="#1a7f37">%s</text>`,
			num(x), num(top), num(x), num(bottom), num(x-4), num(top+12), esc("sustainable "+rate(*sw.SustainableRate)))
	}
	if sw.DegradesAt != nil {
		x := pl.xOf(*sw.DegradesAt)
		d.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#cf222e" stroke-width="1.5" stroke-dasharray="2 3"/><text x="%s" y="%s" fill="#cf222e">%s</text>`,
			num(x), num(top), num(x), num(bottom), num(x+4), num(top+26), esc("degrades "+rate(*sw.DegradesAt)))
	}
	d.axes(top, bottom)
}

func (pl *sweepPlot) series(key string, pts []sweepPoint, yOf func(float64) float64) {
	color := sweepColors[key]
	var line []string
	for _, p := range pts {
		line = append(line, num(pl.xOf(p.x))+","+num(yOf(p.v)))
	}
	if len(line) > 1 {
		pl.d.f(`<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`, color, sweepDashes[key], strings.Join(line, " "))
	}
	for _, p := range pts {
		fill := color
		if p.over {
			fill = "#ffffff"
		}
		pl.d.f(`<circle cx="%s" cy="%s" r="3.5" fill="%s" stroke="%s" stroke-width="1.5"><title>%s</title></circle>`,
			num(pl.xOf(p.x)), num(yOf(p.v)), fill, color, esc(p.label))
	}
}

func (pl *sweepPlot) legend(y float64, items ...string) {
	x := svgPadL + 260
	for _, it := range items {
		pl.d.f(`<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="%s" stroke-width="2"%s/><text x="%d" y="%s">%s</text>`,
			x, num(y-4), x+18, num(y-4), sweepColors[it], sweepDashes[it], x+22, num(y), esc(it))
		x += 30 + 8*len(it)
	}
}

func (pl *sweepPlot) latencyPanel(i int, name string) {
	d := pl.d
	top, bottom := panelBounds(i)
	ax := newLatencyAxis(top, bottom)
	for _, s := range pl.sw.Steps {
		for _, wl := range s.Workloads {
			if wl.Name == name && wl.AccountedMS.Count > 0 {
				ax.add(wl.AccountedMS.P50, wl.AccountedMS.P95, wl.AccountedMS.P99)
			}
		}
	}
	ax.fix()
	d.f(`<g>`)
	d.f(`<text x="%d" y="%s" font-weight="bold">%s</text>`, svgPadL, num(top-26), esc("latency · "+name))
	pl.legend(top-26, "p50", "p95", "p99")
	d.f(`<text x="%d" y="%s" fill="#555">hollow: a lower bound (the percentile fell among unfinished requests)</text>`, svgPadL, num(top-10))
	ax.grid(d)
	pl.marks(top, bottom)
	d.yTitle(top, bottom, "ms from due time (log)")
	for _, q := range []string{"p99", "p95", "p50"} {
		pl.series(q, pl.latencyPoints(name, q), ax.y)
	}
	d.f(`</g>`)
}

func (pl *sweepPlot) latencyPoints(name, q string) []sweepPoint {
	var pts []sweepPoint
	for _, s := range pl.sw.Steps {
		for _, wl := range s.Workloads {
			ac := wl.AccountedMS
			if wl.Name != name || ac.Count == 0 {
				continue
			}
			v, over := ac.P50, ac.P50Over
			switch q {
			case "p95":
				v, over = ac.P95, ac.P95Over
			case "p99":
				v, over = ac.P99, ac.P99Over
			}
			pts = append(pts, sweepPoint{x: s.Rate, v: v, over: over,
				label: fmt.Sprintf("step %d, %s req/s: %s %s ms (n=%s)", s.Number, rate(s.Rate), q, accounted(v, over), accountedN(ac))})
		}
	}
	return pts
}

func (pl *sweepPlot) throughputPanel(i int) {
	d := pl.d
	top, bottom := panelBounds(i)
	yHi := 0.0
	for _, s := range pl.sw.Steps {
		yHi = max(yHi, s.OfferedPerS, s.CompletedPerS, s.GoodputPerS)
	}
	_, yTop, yTicks := linRange(0, yHi)
	yOf := func(v float64) float64 { return bottom - v/yTop*(bottom-top) }
	d.f(`<g>`)
	d.f(`<text x="%d" y="%s" font-weight="bold">throughput</text>`, svgPadL, num(top-26))
	pl.legend(top-26, "offered", "completed", "successes")
	d.yGrid(yTicks, yOf, func(t float64) string { return trimZeros(rate(t)) })
	pl.marks(top, bottom)
	d.yTitle(top, bottom, "per second of the window")
	for _, k := range []string{"offered", "completed", "successes"} {
		var pts []sweepPoint
		for _, s := range pl.sw.Steps {
			v, n := s.OfferedPerS, s.Offered
			switch k {
			case "completed":
				v, n = s.CompletedPerS, s.Completed
			case "successes":
				v, n = s.GoodputPerS, s.Succeeded
			}
			pts = append(pts, sweepPoint{x: s.Rate, v: v, label: fmt.Sprintf("step %d, %s req/s: %s %s/s (n=%s)", s.Number, rate(s.Rate), k, rate(v), Count(n))})
		}
		pl.series(k, pts, yOf)
	}
	d.f(`</g>`)
}

// wrapDots breaks a " · "-separated sentence into at most two lines of ~width.
func wrapDots(s string, width int) []string {
	parts := strings.Split(s, " · ")
	var lines []string
	cur := ""
	for _, p := range parts {
		switch {
		case cur == "":
			cur = p
		case len([]rune(cur))+3+len([]rune(p)) <= width || len(lines) == 1:
			cur += " · " + p
		default:
			lines = append(lines, cur)
			cur = p
		}
	}
	return append(lines, cur)
}
