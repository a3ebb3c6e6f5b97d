package result_test

import (
	"encoding/base64"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/loadgate/loadgate/gate/result"
)

// nearestRank is the brute-force nearest-rank quantile num/den of sorted:
// the value at rank ceil(n·num/den), rank 1 at least.
func nearestRank(sorted []int64, num, den int) int64 {
	n := len(sorted)
	k := max((n*num+den-1)/den, 1)
	return sorted[k-1]
}

var quantiles = [][2]int{{0, 1}, {1, 1000}, {1, 10}, {1, 5}, {1, 4}, {1, 3}, {1, 2}, {7, 10}, {9, 10}, {95, 100}, {99, 100}, {999, 1000}, {9999, 10000}, {1, 1}}

func TestQuantileNearestRankExactValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	sizes := []int{1, 2, 3, 5, 10, 19, 20, 51, 100, 101, 999, 1000, 1001, 4096}
	for range 30 {
		sizes = append(sizes, 1+rng.IntN(5000))
	}
	for _, n := range sizes {
		h := result.NewHistogram()
		vals := make([]int64, n)
		for i := range vals {
			vals[i] = 1 + rng.Int64N(2047) // < 2048 µs: recorded exactly
			record(t, h, vals[i])
		}
		slices.Sort(vals)
		for _, q := range quantiles {
			want := nearestRank(vals, q[0], q[1])
			if got := result.Quantile(h, float64(q[0])/float64(q[1])); got != want {
				t.Errorf("n=%d q=%d/%d: Quantile = %d, brute-force nearest rank = %d", n, q[0], q[1], got, want)
			}
		}
	}
}

// Above 2048 µs values are bucketed: Quantile reports the highest value
// equivalent to the one at the nearest rank.
func TestQuantileNearestRankBucketed(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for range 40 {
		n := 1 + rng.IntN(3000)
		h := result.NewHistogram()
		vals := make([]int64, n)
		for i := range vals {
			vals[i] = 1 + int64(rng.ExpFloat64()*50_000)
			record(t, h, vals[i])
		}
		slices.Sort(vals)
		for _, q := range quantiles {
			want := nearestRank(vals, q[0], q[1])
			got := result.Quantile(h, float64(q[0])/float64(q[1]))
			if !h.ValuesAreEquivalent(got, want) || h.ValuesAreEquivalent(got+1, want) {
				t.Errorf("n=%d q=%d/%d: Quantile = %d, want the highest value equivalent to %d", n, q[0], q[1], got, want)
			}
		}
	}
}

// 1..51, q = 0.2: q·N = 10.2. Nearest rank is 11; hdrhistogram-go rounds the
// rank to 10.
func TestQuantileFractionalRank(t *testing.T) {
	h := result.NewHistogram()
	for v := int64(1); v <= 51; v++ {
		record(t, h, v)
	}
	if got := result.Quantile(h, 0.2); got != 11 {
		t.Errorf("Quantile(0.2) over 1..51 = %d, want 11", got)
	}
	if lib := h.ValueAtQuantile(20); lib != 10 {
		t.Errorf("hdrhistogram ValueAtQuantile(20) = %d; the library's rounding changed, revisit Quantile", lib)
	}
}

// q·N an integer in exact arithmetic but not in float64: 0.7·10 is
// 7.000000000000001, and ceil would say rank 8.
func TestQuantileIntegerRank(t *testing.T) {
	h := result.NewHistogram()
	for v := int64(1); v <= 10; v++ {
		record(t, h, v*100)
	}
	for _, c := range []struct {
		q    float64
		want int64
	}{{0, 100}, {0.1, 100}, {0.7, 700}, {0.9, 900}, {0.95, 1000}, {1, 1000}, {0.75, 800}, {0.71, 800}} {
		if got := result.Quantile(h, c.q); got != c.want {
			t.Errorf("Quantile(%v) over 100..1000 = %d, want %d", c.q, got, c.want)
		}
	}
	h20 := result.NewHistogram()
	for v := int64(1); v <= 20; v++ {
		record(t, h20, v)
	}
	if got := result.Quantile(h20, 0.95); got != 19 {
		t.Errorf("Quantile(0.95) over 1..20 = %d, want 19", got)
	}
	if s := result.Summarize(h20); s.P95 != 0.019 || s.P50 != 0.010 || s.Max != 0.020 {
		t.Errorf("Summarize over 1..20 µs = %+v", s)
	}
}

func TestQuantileEdges(t *testing.T) {
	if got := result.Quantile(result.NewHistogram(), 0.5); got != 0 {
		t.Errorf("empty: %d", got)
	}
	if got := result.Quantile(nil, 0.5); got != 0 {
		t.Errorf("nil: %d", got)
	}
	if s := result.Summarize(result.NewHistogram()); s != (result.Summary{}) {
		t.Errorf("empty Summarize = %+v", s)
	}
	h := result.NewHistogram()
	record(t, h, 5)
	record(t, h, 9)
	for q, want := range map[float64]int64{-1: 5, 2: 9, 0: 5, 1: 9, 0.5: 5, 0.51: 9} {
		if got := result.Quantile(h, q); got != want {
			t.Errorf("Quantile(%v) = %d, want %d", q, got, want)
		}
	}
	// 123456 µs is bucketed by 64: reported as the top of its bucket.
	h = result.NewHistogram()
	record(t, h, 123_456)
	if got := result.Quantile(h, 0.5); got != 123_519 {
		t.Errorf("Quantile of 123456 = %d, want 123519", got)
	}
	record(t, h, result.HighestUS)
	if got := result.Quantile(h, 1); got < result.HighestUS || !h.ValuesAreEquivalent(got, result.HighestUS) {
		t.Errorf("Quantile(1) with HighestUS = %d", got)
	}
}

func TestSummarizeMatchesQuantile(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for range 50 {
		h := result.NewHistogram()
		n := 1 + rng.IntN(20000)
		for range n {
			record(t, h, 1+int64(rng.ExpFloat64()*20_000))
		}
		s := result.Summarize(h)
		want := result.Summary{
			Count: int64(n),
			P50:   float64(result.Quantile(h, 0.5)) / 1000,
			P90:   float64(result.Quantile(h, 0.9)) / 1000,
			P95:   float64(result.Quantile(h, 0.95)) / 1000,
			P99:   float64(result.Quantile(h, 0.99)) / 1000,
			P999:  float64(result.Quantile(h, 0.999)) / 1000,
			Max:   float64(h.Max()) / 1000,
		}
		if s != want {
			t.Fatalf("n=%d: Summarize = %+v, want %+v", n, s, want)
		}
	}
}

func TestHistogramRoundTrip(t *testing.T) {
	h := result.NewHistogram()
	rng := rand.New(rand.NewPCG(1, 1))
	for range 10000 {
		record(t, h, 1+rng.Int64N(result.HighestUS))
	}
	record(t, h, 1)
	record(t, h, result.HighestUS)
	for _, h := range []*hdrhistogram.Histogram{h, result.NewHistogram()} {
		s := encode(t, h)
		got, err := result.DecodeHistogram(s)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equals(h) {
			t.Errorf("round trip of %d values is not equal", h.TotalCount())
		}
		// Interchangeable with the library's own decoder.
		lib, err := hdrhistogram.Decode([]byte(s))
		if err != nil || !lib.Equals(h) {
			t.Errorf("hdrhistogram.Decode: %v, equal %v", err, err == nil && lib.Equals(h))
		}
	}
	empty, err := result.DecodeHistogram("")
	if err != nil || empty.TotalCount() != 0 || !empty.Equals(result.NewHistogram()) {
		t.Errorf(`DecodeHistogram("") = %v, %v`, empty, err)
	}
	if s, err := result.EncodeHistogram(nil); s != "" || err != nil {
		t.Errorf("EncodeHistogram(nil) = %q, %v", s, err)
	}
}

func TestDecodeHistogramErrors(t *testing.T) {
	h := result.NewHistogram()
	record(t, h, 1000)
	good := encode(t, h)
	raw, _ := base64.StdEncoding.DecodeString(good)
	b64 := base64.StdEncoding.EncodeToString
	with := func(f func(b []byte)) string {
		b := slices.Clone(raw)
		f(b)
		return b64(b)
	}
	other, err := hdrhistogram.New(1, 60_000_000, 2).Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ in, want string }{
		{"!!", "hdrhistogram: not base64: illegal base64 data at input byte 0"},
		{b64([]byte{1, 2, 3}), "hdrhistogram: 3 bytes, too short for a V2 compressed histogram"},
		{with(func(b []byte) { b[0] = 0 }), "hdrhistogram: cookie 0x849304 is not V2 compressed"},
		{with(func(b []byte) { b[4] = 0x7f }), "hdrhistogram: header says 2130706473 compressed bytes, 41 follow"},
		{with(func(b []byte) { b[4] = 0xff }), "hdrhistogram: header says -16777175 compressed bytes, 41 follow"},
		{b64(raw[:len(raw)-3]), "hdrhistogram: header says"},
		{with(func(b []byte) { b[len(b)-1] ^= 1 }), "hdrhistogram: zlib: invalid checksum"},
		{string(other), "hdrhistogram: parameters (2 significant digits, 1..60000000) are not the contract's (3, 1..3600000000)"},
	} {
		_, err := result.DecodeHistogram(c.in)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("DecodeHistogram(%.20q) = %v, want %q", c.in, err, c.want)
		}
	}
	if _, err := result.EncodeHistogram(hdrhistogram.New(1, 1000, 3)); err == nil {
		t.Error("EncodeHistogram accepted foreign parameters")
	}
}

func BenchmarkQuantile(b *testing.B) {
	h := result.NewHistogram()
	rng := rand.New(rand.NewPCG(1, 1))
	for range 100_000 {
		_ = h.RecordValue(1 + int64(rng.ExpFloat64()*20_000))
	}
	b.ReportAllocs()
	for b.Loop() {
		result.Quantile(h, 0.99)
	}
}

func BenchmarkSummarize(b *testing.B) {
	h := result.NewHistogram()
	rng := rand.New(rand.NewPCG(1, 1))
	for range 100_000 {
		_ = h.RecordValue(1 + int64(rng.ExpFloat64()*20_000))
	}
	b.ReportAllocs()
	for b.Loop() {
		result.Summarize(h)
	}
}

// For comparison: walking an exported copy of the counts.
func BenchmarkExportWalk(b *testing.B) {
	h := result.NewHistogram()
	rng := rand.New(rand.NewPCG(1, 1))
	for range 100_000 {
		_ = h.RecordValue(1 + int64(rng.ExpFloat64()*20_000))
	}
	b.ReportAllocs()
	for b.Loop() {
		var s int64
		for _, c := range h.Export().Counts {
			s += c
		}
		_ = s
	}
}
