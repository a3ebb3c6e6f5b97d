// Command loadgate gates a change on honest load-test results.
//
// main is thin: it sets up signals and maps the error returned by run to an
// exit code (see design.md): 0 pass, 1 the verdict failed, 2 usage error or
// refused, 3 the run is unusable.
//
// Signals: the first SIGINT or SIGTERM cancels run's context — the run
// stops its load, writes what it measured and tears its stacks down (exit
// 3, interrupted). A second one exits at once, with 3, after removing what
// can be removed quickly (session.Emergency).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/loadgate/loadgate/gate/load"
	"github.com/loadgate/loadgate/gate/session"
)

// emergencyBound bounds the cleanup a second signal runs before exiting.
const emergencyBound = 10 * time.Second

func main() {
	load.ApplyGC(os.Getenv) // the generator's collector
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go handleSignals(sigs, cancel, os.Stderr, os.Exit)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	signal.Stop(sigs)
	cancel()
	os.Exit(exitCode(err, os.Stderr))
}

// handleSignals: the first signal cancels the run (cancel); the second
// runs the emergency cleanups for at most emergencyBound (plus a second's
// grace for one that ignores its context) and exits with exitUnusable; a
// third exits at once without waiting for them.
func handleSignals(sigs <-chan os.Signal, cancel context.CancelFunc, stderr io.Writer, exit func(int)) {
	sig := <-sigs
	fmt.Fprintf(stderr, "\nloadgate: %v: stopping and tearing down (send it again to exit at once)\n", sig)
	cancel()
	sig = <-sigs
	fmt.Fprintf(stderr, "\nloadgate: second %v: removing what this process created (at most %s) and exiting\n", sig, emergencyBound)
	done := make(chan struct{})
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), emergencyBound)
		defer cancel()
		session.Emergency(ctx, stderr)
		close(done)
	}()
	hard := time.NewTimer(emergencyBound + time.Second) // a cleanup stuck past its context
	defer hard.Stop()
	select {
	case <-done:
	case <-hard.C:
		fmt.Fprintf(stderr, "loadgate: cleanup did not finish within %s: exiting (loadgate down --all removes the rest)\n", emergencyBound)
	case sig = <-sigs:
		fmt.Fprintf(stderr, "loadgate: third %v: exiting without cleaning up (loadgate down --all removes the rest)\n", sig)
	}
	exit(exitUnusable)
}
