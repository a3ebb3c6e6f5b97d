package action

import "time"

// SetAPITimeout sets the accept and on-demand steps' API bound for a test; restore undoes it.
func SetAPITimeout(d time.Duration) (restore func()) {
	old := apiTimeout
	apiTimeout = d
	return func() { apiTimeout = old }
}
