package ctxwait_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/loadgate/loadgate/internal/ctxwait"
)

func TestForEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ctxwait.For(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("For(ended ctx, 1h) = %v, want Canceled", err)
	}
	if err := ctxwait.Until(ctx, time.Now().Add(-time.Hour)); !errors.Is(err, context.Canceled) {
		t.Errorf("Until(ended ctx, past) = %v, want Canceled", err)
	}
}

func ExampleFor() {
	fmt.Println(ctxwait.For(context.Background(), 0), ctxwait.For(context.Background(), time.Nanosecond))
	// Output: <nil> <nil>
}
