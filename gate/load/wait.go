package load

import (
	"context"
	"errors"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// waiter waits precisely: runtime timers wake late and nanosleep holds the P, so it sleeps on a
// timer until coarseSlack before, then a timerfd; short waits spin. Dispatcher only, except abort.
type waiter struct {
	clock func() time.Duration
	timer *time.Timer
	tfd   *os.File // nil where timerfd is unavailable: nanosleep then
	rc    syscall.RawConn
	fd    int
	due   time.Duration // the current wait's due time, read by park
	slept bool          // the previous wait slept
	park  func(uintptr) bool

	abortOnce sync.Once
	aborted   chan struct{} // closed by abort

	// beforePark (tests only) runs between arming the timerfd and parking.
	beforePark func()
}

const (
	coarseSlack = 2 * time.Millisecond
	// Spin thresholds chosen by measurement (bench/README.md).
	spinFloorDefault      = 30 * time.Microsecond
	spinAfterSleepDefault = 45 * time.Microsecond
)

// spinFloor may be set by LOADGATE_ENGINE_SPIN, for side-by-side runs.
var spinFloor = spinDurationFrom(os.Getenv("LOADGATE_ENGINE_SPIN"), spinFloorDefault)

// spinAfterSleep may be set by LOADGATE_ENGINE_SPIN_AFTER_SLEEP.
var spinAfterSleep = spinDurationFrom(os.Getenv("LOADGATE_ENGINE_SPIN_AFTER_SLEEP"), spinAfterSleepDefault)

// spinDurationFrom parses a duration in [0 (never spin), 1ms]; anything else is def.
func spinDurationFrom(v string, def time.Duration) time.Duration {
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || d > time.Millisecond {
		return def
	}
	return d
}

// spins: spin a wait of d up to floor, or afterSleep after a sleep (whose late wake shortens it).
func spins(d time.Duration, slept bool, floor, afterSleep time.Duration) bool {
	return d <= floor || slept && d <= afterSleep
}

var errAborted = errors.New("wait aborted")

func newWaiter(clock func() time.Duration) *waiter {
	w := &waiter{clock: clock, timer: time.NewTimer(time.Hour), fd: -1, aborted: make(chan struct{})}
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
	// Decide by the clock: RawConn.Read clears the ready flag before calling this.
	w.park = func(uintptr) bool {
		return w.clock() >= w.due || w.isAborted()
	}
	return w
}

func (w *waiter) isAborted() bool {
	select {
	case <-w.aborted:
		return true
	default:
		return false
	}
}

// abort ends the current and every later wait with errAborted; any goroutine, idempotent.
func (w *waiter) abort() {
	w.abortOnce.Do(func() {
		close(w.aborted)
		if w.tfd != nil {
			// Wakes a read parked on the poller (ErrDeadlineExceeded).
			_ = w.tfd.SetReadDeadline(time.Unix(1, 0))
		}
	})
}

// arm sets the timerfd by a raw system call that neither blocks nor wakes sysmon (see rawConn).
func (w *waiter) arm(d time.Duration) error {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	_, _, e := unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, uintptr(w.fd), 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

func (w *waiter) close() {
	w.timer.Stop()
	if w.tfd != nil {
		w.tfd.Close()
	}
}

// until blocks until due, ctx is done or abort; the fine part of a wait ignores ctx.
func (w *waiter) until(ctx context.Context, due time.Duration) error {
	d := due - w.clock()
	if d > coarseSlack {
		w.timer.Reset(d - coarseSlack)
		select {
		case <-ctx.Done():
			w.timer.Stop() // Go ≥ 1.23: no stale value is left in timer.C
			return ctx.Err()
		case <-w.aborted:
			w.timer.Stop()
			return errAborted
		case <-w.timer.C:
		}
		d = due - w.clock()
	}
	slept := w.slept
	w.slept = false
	switch {
	case d <= 0:
	case spins(d, slept, spinFloor, spinAfterSleep):
		for w.clock() < due {
			runtime.Gosched()
		}
	case w.tfd != nil:
		w.slept = true
		w.due = due
		if w.arm(d) == nil {
			if w.beforePark != nil {
				w.beforePark()
			}
			_ = w.rc.Read(w.park) // an error (the abort's deadline, a closed fd) is decided below
			if w.isAborted() {
				return errAborted
			}
		}
		if w.clock() >= due {
			return nil
		}
		fallthrough // settime or the poller failed: sleep the rest
	default:
		w.slept = true
		ts := unix.NsecToTimespec(int64(due - w.clock()))
		for ts.Nano() > 0 {
			if err := unix.Nanosleep(&ts, &ts); err != unix.EINTR {
				break
			}
		}
	}
	if w.isAborted() {
		return errAborted
	}
	return nil
}
