//go:build linux

package pin

import (
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// raised is the process's raise: how many loads hold it and what lowering
// restores.
var raised struct {
	mu   sync.Mutex
	n    int            // raises not yet lowered
	base unix.SchedAttr // the scheduling before the first raise
	kept bool           // the process already ran a real-time policy: nothing was changed
}

// Raise gives every thread of this process SCHED_RR at RealtimePriority
// and returns lower, which gives them back the scheduling they had (the
// calling thread's, read before). Threads the runtime creates meanwhile
// inherit the policy; lower reaches them too. Raises nest: a duet gate
// runs both sides' loads at once, and the threads are lowered when the
// last raise is. A process that already runs a real-time policy (started
// under chrt) keeps it, and lower leaves it.
//
// Nothing is started as a child process while raised: it would inherit
// the policy. Safe for concurrent use; lower is idempotent.
func Raise() (lower func(), err error) {
	raised.mu.Lock()
	defer raised.mu.Unlock()
	if raised.n == 0 {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		base, err := unix.SchedGetAttr(0, 0)
		if err != nil {
			return nil, fmt.Errorf("pin: sched_getattr: %w", err)
		}
		raised.base, raised.kept = *base, realtime(base.Policy)
		if !raised.kept {
			rt := unix.SchedAttr{Policy: policyRR, Priority: RealtimePriority}
			if err := setAll(&rt); err != nil {
				_ = setAll(&raised.base)
				return nil, err
			}
		}
	}
	raised.n++
	var once sync.Once
	return func() { once.Do(lowerOne) }, nil
}

func lowerOne() {
	raised.mu.Lock()
	defer raised.mu.Unlock()
	raised.n--
	if raised.n == 0 && !raised.kept {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		base := raised.base // the scheduling a thread may always return to from real time
		_ = setAll(&base)
	}
}

// CheckRaise says whether Raise would be permitted, without raising
// anything but the calling thread for a moment (--load-priority rt checks
// it before a run starts).
func CheckRaise() error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	base, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		return fmt.Errorf("pin: sched_getattr: %w", err)
	}
	if realtime(base.Policy) {
		return nil
	}
	if err := setThread(0, &unix.SchedAttr{Policy: policyRR, Priority: RealtimePriority}); err != nil {
		return err
	}
	return setThread(0, base)
}

// setAll sets a on the calling thread (locked by the caller) and then on
// every thread of this process (eachThread).
func setAll(a *unix.SchedAttr) error {
	if err := setThread(0, a); err != nil {
		return err
	}
	return eachThread(map[int]bool{unix.Gettid(): true}, func(tid int) error { return setThread(tid, a) })
}

func setThread(tid int, a *unix.SchedAttr) error {
	c := *a // SchedSetAttr writes the size into it
	if err := unix.SchedSetAttr(tid, &c, 0); err != nil {
		if errors.Is(err, syscall.EPERM) {
			return fmt.Errorf("pin: sched_setattr(%s): %w: %w", Scheduling(a.Policy, a.Priority, a.Nice), ErrNotPermitted, err)
		}
		return fmt.Errorf("pin: sched_setattr(tid %d, %s): %w", tid, Scheduling(a.Policy, a.Priority, a.Nice), err)
	}
	return nil
}

// ReadScheduling reads every thread's scheduling back: the one scheduling
// they share ("SCHED_RR 1"), or, when they differ, each one with its
// threads ("mixed: SCHED_RR 1 (4 threads), SCHED_OTHER (thread 812)").
func ReadScheduling() (string, error) {
	tids, err := threads()
	if err != nil {
		return "", err
	}
	by := map[string][]int{}
	for _, tid := range tids {
		a, err := unix.SchedGetAttr(tid, 0)
		if err != nil {
			if errors.Is(err, syscall.ESRCH) {
				continue // exited meanwhile
			}
			return "", fmt.Errorf("pin: sched_getattr(tid %d): %w", tid, err)
		}
		s := Scheduling(a.Policy, a.Priority, a.Nice)
		by[s] = append(by[s], tid)
	}
	if len(by) == 1 {
		for s := range by {
			return s, nil
		}
	}
	parts := make([]string, 0, len(by))
	for s, ts := range by {
		if len(ts) == 1 {
			parts = append(parts, fmt.Sprintf("%s (thread %d)", s, ts[0]))
		} else {
			parts = append(parts, fmt.Sprintf("%s (%d threads)", s, len(ts)))
		}
	}
	sort.Strings(parts)
	return "mixed: " + strings.Join(parts, ", "), nil
}
