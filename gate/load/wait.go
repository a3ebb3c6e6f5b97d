package load

import (
	"context"
	"errors"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/loadgate/loadgate/gate/result"
)

// waiter waits precisely: runtime timers wake late and nanosleep holds the P, so it sleeps on a
// timer until coarseSlack before, then a timerfd; short waits spin, and long ones wake early by
// the wake-up delay it measured and spin the rest (early.go). Dispatcher only, except abort
// and quietFor.
type waiter struct {
	clock func() time.Duration
	timer *time.Timer
	tfd   *os.File // nil where timerfd is unavailable: nanosleep then
	rc    syscall.RawConn
	fd    int
	due   time.Duration // the current sleep's wake time, read by park
	slept bool          // the previous wait slept
	park  func(uintptr) bool

	delays *wakeDelays   // how late sleeps wake: the early wake's margin
	spun   time.Duration // spent awake before due times after an early wake (the core it cost)
	early  int64         // waits that woke early and spun
	asleep atomic.Int64  // while asleep: when it wakes (ns since start, read by quietFor); else -1

	abortOnce sync.Once
	aborted   chan struct{} // closed by abort

	oneP int8 // onlyP: 0 not read yet, 1 GOMAXPROCS is 1, -1 more

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

// earlyWake: LOADGATE_ENGINE_EARLY_WAKE=0 turns the early wake off (sleep to due), for
// side-by-side runs.
var earlyWake = os.Getenv("LOADGATE_ENGINE_EARLY_WAKE") != "0"

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
	w := &waiter{clock: clock, timer: time.NewTimer(time.Hour), fd: -1, aborted: make(chan struct{}), delays: newWakeDelays()}
	w.timer.Stop()
	w.asleep.Store(-1)
	fd, err := newTimerfd()
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
func (w *waiter) arm(d time.Duration) error { return armTimerfd(w.fd, d) }

func (w *waiter) close() {
	w.timer.Stop()
	if w.tfd != nil {
		w.tfd.Close()
	}
}

// until blocks until due, ctx is done or abort; the fine part of a wait ignores ctx.
// A long wait sleeps until due less the measured wake-up delay (planWait), then spins.
func (w *waiter) until(ctx context.Context, due time.Duration) error {
	now := w.clock()
	d := due - now
	slept := w.slept
	w.slept = false
	margin := w.delays.margin
	if !earlyWake {
		margin = 0
	}
	sleep := planWait(d, slept, spinFloor, spinAfterSleep, margin)
	if sleep > 0 {
		w.slept = true
		if err := w.sleepUntil(ctx, now+sleep); err != nil {
			return err
		}
		if woke := w.clock(); woke < due {
			// Awake before due: keep the core (at most half the wait, at most marginMax).
			// With other Ps, yield it to nothing (a goroutine let in now could run past the
			// due time); alone on one P, let the readers in: a response they stamp late
			// would carry the generator's spin in its latency.
			if w.onlyP() {
				for w.clock() < due {
					runtime.Gosched()
				}
			} else {
				for w.clock() < due {
				}
			}
			w.spun += w.clock() - woke
			w.early++
		}
	} else if d > 0 {
		for w.clock() < due {
			runtime.Gosched()
		}
	}
	if w.isAborted() {
		return errAborted
	}
	return nil
}

// onlyP reports whether the generator runs on one P (GOMAXPROCS 1), read once:
// GOMAXPROCS(0) takes the scheduler's lock, too dear for every wait.
func (w *waiter) onlyP() bool {
	if w.oneP == 0 {
		w.oneP = -1
		if runtime.GOMAXPROCS(0) == 1 {
			w.oneP = 1
		}
	}
	return w.oneP == 1
}

// sleepUntil sleeps until wake on a runtime timer to coarseSlack before, then a timerfd (or
// nanosleep), and records how late it woke; ctx and abort end it in its coarse part.
func (w *waiter) sleepUntil(ctx context.Context, wake time.Duration) error {
	if d := wake - w.clock(); d > coarseSlack {
		w.asleep.Store(int64(wake - coarseSlack))
		w.timer.Reset(d - coarseSlack)
		select {
		case <-ctx.Done():
			w.timer.Stop() // Go ≥ 1.23: no stale value is left in timer.C
			w.asleep.Store(-1)
			return ctx.Err()
		case <-w.aborted:
			w.timer.Stop()
			w.asleep.Store(-1)
			return errAborted
		case <-w.timer.C:
		}
	}
	d := wake - w.clock()
	if d > 0 {
		w.asleep.Store(int64(wake))
		w.fine(wake, d)
		if w.isAborted() {
			w.asleep.Store(-1)
			return errAborted
		}
	}
	w.asleep.Store(-1)
	w.delays.add(w.clock() - wake)
	return nil
}

// fine sleeps the last d until wake on the timerfd, else (or when it fails) by nanosleep.
func (w *waiter) fine(wake, d time.Duration) {
	if w.tfd != nil {
		w.due = wake
		if w.arm(d) == nil {
			if w.beforePark != nil {
				w.beforePark()
			}
			_ = w.rc.Read(w.park) // an error (the abort's deadline, a closed fd) is decided by the caller
			if w.isAborted() || w.clock() >= wake {
				return
			}
		}
		// settime or the poller failed: sleep the rest
	}
	nanosleep(wake - w.clock())
}

// quietFor says whether the dispatcher is asleep for at least need more: a background
// goroutine that runs now (for less than need) delays no send. Any goroutine.
func (w *waiter) quietFor(need time.Duration) bool {
	until := w.asleep.Load()
	return until >= 0 && time.Duration(until)-w.clock() >= need
}

// waited is what the early wake measured and cost, for the result (nil: no wait slept).
func (w *waiter) waited() *result.Wait {
	if w.delays.n == 0 {
		return nil
	}
	return &result.Wait{
		MarginMS:       ms(w.delays.margin),
		Wakes:          int64(w.delays.n),
		WakeDelayMaxMS: ms(w.delays.max),
		EarlyWakes:     w.early,
		SpunS:          w.spun.Seconds(),
	}
}
