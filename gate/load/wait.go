package load

import (
	"context"
	"time"

	"golang.org/x/sys/unix"
)

// The Go runtime's timers wake about 1 ms late on an idle Linux machine
// (netpoll waits in whole milliseconds), which would make every request at
// rates above 1 000 req/s late by up to 1 ms. Long waits therefore sleep on a
// runtime timer until coarseSlack before the due time, and the remainder is
// slept with nanosleep(2), which overshoots by tens of microseconds.
const (
	coarseSlack = 2 * time.Millisecond
	// spinFloor: a wait shorter than this is not slept at all; the request
	// goes out at once (still far inside late_after).
	spinFloor = 20 * time.Microsecond
)

// waitUntil blocks until clock() >= due or ctx is done. It returns ctx.Err()
// when cancelled during the coarse part of the wait.
func waitUntil(ctx context.Context, clock func() time.Duration, due time.Duration, timer *time.Timer) error {
	d := due - clock()
	if d > coarseSlack {
		timer.Reset(d - coarseSlack)
		select {
		case <-ctx.Done():
			timer.Stop() // Go ≥ 1.23: no stale value is left in timer.C
			return ctx.Err()
		case <-timer.C:
		}
		d = due - clock()
	}
	if d > spinFloor {
		ts := unix.NsecToTimespec(int64(d))
		for {
			if err := unix.Nanosleep(&ts, &ts); err != unix.EINTR {
				break
			}
		}
	}
	return nil
}
