package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

// symRow is one latency comparison of one A/A gate, with its rounds' spread.
type symRow struct {
	chunk    string // the gate (chunk-<k>)
	c        verdict.Comparison
	sd, sd50 float64 // verdict.RoundSD at the comparison's percentile and at p50
	// busy: verdict.DuetStackBusy, %; corr: meanCorrelation. NaN: not measured.
	busy, corr float64
}

// symmetry judges each A/A gate alone over all its rounds: how the sides differ
// when nothing does. Not pooled: an offset between two stacks is one gate's.
func symmetry(ds *design, opt verdict.CompareOptions) ([]symRow, error) {
	byChunk := map[string][]pair{}
	for _, p := range ds.pairs {
		byChunk[p.chunk] = append(byChunk[p.chunk], p)
	}
	chunks := make([]string, 0, len(byChunk))
	for c := range byChunk {
		chunks = append(chunks, c)
	}
	sort.Strings(chunks)
	var out []symRow
	for _, chunk := range chunks {
		ps := byChunk[chunk]
		if len(ps) < 2 {
			continue // one round measures no spread; counted in the corpus line
		}
		base := make([]*result.Result, 0, len(ps))
		head := make([]*result.Result, 0, len(ps))
		for _, p := range ps {
			base, head = append(base, p.base), append(head, p.head)
		}
		v, err := verdict.Compare(base, head, opt)
		if err != nil {
			return nil, fmt.Errorf("design %s %s: %w", ds.name, chunk, err)
		}
		o50 := opt
		o50.Percentile = verdict.MetricP50
		v50, err := verdict.Compare(base, head, o50)
		if err != nil {
			return nil, fmt.Errorf("design %s %s: p50: %w", ds.name, chunk, err)
		}
		busy := math.NaN() // over the rounds the verdict judged, as Compare's note is
		kb, kh := keptRounds(base, v.LeftOut), keptRounds(head, v.LeftOut)
		if pct, _, ok := verdict.DuetStackBusy(kb, kh); ok {
			busy = pct
		}
		corr := meanCorrelation(latency(v))
		p50 := map[[2]string]verdict.Comparison{}
		for _, c := range latency(v50) {
			p50[[2]string{c.Phase, c.Workload}] = c
		}
		for _, c := range latency(v) {
			out = append(out, symRow{chunk: chunk, c: c, sd: verdict.RoundSD(c), sd50: verdict.RoundSD(p50[[2]string{c.Phase, c.Workload}]), busy: busy, corr: corr})
		}
	}
	return out, nil
}

func writeSymmetry(w io.Writer, designs []*design, opt verdict.CompareOptions) error {
	fmt.Fprintf(w, "%s\n", symmetryHead)
	fmt.Fprintf(w, "Both sides ran one commit, so head's change should be 0: each A/A gate is judged alone over its rounds (`verdict.Compare`), "+
		"and an interval excluding 0 gate after gate is an asymmetry every verdict of this design carries (in one gate alone: its stacks, or chance). "+
		"sd: of a round's ln(head/base), at the judged percentile and at p50; stack cpus busy: `verdict.DuetStackBusy` (past %d%% the stacks queue behind each other); "+
		"corr.: the mean correlation across workloads of the rounds' ln(head/base) (near 1: one side slower on every workload at once).\n\n", verdict.DuetBusyPct)
	fmt.Fprintf(w, "| design | gate | workload | percentile | rounds | change, head vs base | 95%% CI | interval | sd of ln(head/base) | sd at p50 | stack cpus busy | corr. across workloads |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, ds := range designs {
		rows, err := symmetry(ds, opt)
		if err != nil {
			return err
		}
		for _, r := range rows {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", ds.name, r.chunk, r.c.Workload, r.c.Metric, r.c.Rounds,
				report.DeltaText(r.c), report.CIText(r.c), r.c.Interval, report.LogSD(r.sd), report.LogSD(r.sd50), busyText(r.busy), corrText(r.corr))
		}
	}
	fmt.Fprintln(w)
	return nil
}

// meanCorrelation is the mean pairwise Pearson correlation of cs's rounds' ln(head/base), or NaN.
func meanCorrelation(cs []verdict.Comparison) float64 {
	var logs [][]float64
	for _, c := range cs {
		if len(c.RoundRatios) < 3 || (len(logs) > 0 && len(c.RoundRatios) != len(logs[0])) {
			return math.NaN()
		}
		xs := make([]float64, len(c.RoundRatios))
		for i, r := range c.RoundRatios {
			xs[i] = math.Log(r)
		}
		logs = append(logs, xs)
	}
	sum, n := 0.0, 0
	for i := range logs {
		for j := i + 1; j < len(logs); j++ {
			if r := pearson(logs[i], logs[j]); !math.IsNaN(r) { // a comparison whose rounds do not vary has none
				sum += r
				n++
			}
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

func pearson(x, y []float64) float64 {
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(len(x))
	my /= float64(len(y))
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	return sxy / math.Sqrt(sxx*syy) // NaN where a side's rounds do not vary
}

func busyText(pct float64) string {
	if math.IsNaN(pct) {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", pct)
}

func keptRounds(rs []*result.Result, left []int) []*result.Result {
	out := make([]*result.Result, 0, len(rs))
	for i, r := range rs {
		if !slices.Contains(left, i+1) {
			out = append(out, r)
		}
	}
	return out
}

func corrText(r float64) string {
	if math.IsNaN(r) {
		return "–"
	}
	return fmt.Sprintf("%.2f", r)
}

func latency(v verdict.Verdict) []verdict.Comparison {
	var out []verdict.Comparison
	for _, wv := range v.Workloads {
		for _, c := range wv.Comparisons {
			if c.Metric != verdict.MetricErrorRate && c.Interval != "" {
				out = append(out, c)
			}
		}
	}
	return out
}

// symmetryHead and the heading after it delimit the section in a table.
const (
	symmetryHead = "### The sides' symmetry and the rounds' noise (A/A)\n"
	perGateHead  = "### Per gate (A/A)\n"
)

func rewriteSymmetry(out string, designs []*design, opt verdict.CompareOptions) error {
	b, err := os.ReadFile(out)
	if err != nil {
		return err
	}
	s := string(b)
	i, j := strings.Index(s, symmetryHead), strings.Index(s, perGateHead)
	if i < 0 || j < i {
		return fmt.Errorf("%s: no %q section before %q to rewrite (run without -symmetry-only first)", out, strings.TrimSpace(symmetryHead), strings.TrimSpace(perGateHead))
	}
	var sb strings.Builder
	if err := writeSymmetry(&sb, designs, opt); err != nil {
		return err
	}
	return os.WriteFile(out, []byte(s[:i]+sb.String()+s[j:]), 0o644)
}
