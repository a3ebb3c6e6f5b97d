package pin

import (
	"errors"
	"fmt"
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
// busy the generator is.

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
