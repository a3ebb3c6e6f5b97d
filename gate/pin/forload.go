package pin

import (
	"fmt"
	"strconv"
	"strings"
)

// Load is the generator's scheduling for one load, owned by ForLoad's
// goroutine. Why says why it was not raised or read, or by what right.
type Load struct {
	Scheduling, Why string
	raised          *Raised
}

// ForLoad raises the generator when Want says so; a failed raise is an error
// under rt, else the Why.
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

// Lower ends the raise and returns why the guard lowered it meanwhile, or "".
func (l *Load) Lower() string {
	if l == nil || l.raised == nil {
		return ""
	}
	dropped := l.raised.Dropped()
	l.raised.Lower()
	return dropped
}

// GrantedBy words by what right uid, not root, raised the generator.
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

const capSysNice = 23 // CAP_SYS_NICE's bit in a capability set
