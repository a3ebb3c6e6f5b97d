package rounds_test

import (
	"context"
	"errors"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/scenario"
)

// recordingRunner remembers the scenario each round ran.
type recordingRunner struct {
	fakeRunner
	ran []*scenario.Scenario
}

func (r *recordingRunner) Run(ctx context.Context, sc *scenario.Scenario, env map[string]string, target *url.URL, dir string) (*result.Result, error) {
	r.ran = append(r.ran, sc)
	return r.fakeRunner.Run(ctx, sc, env, target, dir)
}

// head relaxes api_read's p95 threshold, raises its own ceilings and asks
// for a rate base's ceilings refuse.
var relaxed = strings.NewReplacer(
	"thresholds: {p95: 300ms}", "thresholds: {p95: 2s}",
	"{name: sustain, rate: 10, duration: 1s}", "{name: sustain, rate: 1000000000000, duration: 1s}",
	"name: demo-api\n", "name: demo-api\nceilings: {rate: 1e15}\n",
).Replace(scenarioWithStack)

// Issue 10: a pull request cannot loosen its own check. The gate runs
// base's scenario on both sides; head's relaxed threshold, raised ceiling
// and other load are shown, not applied.
func TestHeadScenarioCannotLoosenBase(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	writeFiles(t, f.repo.root, map[string]string{"load/scenario.yaml": relaxed})
	rr := &recordingRunner{fakeRunner: *f.runner}
	gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: rr})
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.ran) != 4 {
		t.Fatalf("%d rounds ran", len(rr.ran))
	}
	for _, sc := range rr.ran {
		if sc.Workloads[0].Thresholds.P95 != 300*time.Millisecond || sc.Phases[0].Rate != 10 || sc.Ceilings.Rate != scenario.DefaultCeilings().Rate {
			t.Errorf("ran p95 threshold %v, rate %v, ceilings.rate %v: not base's", sc.Workloads[0].Thresholds.P95, sc.Phases[0].Rate, sc.Ceilings.Rate)
		}
	}
	notes := strings.Join(gr.Notes, "\n")
	for _, want := range []string{
		"head changes p95 threshold of api_read 300ms → 2s: not applied",
		"head changes ceilings.rate 10000 → 1e+15 req/s: not applied",
		"head changes the load (scenario hash",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	for _, r := range append(gr.Base.Results, gr.Head.Results...) {
		if r.Scenario.Hash != rr.ran[0].Hash {
			t.Errorf("a %s result of another load", r.Side)
		}
	}
}

// --scenario-from head applies head's file, and the report warns that it is
// unsafe for a required check.
func TestScenarioFromHeadIsTheUnsafeOptIn(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	writeFiles(t, f.repo.root, map[string]string{"load/scenario.yaml": strings.Replace(scenarioWithStack, "p95: 300ms", "p95: 2s", 1)})
	f.cfg.ScenarioFrom = "head"
	rr := &recordingRunner{fakeRunner: *f.runner}
	gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: rr})
	if err != nil {
		t.Fatal(err)
	}
	if p := rr.ran[0].Workloads[0].Thresholds.P95; p != 2*time.Second {
		t.Errorf("p95 threshold %v, want head's 2s", p)
	}
	notes := strings.Join(gr.Notes, "\n")
	if !strings.Contains(notes, "unsafe for a required check") || !strings.Contains(notes, "300ms → 2s: applied (--scenario-from head)") {
		t.Errorf("notes:\n%s", notes)
	}
}

// A scenario base does not have is judged by head's file, and the report
// says so.
func TestScenarioNewInHead(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	delete(f.repo.files["b1"], "load/scenario.yaml")
	gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner})
	if err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(gr.Notes, "\n"); !strings.Contains(notes, "the scenario is new in head (base b1 has no load/scenario.yaml): judged by head's file") {
		t.Errorf("notes:\n%s", notes)
	}
	// base's stack still comes from base's own checkout.
	if sp := f.stacks.specs[0]; sp.Side != "base" || strings.HasPrefix(sp.Files[0], f.repo.root) {
		t.Errorf("base side's files %v", sp.Files)
	}
}

// Operator ceilings bound the scenario the gate runs: refused (exit 2)
// naming the flag, before any stack comes up.
func TestOperatorLimitsRefuseTheGate(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.cfg.Limits = scenario.OperatorLimits{Rate: 5}
	_, err, _ := f.run(t)
	if !errors.Is(err, rounds.ErrUsage) || !errors.Is(err, scenario.ErrCeiling) || !strings.Contains(err.Error(), "--max-rate 5") {
		t.Fatalf("err %v, want a usage error naming --max-rate", err)
	}
	if len(f.stacks.specs) != 0 {
		t.Errorf("stacks came up: %v", f.stacks.specs)
	}
	if !strings.Contains(err.Error(), filepath.Join("base", "load", "scenario.yaml")) {
		t.Errorf("err %v does not name base's file", err)
	}
}

func TestPolicyChangesAgree(t *testing.T) {
	sc, err := scenario.Parse([]byte(scenarioWithStack), "s.yaml", scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := rounds.PolicyChanges(sc, sc); len(c) != 0 {
		t.Errorf("the same scenario differs: %v", c)
	}
	h, err := scenario.Parse([]byte(strings.NewReplacer("{name: ingest, share: 1, http: {method: POST, path: /d}}", "{name: other, share: 1, http: {path: /o}, thresholds: {error_rate: 5%}}").Replace(scenarioWithStack)), "s.yaml", scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(rounds.PolicyChanges(sc, h), "\n")
	for _, want := range []string{"head adds workload other", "head removes workload ingest"} {
		if !strings.Contains(got, want) {
			t.Errorf("changes lack %q:\n%s", want, got)
		}
	}
}
