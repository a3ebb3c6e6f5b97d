package session_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/session"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// fakeTarget is a target whose samplers, counts and teardown are counted.
type fakeTarget struct {
	armed, stopped, downs int
	counted               bool
	sampleErr             error
}

func (f *fakeTarget) Sample(ctx context.Context, dir string, warmup time.Duration) (func(time.Time), func(*result.Result) error, error) {
	if f.sampleErr != nil {
		return nil, nil, f.sampleErr
	}
	return func(time.Time) { f.armed++ }, func(*result.Result) error { f.stopped++; return nil }, nil
}

func (f *fakeTarget) Count(ctx context.Context, sc *scenario.Scenario) (session.Counter, error) {
	return fakeCounter{f}, nil
}

func (f *fakeTarget) Inject(ctx context.Context, sc *scenario.Scenario) (*session.Faults, error) {
	return (&session.Plain{}).Inject(ctx, sc)
}

func (f *fakeTarget) Down() (time.Duration, error) { f.downs++; return 0, nil }

type fakeCounter struct{ f *fakeTarget }

func (c fakeCounter) Started() func(time.Time)               { return func(time.Time) { c.f.armed++ } }
func (c fakeCounter) Finish(context.Context, *result.Result) { c.f.counted = true }

// fakeRunner tells every listener the schedule's start, or fails.
type fakeRunner struct{ err error }

func (r fakeRunner) Run(ctx context.Context, spec session.Spec) (*result.Result, error) {
	if r.err != nil {
		return nil, r.err
	}
	for _, f := range spec.Started {
		if f != nil {
			f(t0)
		}
	}
	return &result.Result{StartedAt: t0, FinishedAt: t0.Add(time.Second), Usable: true}, nil
}

func scen(t *testing.T, yaml string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse([]byte(yaml), "s.yaml", scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

const plainYAML = "name: x\nphases: [{name: sustain, rate: 10, duration: 1s}]\nworkloads: [{name: a, http: {path: /}}]\n"

// A measured run arms the samplers and the counted reads on the engine's
// start, finishes the counts, stops the samplers and tears the target
// down once.
func TestMeasureArmsAndTearsDown(t *testing.T) {
	ft := &fakeTarget{}
	m := session.Measure{Runner: fakeRunner{}, Target: ft, Began: t0.Add(-time.Second)}
	res, err := m.Run(context.Background(), session.Spec{Scenario: scen(t, plainYAML), Dir: t.TempDir()})
	if err != nil || res == nil {
		t.Fatalf("Run: %v", err)
	}
	if ft.armed != 2 || ft.stopped != 1 || !ft.counted || ft.downs != 1 {
		t.Errorf("armed %d stopped %d counted %v downs %d, want 2 1 true 1", ft.armed, ft.stopped, ft.counted, ft.downs)
	}
}

// A load that fails leaves the samplers stopped and the target torn down,
// and its error is unusable unless it says otherwise.
func TestMeasureFailedLoad(t *testing.T) {
	ft := &fakeTarget{}
	m := session.Measure{Runner: fakeRunner{err: errors.New("boom")}, Target: ft}
	_, err := m.Run(context.Background(), session.Spec{Scenario: scen(t, plainYAML), Dir: t.TempDir()})
	if session.KindOf(err) != session.ErrUnusable {
		t.Errorf("err %v: kind %v, want unusable", err, session.KindOf(err))
	}
	if ft.stopped != 1 || ft.downs != 1 {
		t.Errorf("stopped %d downs %d, want 1 1", ft.stopped, ft.downs)
	}
	refused := session.Usagef("refused")
	_, err = session.Measure{Runner: fakeRunner{err: refused}, Target: &fakeTarget{}}.Run(context.Background(), session.Spec{Scenario: scen(t, plainYAML), Dir: t.TempDir()})
	if session.KindOf(err) != session.ErrUsage {
		t.Errorf("a refused load: kind %v, want usage", session.KindOf(err))
	}
}

// Samplers that cannot start make the run unusable before any load.
func TestMeasureSamplerFails(t *testing.T) {
	ft := &fakeTarget{sampleErr: errors.New("disk full")}
	_, err := session.Measure{Runner: fakeRunner{}, Target: ft}.Run(context.Background(), session.Spec{Scenario: scen(t, plainYAML), Dir: t.TempDir()})
	if session.KindOf(err) != session.ErrUnusable || ft.downs != 1 {
		t.Errorf("err %v downs %d", err, ft.downs)
	}
}

// A plain target refuses a scenario that injects faults: there is no
// stack to inject them into.
func TestPlainRefusesFaults(t *testing.T) {
	sc, err := scenario.Load("../scenario/testdata/faults.yaml", scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&session.Plain{}).Inject(context.Background(), sc); session.KindOf(err) != session.ErrUsage {
		t.Errorf("err %v, want a usage error", err)
	}
}

// A plain target with nothing to watch writes no stats file and leaves
// the result's stack alone.
func TestPlainNothingToSample(t *testing.T) {
	start, stop, err := (&session.Plain{}).Sample(context.Background(), t.TempDir(), 0)
	if err != nil || start != nil {
		t.Fatalf("start %v err %v", start != nil, err)
	}
	res := &result.Result{}
	if err := stop(res); err != nil || res.Stack != nil {
		t.Errorf("stop: %v, stack %v", err, res.Stack)
	}
}

// The error kinds: the outermost wins, nil stays nil.
func TestKinds(t *testing.T) {
	if session.Usage(nil) != nil || session.Unusable(nil) != nil {
		t.Error("nil got a kind")
	}
	err := session.Unusable(session.Usagef("inner"))
	if !errors.Is(err, session.ErrUnusable) || session.KindOf(err) != session.ErrUnusable {
		t.Errorf("KindOf %v", session.KindOf(err))
	}
	if session.KindOf(errors.New("plain")) != nil {
		t.Error("an error of no kind has one")
	}
}
