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
// marginPad, at least marginMin: a new high raises it at once (the next
// sleep is already covered), and it falls back only when the high has left
// the window. A delay no margin covers (past marginMax − marginPad) is left
// out; contendedAt of them in the window (a contended core, where spinning
// loses the thread its turn) drop the margin to marginMin until they leave.
func TestWakeDelaysMargin(t *testing.T) {
	w := newWakeDelays()
	if w.margin != marginInit {
		t.Fatalf("margin before any wake-up %v, want %v", w.margin, marginInit)
	}
	add := func(n int, d time.Duration) {
		for i := 0; i < n; i++ {
			w.add(d)
		}
	}
	check := func(when string, want time.Duration) {
		t.Helper()
		if w.margin != want {
			t.Errorf("margin %s: %v, want %v", when, w.margin, want)
		}
	}
	add(marginWarm-1, µs(5))
	check("before it is warm", marginInit)
	add(32, µs(5))
	check("after quick wake-ups", marginMin)
	add(1, µs(400))
	check("after a 400 µs wake-up", µs(400)+marginPad)
	add(wakeWindow-2, µs(10))
	check("with the 400 µs delay still in the window", µs(400)+marginPad)
	add(32, µs(10))
	check("after the high left the window", µs(10)+marginPad)
	add(1, coverable)
	check("after the largest coverable delay", marginMax)
	add(wakeWindow, µs(10))
	add(1, 40*time.Millisecond) // a vCPU descheduled for 40 ms: no margin covers it
	check("after a 40 ms wake-up", µs(10)+marginPad)
	add(contendedAt-2, 5*time.Millisecond)
	check("with 3 uncoverable delays in the window", µs(10)+marginPad)
	add(1, 5*time.Millisecond)
	check("with 4 uncoverable delays in the window (contended)", marginMin)
	add(1, µs(900))
	check("contended, after a coverable high", marginMin)
	add(wakeWindow, µs(60))
	check("once the window is clear", µs(60)+marginPad)
	add(1, -µs(3)) // a clock read before the wake (never later than asked): 0
	if w.max != 40*time.Millisecond || w.over != 0 {
		t.Errorf("max %v, uncoverable in the window %d", w.max, w.over)
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
