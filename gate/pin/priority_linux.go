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

// raised is the process's raise: its holds, what lowering restores, guard.
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

// Raise gives every thread SCHED_RR at RealtimePriority until the last (nested)
// hold is lowered; a guard lowers them before real-time throttling would stop
// them. Start no child while raised: it inherits the policy. Safe for concurrent use.
// A process already real-time keeps it, unguarded; without the means of a guard nothing
// is raised.
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
			// The guard's means first: never real-time with nothing to lower it.
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

// Lower ends this hold; it is idempotent.
func (r *Raised) Lower() { r.once.Do(lowerOne) }

// Dropped says why the guard lowered the threads during this hold, or "".
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

// restoreLocked restores the pre-raise scheduling (raised.mu held).
func restoreLocked() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	base := raised.base // the scheduling a thread may always return to from real time
	_ = setAll(&base)
}

// runGuard runs guard and lowers the threads when it fires while still raised.
func runGuard(stop <-chan struct{}, limit float64, cpus []int, stat *procstat.CPUTimesFile) {
	t := time.NewTicker(guardEvery)
	defer t.Stop()
	start := time.Now()
	defer stat.Close()
	var own ownBusy
	read := func() ([]time.Duration, error) {
		busy := make([]time.Duration, len(cpus))
		if err := stat.Busy(cpus, busy); err != nil {
			return nil, err
		}
		var ru unix.Rusage
		if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
			return nil, fmt.Errorf("getrusage: %w", err)
		}
		self := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		return own.next(busy, self), nil // the guard keeps it in its window
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

// throttleShare is real-time threads' share of each period (false: no throttling);
// unreadable files give the default 0.95.
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

// CheckRaise says whether Raise is permitted, raising this thread a moment.
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

// ReadScheduling reads every thread's scheduling, "mixed: ..." when they differ.
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

// grantedBy is GrantedBy for this process ("" when its status is unreadable).
func grantedBy() string {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return ""
	}
	return GrantedBy(os.Geteuid(), string(status))
}
