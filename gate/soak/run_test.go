package soak_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/loadgate/loadgate/compose"
	"github.com/loadgate/loadgate/gate/load"
	"github.com/loadgate/loadgate/gate/procstat"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/session"
	"github.com/loadgate/loadgate/gate/soak"
)

// engineT0 is the schedule's start the fake engine tells its listeners.
var engineT0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// fakeSampler writes, once armed, memory lines from t0 + warm-up into the
// collector on the clock it was told (a fake clock: no timer), and records
// what the soak asked of it.
type fakeSampler struct {
	w        io.Writer
	lines    func(t0 time.Time, warmup time.Duration) []compose.Sample
	watched  []procstat.Summary
	warmup   time.Duration
	t0s      []time.Time
	finished []*result.Result
	startErr error
}

func (s *fakeSampler) Start(ctx context.Context, warmup time.Duration) (func(time.Time), error) {
	s.warmup = warmup
	if s.startErr != nil {
		return nil, s.startErr
	}
	return func(t0 time.Time) {
		s.t0s = append(s.t0s, t0)
		var b bytes.Buffer
		for _, l := range s.lines(t0, warmup) {
			_ = json.NewEncoder(&b).Encode(l)
		}
		_, _ = s.w.Write(b.Bytes())
	}, nil
}

func (s *fakeSampler) Finish(res *result.Result) ([]procstat.Summary, error) {
	s.finished = append(s.finished, res)
	if res != nil {
		res.Complete(result.After{Stack: &result.Stack{Generator: &result.Service{Name: "loadgate (generator)", CPUAvgPct: 7}}})
	}
	return s.watched, nil
}

// fakeRunner is the engine: it tells started the schedule's t0, one
// progress snapshot, and returns a consistent result.
type fakeRunner struct {
	err         error
	interrupted bool
	progressed  int
}

func (r *fakeRunner) Run(ctx context.Context, spec session.Spec) (*result.Result, error) {
	sc, started, progress := spec.Scenario, spec.Started, spec.Progress
	if r.err != nil {
		return nil, r.err
	}
	for _, f := range started {
		f(engineT0)
	}
	if progress != nil {
		progress(load.Progress{Interval: time.Second})
		r.progressed++
	}
	return &result.Result{Schema: result.Schema, Usable: true, StartedAt: engineT0, FinishedAt: engineT0.Add(sc.TotalDuration()), Interrupted: r.interrupted}, nil
}

// flat is 20 minutes of flat memory, one line a second from t0 + warm-up,
// of the generator and of watched pid 42.
func flat(t0 time.Time, warmup time.Duration) []compose.Sample {
	var out []compose.Sample
	for i := range 1200 {
		at := t0.Add(warmup + time.Duration(i)*time.Second)
		out = append(out, compose.Sample{Time: at, Service: "loadgate", Container: "pid 7", MemBytes: 50 << 20},
			compose.Sample{Time: at, Service: "pid 42 (svc)", Container: "pid 42", MemBytes: 100 << 20})
	}
	return out
}

func soakConfig(t *testing.T, d time.Duration) soak.Config {
	t.Helper()
	base, err := scenario.Parse([]byte("name: s\nwarmup: 30s\nceilings: {duration: 3h}\nphases: [{name: sustain, rate: 10, duration: 1s}]\nworkloads: [{name: a, http: {path: /}}]\n"), "s.yaml", scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := soak.Scenario(base, d)
	if err != nil {
		t.Fatal(err)
	}
	return soak.Config{Base: base, Scenario: sc, Duration: d, ThresholdBytesPerHour: soak.DefaultThresholdBytesPerHour, Every: time.Second}
}

// The samples start at the engine's t0 + the warm-up: the sampler is
// armed with the scenario's warm-up and told the schedule's own t0 (not
// the time Run was called), once, and finished once, after the load. A
// flat 20 minutes is stable, with the samplers' CPU.
func TestRunSamplesFromTheEnginesT0PlusWarmup(t *testing.T) {
	cfg := soakConfig(t, 20*time.Minute)
	col := soak.NewCollector()
	s := &fakeSampler{w: col, lines: flat, watched: []procstat.Summary{{PID: 42, Name: "svc", CPUAvgPct: 3}}}
	rn := &fakeRunner{}
	var estimates int
	sr, res, err := soak.Run(context.Background(), cfg, soak.Deps{Sampler: s, Runner: rn, Collector: col,
		Progress: func(_ load.Progress, e []soak.Estimated) { estimates = len(e) }})
	if err != nil {
		t.Fatal(err)
	}
	if s.warmup != 30*time.Second || len(s.t0s) != 1 || !s.t0s[0].Equal(engineT0) {
		t.Errorf("armed with warm-up %v and t0 %v, want 30s and the engine's %v", s.warmup, s.t0s, engineT0)
	}
	if len(s.finished) != 1 || s.finished[0] != res {
		t.Errorf("finished %d times (%v), want once with the run's result", len(s.finished), s.finished)
	}
	if sr.Verdict != soak.Stable || len(sr.Processes) != 2 || !sr.Usable {
		t.Fatalf("verdict %s, %d processes, usable %v", sr.Verdict, len(sr.Processes), sr.Usable)
	}
	for _, p := range sr.Processes {
		if !p.FirstSampleAt.Equal(engineT0.Add(30 * time.Second)) {
			t.Errorf("%s: first sample at %v, want t0 + warm-up", p.Name, p.FirstSampleAt)
		}
	}
	if pid, gen := sr.Processes[0], sr.Processes[1]; pid.CPUAvgPct != 3 || gen.CPUAvgPct != 7 {
		t.Errorf("CPU pid %v generator %v: not the samplers'", pid.CPUAvgPct, gen.CPUAvgPct)
	}
	if sr.RatePerS != 10 || sr.WarmupS != 30 || sr.DurationS != 1200 || estimates != 2 || rn.progressed != 1 {
		t.Errorf("rate %v warm-up %v duration %v; progress told %d estimates", sr.RatePerS, sr.WarmupS, sr.DurationS, estimates)
	}
}

// A soak with a watched process that exited is inconclusive, whatever its
// partial window showed.
func TestRunWithAWatchedProcessThatExitedIsInconclusive(t *testing.T) {
	cfg := soakConfig(t, 20*time.Minute)
	col := soak.NewCollector()
	s := &fakeSampler{w: col, lines: flat, watched: []procstat.Summary{{PID: 42, Name: "svc", Exited: true, ExitedAt: engineT0.Add(10 * time.Minute)}}}
	sr, _, err := soak.Run(context.Background(), cfg, soak.Deps{Sampler: s, Runner: &fakeRunner{}, Collector: col})
	if err != nil {
		t.Fatal(err)
	}
	if sr.Verdict != soak.Inconclusive || !sr.Processes[0].Exited || sr.Processes[0].Growth.Why[0] != soak.WhyExited {
		t.Errorf("verdict %s, pid %+v", sr.Verdict, sr.Processes[0])
	}
}

// An interrupted soak keeps what was measured, marked so; a load that
// could not run stops the samplers and returns the runner's error; a
// sampler that could not start is finished too (its stack torn down).
func TestRunInterruptedAndFailed(t *testing.T) {
	cfg := soakConfig(t, 20*time.Minute)
	col := soak.NewCollector()
	sr, _, err := soak.Run(context.Background(), cfg, soak.Deps{Sampler: &fakeSampler{w: col, lines: flat}, Runner: &fakeRunner{interrupted: true}, Collector: col})
	if err != nil || !sr.Interrupted {
		t.Errorf("interrupted: %v, %+v", err, sr)
	}
	errRefused := errors.New("target refused")
	s := &fakeSampler{w: col, lines: flat}
	if _, _, err := soak.Run(context.Background(), cfg, soak.Deps{Sampler: s, Runner: &fakeRunner{err: errRefused}, Collector: col}); !errors.Is(err, errRefused) || len(s.finished) != 1 || s.finished[0] != nil {
		t.Errorf("load failed: %v, finished %v", err, s.finished)
	}
	s = &fakeSampler{w: col, lines: flat, startErr: errors.New("disk full")}
	if _, _, err := soak.Run(context.Background(), cfg, soak.Deps{Sampler: s, Runner: &fakeRunner{}, Collector: col}); err == nil || len(s.finished) != 1 {
		t.Errorf("sampler did not start: %v, finished %d times", err, len(s.finished))
	}
}
