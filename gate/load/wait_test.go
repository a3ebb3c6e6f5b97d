package load

import (
	"context"
	"testing"
	"time"
)

// The dispatcher hung for good (issue 8: "parked in wait.go while the
// timerfd had already fired") when the timer fired between arming it and
// parking on it. beforePark forces that interleaving: it sleeps well past
// the due time, so the timer's one edge arrives before the park. The wait
// must still return, at once.
func TestRegression_LostWakeupBetweenArmAndPark(t *testing.T) {
	start := time.Now()
	clock := func() time.Duration { return time.Since(start) }
	w := newWaiter(clock)
	defer w.close()
	if w.tfd == nil {
		t.Skip("no timerfd on this system: the waiter uses nanosleep")
	}
	for i := 0; i < 20; i++ {
		// The fired edge is delivered to the poller while beforePark sleeps
		// (the sleeping goroutine lets the runtime poll the network).
		w.beforePark = func() { time.Sleep(3 * time.Millisecond) }
		due := clock() + time.Millisecond
		done := make(chan error, 1)
		go func() { done <- w.until(context.Background(), due) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("wait %d: %v", i, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("wait %d: until did not return 5 s after a due time it had already passed (lost wake-up)", i)
		}
		if now := clock(); now < due {
			t.Fatalf("wait %d returned %v before its due time", i, due-now)
		}
	}
}

// A stale edge (an expiration of an earlier arming) must not end a later
// wait early.
func TestWaitNeverReturnsEarly(t *testing.T) {
	start := time.Now()
	clock := func() time.Duration { return time.Since(start) }
	w := newWaiter(clock)
	defer w.close()
	for i := 0; i < 200; i++ {
		due := clock() + time.Duration(50+i*7)*time.Microsecond
		if err := w.until(context.Background(), due); err != nil {
			t.Fatal(err)
		}
		if now := clock(); now < due {
			t.Fatalf("wait %d returned %v early", i, due-now)
		}
	}
}

// abort wakes a wait parked on the timerfd at once, from another goroutine,
// and every later wait returns errAborted.
func TestAbortWakesParkedWait(t *testing.T) {
	start := time.Now()
	clock := func() time.Duration { return time.Since(start) }
	w := newWaiter(clock)
	defer w.close()
	if w.tfd == nil {
		t.Skip("no timerfd on this system")
	}
	// A due time inside the fine part of the wait parks on the timerfd.
	// Once armed, beforePark moves the due time an hour away (the callback
	// decides from the clock), so only the abort can end this wait.
	due := clock() + coarseSlack - 100*time.Microsecond
	w.beforePark = func() {
		w.due = clock() + time.Hour
		go func() { time.Sleep(20 * time.Millisecond); w.abort() }()
	}
	done := make(chan error, 1)
	go func() { done <- w.until(context.Background(), due) }()
	select {
	case err := <-done:
		if err != errAborted {
			t.Fatalf("until = %v, want errAborted", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("abort did not wake the parked wait")
	}
	w.beforePark = nil
	if err := w.until(context.Background(), clock()+time.Second); err != errAborted {
		t.Fatalf("after abort: until = %v, want errAborted", err)
	}
}

// A long wait wakes early by the margin and spins the rest: it still never
// returns before its due time, and the waiter counts the wake-ups it
// measured, the early ones and the time spun (no more than half a wait each).
func TestLongWaitWakesEarlyAndSpins(t *testing.T) {
	start := time.Now()
	clock := func() time.Duration { return time.Since(start) }
	w := newWaiter(clock)
	defer w.close()
	const n, gap = 20, 3 * time.Millisecond
	for i := 0; i < n; i++ {
		due := clock() + gap
		if err := w.until(context.Background(), due); err != nil {
			t.Fatal(err)
		}
		if now := clock(); now < due {
			t.Fatalf("wait %d returned %v early", i, due-now)
		}
	}
	r := w.waited()
	if r == nil || r.Wakes != n {
		t.Fatalf("waited %+v, want %d wake-ups measured", r, n)
	}
	if r.EarlyWakes == 0 || r.SpunS <= 0 {
		t.Errorf("no wait of %v woke early (%+v): the margin was not applied", gap, r)
	}
	if r.SpunS > float64(n)*(gap/2).Seconds()+0.1 { // 0.1 s: preemptions on a busy core
		t.Errorf("spun %v s over %d waits of %v: more than half of each", r.SpunS, n, gap)
	}
}
