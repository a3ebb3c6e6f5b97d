// Command loadgate gates a change on honest load-test results. A first SIGINT
// or SIGTERM cancels the run (exit 3); a second exits after quick cleanups.
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
