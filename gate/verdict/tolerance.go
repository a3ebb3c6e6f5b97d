package verdict

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseTolerance reads "5%" or "0.05" as 0.05. A bare number of 1 or more
// is refused as ambiguous. The Action and the CLI
// read a tolerance through it: one syntax.
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
