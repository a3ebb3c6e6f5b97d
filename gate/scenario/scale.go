package scenario

import (
	"fmt"
	"math"
	"time"
)

// applyScale multiplies warmup and phase durations, step holds and burst
// periods by f (0 < f <= 1); a phase left empty is an error.
func (s *Scenario) applyScale(f float64) error {
	s.Scale = f
	if f == 1 {
		return nil
	}
	s.Warmup = scaleDuration(s.Warmup, f)
	for i := range s.Phases {
		p := &s.Phases[i]
		switch p.Pattern {
		case Step:
			p.Hold = scaleDuration(p.Hold, f)
			p.Duration = time.Duration(len(p.Rates)) * p.Hold
		case Burst:
			p.Every, p.For = scaleDuration(p.Every, f), scaleDuration(p.For, f)
			p.Duration = scaleDuration(p.Duration, f)
		default:
			p.Duration = scaleDuration(p.Duration, f)
		}
		scaleFaults(p, f) // faults.go
		if !scaledPhaseOK(*p) {
			return &Error{File: s.File, Line: p.Line, Field: fmt.Sprintf("phases[%d]", i),
				Msg: fmt.Sprintf("--scale %v makes phase %s too short to run", f, p.Name)}
		}
	}
	return nil
}

func scaleDuration(d time.Duration, f float64) time.Duration {
	return time.Duration(math.Round(float64(d) * f))
}

func scaledPhaseOK(p Phase) bool {
	switch p.Pattern {
	case Step:
		return p.Hold > 0
	case Burst:
		return p.Duration > 0 && p.For > 0 && p.For < p.Every
	}
	return p.Duration > 0
}
