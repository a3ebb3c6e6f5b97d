package load_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/load"
)

// hangingListener accepts connections and never answers (nor closes them
// until the test ends).
func hangingListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

// Issue 8: "a hanging server with max_in_flight: 5 turned a 2 s schedule
// into 39 s". The dispatcher waits for a free worker at most until the
// schedule's end plus the drain; what it could not send by then is recorded
// (offered and abandoned, named in not_measured), and Run returns within
// load.WallBound.
func TestRegression_HangingServerSmallInFlightBoundedWallTime(t *testing.T) {
	sc := mustScenario(t, `
name: hang-small-inflight
timeout: 3s
drain: 500ms
max_in_flight: 5
phases: [{name: sustain, rate: 50, duration: 2s}]
workloads: [{name: a, share: 1, http: {path: /}}]
`)
	bound, err := load.WallBound(sc)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res := runAgainst(t, context.Background(), sc, hangingListener(t))
	took := time.Since(start)
	if took > bound {
		t.Errorf("Run took %s, beyond its wall-time bound %s (schedule 2s + drain 500ms + slack %s)", took, bound, load.WallSlack)
	}
	assertEveryRequestRecorded(t, res)
	if res.Offered != 100 {
		t.Errorf("offered %d, want the whole schedule (100): unsent requests are recorded too", res.Offered)
	}
	if !res.Usable {
		t.Errorf("unusable (%v): a hanging server is a measurement, not a broken run", res.Unusable)
	}
	if !strings.Contains(strings.Join(res.NotMeasured, "\n"), "never sent") {
		t.Errorf("not_measured %q does not say which requests were never sent", res.NotMeasured)
	}
}

// Issue 8: the dispatcher hung for good, parked on its timer. Whatever stops
// it (here a wait postponed by a day: a wake-up that never comes), the
// watchdog ends the run within about load.HangAfter past the due time, as
// unusable, naming the stage.
func TestRegression_StuckDispatcherEndsUnusable(t *testing.T) {
	srv := hangingListener(t) // never reached: the first request is the one that sticks
	stuck := 0
	load.SetWaitHook(func(postpone func()) {
		if stuck++; stuck == 3 {
			postpone()
		}
	})
	defer load.SetWaitHook(nil)
	sc := mustScenario(t, `
name: stuck
timeout: 1s
phases: [{name: sustain, rate: 100, duration: 3s}]
workloads: [{name: a, share: 1, http: {path: /}}]
`)
	bound, err := load.WallBound(sc)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res := runAgainst(t, context.Background(), sc, srv)
	if took := time.Since(start); took > bound {
		t.Errorf("Run took %s, beyond its wall-time bound %s", took, bound)
	}
	if res.Usable || res.Interrupted {
		t.Fatalf("usable=%v interrupted=%v, want an unusable result that is not an interruption", res.Usable, res.Interrupted)
	}
	msg := strings.Join(res.Unusable, "\n")
	if !strings.Contains(msg, "no progress") || !strings.Contains(msg, "stage: waiting on its timer") {
		t.Errorf("unusable %q does not name the stuck stage", msg)
	}
	if res.Offered != res.Recorded {
		t.Errorf("offered %d != recorded %d", res.Offered, res.Recorded)
	}
}

// A dispatcher that is behind its schedule but making progress is not hung
// (review of the watchdog: it measured how far behind the schedule was,
// not how long the current wait had lasted). Two workers held for 1.5 s
// leave the dispatcher that far behind; it then catches up, and the run is
// usable.
func TestRegression_BehindScheduleIsNotHung(t *testing.T) {
	var hold atomic.Bool
	hold.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hold.Load() {
			time.Sleep(1500 * time.Millisecond)
			hold.Store(false)
		}
	}))
	defer srv.Close()
	sc := mustScenario(t, `
name: behind
timeout: 4s
drain: 3s
max_in_flight: 2
phases: [{name: sustain, rate: 200, duration: 3s}]
workloads: [{name: a, share: 1, http: {path: /}}]
`)
	res := runAgainst(t, context.Background(), sc, srv.URL)
	if !res.Usable {
		t.Fatalf("unusable (%v): a dispatcher behind schedule but making progress is not stuck", res.Unusable)
	}
	assertEveryRequestRecorded(t, res)
	if res.Stalled < 1 {
		t.Errorf("stalled %.2f s, want the 1.5 s hold to show", res.Stalled)
	}
}
