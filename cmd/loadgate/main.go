// Command loadgate gates a change on honest load-test results.
//
// main is thin: it sets up signals and maps the error returned by run to an
// exit code (see design.md): 0 pass, 1 the verdict failed, 2 usage error or
// refused, 3 the run is unusable.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

func exitCode(err error, stderr *os.File) int {
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && !ee.quiet {
			fmt.Fprintln(stderr, "loadgate:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "loadgate:", err)
	return 2
}
