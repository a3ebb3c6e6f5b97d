package load

import (
	"context"
	"testing"
	"time"
)

// The watchdog once ended runs that were only behind schedule: it compared
// the clock with the due time of a request already 4.5 s late, in the
// moment before its (immediate) wait returned. A late request's wait ends
// now, and only a wait that overruns by HangAfter is a hang.
func TestRegression_WatchdogCallsLateRequestHung(t *testing.T) {
	e := &engine{start: time.Now().Add(-5 * time.Second), wait: newWaiter(func() time.Duration { return 0 })}
	defer e.wait.close()
	e.waiting(500*time.Millisecond, e.clock()) // due 4.5 s ago: the dispatcher is behind, not stuck
	e.watch(context.Background())
	if r := e.hungReason(); r != "" {
		t.Fatalf("a request 4.5 s late, its wait just begun, was called hung: %s", r)
	}
	// The same wait, still parked HangAfter later, is a hang.
	e.start = e.start.Add(-HangAfter - 100*time.Millisecond)
	e.watch(context.Background())
	if e.hungReason() == "" {
		t.Fatal("a wait parked HangAfter past its end was not called hung")
	}
}
