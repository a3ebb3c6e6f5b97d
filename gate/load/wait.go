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
// the due time. A wait of up to spinFloor, or up to spinAfterSleep right
// after a wait that slept, yields instead of sleeping (spins).
//
// # The lost wake-up, and why it cannot happen here
//
// The poller is edge-triggered and the timerfd is never read (each
// timerfd_settime resets its expiration count: one syscall a wait). The
// first version armed the timer, then called RawConn.Read with a callback
// that returned false once ("not ready yet: park"). RawConn.Read begins by
// resetting the descriptor's ready flag (internal/poll prepareRead), so a
// timer that fired between timerfd_settime and that reset — the dispatcher
// preempted for longer than the wait, on a loaded core — left its one edge
// in the flag the reset then cleared: the callback said "park", and the
// goroutine parked on a descriptor that would never signal again (fdinfo:
// ticks 1, it_value 0). The run hung for good.
//
// The callback now decides from the clock, not from a flag: it runs after
// the reset, and returns true ("done") when the due time has passed. A
// timer armed at t₀ with the value due−t₀ can only have fired at or after
// due on CLOCK_MONOTONIC (the clock loadgate reads), so either it fired
// before the callback — and the callback sees clock ≥ due — or after it,
// when the goroutine is parked or about to park with the flag clear, and its
// edge wakes it. TestRegression_LostWakeupBetweenArmAndPark forces the first
// interleaving deterministically (beforePark sleeps past the due time).
//
// Independently of that argument, a park is bounded: abort (the engine's
// watchdog, cancellation) sets a read deadline in the past, which wakes a
// parked read at once.
//
// A waiter belongs to the dispatcher goroutine: not safe for concurrent
// use, except abort, which any goroutine may call at any time.
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

	// beforePark, when set (tests only), runs between arming the timerfd
	// and parking on it.
	beforePark func()
}

const (
	coarseSlack = 2 * time.Millisecond
	// spinFloorDefault: chosen by measurement, side by side (bench/README.md,
	// "Spinning instead of sleeping"): at 20 000 req/s 30 µs cost the least
	// CPU of 0, 15, 30 and 60 µs; 60 µs was cheaper at 10 000 req/s but spun
	// through every gap at 20 000 (a whole core).
	spinFloorDefault = 30 * time.Microsecond
	// spinAfterSleepDefault: a wait after one that slept is spun up to
	// this long (spins). Measured side by side against the floor alone
	// and a floor of 45 µs (bench/README.md, "Every other wait").
	spinAfterSleepDefault = 45 * time.Microsecond
)

// spinFloor is spinFloorDefault unless LOADGATE_ENGINE_SPIN (read once per
// process, for side-by-side runs) sets it (spinDurationFrom).
var spinFloor = spinDurationFrom(os.Getenv("LOADGATE_ENGINE_SPIN"), spinFloorDefault)

// spinAfterSleep is spinAfterSleepDefault unless
// LOADGATE_ENGINE_SPIN_AFTER_SLEEP (read once per process, for side-by-side
// runs; same bounds as LOADGATE_ENGINE_SPIN) sets it.
var spinAfterSleep = spinDurationFrom(os.Getenv("LOADGATE_ENGINE_SPIN_AFTER_SLEEP"), spinAfterSleepDefault)

// spinDurationFrom parses LOADGATE_ENGINE_SPIN and
// LOADGATE_ENGINE_SPIN_AFTER_SLEEP: a Go duration from 0 ("never spin") to
// 1ms; anything else, or nothing, is def.
func spinDurationFrom(v string, def time.Duration) time.Duration {
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || d > time.Millisecond {
		return def
	}
	return d
}

// spins is the dispatcher's choice for a wait of d > 0: spin (true) or
// sleep. A wait up to floor is spun; so is one up to afterSleep when the
// previous wait slept (slept). A sleep's wake-up comes late (the wake-up
// latency, ~10 µs on the development machine with a real-time generator),
// so the wait after it is that much shorter, and spinning it puts the
// dispatcher back on time; the wait after a spin is then the longer one,
// and sleeps. Where every gap is shorter than afterSleep plus what a
// wake-up and a dispatch take (with the defaults, above ~17 000 req/s on
// the development machine; higher where wake-ups come sooner), at most
// every other wait sleeps; at 5 000 and 10 000 req/s (gaps of 200 and
// 100 µs) nothing changes. bench/README.md, "Every other wait" (4
// December 2026), has the measurements that chose it.
func spins(d time.Duration, slept bool, floor, afterSleep time.Duration) bool {
	return d <= floor || slept && d <= afterSleep
}

// errAborted is returned by until after abort.
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
	// park runs inside RawConn.Read after the poller's ready flag was reset
	// (see the type's comment): "done" exactly when the due time has come,
	// whatever woke us, so neither an early edge nor a stale one matters.
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

// abort ends the current wait and every later one with errAborted. Safe for
// concurrent use with until; idempotent.
func (w *waiter) abort() {
	w.abortOnce.Do(func() {
		close(w.aborted)
		if w.tfd != nil {
			// Wakes a read parked on the poller (ErrDeadlineExceeded).
			_ = w.tfd.SetReadDeadline(time.Unix(1, 0))
		}
	})
}

// arm sets the timerfd to expire after d. It is a raw system call: it never
// blocks, and unix.TimerfdSettime (syscall.Syscall) would wake sysmon from
// its deep sleep at every wait (see rawConn).
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

// until blocks until clock() >= due, ctx is done or the waiter is aborted;
// it returns ctx.Err() or errAborted in the last two cases. The fine part of
// a wait (at most coarseSlack) is not interrupted by ctx, only by abort.
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
