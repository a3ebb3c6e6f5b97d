package report

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// svgDoc is a picture being written, one element a line; not safe for concurrent use.
type svgDoc struct{ b strings.Builder }

func newSVG(h int) *svgDoc {
	d := &svgDoc{}
	d.f(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`, svgW, h, svgW, h)
	d.f(`<rect width="100%%" height="100%%" fill="#ffffff"/>`)
	return d
}

func (d *svgDoc) f(format string, a ...any) {
	fmt.Fprintf(&d.b, format, a...)
	d.b.WriteByte('\n')
}

func (d *svgDoc) end(w io.Writer) error {
	d.f(`</svg>`)
	_, err := io.WriteString(w, d.b.String())
	return err
}

// verdictTitle writes the verdict word in its colour, never cut, then rest.
func (d *svgDoc) verdictTitle(color, word, rest string) {
	d.f(`<text x="%d" y="24" font-size="17" font-weight="bold"><tspan fill="%s">%s</tspan><tspan dx="8" font-weight="normal" fill="#333">%s</tspan></text>`,
		svgPadL, color, esc(word), esc(rest))
}

func (d *svgDoc) yGrid(ticks []float64, yOf func(float64) float64, label func(float64) string) {
	for _, t := range ticks {
		y := yOf(t)
		d.f(`<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#e5e5e5"/><text x="%d" y="%s" text-anchor="end">%s</text>`,
			svgPadL, num(y), svgW-svgPadR, num(y), svgPadL-6, num(y+4), esc(label(t)))
	}
}

func (d *svgDoc) xGridLine(x, top, bottom float64, label string) {
	d.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e5e5e5"/><text x="%s" y="%s" text-anchor="middle">%s</text>`,
		num(x), num(top), num(x), num(bottom), num(x), num(bottom+16), label)
}

func (d *svgDoc) axes(top, bottom float64) {
	d.f(`<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#333"/><line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#333"/>`,
		svgPadL, num(top), svgPadL, num(bottom), svgPadL, num(bottom), svgW-svgPadR, num(bottom))
}

func (d *svgDoc) yTitle(top, bottom float64, s string) {
	d.f(`<text x="14" y="%s" transform="rotate(-90 14 %s)" text-anchor="middle">%s</text>`, num((top+bottom)/2), num((top+bottom)/2), esc(s))
}

func (d *svgDoc) xTitle(bottom float64, s string) {
	d.f(`<text x="%d" y="%s" text-anchor="middle" fill="#555">%s</text>`, (svgPadL+svgW-svgPadR)/2, num(bottom+34), esc(s))
}

// latencyAxis is ms on a log scale over the values added (1 … 10 ms when none).
type latencyAxis struct {
	lo, hi float64 // the values seen
	a, z   float64 // the axis's ends
	ticks  []float64
	top    float64
	bottom float64
}

func newLatencyAxis(top, bottom float64) *latencyAxis {
	return &latencyAxis{lo: math.Inf(1), top: top, bottom: bottom}
}

func (ax *latencyAxis) add(vs ...float64) {
	for _, v := range vs {
		if v > 0 {
			ax.lo, ax.hi = min(ax.lo, v), max(ax.hi, v)
		}
	}
}

func (ax *latencyAxis) fix() {
	lo, hi := ax.lo, ax.hi
	if hi == 0 {
		lo, hi = 1, 10
	}
	ax.a, ax.z, ax.ticks = logRange(lo, hi)
}

func (ax *latencyAxis) y(v float64) float64 {
	v = min(max(v, ax.a), ax.z)
	return ax.bottom - (math.Log10(v)-math.Log10(ax.a))/(math.Log10(ax.z)-math.Log10(ax.a))*(ax.bottom-ax.top)
}

func (ax *latencyAxis) grid(d *svgDoc) {
	d.yGrid(ax.ticks, ax.y, func(t float64) string { return trimZeros(MS(t)) })
}

// logRange spans lo … hi on 1-2-5 steps, with its ticks.
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

// linRange is a linear axis on 1-2-5 steps (about five), with its ticks.
func linRange(lo, hi float64) (float64, float64, []float64) {
	if !(hi > lo) || math.IsInf(hi, 0) {
		hi = lo + 1
	}
	raw := (hi - lo) / 5
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	step := p
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw*(1-1e-12) {
			step = m * p
			break
		}
	}
	a, b := math.Floor(lo/step*(1+1e-12))*step, math.Ceil(hi/step*(1-1e-12))*step
	var ticks []float64
	for t := a; t <= b+step/2; t += step {
		ticks = append(ticks, math.Round(t/step)*step)
	}
	return a, b, ticks
}
