package load

import (
	"testing"
	"time"
)

func µs(n int) time.Duration { return time.Duration(n) * time.Microsecond }

// How the dispatcher waits d before a due time: sleep for the returned
// duration, then spin the rest (issue 51). The spin thresholds are the
// defaults (floor 30 µs, 45 µs after a sleep); the margin is what the waiter
// measured of the host's wake-up delay. No clock: a pure function.
func TestPlanWait(t *testing.T) {
	const (
		floor = spinFloorDefault
		after = spinAfterSleepDefault
	)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for _, c := range []struct {
		d      time.Duration
		slept  bool
		margin time.Duration
		want   time.Duration // the sleep; d − want is spun
	}{
		{0, false, µs(100), 0},                         // due already: no wait
		{-µs(5), true, µs(100), 0},                     // late: no wait, no sleep
		{µs(25), false, µs(100), 0},                    // 20 000/s and over: under the floor, spun whole as before
		{µs(40), true, µs(100), 0},                     // after a sleep, up to 45 µs is spun whole as before
		{µs(40), false, µs(100), µs(40)},               // 20 000/s after a spin: sleeps to due as before (no early wake: CPU at 20k unchanged)
		{µs(190), true, µs(100), µs(190)},              // 5 000/s: below earlyFrom, sleeps to due as before
		{µs(499), false, µs(100), µs(499)},             // just below earlyFrom: as before
		{µs(500), false, µs(100), µs(400)},             // earlyFrom itself: wakes the margin early
		{µs(950), false, µs(300), µs(650)},             // 1 000/s with a 300 µs margin: sleeps 650, spins 300
		{µs(950), false, ms(2), µs(475)},               // a margin over half the wait spins only half: the core stays under the rt guard's limit
		{ms(16), false, µs(80), ms(16) - µs(80)},       // 60/s on a quiet host: spins 80 µs a request
		{ms(16), false, ms(2), ms(14)},                 // 60/s after a 2 ms wake-up: spins the largest margin
		{ms(50), true, µs(30), ms(50) - µs(30)},        // 20/s, the smallest margin
		{ms(3), false, 0, ms(3)},                       // no margin: sleeps to due
		{ms(1000), false, marginMax, ms(1000) - ms(2)}, // a long pause: the margin, not half of it
	} {
		if got := planWait(c.d, c.slept, floor, after, c.margin); got != c.want {
			t.Errorf("planWait(%v, slept %v, margin %v) = sleep %v, want %v", c.d, c.slept, c.margin, got, c.want)
		}
	}
}

// The margin is the latest wake-up delay of the last wakeWindow sleeps plus
// marginPad, within [marginMin, marginMax]: a new high raises it at once (the
// next sleep is already covered), and it falls back only when the high has
// left the window.
func TestWakeDelaysMargin(t *testing.T) {
	w := newWakeDelays()
	if w.margin != marginInit {
		t.Fatalf("margin before any wake-up %v, want %v", w.margin, marginInit)
	}
	for i := 0; i < marginWarm-1; i++ {
		w.add(µs(5))
	}
	if w.margin != marginInit {
		t.Errorf("margin after %d wake-ups %v, want still %v (not warm)", marginWarm-1, w.margin, marginInit)
	}
	for i := 0; i < 32; i++ {
		w.add(µs(5))
	}
	if w.margin != marginMin {
		t.Errorf("margin after quick wake-ups %v, want the floor %v", w.margin, marginMin)
	}
	w.add(µs(400)) // a late wake-up: covered from the next sleep on
	if want := µs(400) + marginPad; w.margin != want {
		t.Errorf("margin after a 400 µs wake-up %v, want %v", w.margin, want)
	}
	for i := 0; i < wakeWindow-2; i++ {
		w.add(µs(10))
	}
	if want := µs(400) + marginPad; w.margin != want {
		t.Errorf("margin with the 400 µs delay still in the window %v, want %v", w.margin, want)
	}
	for i := 0; i < 32; i++ {
		w.add(µs(10))
	}
	if want := µs(10) + marginPad; w.margin != want {
		t.Errorf("margin after the high left the window %v, want %v", w.margin, want)
	}
	w.add(40 * time.Millisecond) // a vCPU descheduled for 40 ms: no margin covers it
	if w.margin != marginMax {
		t.Errorf("margin after a 40 ms wake-up %v, want the ceiling %v", w.margin, marginMax)
	}
	w.add(-µs(3)) // a clock read before the wake (never later than asked): 0
	if w.max != 40*time.Millisecond || w.n != marginWarm-1+32+1+wakeWindow-2+32+2 {
		t.Errorf("max %v, n %d", w.max, w.n)
	}
}

// quietFor says a background goroutine may run now only while the
// dispatcher sleeps with at least need to go; a fake clock decides.
func TestQuietFor(t *testing.T) {
	var now time.Duration
	w := newWaiter(func() time.Duration { return now })
	defer w.close()
	now = µs(1000)
	if w.quietFor(0) {
		t.Error("quiet while the dispatcher is awake")
	}
	w.asleep.Store(int64(µs(3000)))
	if !w.quietFor(µs(2000)) {
		t.Error("not quiet with 2 ms of sleep to go")
	}
	if w.quietFor(µs(2001)) {
		t.Error("quiet for more than the sleep left")
	}
	now = µs(3500)
	if w.quietFor(0) {
		t.Error("quiet after the wake time passed")
	}
}
