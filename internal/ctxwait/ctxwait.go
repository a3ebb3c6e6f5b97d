// Package ctxwait waits on a timer that a context can end: the one place
// for the timer-or-ctx select of gate/counted (a read at a phase's
// boundary) and gate/stub (an answer's delay).
package ctxwait

import (
	"context"
	"time"
)

// For waits d, or until ctx ends: nil when d passed, ctx's error when ctx
// ended first. d <= 0 returns ctx's error at once (nil when ctx is live).
func For(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Until waits until t on the wall clock's monotonic reading (For
// time.Until(t)).
func Until(ctx context.Context, t time.Time) error { return For(ctx, time.Until(t)) }
