package scenario

import (
	"errors"
	"fmt"
	"net"
	"strconv"
)

// Fixed limits, which bound what the generator allocates for any input.
const (
	MaxFileBytes = 1 << 20

	// MaxCells: the engine keeps two histograms per segment and workload.
	MaxCells = 1024

	// Shares are bounded: a far smaller one would never be sent and loses precision.
	MinShare      = 1e-6
	MaxShare      = 1e6
	MaxShareRatio = 1e6
)

// ErrLimit is wrapped by every refusal for breaking a fixed limit.
var ErrLimit = errors.New("limit")

func fileTooLarge(file string, size int64) error {
	what := "larger than " + FormatBytes(MaxFileBytes)
	if size > MaxFileBytes {
		what = fmt.Sprintf("%d bytes, above the limit of %s (%d bytes)", size, FormatBytes(MaxFileBytes), MaxFileBytes)
	}
	return &Error{File: file, Msg: "the scenario file is " + what + "; a scenario is a few KiB", Err: ErrLimit}
}

func (s *Scenario) checkCells() error {
	phases, workloads := len(s.Phases), len(s.Workloads)
	segments := phases
	what := fmt.Sprintf("%d phases", phases)
	if s.Warmup > 0 {
		segments++
		what = fmt.Sprintf("%d segments (%d phases + the warm-up)", segments, phases)
	}
	if cells := segments * workloads; cells > MaxCells {
		return &Error{File: s.File, Line: s.lines["phases"], Field: "phases", Err: ErrLimit,
			Msg: fmt.Sprintf("%s × %d workloads = %d cells exceeds the limit of %d (the engine keeps histograms per segment and workload)",
				what, workloads, cells, MaxCells)}
	}
	return nil
}

// checkShares bounds the shares' ratio; each is already in [MinShare, MaxShare].
func (s *Scenario) checkShares() error {
	lo, hi := 0, 0
	for i, w := range s.Workloads {
		if w.Share < s.Workloads[lo].Share {
			lo = i
		}
		if w.Share > s.Workloads[hi].Share {
			hi = i
		}
	}
	if len(s.Workloads) == 0 || s.Workloads[hi].Share <= MaxShareRatio*s.Workloads[lo].Share {
		return nil
	}
	field := index("workloads", lo) + ".share"
	line := s.lines[field]
	if line == 0 {
		line = s.Workloads[lo].Line
	}
	return &Error{File: s.File, Line: line, Field: field,
		Msg: fmt.Sprintf("share %v of workload %s is less than 1/%g of the largest share (%v, workload %s): keep the largest share at most %g × the smallest",
			s.Workloads[lo].Share, s.Workloads[lo].Name, MaxShareRatio, s.Workloads[hi].Share, s.Workloads[hi].Name, MaxShareRatio)}
}

// ParsePort parses a TCP port a user gives: decimal digits, 1..65535.
func ParsePort(s string) (int, error) {
	if s == "" {
		return 0, errors.New("no port")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("port %q is not a number", clip(s))
		}
	}
	p, err := strconv.Atoi(s)
	if err != nil || p < 1 || p > 65535 {
		return 0, fmt.Errorf("port %s is outside 1-65535", clip(s))
	}
	return p, nil
}

// CheckServiceTarget checks a service:port target such as api:8080.
func CheckServiceTarget(t string) error {
	host, port, err := net.SplitHostPort(t)
	if err != nil || host == "" {
		return fmt.Errorf("must be service:port, such as api:8080, not %q", clip(t))
	}
	if _, err := ParsePort(port); err != nil {
		return fmt.Errorf("%q: %v (want service:port, such as api:8080)", clip(t), err)
	}
	return nil
}

// CheckCells is Parse's MaxCells check, for a scenario built in code from a
// parsed one; it wraps ErrLimit.
func (s *Scenario) CheckCells() error { return s.checkCells() }
