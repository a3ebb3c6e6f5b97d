package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/loadgate/loadgate/compose"
	"github.com/loadgate/loadgate/gate/counted"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
)

// Compose is a stack brought up for a session. One goroutine uses it at a
// time; the engine calls the listeners Sample and Count return.
type Compose struct {
	Run    *compose.Run
	Target string        // service:port
	Every  time.Duration // the stats sampling interval
	Tee    io.Writer     // when set before Sample, also gets every stats.jsonl line
	Log    io.Writer
	counts *counted.Addrs // ResolveCounts
	stubs  []result.Stub  // ResolveCounts
}

// Up is compose.Start: a refused target or compose file is ErrUsage, other failures ErrUnusable.
func Up(ctx context.Context, sp compose.Spec, every time.Duration) (*Compose, error) {
	r, err := compose.Start(ctx, sp)
	switch {
	case errors.Is(err, compose.ErrTargetRefused), compose.IsRefused(err):
		return nil, Usage(err) // a refused target or compose file: bad input, nothing measured
	case err != nil:
		return nil, Unusable(err)
	}
	log := sp.Log
	if log == nil {
		log = io.Discard
	}
	return &Compose{Run: r, Target: sp.Target, Every: every, Log: log}, nil
}

// URL is the target's address as the load's URL.
func (c *Compose) URL() string { return "http://" + c.Run.Addr }

// Addr is the target's host:port.
func (c *Compose) Addr() string { return c.Run.Addr }

// Label is the target as a result states it: service:port (host:port).
func (c *Compose) Label() string { return c.Target + " (" + c.Run.Addr + ")" }

// Topology is the stack's cpus, pinning as verified now, and target path.
func (c *Compose) Topology() result.Topology { return c.Run.Topology() }

// Pause pauses the stack's containers (the idle side of a gate).
func (c *Compose) Pause(ctx context.Context) error { return c.Run.Stack.Pause(ctx) }

// Unpause unpauses them.
func (c *Compose) Unpause(ctx context.Context) error { return c.Run.Stack.Unpause(ctx) }

// Down tears the stack down on a context of its own and says how long it took.
func (c *Compose) Down() (time.Duration, error) { return c.Run.Down() }

// Sample samples the stack and generator into dir/stats.jsonl from t0 + warmup.
func (c *Compose) Sample(ctx context.Context, dir string, warmup time.Duration) (start func(t0 time.Time), stop func(*result.Result) error, err error) {
	if err := c.Run.Sample(ctx, dir, c.Every, warmup, c.Tee); err != nil {
		return nil, nil, err
	}
	return c.Run.Started(), c.Run.Finish, nil
}

// ResolveCounts resolves the scenario's counts: addresses and reads the stubs once, while the
// stack is healthy. A refused count is ErrUsage; an unreached one ErrUnusable unless
// unreachedOK (a gate side whose base may predate the counter).
func (c *Compose) ResolveCounts(ctx context.Context, sc *scenario.Scenario, unreachedOK bool) error {
	ca, err := counted.Resolve(ctx, sc, c.Run.Stack, counted.ResolveOptions{Refused: compose.ErrTargetRefused, UnreachedOK: unreachedOK})
	var refused *counted.RefusedError
	switch {
	case errors.As(err, &refused):
		return Usagef("run: %w", err)
	case err != nil:
		return Unusablef("run: %w", err)
	}
	c.counts, c.stubs = &ca, c.readStubs(ctx)
	return nil
}

func (c *Compose) readStubs(ctx context.Context) []result.Stub {
	labels := map[string]map[string]string{}
	for name, svc := range c.Run.Stack.Project().Services {
		labels[name] = svc.Labels
	}
	return counted.Stubs(ctx, labels, c.Run.Stack, func(service, why string) {
		fmt.Fprintf(c.Log, "loadgate: warning: stub %s: %s\n", service, why)
	})
}

// Count is one load's counted reads, on what ResolveCounts found; if it was not called,
// Count resolves now and an unreached count is ErrUnusable.
func (c *Compose) Count(ctx context.Context, sc *scenario.Scenario) (Counter, error) {
	if c.counts == nil {
		if err := c.ResolveCounts(ctx, sc, false); err != nil {
			return nil, err
		}
	}
	return &counter{ctx: ctx, c: counted.New(sc, *c.counts, c.stubs)}, nil
}

// counter is Counter on a load's counting, reading with the context it was made with.
type counter struct {
	ctx context.Context
	c   *counted.Counting
}

func (r *counter) Started() func(time.Time)                       { return r.c.Started(r.ctx) }
func (r *counter) Finish(ctx context.Context, res *result.Result) { r.c.Finish(ctx, res) }
