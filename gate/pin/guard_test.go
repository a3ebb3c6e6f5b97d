package pin

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// The guard, tick by tick, with no clock: each row is what the process's
// CPU time read at each tick (100 ms apart), and whether and at which tick
// the guard says to lower.
func TestGuard(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		name string
		cpus int
		cpu  []time.Duration // CPU time read at ticks 1, 2, …; -1: the read fails
		at   int             // the tick (1-based) at which it lowers; 0: never
	}{
		// Idle: never.
		{"idle", 1, []time.Duration{0, 1 * ms, 2 * ms, 3 * ms, 4 * ms, 5 * ms, 6 * ms, 7 * ms}, 0},
		// 85% of one cpu for 0.7 s: under the 90% limit, never.
		{"busy under the limit", 1, []time.Duration{0, 85 * ms, 170 * ms, 255 * ms, 340 * ms, 425 * ms, 510 * ms, 595 * ms}, 0},
		// 100% of one cpu: judged once the window is 500 ms wide, at tick 6.
		{"saturated", 1, []time.Duration{0, 100 * ms, 200 * ms, 300 * ms, 400 * ms, 500 * ms, 600 * ms}, 6},
		// 95% of one cpu after 200 ms of idling: the window slides; over
		// 90% once its oldest sample is the idle end, at tick 8.
		{"saturated after idling", 1, []time.Duration{0, 0, 0, 95 * ms, 190 * ms, 285 * ms, 380 * ms, 475 * ms, 570 * ms}, 8},
		// Two cpus at 100% of one of them: 50% of the generator's cpus, never.
		{"half of two cpus", 2, []time.Duration{0, 100 * ms, 200 * ms, 300 * ms, 400 * ms, 500 * ms, 600 * ms}, 0},
		// Two cpus both saturated: at tick 6.
		{"two cpus saturated", 2, []time.Duration{0, 200 * ms, 400 * ms, 600 * ms, 800 * ms, 1000 * ms, 1200 * ms}, 6},
		// A failed read is skipped, not taken for idle or for busy.
		{"failed reads", 1, []time.Duration{0, -1, 200 * ms, -1, 400 * ms, 500 * ms, 600 * ms}, 6},
		// A burst shorter than the window (startup): never.
		{"burst", 1, []time.Duration{0, 100 * ms, 200 * ms, 210 * ms, 220 * ms, 230 * ms, 240 * ms, 250 * ms}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Unix(1000, 0)
			tick := make(chan time.Time)
			stop := make(chan struct{})
			r := 0 // reads so far: the guard's goroutine only
			read := func() (time.Duration, error) {
				r++
				if c.cpu[r-1] < 0 {
					return 0, errors.New("no rusage")
				}
				return c.cpu[r-1], nil
			}
			now := func() time.Time { return start.Add(time.Duration(r) * guardEvery) }
			done := make(chan string)
			go func() { done <- guard(stop, tick, now, read, 0.95-guardMargin, c.cpus) }()
			for sent := 0; sent < len(c.cpu); sent++ {
				select {
				case tick <- start: // the guard reads its time from now
				case why := <-done:
					if sent != c.at {
						t.Fatalf("lowered at tick %d, want %d: %s", sent, c.at, why)
					}
					return
				}
			}
			close(stop)
			why := <-done
			switch {
			case why != "" && c.at != len(c.cpu):
				t.Fatalf("lowered at the last tick, want %d: %s", c.at, why)
			case why == "" && c.at != 0:
				t.Fatalf("never lowered, want at tick %d", c.at)
			case why != "" && !strings.Contains(why, "throttling"):
				t.Errorf("why %q does not name the throttling", why)
			}
		})
	}
}
