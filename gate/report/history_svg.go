package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/loadgate/loadgate/gate/history"
)

const (
	svgHistory = "#1f77b4" // the cumulative change and its band
	svgAbs     = "#555555" // each entry's own percentile
	svgTol     = "#cf222e" // the cumulative tolerance, change points
)

// HistorySVG writes an SVG of one history series: the cumulative change with
// its band, tolerance and change points above, each entry's percentile below.
func HistorySVG(w io.Writer, a history.Analysis, k history.Key) error {
	var s *history.Series
	for i := range a.Series {
		if a.Series[i].Key == k {
			s = &a.Series[i]
		}
	}
	if s == nil {
		return fmt.Errorf("report: history: no series %s", k)
	}
	h := &historyPlot{d: newSVG(svgTop + 2*svgPanelH), a: a, s: s, k: k, es: a.Chain.Entries}
	h.since = commitText(h.es[a.Since].Commit)
	h.n = len(s.Points)
	h.every = max(1, (h.n+11)/12) // at most about twelve x labels
	h.d.verdictTitle(historyColor(s.Rule), strings.ToUpper(string(s.Rule)), "· history "+a.Scenario+" · "+k.Phase+" · "+k.Workload+" "+k.Metric)
	h.legend()
	h.cumulativePanel()
	h.absolutePanel()
	return h.d.end(w)
}

type historyPlot struct {
	d        *svgDoc
	a        history.Analysis
	s        *history.Series
	k        history.Key
	es       []history.Entry
	since    string
	n, every int
}

func (h *historyPlot) legend() {
	a, s, f := h.a, h.s, h.d.f
	since := h.since
	total := "not measured across a missing link"
	if s.Total.Known {
		total = fmt.Sprintf("%s (%s … %s)", SignedPercent(s.Total.Ratio), SignedPercent(s.Total.CILow), boundPercent(s.Total.CIHigh))
	}
	f(`<text x="%d" y="44" fill="#333">%s</text>`, svgPadL, esc(fmt.Sprintf("since %s: %s · tolerance +%s", since, total, Percent(a.Tolerance))))
	f(`<rect x="%d" y="54" width="24" height="10" fill="%s" fill-opacity="0.2"/><line x1="%d" y1="59" x2="%d" y2="59" stroke="%s" stroke-width="2"/><text x="%d" y="64">%s</text>`,
		svgPadL, svgHistory, svgPadL, svgPadL+24, svgHistory, svgPadL+30, esc("cumulative change, "+Confidence(a.Confidence)+" band"))
	f(`<line x1="%d" y1="59" x2="%d" y2="59" stroke="%s" stroke-width="1.5" stroke-dasharray="4 3"/><text x="%d" y="64">%s</text>`,
		svgPadL+280, svgPadL+304, svgTol, svgPadL+310, "change point")
}

func (h *historyPlot) xOf(i int) float64 {
	plotW := float64(svgW - svgPadL - svgPadR)
	if h.n == 1 {
		return svgPadL + plotW/2
	}
	return svgPadL + 8 + float64(i)/float64(h.n-1)*(plotW-16)
}

func (h *historyPlot) xLabels(top, bottom float64) {
	for i := range h.s.Points {
		if i%h.every == 0 || i == h.n-1 {
			h.d.xGridLine(h.xOf(i), top, bottom, fmt.Sprint(i+1))
		}
	}
}

// cpLines marks the change points between the old level's last entry and the new's first.
func (h *historyPlot) cpLines(top, bottom float64, label bool) {
	f := h.d.f
	for _, cp := range h.s.ChangePoints {
		x := (h.xOf(cp.Index-1) + h.xOf(cp.Index)) / 2
		if cp.Index == 0 {
			x = h.xOf(0)
		}
		f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.5" stroke-dasharray="4 3"><title>%s</title></line>`,
			num(x), num(top), num(x), num(bottom), svgTol, esc(changePointText(cp)+", "+strings.ReplaceAll(commitRange(h.es, cp.Index), "`", "")))
		if label {
			f(`<text x="%s" y="%s" fill="%s" font-weight="bold">%s</text>`, num(x+4), num(top+12), svgTol, esc(changePointText(cp)))
		}
	}
}

func (h *historyPlot) cumulativePanel() {
	a, s, d, f, since, xOf := h.a, h.s, h.d, h.d.f, h.since, h.xOf
	top, bottom := float64(svgTop+svgPadT), float64(svgTop+svgPanelH-svgPadB)
	lo, hi := 0.0, a.Tolerance*100
	for _, p := range s.Points {
		if c := p.Cumulative; c.Known && p.Entry >= a.Since {
			lo, hi = min(lo, (c.CILow-1)*100), max(hi, min(c.CIHigh-1, 10)*100)
		}
	}
	ya, yz, ticks := linRange(lo, hi)
	yOf := func(pct float64) float64 {
		pct = min(max(pct, ya), yz)
		return bottom - (pct-ya)/(yz-ya)*(bottom-top)
	}
	f(`<g>`)
	f(`<text x="%d" y="%s" font-weight="bold">%s</text>`, svgPadL, num(top-26), esc("change since "+since+", chained paired gates"))
	d.yGrid(ticks, yOf, func(t float64) string { return strings.Replace(fmt.Sprintf("%+.0f%%", t), "-", minus, 1) })
	h.xLabels(top, bottom)
	f(`<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="%s" stroke-width="1.5" stroke-dasharray="6 3"/><text x="%d" y="%s" fill="%s">%s</text>`,
		svgPadL, num(yOf(a.Tolerance*100)), svgW-svgPadR, num(yOf(a.Tolerance*100)), svgTol, svgPadL+4, num(yOf(a.Tolerance*100)-4), svgTol,
		esc("tolerance +"+Percent(a.Tolerance)))
	// A missing link breaks the band: a band and a line per run of known points.
	var run []history.Point
	flush := func() {
		if len(run) == 0 {
			return
		}
		var upper, lower, mid []string
		for _, p := range run {
			x := num(xOf(p.Entry))
			upper = append(upper, x+","+num(yOf((p.Cumulative.CIHigh-1)*100)))
			lower = append([]string{x + "," + num(yOf((p.Cumulative.CILow-1)*100))}, lower...)
			mid = append(mid, x+","+num(yOf((p.Cumulative.Ratio-1)*100)))
		}
		f(`<polygon fill="%s" fill-opacity="0.2" stroke="none" points="%s"/>`, svgHistory, strings.Join(append(upper, lower...), " "))
		f(`<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`, svgHistory, strings.Join(mid, " "))
		run = run[:0]
	}
	for _, p := range s.Points {
		if p.Entry >= a.Since && p.Cumulative.Known {
			run = append(run, p)
		} else {
			flush()
		}
	}
	flush()
	for _, p := range s.Points {
		if c := p.Cumulative; p.Entry >= a.Since && c.Known {
			f(`<circle cx="%s" cy="%s" r="3" fill="%s"><title>%s</title></circle>`, num(xOf(p.Entry)), num(yOf((c.Ratio-1)*100)), historyColor(c.Value),
				esc(fmt.Sprintf("entry %d %s: %s since %s, %s", p.Entry+1, commitText(p.Commit), intervalText(c.Ratio, c.CILow, c.CIHigh), since, c.Value)))
		}
	}
	h.cpLines(top, bottom, true)
	d.axes(top, bottom)
	d.yTitle(top, bottom, "cumulative change")
	d.xTitle(bottom, "entry (oldest first)")
	f(`</g>`)

}

func (h *historyPlot) absolutePanel() {
	s, k, d, f, xOf := h.s, h.k, h.d, h.d.f, h.xOf
	top, bottom := float64(svgTop+svgPanelH+svgPadT), float64(svgTop+2*svgPanelH-svgPadB)
	ax := newLatencyAxis(top, bottom)
	for _, p := range s.Points {
		if p.Count > 0 {
			ax.add(p.AbsoluteMS)
		}
	}
	ax.fix()
	f(`<g>`)
	f(`<text x="%d" y="%s" font-weight="bold">%s</text>`, svgPadL, num(top-26), esc(k.Metric+" of each entry on its own runner (absolute: runners differ)"))
	ax.grid(d)
	h.xLabels(top, bottom)
	var pts []string
	for _, p := range s.Points {
		if p.Count > 0 {
			pts = append(pts, num(xOf(p.Entry))+","+num(ax.y(p.AbsoluteMS)))
		}
	}
	if len(pts) > 0 {
		f(`<polyline fill="none" stroke="%s" stroke-width="1" points="%s"/>`, svgAbs, strings.Join(pts, " "))
	}
	for _, p := range s.Points {
		if p.Count > 0 {
			f(`<circle cx="%s" cy="%s" r="3.5" fill="%s"><title>%s</title></circle>`, num(xOf(p.Entry)), num(ax.y(p.AbsoluteMS)), svgAbs,
				esc(fmt.Sprintf("entry %d %s %s: %s %s ms (n=%s) on %s", p.Entry+1, commitText(p.Commit), p.Date.Format("2006-01-02"),
					k.Metric, MS(p.AbsoluteMS), Count(p.Count), orUnknown(p.Machine))))
		}
	}
	h.cpLines(top, bottom, false)
	d.axes(top, bottom)
	d.yTitle(top, bottom, "ms (log scale)")
	d.xTitle(bottom, "entry (oldest first)")
	f(`</g>`)
}
