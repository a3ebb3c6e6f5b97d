package rounds_test

import (
	"context"
	"errors"
	"fmt"
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
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/verdict"
)

// The fakes: a repository of directories, stacks that log what is done to
// them, a runner that returns a stored result. No Docker, no git.

// events is the log every fake writes to, in order.
type events struct {
	mu  sync.Mutex
	log []string
}

func (e *events) add(format string, a ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.log = append(e.log, fmt.Sprintf(format, a...))
}

func (e *events) String() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.log, "; ")
}

// fakeRepo: the working tree is root; each commit is a map of files that
// AddWorktree writes into a fresh directory.
type fakeRepo struct {
	t       *testing.T
	ev      *events
	root    string
	commits map[string]string            // ref → commit ("" is HEAD)
	files   map[string]map[string]string // commit → path → content
	dirty   bool
	addErr  error
	closed  bool
}

func (r *fakeRepo) Root() string { return r.root }
func (r *fakeRepo) Commit(_ context.Context, ref string) (string, error) {
	c, ok := r.commits[ref]
	if !ok {
		return "", fmt.Errorf("unknown revision %q", ref)
	}
	return c, nil
}
func (r *fakeRepo) Dirty(context.Context) bool { return r.dirty }
func (r *fakeRepo) AddWorktree(_ context.Context, name, commit string) (string, error) {
	r.ev.add("worktree %s %s", name, commit)
	if r.addErr != nil {
		return "", r.addErr
	}
	dir := filepath.Join(r.t.TempDir(), name)
	writeFiles(r.t, dir, r.files[commit])
	return dir, nil
}
func (r *fakeRepo) Close() error { r.closed = true; r.ev.add("worktrees removed"); return nil }

// fakeStacks brings up fakeStacks; upErr[side] fails that side's Up.
type fakeStacks struct {
	ev    *events
	specs []rounds.StackSpec
	upErr map[string]error
	// count, when set, is what the side's services counted in its n-th
	// (from 0) round; nil Counting: none read.
	count    func(side string, n int) *result.Counting
	countErr error // Count's error, every round
	// sampled, when set, is called on every Sample (before it returns),
	// and stopped on every stop the samplers are given; generator: the
	// stop fills the generator's own figures too.
	sampled, stopped func(side string)
	generator        bool
}

func (f *fakeStacks) Up(_ context.Context, sp rounds.StackSpec) (rounds.Stack, error) {
	f.ev.add("up %s", sp.Side)
	f.specs = append(f.specs, sp)
	if err := f.upErr[sp.Side]; err != nil {
		return nil, err
	}
	return &fakeStack{ev: f.ev, side: sp.Side, count: f.count, countErr: f.countErr, stacks: f}, nil
}

type fakeStack struct {
	ev       *events
	side     string
	count    func(side string, n int) *result.Counting
	countErr error
	rounds   int
	stacks   *fakeStacks
}

func (s *fakeStack) Count(context.Context, *scenario.Scenario) (rounds.Counter, error) {
	if s.countErr != nil {
		return nil, s.countErr
	}
	n := s.rounds
	s.rounds++
	return &fakeCounter{s: s, n: n}, nil
}

// fakeCounter writes the stack's count of round n into the result.
type fakeCounter struct {
	s *fakeStack
	n int
}

func (c *fakeCounter) Started() func(time.Time) { return nil }
func (c *fakeCounter) Finish(_ context.Context, res *result.Result) {
	if c.s.count != nil {
		res.Counting = c.s.count(c.s.side, c.n)
	}
}

func (s *fakeStack) Addr() string                  { return "10.0.0.1:8080" }
func (s *fakeStack) Pause(context.Context) error   { s.ev.add("pause %s", s.side); return nil }
func (s *fakeStack) Unpause(context.Context) error { s.ev.add("unpause %s", s.side); return nil }
func (s *fakeStack) Down() (time.Duration, error) {
	s.ev.add("down %s", s.side)
	return time.Millisecond, nil
}
func (s *fakeStack) Topology() result.Topology {
	return result.Topology{StackCPUs: "0", TargetPath: "container-network"}
}
func (s *fakeStack) Sample(context.Context, string, time.Duration) (func(time.Time), func(*result.Result) error, error) {
	f := s.stacks
	if f.sampled != nil {
		f.sampled(s.side)
	}
	return nil, func(r *result.Result) error {
		st := &result.Stack{}
		if f.generator {
			st.Generator = &result.Service{Name: "loadgate (generator)", Samples: 10, CPUAvgPct: 20}
		}
		r.Complete(result.After{Stack: st})
		if f.stopped != nil {
			f.stopped(s.side)
		}
		return nil
	}, nil
}

// fakeRunner returns testdata/result.json as the scenario's result; edit
// changes the n-th (from 0) result it returns. Safe for concurrent use (a
// duet gate runs both sides at once).
type fakeRunner struct {
	t  *testing.T
	ev *events
	n  int
	// specs are the RunSpecs it was given, in order.
	specs []rounds.RunSpec
	// block, when set, is called (outside the lock) before the result is
	// made; an error is returned as Run's.
	block func(ctx context.Context, spec rounds.RunSpec) error
	edit  func(n int, r *result.Result)
	// editSide, when set, is edit with the side ("base", "head") of the round.
	editSide func(side string, n int, r *result.Result)
	err      error
}

func (f *fakeRunner) Run(ctx context.Context, spec rounds.RunSpec) (*result.Result, error) {
	sc, dir := spec.Scenario, spec.Dir
	f.ev.add("run %s", filepath.Base(filepath.Dir(dir)))
	if f.block != nil {
		if err := f.block(ctx, spec); err != nil {
			return nil, err
		}
	}
	runnerMu.Lock()
	defer runnerMu.Unlock()
	f.specs = append(f.specs, spec)
	if f.err != nil {
		return nil, f.err
	}
	r, err := result.ReadFile("testdata/result.json")
	if err != nil {
		f.t.Fatal(err)
	}
	r.Scenario.Name, r.Scenario.Hash = sc.Name, sc.Hash
	// What load.Run copies from its Config into the result.
	r.Side, r.Commit, r.Target, r.Round, r.Topology = spec.Side, spec.Commit, spec.TargetLabel, spec.Round, spec.Topology
	if f.edit != nil {
		f.edit(f.n, r)
	}
	if f.editSide != nil {
		f.editSide(filepath.Base(filepath.Dir(dir)), f.n, r)
	}
	f.n++
	return r, nil
}

// runnerMu guards every fakeRunner (a value some tests copy, so the lock
// is not in it).
var runnerMu sync.Mutex

// runs is how many results the runner has returned.
func (f *fakeRunner) runs() int {
	runnerMu.Lock()
	defer runnerMu.Unlock()
	return f.n
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const scenarioWithStack = `
name: demo-api
phases:
  - {name: sustain, rate: 10, duration: 1s}
  - {name: recover, rate: 10, duration: 1s}
stack:
  compose: [compose.yaml]
  target: api:8080
  prepare: [./build.sh]
workloads:
  - {name: api_read, share: 9, http: {path: /}, thresholds: {p95: 300ms}}
  - {name: ingest, share: 1, http: {method: POST, path: /d}}
`

// noStack is a scenario without a stack: section (plain-mode scenarios).
const noStack = `
name: demo-api
phases:
  - {name: sustain, rate: 10, duration: 1s}
workloads:
  - {name: api_read, http: {path: /}}
`

type fixture struct {
	ev     *events
	repo   *fakeRepo
	stacks *fakeStacks
	runner *fakeRunner
	cfg    rounds.Config
}

// newFixture: base is commit b1 (ref main), head the working tree (commit
// h1); both hold scenario as load/scenario.yaml beside a compose file.
func newFixture(t *testing.T, scenarioBody string) *fixture {
	ev := &events{}
	files := map[string]string{"load/scenario.yaml": scenarioBody, "load/compose.yaml": "services: {}\n", "load/build.sh": "#!/bin/sh\n"}
	root := filepath.Join(t.TempDir(), "repo")
	writeFiles(t, root, files)
	f := &fixture{
		ev:     ev,
		repo:   &fakeRepo{t: t, ev: ev, root: root, commits: map[string]string{"": "h1", "main": "b1"}, files: map[string]map[string]string{"b1": files}},
		stacks: &fakeStacks{ev: ev},
		runner: &fakeRunner{t: t, ev: ev},
		cfg:    rounds.Config{Scenario: "load/scenario.yaml", Base: "main", Rounds: 2, Out: t.TempDir()},
	}
	return f
}

func (f *fixture) run(t *testing.T) (rounds.Config, error, string) {
	t.Helper()
	var log strings.Builder
	_, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner, LookupEnv: func(string) (string, bool) { return "", false }, Log: &log, Words: report.GateWords{}})
	return f.cfg, err, log.String()
}

func TestOrderIsABBA(t *testing.T) {
	a, b := &rounds.Side{Name: "A"}, &rounds.Side{Name: "B"}
	var got []string
	for i := 0; i < 4; i++ {
		p := rounds.Order(i, a, b)
		got = append(got, p[0].Name, p[1].Name)
	}
	if s := strings.Join(got, " "); s != "A B B A A B B A" {
		t.Errorf("rounds run %s, want A B B A A B B A", s)
	}
}

// The whole gate against fakes: each side checked out and brought up once,
// paused at once; rounds in ABBA order, only the running side unpaused;
// everything torn down and removed; a verdict from verdict.Gate.
func TestGateRunsABBARoundsWithTheIdleSidePaused(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.cfg.Rounds = 3
	gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner})
	if err != nil {
		t.Fatal(err)
	}
	want := "worktree base b1; up base; pause base; up head; pause head; " +
		"unpause base; run base; pause base; unpause head; run head; pause head; " +
		"unpause head; run head; pause head; unpause base; run base; pause base; " +
		"unpause base; run base; pause base; unpause head; run head; pause head; " +
		"down base; down head; worktrees removed"
	if got := f.ev.String(); got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
	if gr.Verdict.Value == verdict.Unusable || gr.Verdict.Value == "" {
		t.Errorf("verdict %q (%v), want a judgment", gr.Verdict.Value, gr.Verdict.Notes)
	}
	if len(gr.Base.Results) != 3 || len(gr.Head.Results) != 3 || gr.Base.Commit != "b1" || gr.Head.Commit != "h1" || gr.Scenario.Name != "demo-api" {
		t.Errorf("report sides %+v / %+v, scenario %+v", gr.Base, gr.Head, gr.Scenario)
	}
	for _, r := range gr.Head.Results {
		if r.Side != "head" || r.Commit != "h1" || r.Target != "api:8080 (10.0.0.1:8080)" || r.Topology.StackCPUs != "0" {
			t.Errorf("head result side %q commit %q target %q stack cpus %q", r.Side, r.Commit, r.Target, r.Topology.StackCPUs)
		}
	}
	// Each result records its round and order (ABBA: base first in rounds
	// 1 and 3, head in round 2) and that the other side was paused.
	for i := 0; i < 3; i++ {
		b, h := gr.Base.Results[i].Round, gr.Head.Results[i].Round
		if b == nil || h == nil || b.Number != i+1 || h.Number != i+1 || b.First != (i%2 == 0) || h.First == b.First || !b.OtherPaused || !h.OtherPaused {
			t.Errorf("round %d: base %+v head %+v, want number %d, base first %v, other paused", i+1, b, h, i+1, i%2 == 0)
		}
	}
	for _, p := range []string{"base/round-1/result.json", "head/round-3/result.json"} {
		if _, err := os.Stat(filepath.Join(f.cfg.Out, p)); err != nil {
			t.Errorf("OUT/%s: %v", p, err)
		}
	}
	// Each side's stack from its own checkout: compose files and prepare.
	for _, sp := range f.stacks.specs {
		root := f.repo.root
		if sp.Side == "base" {
			root = filepath.Dir(filepath.Dir(sp.Files[0]))
		}
		if sp.Files[0] != filepath.Join(root, "load", "compose.yaml") || sp.PrepareDir != filepath.Join(root, "load") || sp.Target != "api:8080" {
			t.Errorf("%s side: files %v, prepare in %s, target %s: not its own checkout (%s)", sp.Side, sp.Files, sp.PrepareDir, sp.Target, root)
		}
	}
	if f.stacks.specs[0].Files[0] == f.stacks.specs[1].Files[0] {
		t.Errorf("both sides use %s", f.stacks.specs[0].Files[0])
	}
	// Each side's prepare box hides the other side's checkout, the results
	// and the repository's git config (issue 33).
	for i, sp := range f.stacks.specs[:2] {
		other := filepath.Dir(filepath.Dir(f.stacks.specs[1-i].Files[0]))
		for _, want := range []string{other, f.cfg.Out, filepath.Join(f.repo.root, ".git", "config")} {
			if !slices.Contains(sp.PrepareHide, want) {
				t.Errorf("%s side's prepare hides %q, not %s", sp.Side, sp.PrepareHide, want)
			}
		}
	}
}

// Regression (issue 9): `gate --compose c.yaml --base HEAD` with a scenario
// that has no stack: section dereferenced the nil scenario stack (SIGSEGV
// before any Docker call). Without a target it is now a usage error naming
// what is missing, before any stack or checkout is touched beyond the
// sides; with --target it runs, each side on its own copy of c.yaml.
func TestRegression_ComposeWithoutStackSection(t *testing.T) {
	f := newFixture(t, noStack)
	f.cfg.Compose = []string{"c.yaml"}
	_, err, _ := f.run(t)
	if !errors.Is(err, rounds.ErrUsage) || !strings.Contains(err.Error(), "--target") {
		t.Fatalf("err %v, want a usage error asking for --target", err)
	}
	if len(f.stacks.specs) != 0 || !f.repo.closed {
		t.Errorf("stacks %v brought up, worktrees removed %v", f.stacks.specs, f.repo.closed)
	}

	f = newFixture(t, noStack)
	f.cfg.Compose, f.cfg.Target = []string{"c.yaml"}, "api:8080"
	if _, err, _ := f.run(t); err != nil {
		t.Fatal(err)
	}
	if len(f.stacks.specs) != 2 {
		t.Fatalf("specs %+v", f.stacks.specs)
	}
	for _, sp := range f.stacks.specs {
		if len(sp.Files) != 1 || filepath.Base(sp.Files[0]) != "c.yaml" || sp.Target != "api:8080" || len(sp.Prepare) != 0 {
			t.Errorf("%s side: %+v", sp.Side, sp)
		}
	}
	if f.stacks.specs[0].Files[0] == f.stacks.specs[1].Files[0] {
		t.Errorf("--compose c.yaml: both sides use %s, not their own checkout's", f.stacks.specs[0].Files[0])
	}

	// No stack: section and no --compose: refused as before.
	f = newFixture(t, noStack)
	if _, err, _ := f.run(t); !errors.Is(err, rounds.ErrUsage) || !strings.Contains(err.Error(), "no stack: section") {
		t.Errorf("err %v", err)
	}
}

// A side whose stack does not come up makes the gate unusable; the report
// still names the scenario, both sides and their commits, and what came
// up is torn down.
func TestUnusableGateStillNamesScenarioSidesAndCommits(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.stacks.upErr = map[string]error{"head": errors.New("Cannot connect to the Docker daemon")}
	gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner})
	if !errors.Is(err, rounds.ErrUnusable) || !strings.Contains(err.Error(), "head side (h1) is unusable") {
		t.Fatalf("err %v, want unusable naming the head side", err)
	}
	if gr.Scenario.Name != "demo-api" || gr.Scenario.Hash == "" || gr.Scenario.File != "load/scenario.yaml" ||
		gr.Base.Name != "base" || gr.Base.Commit != "b1" || gr.Base.Ref != "main" ||
		gr.Head.Name != "head" || gr.Head.Commit != "h1" || gr.Rounds != 2 {
		t.Errorf("partial report %+v / %+v / %+v", gr.Scenario, gr.Base, gr.Head)
	}
	if ev := f.ev.String(); !strings.HasSuffix(ev, "down base; worktrees removed") || strings.Contains(ev, "run ") {
		t.Errorf("events %s: base not torn down, or a round ran", ev)
	}
}

// A refused target (a usage error from Stacks) stays a usage error.
func TestRefusedTargetIsUsage(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.stacks.upErr = map[string]error{"base": rounds.Usagef("target api:8080 is not allowed")}
	if _, err, _ := f.run(t); rounds.KindOf(err) != rounds.ErrUsage {
		t.Errorf("err %v (kind %v), want usage", err, rounds.KindOf(err))
	}
}

// A checkout that fails is unusable; a ref that is no commit is refused.
func TestCheckoutErrors(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.repo.addErr = errors.New("disk full")
	if _, err, _ := f.run(t); rounds.KindOf(err) != rounds.ErrUnusable || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("err %v, want unusable", err)
	}
	f = newFixture(t, scenarioWithStack)
	f.cfg.Base = "nope"
	if _, err, _ := f.run(t); rounds.KindOf(err) != rounds.ErrUsage || !strings.Contains(err.Error(), `"nope" is not a commit`) {
		t.Errorf("err %v, want usage", err)
	}
}

// An interrupted round ends the gate as unusable (a verdict, not an
// error); the interrupted side is not paused again, everything is torn
// down.
func TestInterruptedRoundIsAnUnusableVerdict(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.runner.edit = func(n int, r *result.Result) { r.Interrupted = n == 1 }
	gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner})
	if err != nil {
		t.Fatal(err)
	}
	if gr.Verdict.Value != verdict.Unusable || len(gr.Verdict.Notes) != 1 || gr.Verdict.Notes[0].Code != verdict.NoteGateInterrupted {
		t.Errorf("verdict %+v", gr.Verdict)
	}
	if ev := f.ev.String(); !strings.Contains(ev, "unpause head; run head; down base; down head") {
		t.Errorf("events %s", ev)
	}
}

// A runner error without a kind is unusable.
func TestRunnerErrorIsUnusable(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.runner.err = errors.New("engine stalled")
	if _, err, _ := f.run(t); rounds.KindOf(err) != rounds.ErrUnusable {
		t.Errorf("err %v, want unusable", err)
	}
}

// Results of different loads are never compared: a usage error.
func TestDifferentHashesAreRefused(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.runner.edit = func(n int, r *result.Result) {
		if n%2 == 1 {
			r.Scenario.Hash = "sha256:other"
		}
	}
	if _, err, _ := f.run(t); rounds.KindOf(err) != rounds.ErrUsage {
		t.Errorf("err %v, want usage (same load or no comparison)", err)
	}
}

// Against a stored baseline only head runs; the report shows the baseline
// once; a baseline of another load is refused.
func TestGateAgainstBaseline(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.cfg.Base, f.cfg.Against = "", "baseline:main"
	sc, err := scenario.Load(filepath.Join(f.repo.root, "load/scenario.yaml"), scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := result.ReadFile("testdata/result.json")
	if err != nil {
		t.Fatal(err)
	}
	b.Scenario.Name, b.Scenario.Hash, b.Commit = sc.Name, sc.Hash, "c0ffee"
	p := filepath.Join(f.repo.root, "baselines", sc.Name, "main.json")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := b.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner})
	if err != nil {
		t.Fatal(err)
	}
	if ev := f.ev.String(); strings.Contains(ev, "base") {
		t.Errorf("events %s: a base side ran against a baseline", ev)
	}
	if gr.Base.Name != "baseline" || len(gr.Base.Results) != 1 || gr.Base.Commit != "c0ffee" || len(gr.Head.Results) != 2 {
		t.Errorf("report base %+v head %d results", gr.Base, len(gr.Head.Results))
	}
	b.Scenario.Hash = "sha256:other"
	b.WriteFile(p)
	f = newFixture(t, scenarioWithStack)
	f.cfg.Base, f.cfg.Against = "", "baseline:main"
	writeFiles(t, f.repo.root, nil)
	os.MkdirAll(filepath.Join(f.repo.root, "baselines", sc.Name), 0o755)
	b.WriteFile(filepath.Join(f.repo.root, "baselines", sc.Name, "main.json"))
	if _, err, _ := f.run(t); rounds.KindOf(err) != rounds.ErrUsage || !strings.Contains(err.Error(), "same load or no comparison") {
		t.Errorf("err %v", err)
	}
}

func TestConfigRefusals(t *testing.T) {
	for _, c := range []struct {
		cfg  rounds.Config
		want string
	}{
		{rounds.Config{Rounds: 1}, "--scenario is required"},
		{rounds.Config{Scenario: "x", Rounds: 1}, "--base REF is required"},
		{rounds.Config{Scenario: "x", Base: "m"}, "--rounds must be at least 1"},
		{rounds.Config{Scenario: "x", Rounds: 1, Against: "nonsense"}, "--against must be base or baseline:NAME"},
		{rounds.Config{Scenario: "x", Rounds: 1, Against: "baseline:x", ScenarioFrom: "base"}, "--scenario-from base needs --base"},
		{rounds.Config{Scenario: "x", Rounds: 1, Base: "m", ScenarioFrom: "left"}, "--scenario-from must be head or base"},
	} {
		err := c.cfg.Validate()
		if !errors.Is(err, rounds.ErrUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want usage saying %q", c.cfg, err, c.want)
		}
	}
}

func TestKinds(t *testing.T) {
	if rounds.Usage(nil) != nil || rounds.Unusable(nil) != nil || rounds.KindOf(errors.New("x")) != nil {
		t.Error("nil or kindless")
	}
	inner := rounds.Usagef("refused")
	outer := rounds.Unusable(fmt.Errorf("side: %w", inner))
	if rounds.KindOf(outer) != rounds.ErrUnusable || rounds.KindOf(inner) != rounds.ErrUsage {
		t.Error("the outermost kind must win")
	}
	if !errors.Is(outer, rounds.ErrUnusable) || outer.Error() != "side: refused" {
		t.Errorf("%v", outer)
	}
}
