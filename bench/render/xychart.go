package main

import (
	"fmt"
	"html"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// GitHub draws mermaid with its own script, absent offline: drawCharts draws the
// comment's xychart-beta blocks as inline SVG at GitHub's size, captioned as approximate.

var mermaidBlock = regexp.MustCompile(`(?s)<pre><code class="language-mermaid">(.*?)</code></pre>`)

func drawCharts(body string) string {
	return mermaidBlock.ReplaceAllStringFunc(body, func(block string) string {
		src := html.UnescapeString(mermaidBlock.FindStringSubmatch(block)[1])
		c, ok := parseXYChart(src)
		if !ok {
			return block
		}
		return c.svg() + "\n<p><sub>chart drawn by bench/render from its mermaid source; GitHub draws it with mermaid</sub></p>"
	})
}

type xyChart struct {
	height        float64 // an init directive's xyChart height, else mermaid's 500
	title, yTitle string
	cats          []string
	lo, hi        float64
	bars, lines   [][]float64
}

var (
	quoted = regexp.MustCompile(`"([^"]*)"|([^,\s\[\]]+)`)
	yAxis  = regexp.MustCompile(`^y-axis\s+"([^"]*)"\s+(\S+)\s+-->\s+(\S+)$`)
	height = regexp.MustCompile(`^%%\{init:.*"xyChart":\s*\{[^}]*"height":\s*([0-9]+)`)
)

func numbers(s string) ([]float64, bool) {
	s = strings.Trim(strings.TrimSpace(s), "[]")
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

func parseXYChart(src string) (xyChart, bool) {
	c := xyChart{height: 500}
	lines := strings.Split(strings.TrimSpace(src), "\n")
	if m := height.FindStringSubmatch(lines[0]); m != nil {
		c.height, _ = strconv.ParseFloat(m[1], 64)
		lines = lines[1:]
	}
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "xychart-beta" {
		return c, false
	}
	for _, l := range lines[1:] {
		l = strings.TrimSpace(l)
		key, rest, _ := strings.Cut(l, " ")
		switch key {
		case "title":
			c.title = strings.Trim(rest, `"`)
		case "x-axis":
			for _, m := range quoted.FindAllStringSubmatch(rest, -1) {
				c.cats = append(c.cats, m[1]+m[2])
			}
		case "y-axis":
			m := yAxis.FindStringSubmatch(l)
			if m == nil {
				return c, false
			}
			c.yTitle = m[1]
			c.lo, _ = strconv.ParseFloat(m[2], 64)
			c.hi, _ = strconv.ParseFloat(m[3], 64)
		case "bar", "line":
			vs, ok := numbers(rest)
			if !ok {
				return c, false
			}
			if key == "bar" {
				c.bars = append(c.bars, vs)
			} else {
				c.lines = append(c.lines, vs)
			}
		}
	}
	return c, len(c.cats) > 0 && c.hi > c.lo
}

// svg draws c at mermaid's default width, 700.
func (c xyChart) svg() string {
	const w, left, right, top = 700.0, 70.0, 20.0, 50.0
	h := c.height
	slot := (w - left - right) / float64(len(c.cats))
	longest := 0
	for _, s := range c.cats {
		longest = max(longest, len([]rune(s)))
	}
	rotate := float64(longest)*7.5 > slot
	bottom := 40.0
	if rotate {
		bottom = 20 + float64(longest)*7.5*0.6
	}
	plotH := h - top - bottom
	y := func(v float64) float64 { return top + plotH*(1-(v-c.lo)/(c.hi-c.lo)) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" font-family="sans-serif" font-size="14">`, w, h)
	fmt.Fprintf(&b, `<rect width="%g" height="%g" fill="#fff"/>`, w, h)
	fmt.Fprintf(&b, `<text x="%g" y="28" text-anchor="middle" font-size="18">%s</text>`, w/2, html.EscapeString(c.title))
	step := niceStep((c.hi - c.lo) / 6)
	for v := math.Ceil(c.lo/step) * step; v <= c.hi+1e-9; v += step {
		fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" stroke="#ddd"/>`, left, w-right, y(v), y(v))
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end" dominant-baseline="middle">%g</text>`, left-6, y(v), v)
	}
	fmt.Fprintf(&b, `<text transform="translate(18 %g) rotate(-90)" text-anchor="middle">%s</text>`, top+plotH/2, html.EscapeString(c.yTitle))
	for k, vs := range c.bars {
		bw := slot * 0.7 / float64(len(c.bars))
		for i, v := range vs {
			x := left + slot*float64(i) + slot*0.15 + bw*float64(k)
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#8493a6"/>`, x, y(v), bw, y(c.lo)-y(v))
		}
	}
	for _, vs := range c.lines {
		pts := make([]string, len(vs))
		for i, v := range vs {
			pts[i] = fmt.Sprintf("%.1f,%.1f", left+slot*(float64(i)+0.5), y(v))
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="#d1242f" stroke-width="2"/>`, strings.Join(pts, " "))
	}
	for i, s := range c.cats {
		x, ly := left+slot*(float64(i)+0.5), h-bottom+18
		if rotate {
			fmt.Fprintf(&b, `<text transform="translate(%.1f %g) rotate(-35)" text-anchor="end">%s</text>`, x, ly, html.EscapeString(s))
		} else {
			fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="middle">%s</text>`, x, ly, html.EscapeString(s))
		}
	}
	fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" stroke="#59636e"/>`, left, w-right, y(c.lo), y(c.lo))
	b.WriteString(`</svg>`)
	return b.String()
}

// niceStep rounds s up to 1, 2 or 5 times a power of ten.
func niceStep(s float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(s)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= s {
			return m * p
		}
	}
	return 10 * p
}
