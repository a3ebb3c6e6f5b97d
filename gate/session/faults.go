package session

import (
	"context"

	"github.com/loadgate/loadgate/gate/fault"
	"github.com/loadgate/loadgate/gate/load"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/verdict"
)

// Faults is one load's fault injection (phase inject:); Hook is nil without
// faults. The goroutine that ran the load calls Stop and Apply after it.
type Faults struct {
	Hook   load.FaultHook
	ctx    context.Context
	inj    *fault.Injector
	cancel context.CancelCauseFunc
}

// Inject checks sc's faults against the stack; one that cannot be injected is ErrUnusable.
func (c *Compose) Inject(ctx context.Context, sc *scenario.Scenario) (*Faults, error) {
	fr := &Faults{ctx: ctx, cancel: func(error) {}}
	if !sc.HasFaults() {
		return fr, nil
	}
	fr.ctx, fr.cancel = context.WithCancelCause(ctx)
	// A StageError cause makes the run unusable naming the fault, not "interrupted".
	fr.inj = fault.New(ctx, sc, fault.Stack(c.Run.Stack), fault.Options{OnFail: func(err error) { fr.cancel(&load.StageError{Err: err}) }, Log: c.Log})
	if err := fr.inj.Check(); err != nil {
		fr.cancel(err)
		return nil, Unusablef("run: %w", err)
	}
	fr.Hook = fr.inj
	return fr, nil
}

// Context is the load's context, cancelled when a fault cannot be injected.
func (fr *Faults) Context() context.Context { return fr.ctx }

// Stop ends the injection (a fault in effect is undone); idempotent.
func (fr *Faults) Stop() {
	if fr.inj != nil {
		fr.inj.Stop()
	}
	fr.cancel(nil)
}

// Apply stops the injection and writes the faults into res (their requests out of the phases).
func (fr *Faults) Apply(res *result.Result) error {
	fr.Stop()
	if fr.inj == nil {
		return nil
	}
	if err := fr.inj.Apply(res, verdict.RecoveringSeconds); err != nil {
		return Unusablef("run: %w", err)
	}
	return nil
}
