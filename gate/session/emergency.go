package session

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/loadgate/loadgate/compose"
)

// Emergency cleanups, registered by what creates them (a gate's worktrees).
var (
	emergencyMu  sync.Mutex
	emergencyFns = map[int]func(context.Context) error{}
	emergencyN   int
)

// OnEmergency registers fn to run, concurrently with the others, when a
// second signal exits the process at once; remove unregisters it.
func OnEmergency(fn func(context.Context) error) (remove func()) {
	emergencyMu.Lock()
	defer emergencyMu.Unlock()
	emergencyN++
	id := emergencyN
	emergencyFns[id] = fn
	return func() {
		emergencyMu.Lock()
		delete(emergencyFns, id)
		emergencyMu.Unlock()
	}
}

// Emergency removes what this process labelled as its own on the engine and
// runs the registered cleanups, concurrently, until done or ctx ends.
func Emergency(ctx context.Context, log io.Writer) {
	emergencyMu.Lock()
	fns := []func(context.Context) error{func(ctx context.Context) error {
		if !compose.Touched() {
			return nil // no stack was started: nothing of ours on the engine
		}
		r, err := compose.RemoveOwned(ctx)
		if r.Total() > 0 {
			fmt.Fprintf(log, "loadgate: removed this process's %s\n", r)
		}
		return err
	}}
	for _, fn := range emergencyFns {
		fns = append(fns, fn)
	}
	emergencyMu.Unlock()
	var wg sync.WaitGroup
	for _, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(ctx); err != nil {
				fmt.Fprintf(log, "loadgate: emergency cleanup: %v (loadgate down --all removes the rest)\n", err)
			}
		}()
	}
	wg.Wait()
}

// HandleSignals is the signal contract: the first signal cancels the run;
// the second runs Emergency for at most bound (plus a second's grace) and
// calls exit; a third calls exit at once. exit must not return to a live run.
func HandleSignals(sigs <-chan os.Signal, cancel context.CancelFunc, bound time.Duration, log io.Writer, exit func()) {
	sig := <-sigs
	fmt.Fprintf(log, "\nloadgate: %v: stopping and tearing down (send it again to exit at once)\n", sig)
	cancel()
	sig = <-sigs
	fmt.Fprintf(log, "\nloadgate: second %v: removing what this process created (at most %s) and exiting\n", sig, bound)
	done := make(chan struct{})
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		defer cancel()
		Emergency(ctx, log)
		close(done)
	}()
	hard := time.NewTimer(bound + time.Second) // a cleanup stuck past its context
	defer hard.Stop()
	select {
	case <-done:
	case <-hard.C:
		fmt.Fprintf(log, "loadgate: cleanup did not finish within %s: exiting (loadgate down --all removes the rest)\n", bound)
	case sig = <-sigs:
		fmt.Fprintf(log, "loadgate: third %v: exiting without cleaning up (loadgate down --all removes the rest)\n", sig)
	}
	exit()
}
