package rounds_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/verdict"
)

// readmeScenario is the README's scenario: warm-up 10s, a 30s ramp and 60s judged at 50/s.
const readmeScenario = `
name: api
warmup: 10s
stack: {compose: [compose.yaml], target: api:8080, prepare: [./build.sh]}
phases:
  - {name: ramp, pattern: ramp, from: 10, to: 50, duration: 30s}
  - {name: sustain, rate: 50, duration: 60s}
workloads:
  - {name: list_items, share: 80, http: {path: "/items"}, thresholds: {p95: 200ms}}
  - {name: create_item, share: 20, http: {method: POST, path: /items}, thresholds: {p95: 400ms}}
`

// windowClock advances a gate's clock by what each load is scheduled to
// take (a duet's two sides at once), plus upCost per stack brought up.
type windowClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *windowClock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func (c *windowClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// The README's scenario in the default budget: the warm-up and ramp run once
// per instance, the judged phase is cut into 20 s windows (182 samples of
// create_item's p95 at 10/s), each side's stack is brought up three times
// before round 1 (start order swapped on the second, the pairs before it
// paused; once when a slow build leaves fewer than 10 rounds for more),
// ≥ 10 rounds are planned within the budget, taken in turn on the
// instances, and the looks begin after two rounds on each. Every round's
// result says its instance and window.
func TestWindowsGateOfTheREADMEScenario(t *testing.T) {
	for _, c := range []struct {
		name      string
		prepare   time.Duration
		plan      verdict.WindowPlan
		instances string
	}{
		{"a quick build", 10 * time.Second, verdict.WindowPlan{Phase: "sustain", PhaseS: 60, WindowS: 20, InPhase: 3, PerInstance: 5, Instances: 3, WarmupS: 40, FirstLook: 6},
			"5 per instance after one warm-up run of 40s; 3 instance(s) per side"},
		{"a 2-minute build (a busy machine): one instance, every round to windows", 2 * time.Minute, verdict.WindowPlan{Phase: "sustain", PhaseS: 60, WindowS: 20, InPhase: 3, PerInstance: 12, Instances: 1, WarmupS: 40, FirstLook: 4},
			"12 per instance after one warm-up run of 40s; 1 instance(s) per side"},
	} {
		t.Run(c.name, func(t *testing.T) { windowsGate(t, c.prepare, c.plan, c.instances) })
	}
}

func windowsGate(t *testing.T, prepare time.Duration, wantPlan verdict.WindowPlan, wantLog string) {
	f := newFixture(t, readmeScenario)
	f.cfg.Auto, f.cfg.Rounds, f.cfg.Duet = true, 0, true
	f.runner.edit = func(_ int, r *result.Result) { clean(t, r) } // on schedule: the looks decide
	clock := &windowClock{now: time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)}
	start := clock.Now()
	f.runner.block = func(_ context.Context, spec rounds.RunSpec) error {
		if spec.Side == "head" { // a duet's sides run at once: count the time once
			clock.add(spec.Scenario.TotalDuration() + time.Second)
		}
		return nil
	}
	var log strings.Builder
	gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: upCost{f.stacks, clock, prepare}, Runner: f.runner,
		LookupEnv: func(string) (string, bool) { return "", false }, Log: &log, Words: report.GateWords{}, Now: clock.Now})
	if err != nil {
		t.Fatal(err, log.String())
	}
	wall := clock.Now().Sub(start)
	if !strings.Contains(log.String(), "sustain 1m0s cut into windows of 20s (3 in the phase)") {
		t.Errorf("log does not say how the phase was cut:\n%s", log.String())
	}
	R := len(gr.Head.Results)
	planned := 0
	for _, n := range gr.Notes {
		if n.Code == verdict.NoteSequentialPlan {
			planned = n.Rounds
		}
	}
	if planned < 10 || R < wantPlan.FirstLook || wall > rounds.DefaultBudget {
		t.Errorf("%d rounds planned, %d run in %s, want ≥ 10 planned, ≥ %d run, within %s\n%s", planned, R, wall, wantPlan.FirstLook, rounds.DefaultBudget, log.String())
	}
	if !strings.Contains(log.String(), wantLog) {
		t.Errorf("log does not say %q:\n%s", wantLog, log.String())
	}
	var plan *verdict.WindowPlan
	for _, n := range gr.Notes {
		if n.Code == verdict.NoteRoundWindows {
			plan = n.Windows
		}
	}
	if plan == nil || *plan != wantPlan {
		t.Errorf("the report's plan %+v, want %+v", plan, wantPlan)
	}
	if gr.Verdict.Value == verdict.Unusable || gr.Verdict.Value == verdict.Regression {
		t.Errorf("A/A: %s", gr.Verdict.Value)
	}
	ev := f.ev.String()
	instances := strings.Count(ev, "up base")
	if instances != wantPlan.Instances || (instances > 1 && !strings.Contains(ev, "pause base; pause head; up head; up base")) {
		t.Errorf("base brought up %d times, want %d, with the start order swapped on the second and the pair before it paused: %s", instances, wantPlan.Instances, ev)
	}
	// Every instance is up before round 1 and torn down once, at the end.
	if i, j := strings.LastIndex(ev, "up "), strings.Index(ev, "down "); j >= 0 && j < i || strings.Count(ev, "down base") != instances {
		t.Errorf("a stack torn down before the last came up, or not once each: %s", ev)
	}
	// Every load: the instance's warm-up (10s + the ramp), or one window.
	var primes, windows int
	for _, sp := range f.runner.specs {
		sc := sp.Scenario
		switch {
		case sp.Round.Number == 0:
			primes++
			if sc.Warmup != 10*time.Second || len(sc.Phases) != 1 || sc.Phases[0].Name != "ramp" || sc.Phases[0].Judged {
				t.Errorf("warm-up run: warmup %s phases %+v", sc.Warmup, sc.Phases)
			}
			if !strings.HasSuffix(sp.Dir, "-warmup") {
				t.Errorf("warm-up run in %s", sp.Dir)
			}
		default:
			windows++
			if sc.Warmup != time.Second || len(sc.Phases) != 1 || sc.Phases[0].Duration != 20*time.Second || !sc.Phases[0].Judged || sc.Phases[0].Rate != 50 {
				t.Errorf("window: warmup %s phases %+v", sc.Warmup, sc.Phases)
			}
		}
	}
	if primes != 2*instances || windows != 2*R {
		t.Errorf("%d warm-up runs and %d window loads, want %d and %d", primes, windows, 2*instances, 2*R)
	}
	seen := map[int]int{}
	for i, r := range gr.Head.Results {
		b := gr.Base.Results[i]
		w := r.Round.Window
		if r.Round.Instance < 1 || r.Round.Instance != b.Round.Instance || w == nil || w.Phase != "sustain" || w.DurationS != 20 || w.PhaseS != 60 || w.SettleS != 1 || *w != *b.Round.Window {
			t.Errorf("round %d: head %+v window %+v, base %+v", i+1, r.Round, w, b.Round)
			continue
		}
		seen[r.Round.Instance]++
		if w.Index != seen[r.Round.Instance] {
			t.Errorf("round %d: window %d of its instance, want %d", i+1, w.Index, seen[r.Round.Instance])
		}
		if want := i%instances + 1; r.Round.Instance != want {
			t.Errorf("round %d on instance %d, want %d: the rounds take the instances in turn", i+1, r.Round.Instance, want)
		}
	}
	if len(seen) != instances {
		t.Errorf("rounds of %d instance(s): %v", len(seen), seen)
	}
	// stack.prepare runs once a side: a later instance is fresh containers of what it built.
	for i, sp := range f.stacks.specs {
		if (i < 2) != (len(sp.Prepare) > 0) {
			t.Errorf("bring-up %d (%s): prepare %q", i+1, sp.Side, sp.Prepare)
		}
		if i >= 2 && !strings.Contains(sp.Out, "instance-") {
			t.Errorf("bring-up %d (%s): logs to %s, over the first instance's", i+1, sp.Side, sp.Out)
		}
	}
	if _, err := os.Stat(filepath.Join(f.cfg.Out, "base", "instance-1-warmup", "result.json")); err == nil {
		t.Error("a warm-up run wrote a result.json: it is no round")
	}
	t.Logf("%d rounds, %d instances, %s, %s", R, len(seen), wall, gr.Verdict.Value)
}

// upCost charges the clock per stack brought up: 10 s, and prepare more for
// a stack.prepare (a build).
type upCost struct {
	*fakeStacks
	clock   *windowClock
	prepare time.Duration
}

func (u upCost) Up(ctx context.Context, sp rounds.StackSpec) (rounds.Stack, error) {
	u.clock.add(10 * time.Second)
	if len(sp.Prepare) > 0 {
		u.clock.add(u.prepare)
	}
	return u.fakeStacks.Up(ctx, sp)
}

// The window's length rule: the shortest whole second ≥ 5 s giving the
// least-share workload 182 samples of its p95 (955 of a p99), the phase
// cut into that many equal windows.
func TestWindowLength(t *testing.T) {
	for _, c := range []struct {
		rate     float64
		dur      time.Duration
		pct      string
		want     time.Duration
		wantK    int
		comments string
	}{
		{50, 60 * time.Second, "", 20 * time.Second, 3, "the README's: create_item 10/s needs 19 s"},
		{200, 15 * time.Second, "", 5 * time.Second, 3, "b 40/s needs 5 s"},
		{100, 15 * time.Second, "", 15 * time.Second, 1, "b 20/s needs 10 s: one window, the phase"},
		{500, 60 * time.Second, "", 5 * time.Second, 12, "at least 5 s"},
		{50, 60 * time.Second, "p99", 60 * time.Second, 1, "p99 needs 96 s at 10/s: the whole phase"},
	} {
		sc := &scenario.Scenario{Phases: []scenario.Phase{{Name: "sustain", Pattern: scenario.Constant, Rate: c.rate, Duration: c.dur, Judged: true}},
			Workloads: []scenario.Workload{{Name: "a", Share: 80}, {Name: "b", Share: 20}}}
		w, k := rounds.WindowLength(sc, sc.Phases[0], c.pct)
		if w != c.want || k != c.wantK {
			t.Errorf("%s: %s × %d, want %s × %d", c.comments, w, k, c.want, c.wantK)
		}
	}
}

// A judged phase followed by another, or not constant, cannot be windows:
// asked for, it is refused; by default the gate runs the whole scenario.
func TestWindowsRefusedWhereTheScenarioCannot(t *testing.T) {
	f := newFixture(t, scenarioWithStack) // sustain, then recover
	f.cfg.Shape = rounds.ShapeWindows
	if _, err, _ := f.run(t); rounds.KindOf(err) != rounds.ErrUsage || !strings.Contains(err.Error(), "phases follow its judged phase sustain (recover)") {
		t.Errorf("err %v", err)
	}
	f = newFixture(t, scenarioWithStack)
	f.cfg.Auto, f.cfg.Rounds, f.cfg.MaxRounds = true, 0, 4
	_, err, log := f.run(t)
	if err != nil || !strings.Contains(log, "rounds run the whole scenario: phases follow") {
		t.Errorf("err %v, log %s", err, log)
	}
	cfg := rounds.Config{Scenario: "x", Auto: true, Base: "main", Shape: rounds.ShapeWindows, Shard: rounds.Shard{K: 1, N: 2}}
	if err := cfg.Validate(); rounds.KindOf(err) != rounds.ErrUsage {
		t.Errorf("windows on a shard: %v", err)
	}
}

// A re-run of a windows gate continues the earlier attempt's windows (same
// window load), numbers its own stack instances after the earlier ones (other
// bring-ups are other instances), and cuts its own instances from its first round.
func TestWindowsRerunContinuesWithItsOwnInstances(t *testing.T) {
	dir := t.TempDir()
	var f *fixture
	run := func() rounds.Outcome {
		f = newFixture(t, readmeScenario)
		f.cfg.MaxRounds, f.cfg.Continue, f.cfg.Duet = 4, dir, true
		slowerEveryRound(t, f, 1.65, swing)
		edit := f.runner.editSide
		f.runner.editSide = func(side string, n int, r *result.Result) {
			if r.Round.Number > 0 { // not an instance's warm-up run
				edit(side, n, r)
			}
		}
		gr, log, err := seqRun(t, f, time.Second)
		if err != nil {
			t.Fatal(err, log)
		}
		return gr
	}
	first := run()
	if n := len(first.Head.Results); n != 4 || first.Verdict.Value == verdict.Regression {
		t.Fatalf("attempt 1: %s after %d rounds; the test wants 4 rounds undecided", first.Verdict.Value, n)
	}
	second := run()
	var got []int
	for _, r := range second.Head.Results {
		if r.Round.Window == nil {
			t.Fatalf("round %d is no window: %+v", r.Round.Number, r.Round)
		}
		got = append(got, r.Round.Instance)
	}
	if fmt.Sprint(got[:min(len(got), 6)]) != "[1 2 1 2 3 4]" || len(got) < 6 {
		t.Errorf("instances of the rounds %v, want [1 2 1 2 3 4 …]: the earlier attempt's two in turn, then this one's from 3", got)
	}
	// Regression: a re-run's first instance (3) skipped stack.prepare as a
	// "later" instance, though a re-run is a fresh checkout that never ran it.
	for i, sp := range f.stacks.specs {
		if (i < 2) != (len(sp.Prepare) > 0) {
			t.Errorf("the re-run's bring-up %d (%s, instance %d): prepare %q, want it on its first instance only", i+1, sp.Side, sp.Instance, sp.Prepare)
		}
	}
	continued := false
	for _, n := range second.Notes {
		continued = continued || n.Code == verdict.NoteContinued
	}
	if !continued {
		t.Errorf("the re-run did not continue the earlier windows: %q", report.NoteTexts(second.Notes))
	}
}

// An ABBA windows gate takes its instances in turn too, and each
// instance's own rounds alternate which side goes first: with 3 instances
// the rounds' order is ABBA as ever, with 2 it runs A B B A by turns (so
// instance 1 gets A B A B, not A A A A).
func TestABBAWindowsAlternateOnEachInstance(t *testing.T) {
	for _, c := range []struct {
		max       int
		instances string
		baseFirst string
	}{
		{6, "[1 2 3 1 2 3]", "[true false true false true false]"},
		{4, "[1 2 1 2]", "[true false false true]"},
	} {
		f := newFixture(t, readmeScenario)
		f.cfg.MaxRounds, f.cfg.Duet = c.max, false
		f.runner.edit = func(_ int, r *result.Result) {
			if r.Round.Number > 0 {
				clean(t, r)
			}
		}
		gr, log, err := seqRun(t, f, time.Second)
		if err != nil {
			t.Fatal(err, log)
		}
		var inst []int
		var first []bool
		for i, r := range gr.Head.Results {
			inst = append(inst, r.Round.Instance)
			first = append(first, gr.Base.Results[i].Round.First)
		}
		if fmt.Sprint(inst) != c.instances || fmt.Sprint(first) != c.baseFirst {
			t.Errorf("at most %d rounds: instances %v, base first %v; want %s and %s\n%s", c.max, inst, first, c.instances, c.baseFirst, log)
		}
	}
}
