package pin

import (
	"fmt"
	"strconv"
	"strings"
)

// Load is the generator's scheduling for one load under --load-priority.
// It belongs to the goroutine that ran ForLoad; Lower is idempotent.
type Load struct {
	// Scheduling is as read back ("" if unreadable); Why says why it was not
	// raised or not read, or, raised as a user other than root, by what
	// right (CAP_SYS_NICE, which the Action's gate step adds where sudo
	// works, or RLIMIT_RTPRIO).
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
			l.raised, why = r, grantedBy()
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

// GrantedBy words by what right a user other than root (uid) raised the
// generator, from the effective capabilities in /proc/self/status.
func GrantedBy(uid int, status string) string {
	if uid == 0 {
		return ""
	}
	by := "RLIMIT_RTPRIO"
	for _, line := range strings.Split(status, "\n") {
		hex, ok := strings.CutPrefix(line, "CapEff:")
		if !ok {
			continue
		}
		if caps, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64); err == nil && caps&(1<<capSysNice) != 0 {
			by = "CAP_SYS_NICE"
		}
	}
	return fmt.Sprintf("raised as uid %d through %s", uid, by)
}

// capSysNice is CAP_SYS_NICE's bit in a capability set.
const capSysNice = 23
