package layout

import (
	"bufio"
	"bytes"
	"fmt"
	"html"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
)

// StageNames names each stage of Stages, lowest first.
var StageNames = []string{"data, leaves", "measure", "judge", "one run", "orchestrate", "words", "surfaces", "programs"}

// Graph maps each package of the module to the module's packages it imports.
type Graph map[string][]string

// ParseGoList reads `go list -f '{{.ImportPath}} {{join .Imports " "}}' ./...`,
// keeping module's packages (module ends in "/") outside testdata.
func ParseGoList(out []byte, module string) Graph {
	g := Graph{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], module) || strings.Contains(f[0], "/testdata/") {
			continue
		}
		pkg := strings.TrimPrefix(f[0], module)
		g[pkg] = []string{}
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, module) {
				g[pkg] = append(g[pkg], strings.TrimPrefix(imp, module))
			}
		}
		slices.Sort(g[pkg])
	}
	return g
}

// The drawing's measures, in pixels.
const (
	svgWidth  = 1000
	rowsLeft  = 16
	rowsRight = svgWidth - 16
	boxH      = 24
	boxGap    = 14
	lineStep  = 46  // from one line of boxes to the next
	stageGap  = 26  // more, between stages: the stage's name sits above its boxes
	charW     = 7.3 // of 12 px monospace
)

type box struct {
	pkg     string
	stage   int
	x, y, w float64
}

func (b *box) cx() float64 { return b.x + b.w/2 }

// group is one line of a stage's level (a level-k package imports one of level k-1).
type group struct {
	stage int
	boxes []*box
}

// SVG draws g as a band per stage, highest on top, and an arrow per import; the
// transitive reduction's arrows are dark. The output depends on g alone.
func SVG(g Graph) ([]byte, error) {
	boxes := map[string]*box{}
	for _, p := range sortedKeys(g) {
		s, ok := Stage(p)
		if !ok {
			return nil, fmt.Errorf("%s is not placed in layout.Stages", p)
		}
		boxes[p] = &box{pkg: p, stage: s, w: math.Round(charW*float64(len(p)) + 16)}
	}
	groups := groupsOf(g, boxes)
	order(g, groups)
	height := place(groups)
	straighten(g, groups)
	strong := reduction(g)

	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="12">`+"\n", svgWidth, height, svgWidth, height)
	b.WriteString(`<defs>` +
		`<marker id="dark" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#2f4f7f"/></marker>` +
		`<marker id="light" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="5" markerHeight="5" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#b8c2cc"/></marker>` +
		`<marker id="up" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#c62828"/></marker>` +
		"</defs>\n")
	b.WriteString(`<rect width="100%" height="100%" fill="#fff"/>` + "\n")
	fmt.Fprintf(&b, `<text x="16" y="24" font-size="15" font-weight="bold">loadgate's packages by stage (internal/layout.Stages)</text>`+"\n")
	fmt.Fprintf(&b, `<text x="16" y="44" fill="#555">An arrow is an import; all point down, within a stage too. Dark: an import no chain of</text>`+"\n")
	fmt.Fprintf(&b, `<text x="16" y="60" fill="#555">other imports implies (the transitive reduction); light: the rest. go test ./internal/layout -update</text>`+"\n")
	drawBands(&b, groups)
	drawArrows(&b, g, boxes, strong)
	for _, gr := range groups {
		for _, bx := range gr.boxes {
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%d" rx="4" fill="#fff" stroke="#444"/>`, bx.x, bx.y, bx.w, boxH)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", bx.cx(), bx.y+16.5, html.EscapeString(bx.pkg))
		}
	}
	b.WriteString("</svg>\n")
	return b.Bytes(), nil
}

func groupsOf(g Graph, boxes map[string]*box) []group {
	level := map[string]int{}
	var levelOf func(p string) int
	levelOf = func(p string) int {
		if l, ok := level[p]; ok {
			return l
		}
		l := 0
		for _, q := range g[p] {
			if bq, ok := boxes[q]; ok && bq.stage == boxes[p].stage {
				l = max(l, levelOf(q)+1)
			}
		}
		level[p] = l
		return l
	}
	imported := map[string]int{}
	for _, p := range sortedKeys(g) {
		for _, q := range g[p] {
			imported[q]++
		}
	}
	var groups []group
	for s := len(Stages) - 1; s >= 0; s-- {
		byLevel := map[int][]*box{}
		top := 0
		for _, p := range sortedKeys(g) {
			if boxes[p].stage == s {
				byLevel[levelOf(p)] = append(byLevel[levelOf(p)], boxes[p])
				top = max(top, levelOf(p))
			}
		}
		for l := top; l >= 0; l-- {
			// The most imported line on top: fewer arrows pass behind it.
			bs := byLevel[l]
			slices.SortStableFunc(bs, func(a, b *box) int { return imported[b.pkg] - imported[a.pkg] })
			for _, line := range lines(bs) {
				groups = append(groups, group{stage: s, boxes: line})
			}
		}
	}
	return groups
}

// order sorts each group's boxes by the mean x of their links so arrows cross less.
func order(g Graph, groups []group) {
	importers := map[string][]string{}
	for _, p := range sortedKeys(g) {
		for _, q := range g[p] {
			importers[q] = append(importers[q], p)
		}
	}
	boxes := map[string]*box{}
	for _, gr := range groups {
		for _, b := range gr.boxes {
			boxes[b.pkg] = b
		}
	}
	sortBy := func(gr group, near map[string][]string) {
		key := map[string]float64{}
		for _, b := range gr.boxes {
			key[b.pkg] = b.cx()
			n := 0.0
			sum := 0.0
			for _, q := range near[b.pkg] {
				if bq, ok := boxes[q]; ok {
					sum += bq.cx()
					n++
				}
			}
			if n > 0 {
				key[b.pkg] = sum / n
			}
		}
		sort.SliceStable(gr.boxes, func(i, j int) bool { return key[gr.boxes[i].pkg] < key[gr.boxes[j].pkg] })
		place(groups)
	}
	place(groups)
	for range 4 {
		for i := len(groups) - 1; i >= 0; i-- {
			sortBy(groups[i], importers)
		}
		for _, gr := range groups {
			sortBy(gr, g)
		}
	}
}

// straighten moves boxes towards the mean x of their links, in order, so arrows stand up.
func straighten(g Graph, groups []group) {
	near := map[string][]*box{}
	boxes := map[string]*box{}
	for _, gr := range groups {
		for _, b := range gr.boxes {
			boxes[b.pkg] = b
		}
	}
	for _, p := range sortedKeys(g) {
		for _, q := range g[p] {
			near[p] = append(near[p], boxes[q])
			near[q] = append(near[q], boxes[p])
		}
	}
	for range 8 {
		for _, gr := range groups {
			for _, line := range linesOf(gr.boxes) {
				want := make([]float64, len(line))
				for i, b := range line {
					want[i] = b.x
					if len(near[b.pkg]) > 0 {
						sum := 0.0
						for _, o := range near[b.pkg] {
							sum += o.cx()
						}
						want[i] = sum/float64(len(near[b.pkg])) - b.w/2
					}
				}
				right := float64(rowsRight)
				for i := len(line) - 1; i >= 0; i-- {
					want[i] = math.Min(want[i], right-line[i].w)
					right = want[i] - boxGap
				}
				left := float64(rowsLeft)
				for i, b := range line {
					b.x = math.Round(math.Max(want[i], left))
					left = b.x + b.w + boxGap
				}
			}
		}
	}
}

func linesOf(boxes []*box) [][]*box {
	var out [][]*box
	for i, b := range boxes {
		if i == 0 || b.y != boxes[i-1].y {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], b)
	}
	return out
}

// place centres each group in the fewest lines that fit, returning the height.
func place(groups []group) int {
	y := 98.0
	for i, gr := range groups {
		if i > 0 && groups[i-1].stage != gr.stage {
			y += stageGap
		}
		for _, line := range lines(gr.boxes) {
			w := -float64(boxGap)
			for _, b := range line {
				w += b.w + boxGap
			}
			x := float64(rowsLeft) + (rowsRight-rowsLeft-w)/2
			for _, b := range line {
				b.x, b.y = math.Round(x), y
				x += b.w + boxGap
			}
			y += lineStep
		}
	}
	return int(y) - lineStep + boxH + 16
}

func lines(boxes []*box) [][]*box {
	for n := 1; ; n++ {
		per := (len(boxes) + n - 1) / n
		var out [][]*box
		fits := true
		for i := 0; i < len(boxes); i += per {
			line := boxes[i:min(i+per, len(boxes))]
			w := -float64(boxGap)
			for _, b := range line {
				w += b.w + boxGap
			}
			fits = fits && w <= rowsRight-rowsLeft
			out = append(out, line)
		}
		if fits || per == 1 {
			return out
		}
	}
}

func drawBands(b *bytes.Buffer, groups []group) {
	for i := 0; i < len(groups); {
		j := i
		for j < len(groups) && groups[j].stage == groups[i].stage {
			j++
		}
		top := groups[i].boxes[0].y - 22
		bottom := groups[j-1].boxes[len(groups[j-1].boxes)-1].y + boxH + 8
		fill := "#f3f6f9"
		if groups[i].stage%2 == 1 {
			fill = "#e8eef4"
		}
		fmt.Fprintf(b, `<rect x="8" y="%.1f" width="%d" height="%.1f" rx="6" fill="%s"/>`, top, svgWidth-16, bottom-top, fill)
		s := groups[i].stage
		fmt.Fprintf(b, `<text x="16" y="%.1f" font-size="11" font-weight="bold" fill="#333">stage %d: %s</text>`+"\n", top+13, s, StageNames[s])
		i = j
	}
}

// drawArrows draws one curve per import, light ones beneath dark ones.
func drawArrows(b *bytes.Buffer, g Graph, boxes map[string]*box, strong map[[2]string]bool) {
	type arrow struct{ from, to *box }
	var all []arrow
	out := map[string][]*box{}
	in := map[string][]*box{}
	for _, p := range sortedKeys(g) {
		for _, q := range g[p] {
			all = append(all, arrow{boxes[p], boxes[q]})
			out[p] = append(out[p], boxes[q])
			in[q] = append(in[q], boxes[p])
		}
	}
	byX := func(bs []*box) {
		slices.SortStableFunc(bs, func(a, c *box) int { return int(a.cx() - c.cx()) })
	}
	spread := func(at *box, others []*box, other *box) float64 {
		i := slices.Index(others, other)
		return at.x + at.w*(float64(i)+1)/float64(len(others)+1)
	}
	for _, bs := range out {
		byX(bs)
	}
	for _, bs := range in {
		byX(bs)
	}
	for _, dark := range []bool{false, true} {
		for _, a := range all {
			if strong[[2]string{a.from.pkg, a.to.pkg}] != dark {
				continue
			}
			x1, y1 := spread(a.from, out[a.from.pkg], a.to), a.from.y+boxH
			x2, y2 := spread(a.to, in[a.to.pkg], a.from), a.to.y
			style := `stroke="#b8c2cc" stroke-width="0.8" stroke-opacity="0.7" marker-end="url(#light)"`
			if dark {
				style = `stroke="#2f4f7f" stroke-width="1.4" marker-end="url(#dark)"`
			}
			if a.to.stage > a.from.stage {
				style = `stroke="#c62828" stroke-width="2" marker-end="url(#up)"`
				y1, y2 = a.from.y, a.to.y+boxH
			}
			dy := math.Max(24, math.Abs(y2-y1)/2)
			if y2 < y1 {
				dy = -dy
			}
			fmt.Fprintf(b, `<path d="M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f" fill="none" %s/>`+"\n", x1, y1, x1, y1+dy, x2, y2-dy, x2, y2, style)
		}
	}
}

// reduction is the imports of g that no chain of other imports implies.
func reduction(g Graph) map[[2]string]bool {
	reach := map[string]map[string]bool{}
	var reachOf func(p string) map[string]bool
	reachOf = func(p string) map[string]bool {
		if r, ok := reach[p]; ok {
			return r
		}
		r := map[string]bool{}
		for _, q := range g[p] {
			r[q] = true
			for x := range reachOf(q) {
				r[x] = true
			}
		}
		reach[p] = r
		return r
	}
	strong := map[[2]string]bool{}
	for p, imps := range g {
		for _, q := range imps {
			implied := false
			for _, w := range imps {
				if w != q && reachOf(w)[q] {
					implied = true
					break
				}
			}
			strong[[2]string{p, q}] = !implied
		}
	}
	return strong
}

func sortedKeys(g Graph) []string { return slices.Sorted(maps.Keys(g)) }
