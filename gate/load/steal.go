package load

import (
	"fmt"
	"time"

	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/procstat"
	"github.com/loadgate/loadgate/gate/result"
)

// readSteal reads every CPU's cumulative steal (a test seam).
var readSteal = procstat.Reader{}.ReadSteal

// stealWatch reads steal at the warm-up's end (own timer) and at end (called once).
type stealWatch struct {
	timer   *time.Timer
	read    chan struct{} // closed when the first read's callback has returned
	before  procstat.Steal
	at      time.Time // when before was read; zero: not read
	readErr error
}

func watchSteal(warmupEnd time.Time) *stealWatch {
	w := &stealWatch{read: make(chan struct{})}
	w.timer = time.AfterFunc(max(time.Until(warmupEnd), 0), func() {
		defer close(w.read)
		w.before, w.readErr = readSteal()
		w.at = time.Now()
	})
	return w
}

// end states the load and stack cpus' steal; nil and why when not measured ("" if not watched).
func (w *stealWatch) end(load, stack string) (*result.Steal, string) {
	if w == nil {
		return nil, ""
	}
	if !w.timer.Stop() {
		<-w.read // the first read has begun: it is one /proc/stat read away
	}
	// Stop true: the callback never runs, the fields stay zero (not read)
	before, at, err := w.before, w.at, w.readErr
	if err != nil {
		return nil, "hypervisor steal: " + err.Error()
	}
	if at.IsZero() {
		return nil, "hypervisor steal: not read (the run ended before its warm-up did)"
	}
	after, err := readSteal()
	wall := time.Since(at)
	if err != nil {
		return nil, "hypervisor steal: " + err.Error()
	}
	cores := func(list string) (result.StealCores, error) {
		set, err := pin.Parse(list)
		if err != nil {
			return result.StealCores{}, fmt.Errorf("cpus %q: %w", list, err)
		}
		sh, err := procstat.StealBetween(before, after, set.CPUs(), wall)
		if err != nil {
			return result.StealCores{}, err
		}
		return result.StealCores{CPUs: set.String(), StolenS: sh.Stolen.Seconds(), Share: sh.Share}, nil
	}
	st := &result.Steal{WindowS: wall.Seconds()}
	if st.Load, err = cores(load); err != nil {
		return nil, "hypervisor steal on the generator's cores: " + err.Error()
	}
	if stack != "" {
		c, err := cores(stack)
		if err != nil {
			return nil, "hypervisor steal on the stack's cores: " + err.Error()
		}
		st.Stack = &c
	}
	return st, ""
}
