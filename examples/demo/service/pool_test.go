package main

import (
	"testing"
	"time"
)

// The pool's capacity is workers / service time, on the wall clock: at an
// arrival rate above it, it admits the capacity (plus the queue it starts
// with) and refuses the rest; below it, everything.
func TestPoolCapacity(t *testing.T) {
	for _, tc := range []struct {
		rate      float64
		wantAdmit int
	}{
		{rate: 76, wantAdmit: 760},
		{rate: 84, wantAdmit: 800 + 2}, // 80/s for 10 s, plus the 2 queue places left at the end
		{rate: 160, wantAdmit: 800 + 2},
	} {
		p := &pool{free: make([]time.Time, 4), service: 50 * time.Millisecond, maxWait: 50 * time.Millisecond * 2 / 4}
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		n := int(tc.rate * 10)
		admitted := 0
		for i := 0; i < n; i++ {
			at := t0.Add(time.Duration(float64(i) / tc.rate * float64(time.Second)))
			if _, ok := p.admit(at); ok {
				admitted++
			}
		}
		if d := admitted - tc.wantAdmit; d < -2 || d > 2 {
			t.Errorf("at %v req/s for 10 s: admitted %d, want %d ± 2", tc.rate, admitted, tc.wantAdmit)
		}
	}
}

func TestPoolRefusesBadConfig(t *testing.T) {
	if _, err := poolHandler(0, time.Millisecond, 0); err == nil {
		t.Error("0 workers accepted")
	}
}
