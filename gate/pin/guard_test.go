package pin

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The guard, tick by tick, with no clock: each row is each cpu's busy
// time read at each tick (100 ms apart), and whether and at which tick the
// guard says to lower.
func TestGuard(t *testing.T) {
	ms := time.Millisecond
	one := func(v ...time.Duration) [][]time.Duration { // one cpu's series
		out := make([][]time.Duration, len(v))
		for i, b := range v {
			out[i] = []time.Duration{b}
		}
		return out
	}
	cases := []struct {
		name string
		cpus []int
		busy [][]time.Duration // at ticks 1, 2, …: each cpu's busy time; nil: the read fails
		at   int               // the tick (1-based) at which it lowers; 0: never
	}{
		// Idle: never.
		{"idle", []int{1}, one(0, 1*ms, 2*ms, 3*ms, 4*ms, 5*ms, 6*ms, 7*ms), 0},
		// 85% busy for 0.7 s: under the 90% limit, never.
		{"busy under the limit", []int{1}, one(0, 85*ms, 170*ms, 255*ms, 340*ms, 425*ms, 510*ms, 595*ms), 0},
		// 100% busy: judged once the window is 500 ms wide, at tick 6.
		{"saturated", []int{1}, one(0, 100*ms, 200*ms, 300*ms, 400*ms, 500*ms, 600*ms), 6},
		// 95% busy after 200 ms of idling: the window slides; over 90%
		// once its oldest sample is the idle end, at tick 8.
		{"saturated after idling", []int{1}, one(0, 0, 0, 95*ms, 190*ms, 285*ms, 380*ms, 475*ms, 570*ms), 8},
		// Two cpus, one saturated, one idle: the kernel throttles cpu by
		// cpu, so the busy one decides, at tick 6.
		{"one of two cpus saturated", []int{2, 3}, [][]time.Duration{
			{0, 0}, {100 * ms, 0}, {200 * ms, 0}, {300 * ms, 0}, {400 * ms, 0}, {500 * ms, 0}, {600 * ms, 0}}, 6},
		// Two cpus at 80% each: never.
		{"two cpus under the limit", []int{2, 3}, [][]time.Duration{
			{0, 0}, {80 * ms, 80 * ms}, {160 * ms, 160 * ms}, {240 * ms, 240 * ms}, {320 * ms, 320 * ms}, {400 * ms, 400 * ms}, {480 * ms, 480 * ms}}, 0},
		// A failed read is skipped, not taken for idle or for busy.
		{"failed reads", []int{1}, [][]time.Duration{{0}, nil, {200 * ms}, nil, {400 * ms}, {500 * ms}, {600 * ms}}, 6},
		// /proc/stat unreadable: a real-time generator is not left
		// unwatched, lowered at the tenth failed read in a row.
		{"unreadable", []int{1}, make([][]time.Duration, 12), 10},
		// A burst shorter than the window (the start): never.
		{"burst", []int{1}, one(0, 100*ms, 200*ms, 210*ms, 220*ms, 230*ms, 240*ms, 250*ms), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Unix(1000, 0)
			tick := make(chan time.Time)
			stop := make(chan struct{})
			r := 0 // reads so far: the guard's goroutine only
			read := func() ([]time.Duration, error) {
				r++
				if c.busy[r-1] == nil {
					return nil, errors.New("no /proc/stat")
				}
				return c.busy[r-1], nil
			}
			now := func() time.Time { return start.Add(time.Duration(r) * guardEvery) }
			done := make(chan string)
			go func() { done <- guard(stop, tick, now, read, c.cpus, guardLimit(0.95)) }()
			for sent := 0; sent < len(c.busy); sent++ {
				select {
				case tick <- start: // the guard reads its time from now
				case why := <-done:
					if sent != c.at {
						t.Fatalf("lowered at tick %d, want %d: %s", sent, c.at, why)
					}
					if c.name == "unreadable" && !strings.Contains(why, "not left unwatched") {
						t.Errorf("why %q", why)
					}
					return
				}
			}
			close(stop)
			why := <-done
			switch {
			case why != "" && c.at != len(c.busy):
				t.Fatalf("lowered at the last tick, want %d: %s", c.at, why)
			case why == "" && c.at != 0:
				t.Fatalf("never lowered, want at tick %d", c.at)
			case why != "" && (!strings.Contains(why, "throttling") || !strings.Contains(why, fmt.Sprintf("cpu %d ", c.cpus[0]))):
				t.Errorf("why %q does not name the cpu and the throttling", why)
			}
		})
	}
}

// guardLimit: the throttling's share less guardMargin, never below half of
// the share (a throttling set to 5% of a period would leave no margin).
func TestGuardLimit(t *testing.T) {
	for _, c := range []struct{ share, want float64 }{
		{0.95, 0.90}, // the kernel's default
		{0.5, 0.45},
		{0.05, 0.025},
	} {
		if got := guardLimit(c.share); got < c.want-1e-9 || got > c.want+1e-9 {
			t.Errorf("guardLimit(%g) = %g, want %g", c.share, got, c.want)
		}
	}
}

// What the guard counts of a cpu's busy time: the least of it and the
// process's own CPU, tick by tick, so that others' work on a shared cpu
// never lowers the generator (issue 51: a compiler on the generator's cpu
// lowered every rt run after 600 ms, and vegeta under chrt kept its
// priority). Each row is one tick: the cpus' cumulative busy times, the
// process's cumulative CPU, and the cumulative own busy times wanted.
func TestOwnBusy(t *testing.T) {
	ms := time.Millisecond
	var o ownBusy
	for i, c := range []struct {
		busy []time.Duration
		own  time.Duration
		want []time.Duration
	}{
		{[]time.Duration{1000 * ms, 50 * ms}, 7 * ms, []time.Duration{0, 0}},                 // the first reading: the baseline
		{[]time.Duration{1100 * ms, 60 * ms}, 37 * ms, []time.Duration{30 * ms, 10 * ms}},    // cpu 0 busy 100 ms, 30 of them ours; cpu 1 10 ms, at most ours
		{[]time.Duration{1200 * ms, 60 * ms}, 137 * ms, []time.Duration{130 * ms, 10 * ms}},  // all of cpu 0 ours: counted whole
		{[]time.Duration{1300 * ms, 160 * ms}, 147 * ms, []time.Duration{140 * ms, 20 * ms}}, // both busy with others' work: 10 ms of ours at most on each
		{[]time.Duration{1290 * ms, 170 * ms}, 140 * ms, []time.Duration{140 * ms, 20 * ms}}, // counters that went backwards count 0
	} {
		got := o.next(c.busy, c.own)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("tick %d: own busy %v, want %v", i+1, got, c.want)
		}
	}
}

// A cpu kept busy by other processes while the generator's own use stays
// low is not lowered; the generator itself busy past the limit is.
func TestGuardCountsOnlyTheGeneratorsCPU(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		name    string
		ownTick time.Duration // the process's CPU per 100 ms tick
		lowered bool
	}{
		{"others busy, generator 30%", 30 * ms, false},
		{"generator 95%", 95 * ms, true},
	} {
		var o ownBusy
		tick := make(chan time.Time)
		stop := make(chan struct{})
		at := time.Unix(0, 0)
		n := 0
		read := func() ([]time.Duration, error) {
			n++
			return o.next([]time.Duration{time.Duration(n) * 100 * ms}, time.Duration(n)*c.ownTick), nil
		}
		done := make(chan string)
		go func() { done <- guard(stop, tick, func() time.Time { return at }, read, []int{1}, 0.9) }()
		var why string
	ticks:
		for i := 0; i < 10; i++ {
			at = at.Add(100 * ms)
			select {
			case tick <- at:
			case why = <-done:
				break ticks
			}
		}
		if why == "" {
			close(stop)
			why = <-done
		}
		if (why != "") != c.lowered {
			t.Errorf("%s: lowered %q, want lowered %v", c.name, why, c.lowered)
		}
	}
}
