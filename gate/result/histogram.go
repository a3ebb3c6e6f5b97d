package result

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram parameters of the contract: microseconds from LowestUS to HighestUS
// with SigFigs significant digits.
const (
	LowestUS  = 1
	HighestUS = 3_600_000_000
	SigFigs   = 3
)

const Precision = "HdrHistogram, 3 significant digits, values in µs; percentiles nearest-rank"

var countsLen = len(NewHistogram().Export().Counts)

// NewHistogram returns an empty contract histogram of microseconds.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(LowestUS, HighestUS, SigFigs)
}

// EncodeHistogram encodes h as HdrHistogram V2 compressed base64 (nil: ""),
// refusing other parameters than the contract's.
func EncodeHistogram(h *hdrhistogram.Histogram) (string, error) {
	if h == nil {
		return "", nil
	}
	if err := checkParams(h.SignificantFigures(), h.LowestTrackableValue(), h.HighestTrackableValue()); err != nil {
		return "", err
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("hdrhistogram: %w", err)
	}
	return string(b), nil
}

// DecodeHistogram decodes what EncodeHistogram wrote. It never panics on corrupt
// input, bounds its memory, and refuses other parameters, so histograms merge exactly.
func DecodeHistogram(s string) (*hdrhistogram.Histogram, error) {
	counts := make([]int64, countsLen)
	if _, err := decodeCounts(s, counts); err != nil {
		return nil, err
	}
	return hdrhistogram.Import(&hdrhistogram.Snapshot{
		LowestTrackableValue:  LowestUS,
		HighestTrackableValue: HighestUS,
		SignificantFigures:    SigFigs,
		Counts:                counts,
	}), nil
}

const v2HeaderSize = 40 // uncompressed header of the V2 encoding

func decodeCounts(s string, counts []int64) (total int64, err error) {
	if s == "" {
		return 0, nil
	}
	p, err := v2Payload(s)
	if err != nil {
		return 0, err
	}
	return readCounts(p, counts)
}

// v2Payload checks the V2 encoding s and returns its counts' bytes.
func v2Payload(s string) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("hdrhistogram: not base64: %w", err)
	}
	if len(raw) < 8 {
		return nil, fmt.Errorf("hdrhistogram: %d bytes, too short for a V2 compressed histogram", len(raw))
	}
	if c := int32(binary.BigEndian.Uint32(raw)) &^ 0xf0; c != hdrhistogram.V2CompressedEncodingCookieBase {
		return nil, fmt.Errorf("hdrhistogram: cookie %#x is not V2 compressed", uint32(c))
	}
	n := int64(int32(binary.BigEndian.Uint32(raw[4:])))
	if n < 0 || n > int64(len(raw)-8) {
		return nil, fmt.Errorf("hdrhistogram: header says %d compressed bytes, %d follow", n, len(raw)-8)
	}
	zr, err := zlib.NewReader(bytes.NewReader(raw[8 : 8+n]))
	if err != nil {
		return nil, fmt.Errorf("hdrhistogram: %w", err)
	}
	limit := int64(v2HeaderSize + 9*countsLen)
	p, err := io.ReadAll(io.LimitReader(zr, limit+1))
	if err != nil {
		return nil, fmt.Errorf("hdrhistogram: %w", err)
	}
	if int64(len(p)) > limit {
		return nil, fmt.Errorf("hdrhistogram: decompresses to more than %d bytes", limit)
	}
	if len(p) < v2HeaderSize {
		return nil, fmt.Errorf("hdrhistogram: %d-byte header, want %d", len(p), v2HeaderSize)
	}
	if c := int32(binary.BigEndian.Uint32(p)) &^ 0xf0; c != hdrhistogram.V2EncodingCookieBase {
		return nil, fmt.Errorf("hdrhistogram: inner cookie %#x is not V2", uint32(c))
	}
	if pl := int64(int32(binary.BigEndian.Uint32(p[4:]))); pl != int64(len(p)-v2HeaderSize) {
		return nil, fmt.Errorf("hdrhistogram: header says %d payload bytes, %d follow", pl, len(p)-v2HeaderSize)
	}
	sig := int64(int32(binary.BigEndian.Uint32(p[12:])))
	lo := int64(binary.BigEndian.Uint64(p[16:]))
	hi := int64(binary.BigEndian.Uint64(p[24:]))
	if err := checkParams(sig, lo, hi); err != nil {
		return nil, err
	}
	return p[v2HeaderSize:], nil
}

func readCounts(p []byte, counts []int64) (total int64, err error) {
	idx := 0
	for len(p) > 0 {
		v, size, err := readZigZag(p)
		if err != nil {
			return 0, err
		}
		p = p[size:]
		if v < 0 { // a run of -v zero counts
			if v == math.MinInt64 || -v > int64(countsLen-idx) {
				return 0, fmt.Errorf("hdrhistogram: run of %d zero counts past the end", -v)
			}
			idx += int(-v)
			continue
		}
		if idx >= countsLen {
			return 0, errors.New("hdrhistogram: more counts than buckets")
		}
		counts[idx] = v
		idx++
		var carry uint64
		if total, carry = addInt64(total, v); carry != 0 {
			return 0, errors.New("hdrhistogram: total count overflows")
		}
	}
	return total, nil
}

func addInt64(a, b int64) (int64, uint64) {
	s := a + b
	if s < a { // both non-negative
		return s, 1
	}
	return s, 0
}

// readZigZag reads one ZigZag LEB128-64b9B value, the V2 count encoding.
func readZigZag(b []byte) (int64, int, error) {
	var u uint64
	for i := 0; i < 9; i++ {
		if i >= len(b) {
			return 0, 0, errors.New("hdrhistogram: truncated count")
		}
		c := b[i]
		if i == 8 {
			u |= uint64(c) << 56
			return int64(u>>1) ^ -int64(u&1), 9, nil
		}
		u |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return int64(u>>1) ^ -int64(u&1), i + 1, nil
		}
	}
	panic("unreachable")
}

func checkParams(sig, lo, hi int64) error {
	if sig != SigFigs || lo != LowestUS || hi != HighestUS {
		return fmt.Errorf("hdrhistogram: parameters (%d significant digits, %d..%d) are not the contract's (%d, %d..%d)",
			sig, lo, hi, SigFigs, LowestUS, HighestUS)
	}
	return nil
}

// Quantile returns h's nearest-rank q-quantile (its bucket's highest equivalent):
// rank ceil(q·N), q·N within 1e-12 (relative) of an integer taken as it; q ≤ 0
// or NaN: the minimum, q ≥ 1: the maximum; nil or empty h: 0.
func Quantile(h *hdrhistogram.Histogram, q float64) int64 {
	if h == nil {
		return 0
	}
	n := h.TotalCount()
	if n <= 0 {
		return 0
	}
	return atRank(h, n, rankOf(q, n))
}

func rankOf(q float64, n int64) int64 {
	switch {
	case !(q > 0): // also NaN
		return 1
	case q >= 1:
		return n
	}
	x := q * float64(n)
	if r := math.Round(x); math.Abs(x-r) <= 1e-12*math.Max(1, x) {
		x = r
	}
	return min(max(int64(math.Ceil(x)), 1), n)
}

func atRank(h *hdrhistogram.Histogram, n, k int64) int64 {
	return h.ValueAtPercentile(100 * float64(k) / float64(n))
}

func exactRank(n int64, num, den uint64) int64 {
	hi, lo := bits.Mul64(uint64(n), num)
	lo, c := bits.Add64(lo, den-1, 0)
	hi += c
	q, _ := bits.Div64(hi, lo, den) // hi < den since num < den
	return max(int64(q), 1)
}

// Summarize returns h's count and nearest-rank p50 … p99.9 and max in ms; nil
// or empty h gives the zero Summary.
func Summarize(h *hdrhistogram.Histogram) Summary {
	if h == nil || h.TotalCount() <= 0 {
		return Summary{}
	}
	n := h.TotalCount()
	ms := func(num uint64) float64 {
		return float64(atRank(h, n, exactRank(n, num, 1000))) / 1000
	}
	return Summary{
		Count: n,
		P50:   ms(500),
		P90:   ms(900),
		P95:   ms(950),
		P99:   ms(990),
		P999:  ms(999),
		Max:   float64(atRank(h, n, n)) / 1000,
	}
}
