package result

import (
	"fmt"
	"math"

	"github.com/loadgate/loadgate/gate/pin"
)

// Steal is result.json's "steal": how much of the generator's and stack's cores
// the hypervisor gave another guest over the measured window, from /proc/stat.
type Steal struct {
	WindowS float64     `json:"window_s"`        // the measured window's wall time the shares are of
	Load    StealCores  `json:"load"`            // the generator's cores (topology.load_cpus)
	Stack   *StealCores `json:"stack,omitempty"` // the stack's cores (topology.stack_cpus); absent without a stack
}

// StealCores: Share is the steal summed over the cores ÷ (window × cores).
type StealCores struct {
	CPUs    string  `json:"cpus"`           // cpuset list
	StolenS float64 `json:"stolen_seconds"` // summed over the cores
	Share   float64 `json:"share"`
}

// validate refuses shares outside 0…1 and a stack part without cpus; nil is valid.
func (s *Steal) validate() error {
	if s == nil {
		return nil
	}
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) || v < 0 }
	if bad(s.WindowS) {
		return fmt.Errorf("steal.window_s %v is not a duration", s.WindowS)
	}
	for i, c := range []*StealCores{&s.Load, s.Stack} {
		name := [...]string{"load", "stack"}[i]
		if c == nil {
			continue
		}
		if c.CPUs == "" {
			return fmt.Errorf("steal.%s.cpus is empty", name)
		}
		if bad(c.StolenS) {
			return fmt.Errorf("steal.%s.stolen_seconds %v is not a duration", name, c.StolenS)
		}
		if bad(c.Share) || c.Share > 1 {
			return fmt.Errorf("steal.%s.share %v is not within 0…1", name, c.Share)
		}
	}
	return nil
}

// mergeSteal sums two rounds' steal on the same cores, else nil.
func mergeSteal(a, b *Steal) *Steal {
	if a == nil || b == nil || a.Load.CPUs != b.Load.CPUs || (a.Stack == nil) != (b.Stack == nil) ||
		(a.Stack != nil && a.Stack.CPUs != b.Stack.CPUs) {
		return nil
	}
	window := a.WindowS + b.WindowS
	sum := func(x, y StealCores) StealCores {
		c := StealCores{CPUs: x.CPUs, StolenS: x.StolenS + y.StolenS}
		if set, err := pin.Parse(x.CPUs); err == nil && window > 0 && set.Len() > 0 {
			c.Share = min(c.StolenS/(window*float64(set.Len())), 1)
		}
		return c
	}
	m := &Steal{WindowS: window, Load: sum(a.Load, b.Load)}
	if a.Stack != nil {
		s := sum(*a.Stack, *b.Stack)
		m.Stack = &s
	}
	return m
}
