package load

// SetWaitHook installs f to run in every timer wait between arming the
// timerfd and parking on it (nil removes it). Tests only; not concurrent
// with a run.
func SetWaitHook(f func(postpone func())) { testWaitHook = f }

// ParseRxTimestamp is parseRxTimestamp (lazy.go), for the decoder's tests.
var ParseRxTimestamp = parseRxTimestamp
