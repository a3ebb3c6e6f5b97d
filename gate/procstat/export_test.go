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
