package sweep_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/session"
	"github.com/loadgate/loadgate/gate/sweep"
	"github.com/loadgate/loadgate/gate/verdict"
)

// fakeStack records what the sweep asked of the stack.
type fakeStack struct {
	sampled []string // the step directories, relative to the sweep's
	warmups []time.Duration
	armed   int // start listeners told a t0
	stopped int
	downs   int
	downErr error
	out     string
}

func (s *fakeStack) Sample(ctx context.Context, dir string, warmup time.Duration) (func(time.Time), func(*result.Result) error, error) {
	rel, _ := filepath.Rel(s.out, dir)
	s.sampled, s.warmups = append(s.sampled, filepath.ToSlash(rel)), append(s.warmups, warmup)
	return func(time.Time) { s.armed++ }, func(*result.Result) error { s.stopped++; return nil }, nil
}

func (s *fakeStack) Down() (time.Duration, error) { s.downs++; return time.Second, s.downErr }

func (s *fakeStack) Topology() result.Topology { return result.Topology{StackCPUs: "0"} }

// fakeRunner answers step k with results[k-1] (run is called instead when set).
type fakeRunner struct {
	results []*result.Result
	run     func(ctx context.Context, k int) (*result.Result, error)
	rates   []float64
}

func (r *fakeRunner) Run(ctx context.Context, spec session.Spec) (*result.Result, error) {
	r.rates = append(r.rates, spec.Scenario.Phases[0].Rate)
	for _, f := range spec.Started {
		f(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	}
	k := len(r.rates)
	if r.run != nil {
		return r.run(ctx, k)
	}
	return r.results[k-1], nil
}

func plan(t *testing.T, rates ...float64) (*scenario.Scenario, sweep.Plan) {
	t.Helper()
	sc, err := scenario.Parse([]byte(scenarioYAML), "s.yaml", scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := sweep.Plan{Rates: rates, Step: 10 * time.Second, Warmup: time.Second}
	for _, r := range rates {
		ssc, err := sweep.StepScenario(sc, r, p.Step, p.Warmup, scenario.OperatorLimits{})
		if err != nil {
			t.Fatal(err)
		}
		p.Scenarios = append(p.Scenarios, ssc)
	}
	return sc, p
}

func held(t *testing.T, rate float64) *result.Result {
	n := int64(rate * 10)
	return stepResult(t, n, n, repeat(20, int(n)), nil, 0)
}

func refused(t *testing.T, rate float64) *result.Result {
	n := int64(rate * 10)
	return stepResult(t, n, n, nil, map[string]int64{"status 503": n}, 0)
}

// The stairs stop one step after the first step that does not hold: 10
// holds, 20 does not, 40 is run to see how it degrades, 80 never runs. The
// stack is sampled per step from its t0, and torn down once.
func TestRunStopsOneStepAfterTheFirstThatDoesNotHold(t *testing.T) {
	sc, p := plan(t, 10, 20, 40, 80)
	out := t.TempDir()
	st := &fakeStack{out: out}
	rn := &fakeRunner{results: []*result.Result{held(t, 10), refused(t, 20), refused(t, 40), held(t, 80)}}
	var measured []string
	sw, err := sweep.Run(context.Background(), sc, p, out, time.Now(), sweep.Deps{Stack: st, Runner: rn,
		Measured: func(dir string, s sweep.Step, res *result.Result, v verdict.Verdict) error {
			if _, err := os.Stat(dir); err != nil {
				t.Errorf("step %d's directory: %v", s.Number, err)
			}
			measured = append(measured, fmt.Sprintf("%d:%v", s.Number, s.Held))
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(rn.rates) != "[10 20 40]" || strings.Join(measured, " ") != "1:true 2:false 3:false" {
		t.Errorf("ran %v, measured %v; want 10, 20, 40 and no more", rn.rates, measured)
	}
	if sw.SustainableRate == nil || *sw.SustainableRate != 10 || sw.DegradesAt == nil || *sw.DegradesAt != 20 || sw.Interrupted {
		t.Errorf("sustainable %v degrades at %v interrupted %v", sw.SustainableRate, sw.DegradesAt, sw.Interrupted)
	}
	if strings.Join(st.sampled, " ") != "steps/01-10 steps/02-20 steps/03-40" || st.armed != 3 || st.stopped != 3 || st.downs != 1 {
		t.Errorf("sampled %v (armed %d, stopped %d), down %d", st.sampled, st.armed, st.stopped, st.downs)
	}
	if st.warmups[0] != time.Second {
		t.Errorf("sampling starts after %v of warm-up, want the step's 1s", st.warmups[0])
	}
	if sw.Steps[0].Result != "steps/01-10/result.json" || sw.FinishedAt.IsZero() {
		t.Errorf("step 1's result %q, finished %v", sw.Steps[0].Result, sw.FinishedAt)
	}
}

// Interrupted during a step: the step is kept, marked, the sweep is
// interrupted and ends there without an error (what was measured is kept).
func TestRunInterruptedDuringAStepKeepsItsSteps(t *testing.T) {
	sc, p := plan(t, 10, 20, 40)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rn := &fakeRunner{run: func(ctx context.Context, k int) (*result.Result, error) {
		if k == 1 {
			return held(t, 10), nil
		}
		cancel() // SIGINT during step 2
		r := held(t, 20)
		r.Interrupted = true
		return r, nil
	}}
	st := &fakeStack{out: t.TempDir()}
	sw, err := sweep.Run(ctx, sc, p, st.out, time.Now(), sweep.Deps{Stack: st, Runner: rn})
	if err != nil {
		t.Fatal(err)
	}
	if !sw.Interrupted || len(sw.Steps) != 2 || !sw.Steps[1].Interrupted || sw.Steps[1].Held || sw.DegradesAt != nil {
		t.Errorf("interrupted %v, %d steps, last %+v, degrades at %v", sw.Interrupted, len(sw.Steps), sw.Steps[len(sw.Steps)-1], sw.DegradesAt)
	}
	if st.downs != 1 {
		t.Errorf("torn down %d times", st.downs)
	}
}

// Interrupted before a step could start: the steps so far are kept; with
// none, the runner's error is the sweep's.
func TestRunInterruptedBeforeAStepStarts(t *testing.T) {
	sc, p := plan(t, 10, 20)
	errStopped := errors.New("interrupted before the load started")
	ctx, cancel := context.WithCancel(context.Background())
	rn := &fakeRunner{run: func(ctx context.Context, k int) (*result.Result, error) {
		if k == 1 {
			cancel()
			return held(t, 10), nil
		}
		return nil, errStopped
	}}
	sw, err := sweep.Run(ctx, sc, p, t.TempDir(), time.Now(), sweep.Deps{Runner: rn})
	if err != nil || !sw.Interrupted || len(sw.Steps) != 1 {
		t.Errorf("err %v, interrupted %v, %d steps; want step 1 kept", err, sw.Interrupted, len(sw.Steps))
	}

	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	st := &fakeStack{}
	st.out = t.TempDir()
	_, err = sweep.Run(ctx2, sc, p, st.out, time.Now(), sweep.Deps{Stack: st, Runner: &fakeRunner{run: func(context.Context, int) (*result.Result, error) { return nil, errStopped }}})
	if !errors.Is(err, errStopped) || st.downs != 1 || st.stopped != 1 {
		t.Errorf("no step measured: err %v (want the runner's), down %d, samplers stopped %d", err, st.downs, st.stopped)
	}
}

// A stack that was not torn down cleanly is stated, not hidden.
func TestRunStatesATeardownThatFailed(t *testing.T) {
	sc, p := plan(t, 10)
	st := &fakeStack{downErr: errors.New("container api still running")}
	st.out = t.TempDir()
	sw, err := sweep.Run(context.Background(), sc, p, st.out, time.Now(), sweep.Deps{Stack: st, Runner: &fakeRunner{results: []*result.Result{held(t, 10)}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sw.NotMeasured) != 1 || !strings.Contains(sw.NotMeasured[0], "not torn down cleanly: container api still running") {
		t.Errorf("not measured %q", sw.NotMeasured)
	}
}
