package result

import (
	"fmt"
	"math"
)

// Wait is result.json's "wait": what the dispatcher measured of this host's wake-up delay
// and what waking early by it cost (issue 51). A long wait sleeps until its due time less
// the margin, then spins on the generator's core; SpunS is that core's time spent so, the
// CPU the early wake cost (the stack's cores pay nothing). Absent: no wait slept.
type Wait struct {
	MarginMS       float64 `json:"margin_ms"`         // the early wake's margin at the end (merged: the largest)
	Wakes          int64   `json:"wakes"`             // sleeps whose wake-up delay was measured
	WakeDelayMaxMS float64 `json:"wake_delay_max_ms"` // the latest of them: woke − asked
	EarlyWakes     int64   `json:"early_wakes"`       // waits that woke before their due time and spun
	SpunS          float64 `json:"spun_seconds"`      // spinning after those wakes, on the generator's core
}

// validate refuses negative or non-finite figures; nil is valid.
func (w *Wait) validate() error {
	if w == nil {
		return nil
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"margin_ms", w.MarginMS}, {"wake_delay_max_ms", w.WakeDelayMaxMS}, {"spun_seconds", w.SpunS}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
			return fmt.Errorf("wait.%s %v is not a duration", f.name, f.v)
		}
	}
	if w.Wakes < 0 || w.EarlyWakes < 0 {
		return fmt.Errorf("wait: negative count: wakes %d, early_wakes %d", w.Wakes, w.EarlyWakes)
	}
	return nil
}

// mergeWait sums two rounds' waits (the margin and the delay: the larger); nil if either is.
func mergeWait(a, b *Wait) *Wait {
	if a == nil || b == nil {
		return nil
	}
	return &Wait{
		MarginMS:       max(a.MarginMS, b.MarginMS),
		Wakes:          a.Wakes + b.Wakes,
		WakeDelayMaxMS: max(a.WakeDelayMaxMS, b.WakeDelayMaxMS),
		EarlyWakes:     a.EarlyWakes + b.EarlyWakes,
		SpunS:          a.SpunS + b.SpunS,
	}
}
