package scenario

import (
	"fmt"
	"math"
	"time"
)

// CheckCeilings refuses, never clamps, a scenario that asks for more than its
// ceilings; the error wraps ErrCeiling. Zero ceilings refuse everything.
func (s *Scenario) CheckCeilings() error {
	c := s.Ceilings
	for _, p := range s.Phases {
		if r := p.PeakRate(); r > c.Rate {
			return s.ceilingError(p.Line, "phase %s asks for %s req/s, above ceilings.rate %s", p.Name, formatRate(r), formatRate(c.Rate))
		}
	}
	if total, ok := s.totalDuration(); !ok || total > c.Duration {
		what := total.String()
		if !ok {
			what = "longer than " + what
		}
		return s.ceilingError(s.lines["phases"], "warmup and phases last %s%s, above ceilings.duration %v", what, s.scaleNote(), c.Duration)
	}
	if s.MaxInFlight > c.InFlight {
		return s.ceilingError(s.lines["max_in_flight"], "max_in_flight %d is above ceilings.in_flight %d", s.MaxInFlight, c.InFlight)
	}
	if s.Timeout > c.Timeout {
		return s.ceilingError(s.lines["timeout"], "timeout %v is above ceilings.timeout %v", s.Timeout, c.Timeout)
	}
	if s.Drain > c.Drain {
		if line, ok := s.lines["drain"]; ok {
			return s.ceilingError(line, "drain %v is above ceilings.drain %v", s.Drain, c.Drain)
		}
		return s.ceilingError(s.lines["timeout"], "drain %v (drain follows timeout when it is not set) is above ceilings.drain %v: set drain, or raise ceilings.drain", s.Drain, c.Drain)
	}
	if s.MaxBody > c.MaxBody {
		return s.ceilingError(s.lines["max_body"], "max_body %s is above ceilings.max_body %s", FormatBytes(s.MaxBody), FormatBytes(c.MaxBody))
	}
	return nil
}

func (s *Scenario) ceilingError(line int, format string, args ...any) error {
	return &Error{File: s.File, Line: line, Msg: fmt.Sprintf(format, args...), Err: ErrCeiling}
}

func (s *Scenario) scaleNote() string {
	if s.Scale == 0 || s.Scale == 1 {
		return ""
	}
	return fmt.Sprintf(" (after --scale %v)", s.Scale)
}

// totalDuration is TotalDuration, ok false (sum saturated) when it overflows.
func (s *Scenario) totalDuration() (time.Duration, bool) {
	total := s.Warmup
	for _, p := range s.Phases {
		if p.Duration > math.MaxInt64-total {
			return math.MaxInt64, false
		}
		total += p.Duration
	}
	return total, true
}
