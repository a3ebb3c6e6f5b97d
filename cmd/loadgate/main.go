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
	go session.HandleSignals(sigs, cancel, emergencyBound, os.Stderr, func() { os.Exit(exitUnusable) })
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	signal.Stop(sigs)
	cancel()
	os.Exit(exitCode(err, os.Stderr))
}
