package procstat_test

import (
	"context"
	"math"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/procstat"
)

// Regression (rule 7: warm-up excluded): --watch-pid's sampling was armed
// time.AfterFunc(warmup) from the call, but the run spends seconds after
// it before the load starts, so samples included warm-up. It is armed on
// the schedule's t0 (the engine's clock, the one the counted reads use) +
// the warm-up, and not before.
func TestWatchStartsAtScheduleStartPlusWarmup(t *testing.T) {
	w := procstat.NewWatch(context.Background(), procstat.Reader{}, procstat.WatchOptions{PIDs: []int{os.Getpid()}, Every: time.Second, Warmup: 10 * time.Second})
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var delays []time.Duration
	w.SetClock(func() time.Time { return t0.Add(3 * time.Second) }, // t0 is seen 3 s late
		func(d time.Duration, f func()) *time.Timer {
			delays = append(delays, d)
			return time.AfterFunc(time.Hour, func() {})
		})
	start := w.Started()
	if len(delays) != 0 {
		t.Fatalf("armed before the schedule started: %v", delays)
	}
	start(t0)
	start(t0.Add(time.Minute)) // once only
	if len(delays) != 1 || delays[0] != 7*time.Second {
		t.Errorf("armed after %v, want once, 7s (t0 + 10s warm-up, seen at t0 + 3s)", delays)
	}
	if pids, self := w.Stop(); len(pids) != 0 || self != nil || w.Sampling() {
		t.Errorf("stopped before the warm-up ended: %v %v, want nothing sampled", pids, self)
	}
	var none *procstat.Watch
	if none.Started() != nil {
		t.Error("a nil Watch has a start listener")
	}
}

// Regression: if the warm-up timer had fired but its callback waited on
// the lock while stop ran, stop closed the file and the callback then
// started samplers nobody stopped (a goroutine leak writing to a closed
// buffer). Once Stop has begun, the callback starts nothing. Run with
// -race.
func TestWatchStopBeforeTheTimerCallbackStartsNothing(t *testing.T) {
	also := 0
	w := procstat.NewWatch(context.Background(), procstat.Reader{}, procstat.WatchOptions{PIDs: []int{os.Getpid()}, Self: true, Every: time.Millisecond,
		Also: func(context.Context) func() { also++; return func() {} }})
	var fired func()
	w.SetClock(time.Now, func(d time.Duration, f func()) *time.Timer {
		fired = f
		return time.AfterFunc(time.Hour, func() {})
	})
	w.Started()(time.Now())
	w.Stop()
	fired() // the callback that was waiting for the lock
	if w.Sampling() || also != 0 {
		t.Error("samplers started after Stop: nobody stops them")
	}

	// And with the real timer racing Stop: whichever wins, every sampler
	// started is stopped (the race detector would tell).
	for range 20 {
		var mu sync.Mutex
		stopped := true
		w := procstat.NewWatch(context.Background(), procstat.Reader{}, procstat.WatchOptions{PIDs: []int{os.Getpid()}, Self: true, Every: time.Millisecond,
			Also: func(context.Context) func() {
				mu.Lock()
				stopped = false
				mu.Unlock()
				return func() { mu.Lock(); stopped = true; mu.Unlock() }
			}})
		w.Started()(time.Now())
		w.Stop()
		mu.Lock()
		if !stopped {
			t.Error("Also was started and not stopped")
		}
		mu.Unlock()
	}
}

// A Watch past its warm-up samples the watched pid and this process, each
// sample marked by whose it is, and sums both.
func TestWatchSamplesPIDsAndSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no /proc on " + runtime.GOOS)
	}
	var mu sync.Mutex
	seen := map[bool]int{}
	w := procstat.NewWatch(context.Background(), procstat.Reader{}, procstat.WatchOptions{PIDs: []int{os.Getpid()}, Self: true, Every: 5 * time.Millisecond,
		Emit: func(s procstat.Sample, self bool) { mu.Lock(); seen[self]++; mu.Unlock() }})
	w.Started()(time.Now().Add(-time.Second)) // the warm-up is over
	deadline := time.Now().Add(2 * time.Second)
	for {
		mu.Lock()
		n := min(seen[true], seen[false])
		mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	pids, self := w.Stop()
	if len(pids) != 1 || pids[0].PID != os.Getpid() || pids[0].Samples == 0 || self == nil || self.Samples == 0 {
		t.Errorf("pids %+v self %+v", pids, self)
	}
}

// SampleSelf states the generator's CPU of one core and of its cpus
// (moved here from gate/pin: one CPU-delta sampler).
func TestSampleSelfOfItsCPUs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no /proc on " + runtime.GOOS)
	}
	var mu sync.Mutex
	var got []procstat.Sample
	stop := procstat.Reader{}.SampleSelf(context.Background(), 20*time.Millisecond, 2, func(s procstat.Sample) {
		mu.Lock()
		got = append(got, s)
		mu.Unlock()
	})
	deadline := time.Now().Add(150 * time.Millisecond)
	for time.Now().Before(deadline) { // some CPU to measure
	}
	sum := stop()
	mu.Lock()
	defer mu.Unlock()
	if sum.Samples == 0 || sum.Samples != len(got) || sum.MemPeakBytes <= 0 || sum.CPUPeakPct <= 0 || sum.PID != os.Getpid() {
		t.Fatalf("summary %+v of %d samples", sum, len(got))
	}
	for _, s := range got {
		if math.Abs(s.CPUPctOfSet-s.CPUPct/2) > 1e-9 {
			t.Errorf("of set %v, one core %v", s.CPUPctOfSet, s.CPUPct)
		}
	}
}
