package load

import (
	"context"
	"time"
)

// FakeOperation stands in for the network in a run under a fake clock: it
// is called for request k of workload w, from that request's worker, with
// the run's clock (time since the schedule's start), and returns the
// outcome's class ("" a success). It takes its service time by sleeping on
// the runtime's timers (testing/synctest's fake clock).
type FakeOperation func(ctx context.Context, now func() time.Duration, w int, k int64) string

// SetFakeClock makes every run until restore is called wait for its due
// times on the runtime's timers only (not the timerfd, whose clock is the
// kernel's) and send every request to op: inside a testing/synctest
// bubble the run is then a deterministic function of the scenario and op.
// Tests only; not concurrent with a run outside the bubble.
func SetFakeClock(op FakeOperation) (restore func()) {
	testClockSeam = func(e *engine) {
		e.until = timerUntil(e)
		for i := range e.ops {
			e.ops[i] = fakeOp{op: op, now: e.clock, w: i}
		}
	}
	return func() { testClockSeam = nil }
}

type fakeOp struct {
	op  FakeOperation
	now func() time.Duration
	w   int
}

func (f fakeOp) do(ctx context.Context, k int64, _ *scratch) string { return f.op(ctx, f.now, f.w, k) }

// timerUntil is the dispatcher's wait on one runtime timer: until the due
// time, ctx done or the waiter aborted, as waiter.until.
func timerUntil(e *engine) func(ctx context.Context, due time.Duration) error {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return func(ctx context.Context, due time.Duration) error {
		if d := due - e.clock(); d > 0 {
			t.Reset(d)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-e.wait.aborted:
				t.Stop()
				return errAborted
			case <-t.C:
			}
		}
		if e.wait.isAborted() {
			return errAborted
		}
		return nil
	}
}

// SetFakeClockWake is SetFakeClock with a dispatcher that wakes late(due)
// after each due time: the generator's own lateness, made on purpose.
func SetFakeClockWake(op FakeOperation, late func(due time.Duration) time.Duration) (restore func()) {
	testClockSeam = func(e *engine) {
		until := timerUntil(e)
		e.until = func(ctx context.Context, due time.Duration) error {
			return until(ctx, due+late(due))
		}
		for i := range e.ops {
			e.ops[i] = fakeOp{op: op, now: e.clock, w: i}
		}
	}
	return func() { testClockSeam = nil }
}
