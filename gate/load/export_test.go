package load

import "github.com/loadgate/loadgate/gate/procstat"

// SetWaitHook installs f to run in every timer wait between arming the
// timerfd and parking on it (nil removes it). Tests only; not concurrent
// with a run.
func SetWaitHook(f func(postpone func())) { testWaitHook = f }

// ParseRxTimestamp is parseRxTimestamp (lazy.go), for the decoder's tests.
var ParseRxTimestamp = parseRxTimestamp

// SetReadSteal replaces how a run reads the machine's steal (steal.go) and
// returns the restore. Tests only; not concurrent with a run.
func SetReadSteal(f func() (procstat.Steal, error)) (restore func()) {
	old := readSteal
	readSteal = f
	return func() { readSteal = old }
}
