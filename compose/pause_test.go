package compose_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/compose"
)

// A gate died on "pause failed: unable to freeze" on an overloaded machine:
// the cgroup freezer gives up when a task does not stop within its timeout,
// and a second try succeeds. Other errors are not retried.
func TestRegression_PauseUnableToFreeze(t *testing.T) {
	calls := 0
	err := compose.RetryFreeze(context.Background(), func() error {
		if calls++; calls < 3 {
			return errors.New("Error response from daemon: cannot pause container abc: unable to freeze")
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("unable to freeze twice, then paused: err %v after %d calls, want nil after 3", err, calls)
	}

	calls = 0
	err = compose.RetryFreeze(context.Background(), func() error { calls++; return errors.New("no such container") })
	if err == nil || calls != 1 {
		t.Fatalf("another error: err %v after %d calls, want it at once", err, calls)
	}

	calls = 0
	err = compose.RetryFreeze(context.Background(), func() error { calls++; return errors.New("unable to freeze") })
	if err == nil || !strings.Contains(err.Error(), "tried 4 times") || calls != 4 {
		t.Fatalf("never freezes: err %v after %d calls, want the error after 4 tries", err, calls)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls = 0
	err = compose.RetryFreeze(ctx, func() error { calls++; return errors.New("unable to freeze") })
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Fatalf("cancelled: err %v after %d calls, want context.Canceled after 1", err, calls)
	}
}
