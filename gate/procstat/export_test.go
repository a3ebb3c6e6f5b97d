package procstat

import (
	"context"
	"time"
)

// SampleWith is Sample with a clock; ended is closed when the sampler's
// goroutine has returned (the process exited, or stop).
func (r Reader) SampleWith(ctx context.Context, pid int, every time.Duration, now func() time.Time, emit func(Sample)) (stop func() Summary, ended <-chan struct{}) {
	return r.sample(ctx, pid, every, now, emit)
}

// SetClock replaces w's wall clock and time.AfterFunc.
func (w *Watch) SetClock(now func() time.Time, afterFunc func(time.Duration, func()) *time.Timer) {
	w.now, w.afterFunc = now, afterFunc
}

// Sampling says whether any of w's samplers was started.
func (w *Watch) Sampling() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.stopPIDs) > 0 || w.stopSelf != nil || w.stopAlso != nil
}
