//go:build !linux

package load

import (
	"errors"
	"time"
)

var errNoTimerfd = errors.New("no timerfd on this system")

// Without a timerfd (Linux's) the waiter's fine part is a sleep.
func newTimerfd() (int, error)            { return -1, errNoTimerfd }
func armTimerfd(int, time.Duration) error { return errNoTimerfd }
func nanosleep(d time.Duration)           { time.Sleep(d) }
