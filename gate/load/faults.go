package load

import (
	"context"
	"errors"
	"time"
)

// ErrNoFaultHook: the scenario injects faults and Config.Faults is nil.
var ErrNoFaultHook = errors.New("the scenario injects faults, but this run has no fault injector")

// FaultHook is what a fault injector needs. Start is called once before the first
// request; Observe per measured request, concurrently, so it must be safe and fast.
type FaultHook interface {
	Start(t0 time.Time)
	Observe(Outcome)
}

// Outcome is a measured request's outcome (MakeOutcome); times from the schedule's start.
type Outcome struct {
	Phase     int // index into the scenario's phases (of the due time)
	DonePhase int // index of the phase whose window holds Done; -1 in the warm-up or after the schedule
	Workload  int // index into the scenario's workloads
	Due       time.Duration
	Sent      time.Duration
	Done      time.Duration
	Class     string // "" for a success, else the failure class
	// LatencyUS and ServiceUS: a success's histogram values, µs, clamped.
	LatencyUS, ServiceUS int64
	// Late: sent more than late_after after it was the generator's to send
	// (counted in late): its due time, or the end of a wait for a free worker.
	Late bool
}

// MakeOutcome is the outcome of a request of segment seg, by the recorder's
// rules, for a request no wait for a free worker held back (the engine's
// observe says when one did).
func MakeOutcome(sched *Schedule, lateAfter time.Duration, seg, w int, class string, due, sent, done time.Duration) Outcome {
	o := Outcome{Phase: sched.Segments[seg].Phase, DonePhase: -1, Workload: w, Due: due, Sent: sent, Done: done, Class: class,
		LatencyUS: us(done - due), ServiceUS: us(done - sent), Late: isLate(sent-due, lateAfter)}
	if ds := sched.SegmentAt(done); ds >= 0 {
		o.DonePhase = sched.Segments[ds].Phase
	}
	return o
}

// StageError as Run's ctx cancel cause: a failed stage ended the run (unusable, not Interrupted).
type StageError struct{ Err error }

func (e *StageError) Error() string { return e.Err.Error() }
func (e *StageError) Unwrap() error { return e.Err }

// stageEnded is the StageError that cancelled ctx, or nil.
func stageEnded(ctx context.Context) *StageError {
	var se *StageError
	if errors.As(context.Cause(ctx), &se) {
		return se
	}
	return nil
}

// interruptedReason is why a run whose ctx was cancelled is unusable.
func interruptedReason(ctx context.Context) string {
	if se := stageEnded(ctx); se != nil {
		return "ended before its schedule by a failed stage of the run: " + se.Error()
	}
	return "interrupted before the schedule ended"
}

func checkFaultHook(cfg Config) error {
	if cfg.Faults == nil && cfg.Scenario.HasFaults() {
		return ErrNoFaultHook
	}
	return nil
}

// observe hands a counted outcome to the fault hook (measured phases only).
func (e *engine) observe(j job, class string, sent, done time.Duration) {
	h := e.cfg.Faults
	if h == nil {
		return
	}
	seg := e.sched.Segments[j.seg]
	if seg.Warmup {
		return
	}
	o := MakeOutcome(e.sched, e.cfg.Scenario.LateAfter, j.seg, j.w, class, j.due, sent, done)
	o.Late = isLate(sent-j.from, e.cfg.Scenario.LateAfter) // j.from as the worker set it
	h.Observe(o)
}
