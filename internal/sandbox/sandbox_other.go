//go:build !linux

package sandbox

import (
	"context"
	"fmt"
	"io"
	"runtime"
)

// Run refuses: the box is made of Linux namespaces, so a scenario's
// stack.prepare runs on Linux only.
func Run(ctx context.Context, s Spec, out io.Writer) error {
	return fmt.Errorf("%w: the box needs Linux's user, mount and PID namespaces, and this is %s", ErrUnavailable, runtime.GOOS)
}
