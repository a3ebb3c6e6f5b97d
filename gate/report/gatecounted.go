package report

import (
	"slices"
	"strconv"
	"strings"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/internal/mdtext"
)

const gateCountedIntro = "Per side, over all phases of every round: sent by loadgate, counted by the service's own counter (summed only when no round saw a reset), and difference = counted − sent."

// gateCount is one row; nil: that side did not read the count.
type gateCount struct {
	at         result.Counted // workload, metric and where, from whichever side read it
	base, head *result.Counted
}

func countKey(c result.Counted) string {
	return c.Workload + "\x00" + c.Service + "\x00" + strconv.Itoa(c.Port) + "\x00" + c.Path + "\x00" + c.Metric
}

// gateCounts pools each side's counting and pairs the counts, base's first.
func gateCounts(g *gateReport) (rows []gateCount, base, head *result.Counting) {
	base, head = result.PoolCounting(g.Base.Results), result.PoolCounting(g.Head.Results)
	idx := map[string]int{}
	add := func(c *result.Counting, isHead bool) {
		if c == nil {
			return
		}
		for i := range c.Counts {
			x := &c.Counts[i]
			k := countKey(*x)
			j, ok := idx[k]
			if !ok {
				j = len(rows)
				idx[k] = j
				rows = append(rows, gateCount{at: *x})
			}
			if isHead {
				rows[j].head = x
			} else {
				rows[j].base = x
			}
		}
	}
	add(base, false)
	add(head, true)
	return rows, base, head
}

func gateCountCells(c *result.Counted) [3]string {
	if c == nil {
		return [3]string{dash, "not measured", dash}
	}
	counted, diff := countedCells(c.Total)
	return [3]string{Count(c.Total.Sent), counted, diff}
}

func gateCountWhy(side string, c *result.Counted) []string {
	switch {
	case c == nil:
		return []string{side + ": not measured (no round of this side read this counter)"}
	case c.Total.NotMeasured != "":
		return []string{side + ": not measured: " + c.Total.NotMeasured}
	}
	return nil
}

// gateWhys are the not-measured reasons, each once with its workloads.
func gateWhys(g *gateReport, rows []gateCount) []string {
	var order []string
	holds := map[string][]string{}
	for _, r := range rows {
		for _, w := range append(gateCountWhy(g.Base.Name, r.base), gateCountWhy(g.Head.Name, r.head)...) {
			if _, ok := holds[w]; !ok {
				order = append(order, w)
			}
			holds[w] = append(holds[w], countedWorkload(r.at))
		}
	}
	out := make([]string, 0, len(order))
	for _, w := range order {
		side, why, _ := strings.Cut(w, ": ")
		out = append(out, side+" ("+strings.Join(holds[w], ", ")+"): "+why)
	}
	return out
}

// gateStubs are the stub lines: one per stub when both sides agree, else per side.
func gateStubs(g *gateReport, base, head *result.Counting) []string {
	var out []string
	text := func(c *result.Counting) map[string]string {
		m := map[string]string{}
		if c != nil {
			for _, s := range c.Stubs {
				m[s.Service+":"+strconv.Itoa(s.Port)] = stubText(s)
			}
		}
		return m
	}
	bt, ht := text(base), text(head)
	var names []string
	for _, c := range []*result.Counting{base, head} {
		if c == nil {
			continue
		}
		for _, s := range c.Stubs {
			n := s.Service + ":" + strconv.Itoa(s.Port)
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	for _, n := range names {
		b, okB := bt[n]
		h, okH := ht[n]
		switch {
		case okB && okH && b == h:
			out = append(out, n+" (both sides): "+b)
		default:
			if okB {
				out = append(out, n+" ("+g.Base.Name+"): "+b)
			}
			if okH {
				out = append(out, n+" ("+g.Head.Name+"): "+h)
			}
		}
	}
	return out
}

func mdGateCounting(b *md, g *gateReport) {
	rows, base, head := gateCounts(g)
	b.line("## Counted by the service")
	b.line("")
	if len(rows) == 0 {
		b.line("Counted by the service: not measured (no side read a count: counter).")
		b.line("")
	} else {
		b.line("%s", gateCountedIntro)
		b.line("")
		bn, hn := mdtext.Escape(g.Base.Name), mdtext.Escape(g.Head.Name)
		b.header("lrrrrrr", "workload", bn+" sent", bn+" counted", bn+" difference", hn+" sent", hn+" counted", hn+" difference")
		for _, r := range rows {
			bc, hc := gateCountCells(r.base), gateCountCells(r.head)
			b.row(mdtext.Escape(countedWorkload(r.at)), bc[0], bc[1], bc[2], hc[0], hc[1], hc[2])
		}
		b.line("")
		for _, r := range rows {
			b.line("- %s: %s at %s", mdtext.Escape(countedWorkload(r.at)), mdtext.Code(r.at.Metric), mdtext.Code(counterAt(r.at)))
		}
		for _, w := range gateWhys(g, rows) {
			b.line("- %s", mdtext.Escape(w))
		}
		b.line("")
	}
	stubs := gateStubs(g, base, head)
	for _, s := range stubs {
		b.line("- **stub upstream** %s", mdtext.Escape(s))
	}
	if len(stubs) > 0 {
		b.line("")
	}
}

func textGateCounting(b *txt, g *gateReport) {
	rows, base, head := gateCounts(g)
	b.line("")
	if len(rows) == 0 {
		b.line("counted by the service: not measured (no side read a count: counter)")
	} else {
		b.line("counted by the service (all phases, summed over the rounds; difference = counted − sent)")
		t := [][]string{{"workload", g.Base.Name + " sent", "counted", "difference", g.Head.Name + " sent", "counted", "difference"}}
		for _, r := range rows {
			bc, hc := gateCountCells(r.base), gateCountCells(r.head)
			t = append(t, []string{countedWorkload(r.at), bc[0], bc[1], bc[2], hc[0], hc[1], hc[2]})
		}
		b.table("  ", t)
		for _, w := range gateWhys(g, rows) {
			b.line("  %s", w)
		}
	}
	for _, s := range gateStubs(g, base, head) {
		b.line("stub upstream %s", s)
	}
}
