package pin

import (
	"errors"
	"fmt"
	"time"
)

// The generator's scheduling during a load (--load-priority).
//
// Pinned to cpus of its own, the generator still shares them with whatever
// the kernel runs there: kernel threads, the container runtime, anything
// unpinned. On the development machine's VMs a kernel thread (kdamond, the
// memory monitor, ≈ 1.2–1.8 ms every 0.5 s) and the container runtime's
// threads took the generator's core for hundreds of microseconds to
// milliseconds at a time, and every request due meanwhile went out late
// (bench/README.md, "What preempts the generator"). A real-time policy
// keeps them off while the generator has work: SCHED_RR at priority 1,
// the lowest real-time priority, so the kernel's own real-time threads
// (migration, watchdogs, threaded interrupts) still come first, and
// round-robin rather than FIFO, so that the Go runtime's threads of the
// same priority (sysmon) still get the cpu within a time slice. The
// kernel's real-time throttling (sched_rt_runtime_us, 95% of each second
// by default) leaves the rest of each second to everything else however
// busy the generator is — by stopping it for that rest, which a guard
// (Raise) avoids by lowering a generator that comes close.

// Mode is --load-priority: how a load schedules its generator's threads.
type Mode string

const (
	// ModeAuto raises the generator to real time when loadgate pinned it
	// to cpus of its own beside a stack it pinned elsewhere, and the
	// system permits it; otherwise the generator keeps its scheduling and
	// the result says why.
	ModeAuto Mode = "auto"
	// ModeRealtime raises the generator wherever it runs (a plain run's
	// target may share its cpus: the operator says it does not), or
	// refuses the run when the system does not permit it.
	ModeRealtime Mode = "rt"
	// ModeNormal never raises it.
	ModeNormal Mode = "normal"
)

// RealtimePriority is the SCHED_RR priority a raised generator runs at.
const RealtimePriority = 1

// ErrNotPermitted is wrapped by Raise and CheckRaise when the system does
// not let this process take a real-time policy (no CAP_SYS_NICE and an
// RLIMIT_RTPRIO below RealtimePriority).
var ErrNotPermitted = errors.New("a real-time policy is not permitted (root, CAP_SYS_NICE or an RLIMIT_RTPRIO of at least 1 is needed)")

// ParseMode parses --load-priority.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeAuto, ModeRealtime, ModeNormal:
		return m, nil
	}
	return "", fmt.Errorf("%q: want auto, rt or normal", s)
}

// Want says whether a load under m raises its generator to real time.
// pinned is whether the run's topology held as planned (the stack and the
// generator pinned to disjoint cpus, or in a plain run the generator to
// --load-cpus); stack whether loadgate started the stack. why says, when
// it does not raise, why not.
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

// Linux's policy numbers (sched.h), here so that Scheduling words them
// on any system.
const (
	policyOther    = 0
	policyFIFO     = 1
	policyRR       = 2
	policyBatch    = 3
	policyIdle     = 5
	policyDeadline = 6
)

// realtime says whether policy is a real-time one (FIFO, RR).
func realtime(policy uint32) bool { return policy == policyFIFO || policy == policyRR }

// String is the mode as --load-priority takes it.
func (m Mode) String() string { return string(m) }

// MarshalText and UnmarshalText make a Mode a flag.TextVar.
func (m Mode) MarshalText() ([]byte, error) { return []byte(m), nil }

// UnmarshalText parses --load-priority (ParseMode).
func (m *Mode) UnmarshalText(b []byte) error {
	p, err := ParseMode(string(b))
	if err != nil {
		return err
	}
	*m = p
	return nil
}

// The guard of a raise (Raise).
const (
	// guardEvery is how often the guard reads the process's CPU time.
	guardEvery = 100 * time.Millisecond
	// guardWindow is the span the guard judges: shorter than the period
	// of the kernel's real-time throttling (1 s), so that a generator at
	// the limit of its cpus is lowered before it runs out of its share.
	guardWindow = 500 * time.Millisecond
	// guardMargin is how far below the throttling's share the guard
	// lowers (0.90 of the cpus under the default 0.95).
	guardMargin = 0.05
)

// guardMaxFailedReads is how many reads in a row may fail before the
// guard lowers a generator it can no longer watch (a second's worth).
const guardMaxFailedReads = 10

// guardLimit is the busy share of a cpu at which the guard lowers, under
// throttling that lets real-time threads use share of each period:
// guardMargin below it, and never below half of it.
func guardLimit(share float64) float64 { return max(share-guardMargin, share/2) }

// guard watches the cpus of a raised process (read at every tick of tick:
// each cpu's cumulative busy time, in the order of cpus) until stop is
// closed (""), or until over the last guardWindow one of them was busy for
// more than limit of it: then it says so. The kernel throttles real-time
// threads cpu by cpu, so the busiest one decides; a cpu's busy time is
// whatever ran on it, the generator or not (on cpus of its own, the
// generator). A failed read is skipped, guardMaxFailedReads in a row
// lower too: a real-time generator is not left unwatched. now is the clock
// of the ticks (a seam for tests).
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
