package procstat

import (
	"context"
	"os"
	"sync"
	"time"
)

// SampleSelf is Sample of this process, with CPUPctOfSet over cpus (0: not
// known), so loadgate's own figures are measured like any watched process's.
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
	PIDs          []int         // host processes (--watch-pid)
	Self          bool          // this process too (SampleSelf)
	CPUs          int           // this process's cpus, for Self's CPUPctOfSet
	Every, Warmup time.Duration // sampling interval (default 1s); delay after t0
	// Emit gets every sample, concurrently from the samplers; self marks this process's.
	Emit func(s Sample, self bool)
	Also func(ctx context.Context) (stop func()) // another sampler; Stop calls its stop
}

// Watch samples processes from a load's warm-up end, armed by Started's listener. Use a
// Watch once. Stop may run concurrently with the listener and timer; once it has begun no
// sampler starts, so Stop ends every one started.
type Watch struct {
	ctx context.Context
	r   Reader
	o   WatchOptions

	now       func() time.Time // test seams, with afterFunc
	afterFunc func(time.Duration, func()) *time.Timer

	mu       sync.Mutex
	stopped  bool
	timer    *time.Timer
	stopPIDs []func() Summary
	stopSelf func() Summary
	stopAlso func()
}

// NewWatch prepares a Watch. The samplers outlive ctx's cancellation (an
// interrupted run samples its drain until Stop), not its values.
func NewWatch(ctx context.Context, r Reader, o WatchOptions) *Watch {
	return &Watch{ctx: context.WithoutCancel(ctx), r: r, o: o, now: time.Now, afterFunc: time.AfterFunc}
}

// Started is the listener arming the sampling for t0 + Warmup (nil Watch: nil).
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

// Stop ends the samplers and returns the PIDs' summaries in order and this process's
// (nil unless Self); both are nil if sampling never began.
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
