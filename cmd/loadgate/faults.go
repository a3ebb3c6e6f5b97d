package main

import (
	"context"
	"fmt"
	"io"

	"github.com/loadgate/loadgate/gate/fault"
	"github.com/loadgate/loadgate/gate/load"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
)

// faultRun is a run's fault injection (phase inject:): the injector the
// engine drives, and the load's context, which a fault that cannot be
// injected cancels (the run is then unusable, exit 3). Without faults it
// does nothing: hook is nil and ctx is the caller's.
type faultRun struct {
	inj    *fault.Injector
	hook   load.FaultHook
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// startFaults checks the scenario's faults against the stack sr (nil in
// plain mode) and returns the injection to hand to the load.
func startFaults(ctx context.Context, sc *scenario.Scenario, sr *stackRun, stderr io.Writer) (*faultRun, error) {
	fr := &faultRun{ctx: ctx, cancel: func(error) {}}
	if !sc.HasFaults() {
		return fr, nil
	}
	if sr == nil {
		return nil, usageErr("run: the scenario injects faults (phase inject:), which act on its stack; with --target URL no stack is started, so they could not be injected")
	}
	fr.ctx, fr.cancel = context.WithCancelCause(ctx)
	// A fault that could not be injected ends the load with a cause the
	// engine tells from an interruption: the run is unusable naming the
	// fault (load.StageError wraps fault.ErrFault), not "interrupted".
	fr.inj = fault.New(ctx, sc, fault.Stack(sr.stack), fault.Options{OnFail: func(err error) { fr.cancel(&load.StageError{Err: err}) }, Log: stderr})
	if err := fr.inj.Check(); err != nil {
		fr.cancel(err)
		return nil, unusable(fmt.Errorf("run: %w", err))
	}
	fr.hook = fr.inj
	return fr, nil
}

// stop ends the injection (a fault in effect is undone); idempotent.
func (fr *faultRun) stop() {
	if fr.inj != nil {
		fr.inj.Stop()
	}
	fr.cancel(nil)
}

// apply stops the injection and writes the faults into res.
func (fr *faultRun) apply(res *result.Result) error {
	fr.stop()
	if fr.inj == nil {
		return nil
	}
	if err := fr.inj.Apply(res); err != nil {
		return unusable(fmt.Errorf("run: %w", err))
	}
	return nil
}
