package result_test

import (
	"fmt"

	"github.com/loadgate/loadgate/gate/result"
)

// Nearest rank over ten values: p90 is the 9th value, p95 the 10th (rank
// ceil(0.95·10) = 10), and q·N = 2.5 rounds up to rank 3.
func ExampleQuantile() {
	h := result.NewHistogram()
	for _, us := range []int64{120, 80, 95, 300, 101, 99, 130, 250, 90, 1500} {
		_ = h.RecordValue(us)
	}
	fmt.Println(result.Quantile(h, 0.25), result.Quantile(h, 0.5), result.Quantile(h, 0.9), result.Quantile(h, 0.95))
	// Output: 95 101 300 1500
}

// Summaries are in milliseconds, beside their sample count. 123 456 µs is
// above 2048 µs, so it is reported as the top of its 3-significant-digit
// bucket.
func ExampleSummarize() {
	h := result.NewHistogram()
	for us := int64(1); us <= 1000; us++ {
		_ = h.RecordValue(us)
	}
	_ = h.RecordValue(123_456)
	fmt.Printf("%+v\n", result.Summarize(h))
	// Output: {Count:1001 P50:0.501 P90:0.901 P95:0.951 P99:0.991 P999:1 Max:123.519}
}
