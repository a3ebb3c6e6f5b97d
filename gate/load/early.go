package load

import "time"

// The early wake (issue 51): a sleep's wake-up comes late by the host's wake-up delay (a
// timer interrupt, a halted vCPU brought back, a run queue), so a long wait sleeps until
// due − margin and spins the rest on its own core. The margin is what this process measured.
const (
	// earlyFrom: shorter waits sleep to their due time as before (≥ ~2 000 req/s: the spin
	// thresholds hold them, and a margin there would cost the most CPU per request).
	earlyFrom = 500 * time.Microsecond
	// marginInit is the margin until marginWarm wakes were measured.
	marginInit = 250 * time.Microsecond
	marginWarm = 8
	// marginMin and marginMax bound the margin; marginPad is added to the measured delay.
	marginMin = 30 * time.Microsecond
	marginMax = 2 * time.Millisecond
	marginPad = 20 * time.Microsecond
	// wakeWindow: the margin covers the latest of the last wakeWindow wake-ups.
	wakeWindow = 128
)

// planWait is how to wait d before a due time: sleep for sleep (0: no sleep), then spin the
// rest. slept says the previous wait slept; floor and afterSleep are the spin thresholds
// (spins); margin is the early wake. A long wait never spins more than half of itself, so
// that the core stays under the real-time guard's busy limit (gate/pin).
func planWait(d time.Duration, slept bool, floor, afterSleep, margin time.Duration) (sleep time.Duration) {
	switch {
	case d <= 0 || spins(d, slept, floor, afterSleep):
		return 0
	case d < earlyFrom:
		return d
	}
	return d - min(margin, d/2)
}

// wakeDelays measures how late this host's sleeps wake (dispatcher only): the margin is the
// largest of the last wakeWindow delays that a margin can cover (up to marginMax − marginPad)
// plus marginPad, at least marginMin. A delay past that is left to the host: spinning would not
// make that send on time. When contendedAt of the window are past it, the core is contended
// (others run there at the generator's priority): a thread that spins there loses its turn to
// them at every wake-up (measured under SCHED_OTHER on a busy core, bench/lowrate.md), so the
// margin falls to marginMin until the window clears.
type wakeDelays struct {
	ring   [wakeWindow]time.Duration
	n      int           // delays seen
	over   int           // delays in the window past what a margin covers
	margin time.Duration // the current margin
	max    time.Duration // the largest delay seen
}

// contendedAt: this many uncoverable delays in the window mean a contended core.
const contendedAt = 4

func newWakeDelays() *wakeDelays { return &wakeDelays{margin: marginInit} }

// coverable is the largest delay a margin covers.
const coverable = marginMax - marginPad

// add records one sleep's delay (woke − asked; negative counts as 0) and updates the margin.
func (w *wakeDelays) add(d time.Duration) {
	d = max(d, 0)
	if w.n >= wakeWindow && w.ring[w.n%wakeWindow] > coverable {
		w.over-- // leaves the window
	}
	w.ring[w.n%wakeWindow] = d
	w.n++
	w.max = max(w.max, d)
	if d > coverable {
		w.over++
	}
	switch {
	case w.n < marginWarm:
	case w.over >= contendedAt:
		w.margin = marginMin
	case d <= coverable && d+marginPad > w.margin: // a new high: covered from the next sleep on
		w.margin = d + marginPad
	case w.n%16 == 0 || d > coverable: // falls when the high leaves the window
		var top time.Duration
		for _, v := range w.ring[:min(w.n, wakeWindow)] {
			if v <= coverable {
				top = max(top, v)
			}
		}
		w.margin = max(top+marginPad, marginMin)
	}
}
