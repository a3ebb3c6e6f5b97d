package pin

import (
	"errors"
	"fmt"
	"time"
)

// The generator's scheduling during a load (--load-priority). Even on its
// own cpus, the generator is preempted by kernel threads and the container
// runtime, sending requests late. SCHED_RR at priority 1 keeps them off yet
// lets the kernel's own real-time threads and same-priority Go runtime
// threads run; the guard (Raise) lowers the generator before the kernel's
// real-time throttling would stop it.

// Mode is --load-priority.
type Mode string

const (
	// ModeAuto raises the generator when loadgate pinned it apart from a
	// stack it pinned, and the system permits it; else the result says why.
	ModeAuto Mode = "auto"
	// ModeRealtime raises the generator wherever it runs, or refuses the run
	// when not permitted.
	ModeRealtime Mode = "rt"
	// ModeNormal never raises it.
	ModeNormal Mode = "normal"
)

// RealtimePriority is the SCHED_RR priority a raised generator runs at.
const RealtimePriority = 1

// ErrNotPermitted is wrapped by Raise and CheckRaise when the system denies
// a real-time policy (no CAP_SYS_NICE, RLIMIT_RTPRIO too low).
var ErrNotPermitted = errors.New("a real-time policy is not permitted (root, CAP_SYS_NICE or an RLIMIT_RTPRIO of at least 1 is needed)")

func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeAuto, ModeRealtime, ModeNormal:
		return m, nil
	}
	return "", fmt.Errorf("%q: want auto, rt or normal", s)
}

// Want says whether a load under m raises its generator; pinned is whether
// the topology held, stack whether loadgate started the stack; why says
// why not.
func Want(m Mode, pinned, stack bool) (raise bool, why string) {
	switch {
	case m == ModeNormal:
		return false, "--load-priority normal"
	case m == ModeRealtime:
		return true, ""
	case !stack:
		return false, "plain run mode: the target may share the generator's cpus; --load-priority rt raises it"
	case !pinned:
		return false, "the stack and the generator are not pinned to cpus of their own"
	}
	return true, ""
}

// Scheduling words one thread's scheduling as a result states it:
// "SCHED_RR 1", "SCHED_OTHER", "SCHED_OTHER nice 5".
func Scheduling(policy uint32, priority uint32, nice int32) string {
	var s string
	switch policy {
	case policyOther:
		s = "SCHED_OTHER"
	case policyFIFO:
		return fmt.Sprintf("SCHED_FIFO %d", priority)
	case policyRR:
		return fmt.Sprintf("SCHED_RR %d", priority)
	case policyBatch:
		s = "SCHED_BATCH"
	case policyIdle:
		return "SCHED_IDLE"
	case policyDeadline:
		return "SCHED_DEADLINE"
	default:
		return fmt.Sprintf("policy %d", policy)
	}
	if nice != 0 {
		s += fmt.Sprintf(" nice %d", nice)
	}
	return s
}

// Linux's policy numbers (sched.h), so Scheduling works on any system.
const (
	policyOther    = 0
	policyFIFO     = 1
	policyRR       = 2
	policyBatch    = 3
	policyIdle     = 5
	policyDeadline = 6
)

func realtime(policy uint32) bool { return policy == policyFIFO || policy == policyRR }

func (m Mode) String() string { return string(m) }

// MarshalText and UnmarshalText make a Mode a flag.TextVar.
func (m Mode) MarshalText() ([]byte, error) { return []byte(m), nil }

func (m *Mode) UnmarshalText(b []byte) error {
	p, err := ParseMode(string(b))
	if err != nil {
		return err
	}
	*m = p
	return nil
}

const (
	// guardEvery is how often the guard reads the process's CPU time.
	guardEvery = 100 * time.Millisecond
	// guardWindow is shorter than the throttling period (1 s), so a saturated
	// generator is lowered before it runs out of its share.
	guardWindow = 500 * time.Millisecond
	// guardMargin is how far below the throttling share the guard lowers.
	guardMargin = 0.05
)

// guardMaxFailedReads in a row lower a generator the guard cannot watch.
const guardMaxFailedReads = 10

// guardLimit is the busy share at which the guard lowers: guardMargin
// below the throttling share, never below half of it.
func guardLimit(share float64) float64 { return max(share-guardMargin, share/2) }

// guard reads each cpu's cumulative busy time at every tick until stop is
// closed (""), or until one cpu was busy more than limit over guardWindow
// (the kernel throttles per cpu): then it says why. guardMaxFailedReads
// failed reads in a row also lower. now is a test seam.
func guard(stop <-chan struct{}, tick <-chan time.Time, now func() time.Time, read func() ([]time.Duration, error), cpus []int, limit float64) string {
	type sample struct {
		at   time.Time
		busy []time.Duration
	}
	var window []sample // the samples of the last guardWindow, oldest first
	failed := 0         // reads in a row that failed
	for {
		select {
		case <-stop:
			return ""
		case <-tick:
		}
		busy, err := read()
		if err == nil && len(busy) != len(cpus) {
			err = fmt.Errorf("%d cpus read, want %d", len(busy), len(cpus))
		}
		if err != nil {
			if failed++; failed >= guardMaxFailedReads {
				return fmt.Sprintf("how busy its cpus were could not be read %d times in a row (%v): a real-time generator is not left unwatched", failed, err)
			}
			continue
		}
		failed = 0
		at := now()
		window = append(window, sample{at, busy})
		for len(window) > 1 && at.Sub(window[1].at) >= guardWindow {
			window = window[1:]
		}
		first := window[0]
		wall := at.Sub(first.at)
		if wall < guardWindow {
			continue
		}
		for i, b := range busy {
			if share := float64(b-first.busy[i]) / float64(wall); share > limit {
				return fmt.Sprintf("cpu %d was %.0f%% busy over %s, and the kernel's real-time throttling would stop the generator for the rest of a second it kept a cpu busy past its share",
					cpus[i], 100*min(share, 1), wall.Round(time.Millisecond))
			}
		}
	}
}
