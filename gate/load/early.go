package load

import (
	"slices"
	"time"
)

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
// largest of the last wakeWindow delays plus marginPad, within [marginMin, marginMax].
type wakeDelays struct {
	ring   [wakeWindow]time.Duration
	n      int           // delays seen
	margin time.Duration // the current margin
	max    time.Duration // the largest delay seen
}

func newWakeDelays() *wakeDelays { return &wakeDelays{margin: marginInit} }

// add records one sleep's delay (woke − asked; negative counts as 0) and updates the margin.
func (w *wakeDelays) add(d time.Duration) {
	d = max(d, 0)
	w.ring[w.n%wakeWindow] = d
	w.n++
	w.max = max(w.max, d)
	if w.n < marginWarm {
		return
	}
	// The window's maximum: a new high raises it at once; it falls when the high leaves.
	if d+marginPad > w.margin {
		w.margin = min(d+marginPad, marginMax)
		return
	}
	if w.n%16 == 0 {
		k := min(w.n, wakeWindow)
		w.margin = min(max(slices.Max(w.ring[:k])+marginPad, marginMin), marginMax)
	}
}
