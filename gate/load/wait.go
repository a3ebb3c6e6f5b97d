package load

import (
	"context"
	"os"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The Go runtime's timers wake about 1 ms late on an idle Linux machine
// (netpoll waits in whole milliseconds), which would make most requests at
// rates above 1 000 req/s late by up to 1 ms. nanosleep(2) is precise but
// holds the dispatcher's P in a syscall, so completions could not be
// processed while it sleeps.
//
// waiter therefore sleeps on a runtime timer until coarseSlack before the
// due time (cancellable), and the rest on a timerfd read through the runtime
// poller: the dispatcher parks, its P runs other goroutines (the requests),
// and the poller wakes it when the timerfd fires, tens of microseconds after
// the due time. A wait shorter than spinFloor yields instead of sleeping.
//
// A waiter belongs to the dispatcher goroutine: not safe for concurrent use.
type waiter struct {
	clock func() time.Duration
	timer *time.Timer
	tfd   *os.File // nil where timerfd is unavailable: nanosleep then
	rc    syscall.RawConn
	fd    int
	armed bool // the next call of park's callback is the first since arming
	park  func(uintptr) bool
}

const (
	coarseSlack = 2 * time.Millisecond
	spinFloor   = 30 * time.Microsecond
)

func newWaiter(clock func() time.Duration) *waiter {
	w := &waiter{clock: clock, timer: time.NewTimer(time.Hour), fd: -1}
	w.timer.Stop()
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err == nil {
		w.fd = fd
		w.tfd = os.NewFile(uintptr(fd), "timerfd") // non-blocking: registered with the poller
		if w.rc, err = w.tfd.SyscallConn(); err != nil {
			w.tfd.Close()
			w.tfd = nil
		}
	}
	// park's first call after arming returns false, so RawConn.Read parks the
	// goroutine on the poller without a read(2) that would only say EAGAIN;
	// the poller calls it again once the timer fired. timerfd_settime resets
	// the expiration count, so the timerfd is never read: one syscall a wait.
	w.park = func(uintptr) bool {
		if w.armed {
			w.armed = false
			return false
		}
		return true
	}
	return w
}

func (w *waiter) close() {
	w.timer.Stop()
	if w.tfd != nil {
		w.tfd.Close()
	}
}

// until blocks until clock() >= due or ctx is done; it returns ctx.Err() when
// cancelled during the coarse part of the wait.
func (w *waiter) until(ctx context.Context, due time.Duration) error {
	d := due - w.clock()
	if d > coarseSlack {
		w.timer.Reset(d - coarseSlack)
		select {
		case <-ctx.Done():
			w.timer.Stop() // Go ≥ 1.23: no stale value is left in timer.C
			return ctx.Err()
		case <-w.timer.C:
		}
		d = due - w.clock()
	}
	switch {
	case d <= 0:
	case d <= spinFloor:
		for w.clock() < due {
			runtime.Gosched()
		}
	case w.tfd != nil:
		// A wake-up may be stale (an expiration nobody waited for): wait
		// again until the due time has really come.
		for tries := 0; w.clock() < due; tries++ {
			left := due - w.clock()
			if left <= spinFloor || tries == 8 {
				for w.clock() < due {
					runtime.Gosched()
				}
				break
			}
			spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(left))}
			if unix.TimerfdSettime(w.fd, 0, &spec, nil) != nil {
				break
			}
			w.armed = true
			if w.rc.Read(w.park) != nil {
				break
			}
		}
		if w.clock() >= due {
			return nil
		}
		fallthrough
	default:
		ts := unix.NsecToTimespec(int64(due - w.clock()))
		for ts.Nano() > 0 {
			if err := unix.Nanosleep(&ts, &ts); err != unix.EINTR {
				break
			}
		}
	}
	return nil
}
