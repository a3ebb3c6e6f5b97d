package main

import (
	"fmt"
	"io"
	"math"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

// symRow is one latency comparison of a design's whole corpus judged as
// one gate, with the spread of its rounds.
type symRow struct {
	c verdict.Comparison
	// sd, sd50: the sample sd of ln(head_i/base_i) over the pairs the
	// comparison judged (its RoundRatios), at its percentile and at p50:
	// what a calibration would store, were duet rounds a calibration's
	// (verdict.Calibrate refuses them); NaN with fewer than 2 ratios.
	sd, sd50 float64
}

// symmetry judges a design's corpus as one gate over all its pairs
// (verdict.Compare, as gate/rounds would judge that many rounds). Both
// sides ran one commit, so each latency comparison's ratio measures how
// far the design's two sides differ when nothing differs between them —
// for a duet, whether the sides' interference with each other is
// symmetric — and its interval how precisely the corpus says so. The sd
// beside it is the noise each round of a gate of this design carries.
func symmetry(ds *design) ([]symRow, error) {
	if len(ds.pairs) < 2 {
		return nil, nil
	}
	base := make([]*result.Result, 0, len(ds.pairs))
	head := make([]*result.Result, 0, len(ds.pairs))
	for _, p := range ds.pairs {
		base, head = append(base, p.base), append(head, p.head)
	}
	v, err := verdict.Compare(base, head, verdict.CompareOptions{})
	if err != nil {
		return nil, fmt.Errorf("design %s: %w", ds.name, err)
	}
	v50, err := verdict.Compare(base, head, verdict.CompareOptions{Percentile: verdict.MetricP50})
	if err != nil {
		return nil, fmt.Errorf("design %s: p50: %w", ds.name, err)
	}
	p50 := map[[2]string]verdict.Comparison{}
	for _, c := range latency(v50) {
		p50[[2]string{c.Phase, c.Workload}] = c
	}
	var out []symRow
	for _, c := range latency(v) {
		out = append(out, symRow{c: c, sd: logSD(c.RoundRatios), sd50: logSD(p50[[2]string{c.Phase, c.Workload}].RoundRatios)})
	}
	return out, nil
}

// writeSymmetry is the table of every design's symmetry rows.
func writeSymmetry(w io.Writer, designs []*design) error {
	fmt.Fprintf(w, "### The sides' symmetry and the rounds' noise (A/A)\n\n")
	fmt.Fprintf(w, "Both sides ran one commit, so head/base should be 1. Each design's whole corpus is judged here as one gate "+
		"(`verdict.Compare` over all its pairs, duet rounds behind schedule for a shared cause left out as a gate leaves them): "+
		"a ratio whose interval excludes 1 is an asymmetry between the sides that a gate of this design would carry into every verdict. "+
		"sd: the standard deviation of a pair's ln(head/base) over the pairs judged (what `loadgate calibrate` stores for one-side-at-a-time rounds), "+
		"at the judged percentile and at p50: the noise each round of a gate of this design carries. Rounds of different gates had different stacks.\n\n")
	fmt.Fprintf(w, "| design | workload | percentile | pairs | head/base | 95%% CI | interval | sd of ln(head/base) | sd at p50 |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, ds := range designs {
		rows, err := symmetry(ds)
		if err != nil {
			return err
		}
		for _, r := range rows {
			fmt.Fprintf(w, "| %s | %s | %s | %d | %s | %s | %s | %s | %s |\n", ds.name, r.c.Workload, r.c.Metric, r.c.Rounds,
				report.DeltaText(r.c), report.CIText(r.c), r.c.Interval, sdText(r.sd), sdText(r.sd50))
		}
	}
	fmt.Fprintln(w)
	return nil
}

func sdText(sd float64) string {
	if math.IsNaN(sd) {
		return "–"
	}
	return fmt.Sprintf("%.3f", sd)
}

// latency is a verdict's latency comparisons that have an interval.
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

// logSD is the sample standard deviation of ln(r) over ratios; NaN for
// fewer than two.
func logSD(ratios []float64) float64 {
	if len(ratios) < 2 {
		return math.NaN()
	}
	var sum, sq float64
	for _, r := range ratios {
		sum += math.Log(r)
	}
	mean := sum / float64(len(ratios))
	for _, r := range ratios {
		d := math.Log(r) - mean
		sq += d * d
	}
	return math.Sqrt(sq / float64(len(ratios)-1))
}
