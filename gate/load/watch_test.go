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
	// The same wait, still parked while the watchdog looks every
	// watchInterval for HangAfter, is a hang.
	for i := 0; i < int(HangAfter/watchInterval)+1; i++ {
		e.start = e.start.Add(-watchInterval)
		e.watch(context.Background())
	}
	if e.hungReason() == "" {
		t.Fatal("a wait parked HangAfter past its end was not called hung")
	}
}

// A soak on an overloaded machine ended unusable as "hung": the whole
// process got no CPU for over a second (the watchdog's own looks came late
// too), and the overrun of the wait in progress was taken for a stuck
// dispatcher. A look adds at most maxLookGap to a wait's overrun.
func TestRegression_StarvedProcessCalledHung(t *testing.T) {
	e := &engine{start: time.Now().Add(-2 * time.Second), wait: newWaiter(func() time.Duration { return 0 })}
	defer e.wait.close()
	e.waiting(2*time.Second, e.clock())
	e.watch(context.Background()) // the wait begins on time
	e.start = e.start.Add(-1500 * time.Millisecond)
	e.watch(context.Background()) // the next look, 1.5 s later: the process was starved
	if r := e.hungReason(); r != "" {
		t.Fatalf("a wait that overran while the process got no CPU was called hung: %s", r)
	}
	// Starved for longer than HangAlways, it is a hang whatever the cause.
	e.start = e.start.Add(-HangAlways)
	e.watch(context.Background())
	if e.hungReason() == "" {
		t.Fatal("a wait overrun by more than HangAlways was not called hung")
	}
}

// overrun is a pure account of the watchdog's looks.
func TestOverrunLook(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	type look struct {
		now, due time.Duration
		waiting  bool
		want     time.Duration
	}
	tests := []struct {
		name  string
		looks []look
	}{
		{"not waiting counts nothing", []look{{ms(100), ms(50), false, 0}}},
		{"a wait before its due time has not overrun", []look{{ms(100), ms(150), true, 0}}},
		{"regular looks add their gaps", []look{
			{ms(100), ms(90), true, ms(10)},  // first seen 10 ms past due
			{ms(200), ms(90), true, ms(110)}, // +100 ms
			{ms(300), ms(90), true, ms(210)}, // +100 ms
		}},
		{"a late look adds at most maxLookGap", []look{
			{ms(100), ms(90), true, ms(10)},
			{ms(2100), ms(90), true, ms(10) + maxLookGap}, // 2 s gap: starved
		}},
		{"a wait first seen long overrun counts at most the gap since the last look", []look{
			{ms(100), ms(100), true, 0},
			{ms(1600), ms(150), true, maxLookGap},
		}},
		{"a new due time starts a new account", []look{
			{ms(100), ms(50), true, ms(50)},
			{ms(200), ms(50), true, ms(150)},
			{ms(300), ms(250), true, ms(50)}, // the dispatcher moved on
		}},
		{"progress resets the account", []look{
			{ms(100), ms(50), true, ms(50)},
			{ms(200), ms(50), false, 0},
			{ms(300), ms(50), true, ms(100)}, // same due again: counted afresh, capped by the gap
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o overrun
			for i, l := range tt.looks {
				if got := o.look(l.now, l.due, l.waiting); got != l.want {
					t.Errorf("look %d at %v (due %v, waiting %v): overrun %v, want %v", i, l.now, l.due, l.waiting, got, l.want)
				}
			}
		})
	}
}
