//go:build linux

package pin

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loadgate/loadgate/gate/procstat"
)

// raised is the process's raise: how many loads hold it, what lowering
// restores, and its guard.
var raised struct {
	mu      sync.Mutex
	n       int            // holds not yet lowered
	base    unix.SchedAttr // the scheduling before the first raise
	kept    bool           // the process already ran a real-time policy: nothing was changed
	stop    chan struct{}  // closed when the last hold is lowered: the guard ends
	dropped string         // why the guard lowered the threads while held ("" while it has not)
}

// Raised is one load's hold on the raise (Raise).
type Raised struct {
	once sync.Once
}

// Raise gives every thread of this process SCHED_RR at RealtimePriority
// until the returned hold is lowered; then they get back the scheduling
// they had (the calling thread's, read before). Threads the runtime
// creates meanwhile inherit the policy, and lowering reaches them too.
// Holds nest: a duet gate runs both sides' loads at once, and the threads
// are lowered when the last hold is. A process that already runs a
// real-time policy (started under chrt) keeps it, unguarded.
//
// While raised, a guard reads how busy the generator's cpus were (its
// affinity, /proc/stat) every guardEvery: a real-time thread that keeps its
// cpu busy past the kernel's real-time throttling (sched_rt_runtime_us of
// every sched_rt_period_us, 95% of each second by default) is stopped for
// the rest of that second — 50 ms without a single request sent — so when
// one of the cpus was busy more than guardLimit of that share over
// guardWindow, the guard lowers the threads at once, for the rest of the
// hold, and Dropped says why. Without the means of a guard (the cpus or
// /proc/stat unreadable) Raise raises nothing and says so. Where
// throttling is off (-1, or a whole period) there is no guard.
//
// Lowering gives every thread the calling thread's scheduling from before
// the raise (a thread the process had given another is not remembered).
//
// Nothing is started as a child process while raised: it would inherit
// the policy. Safe for concurrent use; Lower is idempotent.
func Raise() (*Raised, error) {
	raised.mu.Lock()
	defer raised.mu.Unlock()
	if raised.n == 0 {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		base, err := unix.SchedGetAttr(0, 0)
		if err != nil {
			return nil, fmt.Errorf("pin: sched_getattr: %w", err)
		}
		raised.base, raised.kept, raised.dropped = *base, realtime(base.Policy), ""
		if !raised.kept {
			// The guard's means first: a generator is never left real-time
			// with nothing to lower it.
			var stat *procstat.CPUTimesFile
			var cpus Set
			share, throttled := throttleShare()
			if throttled {
				if cpus, err = Available(); err == nil { // the calling thread's: the generator's cpus
					stat, err = procstat.Reader{}.OpenCPUTimes() // kept open: a read every tick on the generator's core
				}
				if err != nil {
					return nil, fmt.Errorf("pin: no guard for a real-time generator: %w", err)
				}
			}
			rt := unix.SchedAttr{Policy: policyRR, Priority: RealtimePriority}
			if err := setAll(&rt); err != nil {
				_ = setAll(&raised.base)
				if stat != nil {
					stat.Close()
				}
				return nil, err
			}
			if throttled {
				raised.stop = make(chan struct{})
				go runGuard(raised.stop, guardLimit(share), cpus.CPUs(), stat)
			}
		}
	}
	raised.n++
	return &Raised{}, nil
}

// Lower ends this hold.
func (r *Raised) Lower() { r.once.Do(lowerOne) }

// Dropped says why the guard lowered the threads during the holds that
// include this one, "" when it did not.
func (r *Raised) Dropped() string {
	raised.mu.Lock()
	defer raised.mu.Unlock()
	return raised.dropped
}

func lowerOne() {
	raised.mu.Lock()
	defer raised.mu.Unlock()
	raised.n--
	if raised.n > 0 || raised.kept {
		return
	}
	if raised.stop != nil {
		close(raised.stop)
		raised.stop = nil
	}
	if raised.dropped == "" {
		restoreLocked()
	}
}

// restoreLocked gives every thread the scheduling it had before the raise
// (raised.mu held).
func restoreLocked() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	base := raised.base // the scheduling a thread may always return to from real time
	_ = setAll(&base)
}

// runGuard is the guard's goroutine: guard on a ticker and the busy time
// of cpus from /proc/stat; lowers the threads when it says so and the
// raise still holds.
func runGuard(stop <-chan struct{}, limit float64, cpus []int, stat *procstat.CPUTimesFile) {
	t := time.NewTicker(guardEvery)
	defer t.Stop()
	start := time.Now()
	defer stat.Close()
	read := func() ([]time.Duration, error) {
		busy := make([]time.Duration, len(cpus)) // the guard keeps it in its window
		return busy, stat.Busy(cpus, busy)
	}
	why := guard(stop, t.C, time.Now, read, cpus, limit)
	if why == "" {
		return
	}
	raised.mu.Lock()
	defer raised.mu.Unlock()
	select {
	case <-stop: // the last hold was lowered meanwhile: it restored
		return
	default:
	}
	raised.dropped = fmt.Sprintf("lowered to %s after %s raised: %s", Scheduling(raised.base.Policy, raised.base.Priority, raised.base.Nice),
		time.Since(start).Round(10*time.Millisecond), why)
	restoreLocked()
}

// throttleShare is the kernel's real-time throttling as the share of each
// period real-time threads may use (0.95 by default), false when it is off
// (sched_rt_runtime_us -1, or a whole period). Unreadable files leave the
// default.
func throttleShare() (float64, bool) {
	runtimeUS, err1 := readInt("/proc/sys/kernel/sched_rt_runtime_us")
	periodUS, err2 := readInt("/proc/sys/kernel/sched_rt_period_us")
	switch {
	case err1 != nil || err2 != nil || periodUS <= 0:
		return 0.95, true
	case runtimeUS < 0 || runtimeUS >= periodUS:
		return 0, false // no throttling, or none short of a whole period
	}
	return float64(runtimeUS) / float64(periodUS), true
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
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
