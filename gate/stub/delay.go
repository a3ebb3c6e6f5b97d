package stub

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/loadgate/loadgate/gate/result"
)

// MaxDelay bounds every draw and parameter (a lognormal's tail is cut).
const MaxDelay = time.Minute

// z99 is the standard normal's 99th percentile: sigma = ln(p99/p50) / z99.
const z99 = 2.3263478740408408

// Delay is a delay distribution. The zero Delay is "fixed 0".
type Delay struct {
	Dist     string        // "fixed", "uniform" or "lognormal"
	Fixed    time.Duration // fixed
	Min, Max time.Duration // uniform: every value in [Min, Max] equally likely
	P50, P99 time.Duration // lognormal: its median and 99th percentile
}

// ErrDelay is wrapped by every error of ParseDelay.
var ErrDelay = errors.New("invalid delay")

// ParseDelay reads a delay distribution, durations in [0, MaxDelay]: "20ms"
// (or "fixed:20ms"), "uniform:10ms-30ms" (both included, min <= max) or
// "lognormal:p50=20ms,p99=80ms" (0 < p50 <= p99).
func ParseDelay(s string) (Delay, error) {
	kind, args, ok := strings.Cut(s, ":")
	if !ok {
		kind, args = "fixed", s
	}
	var d Delay
	var err error
	switch kind {
	case "fixed":
		d.Dist = "fixed"
		d.Fixed, err = delayDur("fixed", args)
	case "uniform":
		d, err = parseUniform(args)
	case "lognormal":
		d, err = parseLognormal(args)
	default:
		err = fmt.Errorf("unknown distribution %q (fixed, uniform, lognormal)", clip(kind))
	}
	if err != nil {
		return Delay{}, fmt.Errorf("%w %q: %s", ErrDelay, clip(s), err)
	}
	return d, nil
}

func delayDur(name, v string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a duration such as 20ms", name, clip(v))
	}
	if d < 0 || d > MaxDelay {
		return 0, fmt.Errorf("%s: %s is outside [0, %s]", name, d, MaxDelay)
	}
	return d, nil
}

func parseUniform(args string) (Delay, error) {
	lo, hi, ok := strings.Cut(args, "-")
	if !ok {
		return Delay{}, errors.New("uniform needs min-max, e.g. uniform:10ms-30ms")
	}
	a, err := delayDur("min", lo)
	if err != nil {
		return Delay{}, err
	}
	b, err := delayDur("max", hi)
	if err != nil {
		return Delay{}, err
	}
	if a > b {
		return Delay{}, fmt.Errorf("min %s is above max %s", a, b)
	}
	return Delay{Dist: "uniform", Min: a, Max: b}, nil
}

func parseLognormal(args string) (Delay, error) {
	d := Delay{Dist: "lognormal"}
	seen := map[string]bool{}
	for _, kv := range strings.Split(args, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || (k != "p50" && k != "p99") {
			return Delay{}, fmt.Errorf("lognormal takes p50=DURATION,p99=DURATION, not %q", clip(kv))
		}
		if seen[k] {
			return Delay{}, fmt.Errorf("%s given twice", k)
		}
		seen[k] = true
		x, err := delayDur(k, v)
		if err != nil {
			return Delay{}, err
		}
		if k == "p50" {
			d.P50 = x
		} else {
			d.P99 = x
		}
	}
	if !seen["p50"] || !seen["p99"] {
		return Delay{}, errors.New("lognormal needs both p50 and p99")
	}
	if d.P50 <= 0 || d.P50 > d.P99 {
		return Delay{}, errors.New("lognormal needs 0 < p50 <= p99")
	}
	return d, nil
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// String is d in ParseDelay's syntax; ParseDelay(d.String()) gives d back.
func (d Delay) String() string {
	switch d.Dist {
	case "uniform":
		return fmt.Sprintf("uniform:%s-%s", d.Min, d.Max)
	case "lognormal":
		return fmt.Sprintf("lognormal:p50=%s,p99=%s", d.P50, d.P99)
	}
	return d.Fixed.String()
}

// MarshalText is String, for flag.TextVar.
func (d Delay) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText is ParseDelay, for flag.TextVar.
func (d *Delay) UnmarshalText(b []byte) (err error) {
	*d, err = ParseDelay(string(b))
	return err
}

// Draw is one delay from the distribution, using r; never above MaxDelay.
func (d Delay) Draw(r *rand.Rand) time.Duration {
	var v time.Duration
	switch d.Dist {
	case "uniform":
		v = d.Min
		if span := d.Max - d.Min; span > 0 {
			v += time.Duration(r.Int64N(int64(span) + 1))
		}
	case "lognormal":
		mu := math.Log(float64(d.P50))
		sigma := 0.0
		if d.P99 > d.P50 {
			sigma = math.Log(float64(d.P99)/float64(d.P50)) / z99
		}
		x := math.Exp(mu + sigma*r.NormFloat64())
		if x >= float64(MaxDelay) || math.IsNaN(x) {
			return MaxDelay
		}
		v = time.Duration(x)
	default:
		v = d.Fixed
	}
	return min(max(v, 0), MaxDelay)
}

// Stated is d in the result's words (milliseconds).
func (d Delay) Stated() result.StubDelay {
	s := result.StubDelay{Dist: d.Dist, CapMS: ms(MaxDelay)}
	switch d.Dist {
	case "uniform":
		s.MinMS, s.MaxMS = ms(d.Min), ms(d.Max)
	case "lognormal":
		s.P50MS, s.P99MS = ms(d.P50), ms(d.P99)
	default:
		s.Dist, s.MS = "fixed", ms(d.Fixed)
	}
	return s
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
