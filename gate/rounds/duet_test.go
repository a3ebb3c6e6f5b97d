package rounds_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

// together makes each of a duet round's two Runs wait for the other's, so
// a gate that ran them one after the other fails (after bound) instead of
// passing: both sides of the round are in Run at once.
func together(bound time.Duration) func(ctx context.Context, spec rounds.RunSpec) error {
	var mu sync.Mutex
	arrived := map[int]chan struct{}{}
	return func(ctx context.Context, spec rounds.RunSpec) error {
		mu.Lock()
		ch, ok := arrived[spec.Round.Number]
		if !ok {
			ch = make(chan struct{})
			arrived[spec.Round.Number] = ch
		} else {
			close(ch)
		}
		mu.Unlock()
		select {
		case <-ch:
			return nil
		case <-time.After(bound):
			return fmt.Errorf("round %d: %s ran alone: the other side was not running", spec.Round.Number, spec.Side)
		}
	}
}

// A duet gate: both stacks up and never paused; every round runs both
// sides at once with one common schedule start, later in every round, and
// its results say so (mode duet, neither first, the other not paused).
// Judgment is verdict.Gate over the paired rounds, as ever.
func TestDuetRunsBothSidesAtOneStartAndNeverPauses(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.cfg.Rounds, f.cfg.Duet = 3, true
	f.runner.block = together(time.Minute)
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var log strings.Builder
	gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner, Log: &log, Words: report.GateWords{},
		Now: func() time.Time { return t0.Add(time.Duration(f.runner.runs()/2) * 10 * time.Second) }})
	if err != nil {
		t.Fatal(err)
	}
	ev := f.ev.String()
	if strings.Contains(ev, "pause") {
		t.Errorf("events %s: a duet gate paused or unpaused a stack", ev)
	}
	if strings.Count(ev, "run base") != 3 || strings.Count(ev, "run head") != 3 || !strings.HasSuffix(ev, "down base; down head; worktrees removed") {
		t.Errorf("events %s: want 3 runs a side, then both torn down", ev)
	}
	if len(f.runner.specs) != 6 {
		t.Fatalf("%d runs, want 6", len(f.runner.specs))
	}
	starts := map[int]map[string]time.Time{}
	for _, sp := range f.runner.specs {
		n := sp.Round.Number
		if starts[n] == nil {
			starts[n] = map[string]time.Time{}
		}
		starts[n][sp.Side] = sp.StartAt
		// The side launched first (base in odd rounds, head in even
		// ones) draws no progress line, the other one does.
		if launchedFirst := map[bool]string{true: "base", false: "head"}[n%2 == 1]; sp.NoProgress != (sp.Side == launchedFirst) {
			t.Errorf("round %d %s: NoProgress %v, want one progress line, the side launched second's (%s launched first)", n, sp.Side, sp.NoProgress, launchedFirst)
		}
	}
	for n := 1; n <= 3; n++ {
		b, h := starts[n]["base"], starts[n]["head"]
		want := t0.Add(time.Duration(n-1) * 10 * time.Second).Add(250 * time.Millisecond)
		if b.IsZero() || !b.Equal(h) || !b.Equal(want) {
			t.Errorf("round %d: starts base %s head %s, want both %s (the clock at the round + the lead)", n, b, h, want)
		}
	}
	for i := 0; i < 3; i++ {
		for _, r := range []*result.Result{gr.Base.Results[i], gr.Head.Results[i]} {
			if rd := r.Round; rd == nil || rd.Number != i+1 || rd.Mode != result.RoundDuet || rd.First || rd.OtherPaused {
				t.Errorf("round %d %s: %+v, want a duet round, neither first nor the other paused", i+1, r.Side, rd)
			}
		}
	}
	if gr.Verdict.Value == verdict.Unusable || gr.Verdict.Value == "" {
		t.Errorf("verdict %q, want a judgment", gr.Verdict.Value)
	}
	if !strings.Contains(log.String(), "round 2/3: base (b1) and head (h1) at the same instants (duet)") {
		t.Errorf("log:\n%s", log.String())
	}
}

// A side that fails in a duet round cancels the other side's load at once
// (it does not run its schedule out), and the gate is unusable with the
// failing side's reason; the round's lone result is not kept.
func TestDuetFailingSideCancelsTheOther(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.cfg.Rounds, f.cfg.Duet = 2, true
	f.runner.block = func(ctx context.Context, spec rounds.RunSpec) error {
		if spec.Side == "head" {
			return errors.New("engine stalled")
		}
		select {
		case <-ctx.Done():
			f.ev.add("base cancelled: %v", context.Cause(ctx))
			return nil
		case <-time.After(time.Minute):
			return errors.New("base was not cancelled")
		}
	}
	gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner})
	if rounds.KindOf(err) != rounds.ErrUnusable || !strings.Contains(err.Error(), "duet round 1: head side: engine stalled") {
		t.Fatalf("err %v, want unusable naming head's failure", err)
	}
	if ev := f.ev.String(); !strings.Contains(ev, "base cancelled: the head side failed: engine stalled") || !strings.HasSuffix(ev, "down base; down head; worktrees removed") {
		t.Errorf("events %s: base not cancelled with head's cause, or not torn down", ev)
	}
	if len(gr.Base.Results) != 0 || len(gr.Head.Results) != 0 || gr.Base.Commit != "b1" || gr.Head.Commit != "h1" {
		t.Errorf("partial report base %+v head %+v: want the sides named, no unpaired result", gr.Base, gr.Head)
	}
}

// TestRegression_DuetFailedRoundLeftALoneResultAndAnOpenStatsFile: a
// failed duet round left the surviving side's result.json on disk (a
// result in no report), and the failing side's stats sampler was never
// stopped (its file left open). Neither is left now.
func TestRegression_DuetFailedRoundLeftALoneResultAndAnOpenStatsFile(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.cfg.Rounds, f.cfg.Duet = 2, true
	var mu sync.Mutex
	open := map[string]int{}
	f.stacks.sampled = func(side string) { mu.Lock(); open[side]++; mu.Unlock() }
	f.stacks.stopped = func(side string) { mu.Lock(); open[side]--; mu.Unlock() }
	f.runner.block = func(ctx context.Context, spec rounds.RunSpec) error {
		if spec.Side == "head" {
			return errors.New("engine stalled")
		}
		<-ctx.Done() // base runs on until head's failure stops it
		return nil
	}
	if _, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner}); rounds.KindOf(err) != rounds.ErrUnusable {
		t.Fatalf("err %v, want unusable", err)
	}
	for _, side := range []string{"base", "head"} {
		if _, err := os.Stat(filepath.Join(f.cfg.Out, side, "round-1", "result.json")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s/round-1/result.json: %v, want none (the round is not in the report)", side, err)
		}
	}
	if open["base"] != 0 || open["head"] != 0 {
		t.Errorf("samplers started and not stopped: %v, want none left", open)
	}
}

// A duet round's start is set once both sides are ready: both are
// prepared (samplers, counted reads) first, in the round's launch order
// (base first in odd rounds, head in even ones), and the common start is
// the clock after both plus the lead. Here preparing a side takes a
// second of the fake clock: a start taken before the sides were prepared
// would be 2 s early, and the side prepared second would start late.
func TestDuetStartsOnceBothSidesAreReady(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.cfg.Rounds, f.cfg.Duet = 3, true
	f.runner.block = together(time.Minute)
	var mu sync.Mutex
	prepared := 0
	f.stacks.sampled = func(side string) {
		mu.Lock()
		prepared++
		mu.Unlock()
		f.ev.add("prepare %s", side)
	}
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return t0.Add(time.Duration(prepared) * time.Second)
	}
	if _, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner, Now: now}); err != nil {
		t.Fatal(err)
	}
	for _, sp := range f.runner.specs {
		n := sp.Round.Number
		if want := t0.Add(time.Duration(2*n)*time.Second + 250*time.Millisecond); !sp.StartAt.Equal(want) {
			t.Errorf("round %d %s: start %s, want %s (after both sides' preparing, + the lead)", n, sp.Side, sp.StartAt.Format(time.TimeOnly+".000"), want.Format(time.TimeOnly+".000"))
		}
	}
	// Per round: both sides prepared, in the launch order, before either runs.
	var order []string
	for _, e := range strings.Split(f.ev.String(), "; ") {
		if strings.HasPrefix(e, "prepare ") || strings.HasPrefix(e, "run ") {
			order = append(order, e)
		}
	}
	if len(order) != 12 {
		t.Fatalf("prepares and runs %q, want 4 a round", order)
	}
	want := []string{"prepare base", "prepare head", "prepare head", "prepare base", "prepare base", "prepare head"}
	for r := 0; r < 3; r++ {
		got := order[4*r : 4*r+4]
		if got[0] != want[2*r] || got[1] != want[2*r+1] || !strings.HasPrefix(got[2], "run ") || !strings.HasPrefix(got[3], "run ") {
			t.Errorf("round %d: %q, want %q then both runs", r+1, got, want[2*r:2*r+2])
		}
	}
}

// In a duet one process runs both sides' engines, so the generator's own
// figures in each side's result are both sides' together: every duet
// result, and its result.json, says so in not_measured; a one-side-at-a-
// time round's result does not.
func TestDuetResultsSayTheGeneratorFigureIsBothSides(t *testing.T) {
	for _, duet := range []bool{false, true} {
		f := newFixture(t, scenarioWithStack)
		f.cfg.Rounds, f.cfg.Duet = 2, duet
		f.stacks.generator = true
		gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range append(append([]*result.Result(nil), gr.Base.Results...), gr.Head.Results...) {
			onDisk, err := result.ReadFile(filepath.Join(f.cfg.Out, r.Side, fmt.Sprintf("round-%d", r.Round.Number), "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			for where, nm := range map[string][]string{"result": r.NotMeasured, "result.json": onDisk.NotMeasured} {
				if got := slices.Contains(nm, result.DuetGeneratorNotMeasured); got != duet {
					t.Errorf("duet %v, result %d (%s), %s: says the generator figure is both sides' %v; not_measured %q", duet, i, r.Side, where, got, nm)
				}
			}
		}
	}
}

// A noise calibration is of rounds run one side at a time: a duet gate
// does not use it, and says so.
func TestDuetDoesNotUseAnABBACalibration(t *testing.T) {
	noise := fakeCalibration(t)
	for _, duet := range []bool{false, true} {
		f := newFixture(t, scenarioWithStack)
		f.cfg.Rounds, f.cfg.Duet = 2, duet
		f.repo.files["b1"]["baselines/demo-api/noise.json"] = noise
		var log strings.Builder
		gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner, Log: &log, Words: report.GateWords{}})
		if err != nil {
			t.Fatal(err)
		}
		used := strings.Contains(log.String(), "loadgate: noise calibration")
		noted := strings.Contains(strings.Join(report.NoteTexts(gr.Notes), "\n"), "the noise calibration baselines/demo-api/noise.json is of rounds that ran one side at a time: not used by a duet gate")
		if used == duet || noted != duet {
			t.Errorf("duet %v: calibration used %v, noted as unused %v", duet, used, noted)
		}
	}
}

// A round whose generator fell behind its schedule says so on the log as
// it ends, with the steal its host took, in a duet and in ABBA alike; a
// round on schedule says nothing more.
func TestRoundBehindScheduleIsLoggedAsItEnds(t *testing.T) {
	for _, duet := range []bool{true, false} {
		f := newFixture(t, scenarioWithStack)
		f.cfg.Rounds, f.cfg.Duet = 2, duet
		if duet {
			f.runner.block = together(time.Minute)
		}
		f.runner.editSide = func(side string, n int, r *result.Result) {
			r.Late = 0 // on schedule (the testdata result is behind)
			if side == "head" && r.Round != nil && r.Round.Number == 2 {
				r.Late = r.Offered / 10
				r.Steal = &result.Steal{WindowS: 10, Load: result.StealCores{CPUs: "1", StolenS: 0.7, Share: 0.07}}
			}
		}
		var log strings.Builder
		if _, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner, Log: &log, Words: report.GateWords{},
			LookupEnv: func(string) (string, bool) { return "", false }}); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(log.String(), "\n")
		var behind []string
		for _, l := range lines {
			if strings.Contains(l, "generator behind schedule") {
				behind = append(behind, l)
			}
		}
		if len(behind) != 1 || !strings.HasPrefix(behind[0], "loadgate: round 2: head: generator behind schedule: 10% of requests late") ||
			!strings.HasSuffix(behind[0], "the hypervisor took 7% of the generator's cores (steal)") {
			t.Errorf("duet %v: log lines on rounds behind: %q", duet, behind)
		}
	}
}
