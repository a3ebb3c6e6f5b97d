package load_test

import (
	"context"
	"net/url"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadgate/loadgate/gate/load"
	"github.com/loadgate/loadgate/gate/result"
)

// runKey tells the fake operation which of two runs a request is of.
type runKey struct{}

// Two runs given one StartAt (a duet gate's two sides) send request k at
// the same instant, however far apart they were started; the schedule's
// start is StartAt in both results and nothing is late. Without StartAt a
// run starts when it is called.
func TestStartAtGivesTwoRunsOneSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := mustScenario(t, `
name: duet
late_after: 1ms
phases:
  - {name: sustain, rate: 100, duration: 1s}
workloads:
  - {name: get, share: 1, http: {path: /}}
`)
		var mu sync.Mutex
		sent := map[string][]time.Time{} // run → send instants, in order of k
		defer load.SetFakeClock(func(ctx context.Context, _ func() time.Duration, _ int, k int64) string {
			mu.Lock()
			name := ctx.Value(runKey{}).(string)
			for int64(len(sent[name])) <= k {
				sent[name] = append(sent[name], time.Time{})
			}
			sent[name][k] = time.Now()
			mu.Unlock()
			time.Sleep(2 * time.Millisecond)
			return ""
		})()
		u, err := url.Parse("http://127.0.0.1:9")
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now().Add(300 * time.Millisecond)
		run := func(name string, startAt time.Time) *result.Result {
			res, err := load.Run(context.WithValue(context.Background(), runKey{}, name), load.Config{Scenario: sc, Target: load.Target{URL: u}, StartAt: startAt})
			if err != nil {
				t.Error(err)
			}
			return res
		}
		var base, head *result.Result
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); base = run("base", t0) }()
		go func() { defer wg.Done(); time.Sleep(200 * time.Millisecond); head = run("head", t0) }() // called 200 ms later
		wg.Wait()
		if base == nil || head == nil {
			t.Fatal("a run failed")
		}
		if !base.StartedAt.Equal(t0) || !head.StartedAt.Equal(t0) {
			t.Errorf("started at %s / %s, want both %s", base.StartedAt, head.StartedAt, t0)
		}
		if len(sent["base"]) != 100 || len(sent["head"]) != 100 {
			t.Fatalf("sent %d / %d requests, want 100 each", len(sent["base"]), len(sent["head"]))
		}
		for k := range sent["base"] {
			want := t0.Add(time.Duration(k) * 10 * time.Millisecond)
			if b, h := sent["base"][k], sent["head"][k]; !b.Equal(want) || !h.Equal(want) {
				t.Fatalf("request %d sent at +%s (base) and +%s (head), want both at +%s", k, b.Sub(t0), h.Sub(t0), want.Sub(t0))
			}
		}
		if base.Late != 0 || head.Late != 0 {
			t.Errorf("late %d / %d, want none", base.Late, head.Late)
		}

		// Without StartAt the schedule starts when Run is called.
		called := time.Now()
		if res := run("alone", time.Time{}); res == nil || !res.StartedAt.Equal(called) || !sent["alone"][0].Equal(called) {
			t.Errorf("without StartAt: started at %v, first request at %v, want both at the call, %v", res.StartedAt, sent["alone"][0], called)
		}
	})
}
