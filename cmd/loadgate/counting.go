package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/loadgate/loadgate/compose"
	"github.com/loadgate/loadgate/gate/counted"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
)

// startCounting is a load's "counted by the service" (gate/counted): its
// counts resolved and the stack's stubs read once the stack is up (sr nil:
// a plain run, which has no service to ask). A count naming a service the
// stack does not have is refused (exit 2).
func startCounting(ctx context.Context, sc *scenario.Scenario, sr *stackRun, stderr io.Writer) (*counted.Counting, error) {
	if sr == nil {
		return counted.Plain(sc), nil
	}
	ca, err := resolveCounts(ctx, sc, sr, false)
	if err != nil {
		return nil, err
	}
	return counted.New(sc, ca, stackStubs(ctx, sr, stderr)), nil
}

// resolveCounts is counted.Resolve on the stack: a refused count is a
// usage error (exit 2), an unreached one unusable (exit 3) unless
// unreachedOK (a gate's side).
func resolveCounts(ctx context.Context, sc *scenario.Scenario, sr *stackRun, unreachedOK bool) (counted.Addrs, error) {
	ca, err := counted.Resolve(ctx, sc, sr.stack, counted.ResolveOptions{Refused: compose.ErrTargetRefused, UnreachedOK: unreachedOK})
	var refused *counted.RefusedError
	switch {
	case errors.As(err, &refused):
		return ca, usageErr("run: %w", err)
	case err != nil:
		return ca, unusable(fmt.Errorf("run: %w", err))
	}
	return ca, nil
}

// stackStubs is counted.Stubs of the stack's services.
func stackStubs(ctx context.Context, sr *stackRun, stderr io.Writer) []result.Stub {
	labels := map[string]map[string]string{}
	for name, svc := range sr.stack.Project().Services {
		labels[name] = svc.Labels
	}
	return counted.Stubs(ctx, labels, sr.stack, func(service, why string) {
		fmt.Fprintf(stderr, "loadgate: warning: stub %s: %s\n", service, why)
	})
}
