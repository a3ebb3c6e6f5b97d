package pin

import "fmt"

// Load is the generator's scheduling for one load, as --load-priority
// asked: raised or not, and what a result states of it.
//
// A Load belongs to the goroutine that ran ForLoad; Lower may be called
// again (it is idempotent), also from a deferred call after a panic.
type Load struct {
	// Scheduling is the generator's scheduling as read back ("" when it
	// could not be read); Why says why it was not raised, or not read.
	Scheduling, Why string
	raised          *Raised
}

// ForLoad applies mode to a load about to run: raised (Want) when
// loadgate pinned a stack (stack) and the generator (pinned) apart, or
// when mode is rt. Under rt a raise that fails is an error; under auto it
// is the reason stated in Why.
func ForLoad(mode Mode, pinned, stack bool) (*Load, error) {
	if mode == "" {
		mode = ModeAuto
	}
	l := &Load{}
	raise, why := Want(mode, pinned, stack)
	if raise {
		r, err := Raise()
		switch {
		case err == nil:
			l.raised = r
		case mode == ModeRealtime:
			return nil, fmt.Errorf("--load-priority rt: %w", err)
		default:
			why = err.Error()
		}
	}
	sched, err := ReadScheduling()
	if err != nil {
		sched, why = "", "not read back: "+err.Error()
	}
	l.Scheduling, l.Why = sched, why
	return l, nil
}

// Lower ends the raise and returns why its guard lowered the generator
// during the load ("" when it did not, or when nothing was raised).
func (l *Load) Lower() string {
	if l == nil || l.raised == nil {
		return ""
	}
	dropped := l.raised.Dropped()
	l.raised.Lower()
	return dropped
}
