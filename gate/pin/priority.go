package pin

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Under --load-priority the generator runs SCHED_RR 1: even on its own cpus,
// kernel threads and the container runtime otherwise preempt it, sending late.

// Mode is --load-priority.
type Mode string

const (
	// ModeAuto raises the generator when pinned apart from the stack, if permitted.
	ModeAuto Mode = "auto"
	// ModeRealtime raises the generator wherever it runs, or refuses the run.
	ModeRealtime Mode = "rt"
	// ModeNormal never raises it.
	ModeNormal Mode = "normal"
)

// RealtimePriority is the SCHED_RR priority a raised generator runs at.
const RealtimePriority = 1

// ErrNotPermitted is wrapped by Raise and CheckRaise when a real-time policy is denied.
var ErrNotPermitted = errors.New("a real-time policy is not permitted (root, CAP_SYS_NICE or an RLIMIT_RTPRIO of at least 1 is needed)")

func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeAuto, ModeRealtime, ModeNormal:
		return m, nil
	}
	return "", fmt.Errorf("%q: want auto, rt or normal", s)
}

// Want says whether a load under m raises its generator (pinned: the stack and generator
// on cpus of their own; stack: loadgate started the stack), and if not why.
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

// Scheduling words a thread's scheduling: "SCHED_RR 1", "SCHED_OTHER nice 5".
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
	guardEvery  = 100 * time.Millisecond
	guardWindow = 500 * time.Millisecond // under the 1 s throttling period: lower in time
	guardMargin = 0.05                   // below the throttling share
)

const guardMaxFailedReads = 10 // in a row: a generator the guard cannot watch is lowered

// guardLimit is the busy share at which the guard lowers.
func guardLimit(share float64) float64 { return max(share-guardMargin, share/2) }

// ownBusy turns the cpus' cumulative busy times and the process's own cumulative CPU time
// into each cpu's busy time that can have been the process's: per tick, the least of the
// cpu's busy time and the process's CPU. Real-time throttling counts real-time threads
// only, so work of others' on a shared cpu (a compiler, a target) must not lower the
// generator (issue 51: on a busy machine every rt run was lowered after 600 ms).
type ownBusy struct {
	last    []time.Duration
	lastOwn time.Duration
	acc     []time.Duration
}

// next returns the cumulative own busy time of each cpu for this tick's reading.
func (o *ownBusy) next(busy []time.Duration, own time.Duration) []time.Duration {
	if o.last == nil || len(o.last) != len(busy) {
		o.last, o.lastOwn, o.acc = slices.Clone(busy), own, make([]time.Duration, len(busy))
		return slices.Clone(o.acc)
	}
	dOwn := max(own-o.lastOwn, 0)
	for i, b := range busy {
		o.acc[i] += min(max(b-o.last[i], 0), dOwn)
	}
	copy(o.last, busy)
	o.lastOwn = own
	return slices.Clone(o.acc)
}

// guard reads the cpus' busy time every tick until stop (""), or until one
// was busy over limit for guardWindow (throttling is per cpu): then says why.
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
				return fmt.Sprintf("the generator kept cpu %d %.0f%% busy over %s, and the kernel's real-time throttling would stop it for the rest of a second it kept a cpu busy past its share",
					cpus[i], 100*min(share, 1), wall.Round(time.Millisecond))
			}
		}
	}
}
