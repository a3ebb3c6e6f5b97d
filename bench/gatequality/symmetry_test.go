package main

import (
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

// round is one side's duet round of one workload: n latencies (µs),
// log-normal with median med and log-sd 0.5.
func round(t *testing.T, rng *rand.Rand, n int, med float64) *result.Result {
	t.Helper()
	h := result.NewHistogram()
	for range n {
		if err := h.RecordValue(max(int64(med*math.Exp(0.5*rng.NormFloat64())), 1)); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := result.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	ok := int64(n)
	w := result.Workload{Name: "api", Offered: ok, Succeeded: ok, Completed: ok, Failures: map[string]int64{},
		Histogram: enc, ServiceH: enc, LatencyMS: result.Summarize(h)}
	w.ServiceMS = w.LatencyMS
	return &result.Result{Schema: result.Schema, Usable: true, Offered: ok, Recorded: ok,
		Scenario: result.Scenario{Name: "s", Hash: "h", Scale: 1},
		Round:    &result.Round{Mode: result.RoundDuet},
		Phases:   []result.Phase{{Name: "sustain", Pattern: "constant", Judged: true, DurationS: 15, Workloads: []result.Workload{w}}}}
}

// An A/A corpus whose head side is 12% slower in every pair, beyond the
// rounds' noise, is an asymmetry the table must show (an interval that
// excludes 1, no "~"); with the sides exchangeable it must not.
func TestSymmetryShowsASideThatIsAlwaysSlower(t *testing.T) {
	for _, tc := range []struct {
		name   string
		head   float64 // head's median ÷ base's
		asymm  bool
		sdLess float64 // the rounds' sd is below this
	}{
		{"exchangeable sides", 1.00, false, 0.2},
		{"head always 12% slower", 1.12, true, 0.2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			ds := &design{name: "duet"}
			for i := range 20 {
				shared := 3000 * math.Exp(0.3*rng.NormFloat64()) // the machine's noise, both sides'
				ds.pairs = append(ds.pairs, pair{base: round(t, rng, 2000, shared), head: round(t, rng, 2000, shared*tc.head), chunk: "chunk-1", round: i + 1})
			}
			ds.pairs = append(ds.pairs, pair{base: round(t, rng, 2000, 3000), head: round(t, rng, 2000, 3000), chunk: "chunk-2", round: 1}) // one round: no spread, no row
			rows, err := symmetry(ds, verdict.CompareOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 1 {
				t.Fatalf("%d rows, want 1 (api's p95): %+v", len(rows), rows)
			}
			r := rows[0]
			if r.chunk != "chunk-1" {
				t.Errorf("row of %s, want chunk-1", r.chunk)
			}
			if r.c.Workload != "api" || r.c.Metric != "p95" || r.c.Rounds != 20 {
				t.Errorf("row %s %s over %d pairs, want api p95 over 20", r.c.Workload, r.c.Metric, r.c.Rounds)
			}
			if r.c.Significant != tc.asymm {
				t.Errorf("head/base %.3f (%.3f … %.3f): significant %v, want %v", r.c.Ratio, r.c.CILow, r.c.CIHigh, r.c.Significant, tc.asymm)
			}
			if !(r.sd > 0 && r.sd < tc.sdLess) || !(r.sd50 > 0 && r.sd50 < r.sd) {
				t.Errorf("sd %.3f at p95, %.3f at p50: want 0 < sd50 < sd < %v (the shared noise cancels, the tail is noisier)", r.sd, r.sd50, tc.sdLess)
			}
			var sb strings.Builder
			if err := writeSymmetry(&sb, []*design{ds}, verdict.CompareOptions{}); err != nil {
				t.Fatal(err)
			}
			if got := sb.String(); strings.Contains(got, "~ |") == tc.asymm {
				t.Errorf("table marks the estimate as not significant: %v, want %v:\n%s", !tc.asymm, tc.asymm, got)
			}
		})
	}
}

// The section judges the percentile the harness was told to judge, as the
// rest of its table does.
func TestSymmetryJudgesTheHarnessPercentile(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ds := &design{name: "duet"}
	for i := range 6 {
		ds.pairs = append(ds.pairs, pair{base: round(t, rng, 2000, 3000), head: round(t, rng, 2000, 3000), chunk: "chunk-1", round: i + 1})
	}
	rows, err := symmetry(ds, verdict.CompareOptions{Percentile: verdict.MetricP99})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].c.Metric != verdict.MetricP99 {
		t.Fatalf("rows %+v, want one p99 row", rows)
	}
}

// -symmetry-only replaces the symmetry section of an earlier table, and
// only it; a table without the section is refused.
func TestRewriteSymmetryKeepsTheRest(t *testing.T) {
	dir := t.TempDir()
	out := dir + "/table.md"
	before := "# Gate quality\n\n- corpus line\n\n" + symmetryHead + "\nold pooled rows\n\n" + perGateHead + "\n| kept |\n"
	if err := os.WriteFile(out, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	ds := &design{name: "duet"}
	for i := range 3 {
		ds.pairs = append(ds.pairs, pair{base: round(t, rng, 2000, 3000), head: round(t, rng, 2000, 3000), chunk: "chunk-1", round: i + 1})
	}
	if err := rewriteSymmetry(out, []*design{ds}, verdict.CompareOptions{}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	got := string(b)
	if strings.Contains(got, "old pooled rows") || !strings.Contains(got, "| duet | chunk-1 | api | p95 | 3 |") ||
		!strings.HasPrefix(got, "# Gate quality\n\n- corpus line\n\n") || !strings.HasSuffix(got, perGateHead+"\n| kept |\n") {
		t.Errorf("rewritten:\n%s", got)
	}
	if err := os.WriteFile(out, []byte("# no section\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := rewriteSymmetry(out, []*design{ds}, verdict.CompareOptions{}); err == nil || !strings.Contains(err.Error(), "-symmetry-only") {
		t.Errorf("a file without the section: %v", err)
	}
}

// The correlation column: comparisons whose rounds move together read
// near 1 (one side slower on every workload at once), opposite ones −1,
// and too few rounds or comparisons read as not measured.
func TestMeanCorrelation(t *testing.T) {
	cmp := func(rs ...float64) verdict.Comparison { return verdict.Comparison{RoundRatios: rs} }
	for _, tc := range []struct {
		name string
		cs   []verdict.Comparison
		want float64 // NaN: not measured
	}{
		{"together", []verdict.Comparison{cmp(1.1, 0.9, 1.3, 1), cmp(1.21, 0.81, 1.69, 1), cmp(1.1, 0.9, 1.3, 1)}, 1},
		{"opposite", []verdict.Comparison{cmp(1.1, 0.9, 1.2), cmp(1/1.1, 1/0.9, 1/1.2)}, -1},
		{"one comparison", []verdict.Comparison{cmp(1.1, 0.9, 1.2)}, math.NaN()},
		{"two rounds", []verdict.Comparison{cmp(1.1, 0.9), cmp(1.1, 0.9)}, math.NaN()},
		{"a constant comparison skipped", []verdict.Comparison{cmp(1.1, 0.9, 1.2), cmp(1, 1, 1), cmp(1.1, 0.9, 1.2)}, 1},
		{"only constant ones", []verdict.Comparison{cmp(1, 1, 1), cmp(1, 1, 1)}, math.NaN()},
		{"rounds of different counts", []verdict.Comparison{cmp(1.1, 0.9, 1.2), cmp(1.1, 0.9, 1.2, 1)}, math.NaN()},
	} {
		got := meanCorrelation(tc.cs)
		if math.IsNaN(tc.want) != math.IsNaN(got) || (!math.IsNaN(got) && math.Abs(got-tc.want) > 1e-9) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
