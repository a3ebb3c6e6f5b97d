package verdict

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseTolerance reads "5%" or "0.05" as 0.05, for the Action and the CLI
// alike; a bare number of 1 or more is refused as ambiguous.
func ParseTolerance(s string) (float64, error) {
	num, pct := strings.CutSuffix(s, "%")
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, fmt.Errorf("want a percentage such as 5%% or a fraction such as 0.05")
	}
	if pct {
		f /= 100
	} else if f >= 1 {
		return 0, fmt.Errorf("a bare number must be a fraction below 1: write %s%% for a percentage", num)
	}
	if f >= 1 {
		return 0, fmt.Errorf("must be below 100%%")
	}
	return f, nil
}

// Tolerance is a tolerance flag (flag.TextVar), written as a percentage.
type Tolerance float64

func (t Tolerance) MarshalText() ([]byte, error) {
	return []byte(strconv.FormatFloat(float64(t)*100, 'f', -1, 64) + "%"), nil
}

func (t *Tolerance) UnmarshalText(b []byte) error {
	f, err := ParseTolerance(string(b))
	if err != nil {
		return err
	}
	*t = Tolerance(f)
	return nil
}
