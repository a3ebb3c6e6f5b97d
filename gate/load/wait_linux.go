package load

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// newTimerfd is a non-blocking monotonic timerfd for the waiter's fine part.
func newTimerfd() (int, error) {
	return unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
}

// armTimerfd sets fd to expire in d by a raw system call that neither blocks nor wakes sysmon.
func armTimerfd(fd int, d time.Duration) error {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	_, _, e := unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, uintptr(fd), 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// nanosleep sleeps d holding the P (the waiter's fallback when the timerfd fails).
func nanosleep(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	for ts.Nano() > 0 {
		if err := unix.Nanosleep(&ts, &ts); err != unix.EINTR {
			break
		}
	}
}
