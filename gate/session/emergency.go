package session

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/loadgate/loadgate/compose"
)

// Emergency cleanups: what a second signal removes before the process
// exits at once, registered by what creates it (a gate's worktrees).
var (
	emergencyMu  sync.Mutex
	emergencyFns = map[int]func(context.Context) error{}
	emergencyN   int
)

// OnEmergency registers fn to run (bounded by its context) when a second
// signal exits the process at once; remove unregisters it. Registered
// cleanups run concurrently, after nothing else of the run.
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

// Emergency removes every container, network, volume and image this
// process labelled as its own, and runs the registered cleanups, all at
// once, until done or ctx ends. What it could not remove is left to
// `loadgate down --all` (the owner is dead by then).
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
