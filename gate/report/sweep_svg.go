package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/loadgate/loadgate/gate/sweep"
)

// Colours and dashes of SweepPlotSVG's lines (dashed ones show where
// they coincide with the solid line they run along).
var (
	sweepColors = map[string]string{
		"p50": "#1f77b4", "p95": "#8a6d00", "p99": "#d62728",
		"offered": "#777777", "completed": "#1f77b4", "successes": "#1a7f37",
	}
	sweepDashes = map[string]string{"p95": ` stroke-dasharray="6 3"`, "offered": ` stroke-dasharray="6 3"`}
)

// SweepPlotSVG writes a self-contained SVG (no script, no external font or
// style) of a sweep against the offered rate: per workload, latency p50,
// p95 and p99 from the due time (ms, log axis; every request accounted: a
// percentile that fell among the unfinished requests is a hollow marker
// at its lower bound), then throughput (offered, completed and successes
// per second). The sustainable rate and the rate it degrades at are
// marked. Every point carries a tooltip with its value and sample count.
func SweepPlotSVG(w io.Writer, sw *sweep.Sweep) error {
	if sw == nil {
		return errNilSweep
	}
	names := sweepWorkloads(sw)
	panels := len(names) + 1
	d := newSVG(svgTop + panels*svgPanelH)
	f := d.f
	f(`<text x="%d" y="24" font-size="17" font-weight="bold">%s</text>`, svgPadL, esc("sweep "+sw.Scenario.Name))
	for i, l := range wrapDots(conclusion(sw), 80) {
		f(`<text x="%d" y="%d" fill="#333">%s</text>`, svgPadL, 44+16*i, esc(l))
	}
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
	plotW := float64(svgW - svgPadL - svgPadR)
	xOf := func(v float64) float64 { return svgPadL + v/xTop*plotW }
	panelTop := func(i int) (float64, float64) {
		return float64(svgTop + i*svgPanelH + svgPadT), float64(svgTop + (i+1)*svgPanelH - svgPadB)
	}
	if len(sw.Steps) == 0 {
		f(`<text x="%d" y="%d">no step ran: nothing is drawn</text>`, svgPadL, svgTop+40)
	}
	// marks draws the x grid and the sustainable / degrades lines of a panel.
	marks := func(top, bottom float64) {
		for _, t := range xTicks {
			d.xGridLine(xOf(t), top, bottom, esc(trimZeros(rate(t))))
		}
		d.xTitle(bottom, "offered rate, req/s")
		if sw.SustainableRate != nil {
			x := xOf(*sw.SustainableRate)
			f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#1a7f37" stroke-width="1.5" stroke-dasharray="2 3"/><text x="%s" y="%s" text-anchor="end" fill="#1a7f37">%s</text>`,
				num(x), num(top), num(x), num(bottom), num(x-4), num(top+12), esc("sustainable "+rate(*sw.SustainableRate)))
		}
		if sw.DegradesAt != nil {
			x := xOf(*sw.DegradesAt)
			f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#cf222e" stroke-width="1.5" stroke-dasharray="2 3"/><text x="%s" y="%s" fill="#cf222e">%s</text>`,
				num(x), num(top), num(x), num(bottom), num(x+4), num(top+26), esc("degrades "+rate(*sw.DegradesAt)))
		}
		d.axes(top, bottom)
	}
	type point struct {
		x, v  float64
		over  bool
		label string
	}
	series := func(key string, pts []point, yOf func(float64) float64) {
		color := sweepColors[key]
		var line []string
		for _, p := range pts {
			line = append(line, num(xOf(p.x))+","+num(yOf(p.v)))
		}
		if len(line) > 1 {
			f(`<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`, color, sweepDashes[key], strings.Join(line, " "))
		}
		for _, p := range pts {
			fill := color
			if p.over {
				fill = "#ffffff"
			}
			f(`<circle cx="%s" cy="%s" r="3.5" fill="%s" stroke="%s" stroke-width="1.5"><title>%s</title></circle>`,
				num(xOf(p.x)), num(yOf(p.v)), fill, color, esc(p.label))
		}
	}
	legend := func(y float64, items ...string) {
		x := svgPadL + 260
		for _, it := range items {
			f(`<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="%s" stroke-width="2"%s/><text x="%d" y="%s">%s</text>`,
				x, num(y-4), x+18, num(y-4), sweepColors[it], sweepDashes[it], x+22, num(y), esc(it))
			x += 30 + 8*len(it)
		}
	}
	for i, name := range names {
		top, bottom := panelTop(i)
		ax := newLatencyAxis(top, bottom)
		for _, s := range sw.Steps {
			for _, wl := range s.Workloads {
				if wl.Name == name && wl.AccountedMS.Count > 0 {
					ax.add(wl.AccountedMS.P50, wl.AccountedMS.P95, wl.AccountedMS.P99)
				}
			}
		}
		ax.fix()
		yOf := ax.y
		f(`<g>`)
		f(`<text x="%d" y="%s" font-weight="bold">%s</text>`, svgPadL, num(top-26), esc("latency · "+name))
		legend(top-26, "p50", "p95", "p99")
		f(`<text x="%d" y="%s" fill="#555">hollow: a lower bound (the percentile fell among unfinished requests)</text>`, svgPadL, num(top-10))
		ax.grid(d)
		marks(top, bottom)
		d.yTitle(top, bottom, "ms from due time (log)")
		for _, q := range []string{"p99", "p95", "p50"} {
			var pts []point
			for _, s := range sw.Steps {
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
					pts = append(pts, point{x: s.Rate, v: v, over: over,
						label: fmt.Sprintf("step %d, %s req/s: %s %s ms (n=%s)", s.Number, rate(s.Rate), q, accounted(v, over), accountedN(ac))})
				}
			}
			series(q, pts, yOf)
		}
		f(`</g>`)
	}
	// Throughput.
	top, bottom := panelTop(len(names))
	yHi := 0.0
	for _, s := range sw.Steps {
		yHi = max(yHi, s.OfferedPerS, s.CompletedPerS, s.GoodputPerS)
	}
	_, yTop, yTicks := linRange(0, yHi)
	yOf := func(v float64) float64 { return bottom - v/yTop*(bottom-top) }
	f(`<g>`)
	f(`<text x="%d" y="%s" font-weight="bold">throughput</text>`, svgPadL, num(top-26))
	legend(top-26, "offered", "completed", "successes")
	d.yGrid(yTicks, yOf, func(t float64) string { return trimZeros(rate(t)) })
	marks(top, bottom)
	d.yTitle(top, bottom, "per second of the window")
	for _, k := range []string{"offered", "completed", "successes"} {
		var pts []point
		for _, s := range sw.Steps {
			v, n := s.OfferedPerS, s.Offered
			switch k {
			case "completed":
				v, n = s.CompletedPerS, s.Completed
			case "successes":
				v, n = s.GoodputPerS, s.Succeeded
			}
			pts = append(pts, point{x: s.Rate, v: v, label: fmt.Sprintf("step %d, %s req/s: %s %s/s (n=%s)", s.Number, rate(s.Rate), k, rate(v), Count(n))})
		}
		series(k, pts, yOf)
	}
	f(`</g>`)
	return d.end(w)
}

// wrapDots breaks a " · "-separated sentence into lines of at most about
// width characters (two at most: the SVG's header has room for two).
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
