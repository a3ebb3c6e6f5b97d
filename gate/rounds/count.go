package rounds

import (
	"errors"
	"strconv"
)

// ParseCount reads a number of paired rounds or "auto", for --rounds and
// the Action alike; Config.Validate checks the number.
func ParseCount(s string) (n int, auto bool, err error) {
	if s == "auto" {
		return 0, true, nil
	}
	if n, err = strconv.Atoi(s); err != nil {
		return 0, false, errors.New("want a whole number of at least 1, or auto")
	}
	return n, false, nil
}

// CountFlag is --rounds as a flag.Value, setting Config.Rounds and Config.Auto.
type CountFlag struct {
	N    *int
	Auto *bool
}

func (c CountFlag) String() string {
	if c.N == nil || *c.Auto {
		return "auto"
	}
	return strconv.Itoa(*c.N)
}

func (c CountFlag) Set(s string) error {
	n, auto, err := ParseCount(s)
	if err == nil {
		*c.N, *c.Auto = n, auto
	}
	return err
}
