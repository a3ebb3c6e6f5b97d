package scenario

import "time"

// OperatorLimits are the operator's ceilings (--max-rate, ...); zero is no limit.
type OperatorLimits struct {
	Rate     float64       // requests per second, the highest instantaneous rate of any phase
	Duration time.Duration // warmup + all phases
	InFlight int           // max_in_flight
}

// CheckOperatorLimits refuses a scenario that asks for more than the operator
// allows; the *Error names the flag and wraps ErrCeiling.
func (s *Scenario) CheckOperatorLimits(l OperatorLimits) error {
	if l.Rate > 0 {
		for _, p := range s.Phases {
			if r := p.PeakRate(); r > l.Rate {
				return s.ceilingError(p.Line, "phase %s asks for %s req/s, above the operator's --max-rate %s (the scenario's ceilings cannot raise it)", p.Name, formatRate(r), formatRate(l.Rate))
			}
		}
	}
	if l.Duration > 0 {
		if total, ok := s.totalDuration(); !ok || total > l.Duration {
			return s.ceilingError(s.lines["phases"], "warmup and phases last %s%s, above the operator's --max-duration %v (the scenario's ceilings cannot raise it)", total, s.scaleNote(), l.Duration)
		}
	}
	if l.InFlight > 0 && s.MaxInFlight > l.InFlight {
		return s.ceilingError(s.lines["max_in_flight"], "max_in_flight %d is above the operator's --max-in-flight %d (the scenario's ceilings cannot raise it)", s.MaxInFlight, l.InFlight)
	}
	return nil
}
