package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/mdtext"
)

// maxBars bounds the comment's chart, chartHeight keeps it within a screen (px).
const (
	maxBars     = 12
	chartHeight = 320
)

// mdChangeChart draws head's judged percentiles as a percentage of base's in one
// mermaid chart, bars from zero so lengths compare across workloads.
func mdChangeChart(b *md, a answer) {
	v := a.g.Verdict
	if v.Value == verdict.Unusable {
		return
	}
	var cs []verdict.Comparison
	for _, c := range a.rows {
		if c.Metric != verdict.MetricErrorRate && c.Interval != "" && c.Ratio > 0 {
			cs = append(cs, c)
		}
	}
	if len(cs) == 0 {
		return
	}
	all := len(cs)
	cs = cs[:min(len(cs), maxBars)]
	metric := cs[0].Metric
	for _, c := range cs {
		if c.Metric != metric {
			metric = "judged percentile"
		}
	}
	line := math.Round(1000*(1+v.Tolerance)) / 10
	top := line
	labels, bars, tol := make([]string, len(cs)), make([]string, len(cs)), make([]string, len(cs))
	for i, c := range cs {
		l := c.Workload
		if a.phases {
			l += " " + c.Phase
		}
		labels[i] = `"` + mdtext.Mermaid(l) + `"`
		pct := math.Round(c.Ratio*1000) / 10
		top = max(top, pct)
		bars[i], tol[i] = plain(pct), plain(line)
	}
	shown := ""
	if all > len(cs) {
		shown = fmt.Sprintf(", the first %d of %d in the table's order", len(cs), all)
	}
	mark := "the line at " + plain(line) + " is"
	if len(cs) == 1 {
		mark = plain(line) + " would be" // mermaid draws no line through one point
	}
	b.line("Head's %s as a percentage of base's: 100 is unchanged, %s the +%s tolerance%s.", metric, mark, Percent(v.Tolerance), shown)
	b.line("")
	b.line("```mermaid")
	b.line("%%%%{init: {\"xyChart\": {\"height\": %d}}}%%%%", chartHeight) // mermaid's default is 500
	b.line("xychart-beta")
	b.line("    title \"%s: head as %% of base\"", mdtext.Mermaid(metric))
	b.line("    x-axis [%s]", strings.Join(labels, ", "))
	b.line("    y-axis \"%% of base\" 0 --> %s", plain(math.Ceil(top*1.1/10)*10))
	b.line("    bar [%s]", strings.Join(bars, ", "))
	if len(cs) > 1 {
		b.line("    line [%s]", strings.Join(tol, ", "))
	}
	b.line("```")
	b.line("")
}

// mdRoundTable is each round's head ÷ base change, a column per judged round.
func mdRoundTable(b *md, a answer) bool {
	var rows []verdict.Comparison
	n := 0
	for _, c := range a.rows {
		if len(c.RoundRatios) > 1 {
			rows = append(rows, c)
			n = max(n, len(c.RoundRatios))
		}
	}
	if len(rows) == 0 {
		return false
	}
	var judged []int
	for i := 1; i <= a.g.Rounds; i++ {
		if !slices.Contains(a.g.Verdict.LeftOut, i) {
			judged = append(judged, i)
		}
	}
	if len(judged) != n {
		judged = judged[:0]
		for i := 1; i <= n; i++ {
			judged = append(judged, i)
		}
	}
	cells := []string{"workload"}
	align := "l"
	for _, r := range judged {
		cells = append(cells, fmt.Sprintf("round %d", r))
		align += "r"
	}
	b.line("Head against base in each round: the spread of these is what the interval is made from.")
	b.line("")
	b.header(align, cells...)
	for _, c := range rows {
		w := mdEsc(c.Workload) + " " + metricWord(c)
		if a.phases {
			w += " (" + mdEsc(c.Phase) + ")"
		}
		row := []string{w}
		for i := range n {
			if i < len(c.RoundRatios) {
				row = append(row, SignedPercent(c.RoundRatios[i]))
			} else {
				row = append(row, dash)
			}
		}
		b.row(row...)
	}
	b.line("")
	return true
}

// mdThresholds lists the scenario's limits checked on head, "" when none.
func mdThresholds(b *md, a answer) bool {
	var ws []verdict.WorkloadVerdict
	for _, wv := range a.g.Verdict.Workloads {
		if len(wv.Checks) > 0 {
			ws = append(ws, wv)
		}
	}
	if len(ws) == 0 {
		return false
	}
	b.line("The scenario's limits, checked on head alone:")
	b.line("")
	b.header("lll", "phase", "workload", "checks")
	for _, wv := range ws {
		parts := make([]string, len(wv.Checks))
		for i, c := range wv.Checks {
			parts[i] = checkText(c)
		}
		b.row(mdEsc(wv.Phase), mdEsc(wv.Workload), strings.Join(parts, "; "))
	}
	b.line("")
	return true
}
