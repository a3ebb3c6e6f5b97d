package main

import (
	"math"
	"testing"

	"github.com/loadgate/loadgate/gate/result"
)

// TestScaleHistMovesEveryPercentile: scaling a histogram by 1+δ moves each
// percentile by 1+δ (within the histogram's 3 significant digits and the
// bucket midpoint), and keeps the count.
func TestScaleHistMovesEveryPercentile(t *testing.T) {
	h := result.NewHistogram()
	for i := int64(1); i <= 5000; i++ {
		if err := h.RecordValue(1000 + i*i%40000); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := result.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	before := result.Summarize(h)
	for _, f := range []float64{1.05, 1.2, 1.5} {
		got, sum, err := scaleHist(enc, f)
		if err != nil {
			t.Fatal(err)
		}
		back, err := result.DecodeHistogram(got)
		if err != nil {
			t.Fatal(err)
		}
		if back.TotalCount() != h.TotalCount() || sum.Count != before.Count {
			t.Fatalf("×%v: count %d (summary %d), want %d", f, back.TotalCount(), sum.Count, h.TotalCount())
		}
		for name, pair := range map[string][2]float64{"p50": {before.P50, sum.P50}, "p95": {before.P95, sum.P95}, "p99": {before.P99, sum.P99}} {
			if r := pair[1] / pair[0]; math.Abs(r/f-1) > 0.003 {
				t.Errorf("×%v: %s %v → %v, ratio %v", f, name, pair[0], pair[1], r)
			}
		}
	}
}
