package pin

import "fmt"

// Load is the generator's scheduling for one load under --load-priority.
// It belongs to the goroutine that ran ForLoad; Lower is idempotent.
type Load struct {
	// Scheduling is as read back ("" if unreadable); Why says why it was not
	// raised or not read.
	Scheduling, Why string
	raised          *Raised
}

// ForLoad raises the generator when Want says so (stack and generator
// pinned apart, or mode rt). Under rt a failed raise is an error; under
// auto it goes into Why.
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

// Lower ends the raise and returns why the guard lowered the generator
// during the load, or "".
func (l *Load) Lower() string {
	if l == nil || l.raised == nil {
		return ""
	}
	dropped := l.raised.Dropped()
	l.raised.Lower()
	return dropped
}
