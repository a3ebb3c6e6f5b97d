package procstat

import (
	"context"
	"os"
	"sync"
	"time"
)

// SampleSelf is Sample of this process (the generator), with each
// sample's CPUPctOfSet: its CPU as a share of the cpus it may run on
// (cpus; 0 when not known leaves it 0). It is the one way loadgate
// samples itself, so that its own figures follow rule 11 like any
// watched process's.
func (r Reader) SampleSelf(ctx context.Context, every time.Duration, cpus int, emit func(Sample)) (stop func() Summary) {
	return r.Sample(ctx, os.Getpid(), every, func(s Sample) {
		if cpus > 0 {
			s.CPUPctOfSet = s.CPUPct / float64(cpus)
		}
		if emit != nil {
			emit(s)
		}
	})
}

// WatchOptions is what a Watch samples.
type WatchOptions struct {
	PIDs []int // host processes (--watch-pid)
	Self bool  // this process too (SampleSelf)
	CPUs int   // this process's cpus, for Self's CPUPctOfSet
	// Every is the sampling interval (default 1s); Warmup how long after
	// the schedule's t0 the sampling starts.
	Every, Warmup time.Duration
	// Emit is called with every sample, from the samplers' goroutines,
	// concurrently; self marks this process's own.
	Emit func(s Sample, self bool)
	// Also, when set, starts another sampler with the others (a stack's
	// engine stats) and returns its stop, which Stop calls.
	Also func(ctx context.Context) (stop func())
}

// Watch samples processes from the end of a load's warm-up (rule 7): only
// the engine knows the schedule's t0, so the listener Started returns is
// told it (load.Config.Started) and arms the samplers for t0 + Warmup.
// Stop may run concurrently with the listener and the timer; once it has
// begun no sampler starts, so Stop ends every one started. Use a Watch once.
type Watch struct {
	ctx context.Context
	r   Reader
	o   WatchOptions

	// seams for tests (export_test.go): the wall clock and time.AfterFunc
	now       func() time.Time
	afterFunc func(time.Duration, func()) *time.Timer

	mu       sync.Mutex
	stopped  bool
	timer    *time.Timer
	stopPIDs []func() Summary
	stopSelf func() Summary
	stopAlso func()
}

// NewWatch prepares a Watch; nothing is sampled before Started's listener
// is called. The samplers outlive ctx's cancellation (a run interrupted
// keeps sampling until Stop, as its load drains), not its values.
func NewWatch(ctx context.Context, r Reader, o WatchOptions) *Watch {
	return &Watch{ctx: context.WithoutCancel(ctx), r: r, o: o, now: time.Now, afterFunc: time.AfterFunc}
}

// Started is the load's start listener that arms the sampling for t0 +
// Warmup, once. A nil Watch returns nil (no listener).
func (w *Watch) Started() func(t0 time.Time) {
	if w == nil {
		return nil
	}
	return func(t0 time.Time) { w.arm(t0.Add(w.o.Warmup)) }
}

func (w *Watch) arm(at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped || w.timer != nil {
		return
	}
	w.timer = w.afterFunc(max(at.Sub(w.now()), 0), w.begin)
}

// begin starts the samplers, unless Stop has begun.
func (w *Watch) begin() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return // Stop ran while this callback waited for mu: it ends nothing started now
	}
	emit := func(self bool) func(Sample) {
		return func(s Sample) {
			if w.o.Emit != nil {
				w.o.Emit(s, self)
			}
		}
	}
	for _, pid := range w.o.PIDs {
		w.stopPIDs = append(w.stopPIDs, w.r.Sample(w.ctx, pid, w.o.Every, emit(false)))
	}
	if w.o.Self {
		w.stopSelf = w.r.SampleSelf(w.ctx, w.o.Every, w.o.CPUs, emit(true))
	}
	if w.o.Also != nil {
		w.stopAlso = w.o.Also(w.ctx)
	}
}

// Stop ends the samplers (none starts after it has begun) and returns the
// watched processes' summaries, in the order of PIDs, and this process's
// (nil unless Self, or when the sampling never began: the load ended
// before its warm-up did). Also's stop has returned when Stop returns.
func (w *Watch) Stop() (pids []Summary, self *Summary) {
	w.mu.Lock()
	w.stopped = true
	if w.timer != nil {
		w.timer.Stop()
	}
	stopPIDs, stopSelf, stopAlso := w.stopPIDs, w.stopSelf, w.stopAlso
	w.mu.Unlock()
	for _, stop := range stopPIDs {
		pids = append(pids, stop())
	}
	if stopSelf != nil {
		s := stopSelf()
		self = &s
	}
	if stopAlso != nil {
		stopAlso()
	}
	return pids, self
}
