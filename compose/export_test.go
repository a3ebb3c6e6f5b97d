package compose

// Forget drops a stack from this process's live set, so that Sweep treats
// it as a leftover of an earlier run.
func Forget(name string) { unregister(name) }

// RetryFreeze is retryFreeze, for tests.
var RetryFreeze = retryFreeze
