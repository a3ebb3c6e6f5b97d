package scenario

import (
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// byteUnits are binary and decimal suffixes, longest first.
var byteUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"kB", 1e3}, {"B", 1},
}

// ParseBytes reads a byte size > 0: bytes ("1048576") or a number with a unit
// ("16MiB", "1.5GiB").
func ParseBytes(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	if s == "" || strings.ContainsAny(s, "+eExX_") {
		return 0, false
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n <= 0 || n > math.MaxInt64/mult {
			return 0, false
		}
		return n * mult, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f > 0) || mult == 1 { // a fraction needs a unit: 1.5MiB, not 1.5 bytes
		return 0, false
	}
	v := f * float64(mult)
	if !(v >= 1 && v < math.MaxInt64) {
		return 0, false
	}
	return int64(math.Round(v)), true
}

// FormatBytes writes n in the largest binary unit that divides it ("16MiB"), else in bytes.
func FormatBytes(n int64) string {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.mult && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

func (d *decoder) byteSize(n *yaml.Node, field string) int64 {
	if n = d.scalar(n, field, "a byte size"); n == nil {
		return 0
	}
	v, ok := ParseBytes(n.Value)
	if !ok {
		d.failf(n.Line, field, "invalid byte size %q: use a positive size such as 16MiB, 1MB, 512KiB or a number of bytes", clip(n.Value))
	}
	return v
}
