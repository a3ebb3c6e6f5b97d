package rounds_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/verdict"
)

// recordingRunner remembers the scenario each round ran.
type recordingRunner struct {
	fakeRunner
	ran []*scenario.Scenario
}

func (r *recordingRunner) Run(ctx context.Context, spec rounds.RunSpec) (*result.Result, error) {
	sc := spec.Scenario
	r.ran = append(r.ran, sc)
	return r.fakeRunner.Run(ctx, spec)
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
	notes := strings.Join(report.NoteTexts(gr.Notes), "\n")
	for _, want := range []string{
		"head changes p95 threshold of api_read 300 ms → " + report.MS(2000) + " ms: not applied",
		"head changes ceilings.rate " + report.Rate(10000) + " → " + report.Rate(1e15) + " req/s: not applied",
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
	notes := strings.Join(report.NoteTexts(gr.Notes), "\n")
	if !strings.Contains(notes, "unsafe for a required check") || !strings.Contains(notes, "300 ms → "+report.MS(2000)+" ms: applied (--scenario-from head)") {
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
	if notes := strings.Join(report.NoteTexts(gr.Notes), "\n"); !strings.Contains(notes, "the scenario is new in head (base b1 has no load/scenario.yaml): judged by head's file") {
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
	changes := rounds.PolicyChanges(sc, h)
	got := strings.Join(policyTexts(changes), "\n")
	for _, want := range []string{"head adds workload other", "head removes workload ingest"} {
		if !strings.Contains(got, want) {
			t.Errorf("changes lack %q:\n%s", want, got)
		}
	}
	for _, want := range []verdict.PolicyChange{
		{Kind: verdict.PolicyWorkloadAdded, Workload: "other"},
		{Kind: verdict.PolicyWorkloadRemoved, Workload: "ingest"},
	} {
		if !slices.ContainsFunc(changes, func(c verdict.PolicyChange) bool { return reflect.DeepEqual(c, want) }) {
			t.Errorf("changes lack %+v: %+v", want, changes)
		}
	}
}

// policyTexts is changes in the report's words.
func policyTexts(changes []verdict.PolicyChange) []string {
	out := make([]string, len(changes))
	for i, c := range changes {
		out[i] = report.PolicyText(c)
	}
	return out
}

// baselineJSON is testdata/result.json as a stored baseline of body's
// scenario, measured at commit.
func baselineJSON(t *testing.T, body, commit string) string {
	t.Helper()
	sc, err := scenario.Parse([]byte(body), "s.yaml", scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := result.ReadFile("testdata/result.json")
	if err != nil {
		t.Fatal(err)
	}
	b.Scenario.Name, b.Scenario.Hash, b.Commit = sc.Name, sc.Hash, commit
	p := filepath.Join(t.TempDir(), "b.json")
	if err := b.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

const baselineFile = "baselines/demo-api/main.json"

// Issue 10: against a stored baseline, the baseline is read from the base
// commit (--base), never from head's checkout: a head that replaced,
// removed or added the baseline does not set its own bar; base is checked
// out (its scenario and baseline read), never run.
func TestHeadBaselineNotApplied(t *testing.T) {
	for _, c := range []struct {
		name     string
		head     string // head's baselines/demo-api/main.json; "" none
		wantNote string
	}{
		{"replaced", "head's", "head changes baseline main (" + baselineFile + "): not applied (the baseline is base's)"},
		{"removed", "", "head removes baseline main (" + baselineFile + "): not applied"},
		{"same", "base's", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, scenarioWithStack)
			f.cfg.Against = "baseline:main"
			baseB := baselineJSON(t, scenarioWithStack, "base-measured")
			f.repo.files["b1"][baselineFile] = baseB
			switch c.head {
			case "head's":
				writeFiles(t, f.repo.root, map[string]string{baselineFile: baselineJSON(t, scenarioWithStack, "head-measured")})
			case "base's":
				writeFiles(t, f.repo.root, map[string]string{baselineFile: baseB})
			}
			gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner})
			if err != nil {
				t.Fatal(err)
			}
			if gr.Base.Name != "baseline" || gr.Base.Commit != "base-measured" {
				t.Errorf("baseline side %q measured at %q: not base's baseline", gr.Base.Name, gr.Base.Commit)
			}
			ev := f.ev.String()
			if !strings.Contains(ev, "worktree base b1") || strings.Contains(ev, "up base") || strings.Contains(ev, "run base") {
				t.Errorf("events %s: base must be checked out, never run", ev)
			}
			notes := strings.Join(report.NoteTexts(gr.Notes), "\n")
			if !strings.Contains(notes, "baseline main is base's: "+baselineFile+" at b1") {
				t.Errorf("notes do not say whose baseline:\n%s", notes)
			}
			if c.wantNote != "" && !strings.Contains(notes, c.wantNote) {
				t.Errorf("notes lack %q:\n%s", c.wantNote, notes)
			}
			if c.wantNote == "" && strings.Contains(notes, "not applied") {
				t.Errorf("an unchanged baseline is reported as changed:\n%s", notes)
			}
		})
	}
}

// A baseline that only head has is refused (exit 2), naming it: applying
// it would let the change judged set its own bar.
func TestHeadBaselineNewInHeadRefused(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.cfg.Against = "baseline:main"
	writeFiles(t, f.repo.root, map[string]string{baselineFile: baselineJSON(t, scenarioWithStack, "head-measured")})
	_, err, _ := f.run(t)
	if rounds.KindOf(err) != rounds.ErrUsage || !strings.Contains(err.Error(), "baseline main is new in head ("+baselineFile+"): not applied") {
		t.Fatalf("err %v, want a refusal naming head's new baseline", err)
	}
	if len(f.stacks.specs) != 0 {
		t.Errorf("stacks came up: %v", f.stacks.specs)
	}
}

// Against a baseline with --base, the scenario is base's too: head's
// relaxed threshold is shown, not applied (and the baseline of base's
// load matches).
func TestHeadScenarioAgainstBaselineIsBase(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.cfg.Against = "baseline:main"
	f.repo.files["b1"][baselineFile] = baselineJSON(t, scenarioWithStack, "base-measured")
	writeFiles(t, f.repo.root, map[string]string{"load/scenario.yaml": relaxed})
	rr := &recordingRunner{fakeRunner: *f.runner}
	gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: rr})
	if err != nil {
		t.Fatal(err)
	}
	if p := rr.ran[0].Workloads[0].Thresholds.P95; p != 300*time.Millisecond {
		t.Errorf("ran p95 threshold %v, want base's 300ms", p)
	}
	if notes := strings.Join(report.NoteTexts(gr.Notes), "\n"); !strings.Contains(notes, "head changes p95 threshold of api_read 300 ms → "+report.MS(2000)+" ms: not applied") {
		t.Errorf("notes:\n%s", notes)
	}
}

// Even with the unsafe --scenario-from head, head's raised ceilings cannot
// lift the operator's: the rate head asks for is refused, naming the flag.
func TestHeadCeilingsCannotRaiseOperatorLimits(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	writeFiles(t, f.repo.root, map[string]string{"load/scenario.yaml": relaxed})
	f.cfg.ScenarioFrom = "head"
	f.cfg.Limits = scenario.OperatorLimits{Rate: 1000}
	_, err, _ := f.run(t)
	if !errors.Is(err, scenario.ErrCeiling) || !strings.Contains(err.Error(), "above the operator's --max-rate 1") {
		t.Fatalf("err %v, want head's rate refused by --max-rate", err)
	}
	if len(f.stacks.specs) != 0 {
		t.Errorf("stacks came up: %v", f.stacks.specs)
	}
}

// Regression: PolicyChanges compared only the latency and error-rate
// thresholds and the ceilings: a head that loosened a WebSocket session
// threshold, a phase's recovery targets, a count or the injected faults
// was silent about it; and it wrote its numbers itself (%g%%, %v req/s).
func TestRegression_PolicyChangesMissesSessionRecoveryCountAndInject(t *testing.T) {
	count := func(metric string) *scenario.Count {
		sel, err := scenario.ParseSelector(metric)
		if err != nil {
			t.Fatal(err)
		}
		return &scenario.Count{Service: "api", Port: 9090, Path: "/metrics", Metric: sel}
	}
	mk := func() *scenario.Scenario {
		return &scenario.Scenario{Hash: "sha256:0123456789abcdef0123", Ceilings: scenario.DefaultCeilings(),
			Count: count("http_requests_total"),
			Workloads: []scenario.Workload{{Name: "chat", Count: count(`ws_sessions_total{route="/chat"}`),
				Thresholds: scenario.Thresholds{ErrorRate: 0.01, P99: 300 * time.Millisecond,
					FirstMessage: scenario.SessionThresholds{P95: 200 * time.Millisecond},
					Connect:      scenario.SessionThresholds{P99: 50 * time.Millisecond}}}},
			Phases: []scenario.Phase{{Name: "outage",
				Inject:   []scenario.Fault{{Action: scenario.FaultStop, Service: "api", At: 5 * time.Second, For: 3 * time.Second}},
				Recovery: &scenario.Recovery{Within: 10 * time.Second, ErrorRate: 0.01, P95: 500 * time.Millisecond}}},
		}
	}
	base := mk()
	if got := rounds.PolicyChanges(base, mk()); len(got) != 0 {
		t.Fatalf("equal scenarios: %+v", got)
	}
	head := mk()
	w := &head.Workloads[0]
	w.Thresholds.FirstMessage.P95 = 2 * time.Second
	w.Thresholds.Connect.P99 = 0
	w.Thresholds.ErrorRate = 0.5
	w.Count = nil
	head.Count = count(`http_requests_total{code="200"}`)
	head.Phases[0].Inject[0].Action = scenario.FaultPause
	head.Phases[0].Recovery.Within = time.Minute
	head.Phases[0].Recovery.ErrorRate = -1
	head.Phases[0].Recovery.P95 = 5 * time.Second
	head.Ceilings.Rate = 1e6
	head.Hash = "sha256:fedcba9876543210fedc"
	want := []string{
		"head changes first_message_p95 threshold of chat 200 ms → " + report.MS(2000) + " ms",
		"head changes connect_p99 threshold of chat " + report.MS(50) + " ms → none",
		"head changes error_rate threshold of chat " + report.Percent(0.01) + " → " + report.Percent(0.5),
		`head changes count of chat ws_sessions_total{route="/chat"} on api:9090/metrics → none`,
		`head changes count (every workload) http_requests_total on api:9090/metrics → http_requests_total{code="200"} on api:9090/metrics`,
		"head changes inject of phase outage [stop api at 5s for 3s] → [pause api at 5s for 3s]",
		"head changes recovery target of phase outage within 10s → 1m0s",
		"head changes recovery target of phase outage error_rate " + report.Percent(0.01) + " → none",
		"head changes p95 recovery target of phase outage 500 ms → " + report.MS(5000) + " ms",
		"head changes ceilings.rate " + report.Rate(scenario.DefaultCeilings().Rate) + " → " + report.Rate(1e6) + " req/s",
		"head changes the load (scenario hash " + result.ShortHash(base.Hash) + " → " + result.ShortHash(head.Hash) + ")",
	}
	changes := rounds.PolicyChanges(base, head)
	got := policyTexts(changes)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The change is data: the bar, where it is, and both sides' values.
	if c := (verdict.PolicyChange{Kind: verdict.PolicySession, Workload: "chat", Field: "first_message_p95",
		Base: verdict.PolicyValue{Duration: 200 * time.Millisecond}, Head: verdict.PolicyValue{Duration: 2 * time.Second}}); len(changes) == 0 || !reflect.DeepEqual(changes[0], c) {
		t.Errorf("first change %+v, want %+v", changes, c)
	}
	// A recovery added where base had none is one line with its targets.
	head = mk()
	base.Phases[0].Recovery = nil
	if got := policyTexts(rounds.PolicyChanges(base, head)); len(got) != 1 || got[0] != "head changes recovery of phase outage none → {within 10s, error_rate "+report.Percent(0.01)+", p95 500 ms}" {
		t.Errorf("recovery added: %q", got)
	}
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, body := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

const gateWorkflow = "on: pull_request\njobs:\n  g:\n    steps:\n      - uses: loadgate/loadgate@v1\n        with: {tolerance: '0.05', fail-on: regression}\n"

// Regression (issue 10's policy hole): on pull_request GitHub runs head's
// workflow file, so a pull request could set fail-on: never, loosen the
// tolerance or go back to `uses: ./`, and the gate said nothing and could
// pass. Head's workflow changes are now said, and the verdict is not a pass.
func TestRegression_HeadWorkflowLoosensItsOwnGate(t *testing.T) {
	base := writeTree(t, map[string]string{
		".github/workflows/load-gate.yml": gateWorkflow,
		".github/workflows/ci.yml":        "on: push\njobs: {t: {steps: [{run: go test ./...}]}}\n",
		".github/workflows/old-gate.yml":  "jobs: {g: {steps: [{run: loadgate gate --base main}]}}\n",
		"action.yml":                      "name: loadgate\nruns: {using: composite}\n",
	})
	head := writeTree(t, map[string]string{
		".github/workflows/load-gate.yml": strings.Replace(gateWorkflow, "fail-on: regression", "fail-on: never", 1),
		".github/workflows/ci.yml":        "on: push\njobs: {t: {steps: [{run: go vet ./...}]}}\n", // changed, runs no loadgate
		".github/workflows/self.yml":      "jobs:\n  g:\n    steps:\n      - uses: './'\n",
		"action.yml":                      "name: loadgate\nruns: {using: composite, steps: []}\n",
	})
	got := rounds.WorkflowChanges(base, head)
	var lines []string
	for _, c := range got {
		lines = append(lines, string(c.How)+" "+c.Path)
	}
	want := []string{
		"changes .github/workflows/load-gate.yml",
		"removes .github/workflows/old-gate.yml",
		"adds .github/workflows/self.yml",
		"changes action.yml",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("changes:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if len(rounds.WorkflowChanges(base, base)) != 0 {
		t.Errorf("a checkout against itself has changes")
	}

	gr := rounds.Outcome{Verdict: verdict.Verdict{Value: verdict.Pass, Notes: []verdict.Note{{Code: verdict.NoteFewRounds, Rounds: 1}}}, Notes: []verdict.Note{{Code: verdict.NoteHeadDirty}}}
	rounds.GuardWorkflows(&gr, got, false)
	if !strings.Contains(strings.Join(report.NoteTexts(gr.Notes), "\n"), "1 round(s): at least 3 are needed") {
		t.Errorf("the pass's own notes are lost: %q", report.NoteTexts(gr.Notes))
	}
	if gr.Verdict.Value != verdict.Unusable {
		t.Errorf("verdict %s, want unusable (exit 3 under every fail-on)", gr.Verdict.Value)
	}
	const sentence = "head changes .github/workflows/load-gate.yml: the inputs of this run come from the pull request's own workflow and may loosen it"
	if !strings.Contains(report.NoteText(gr.Notes[0]), sentence) || gr.Notes[len(gr.Notes)-1].Code != verdict.NoteHeadDirty {
		t.Errorf("notes: %q", report.NoteTexts(gr.Notes))
	}
	if why := report.NoteTexts(gr.Verdict.Notes); len(why) != 1 || !strings.Contains(why[0], "would have been pass") || !strings.Contains(why[0], ".github/workflows/load-gate.yml, ") {
		t.Errorf("reasons: %q", why)
	}
	// A regression is made unusable too: fail-on: never would pass it.
	gr = rounds.Outcome{Verdict: verdict.Verdict{Value: verdict.Regression}}
	rounds.GuardWorkflows(&gr, got, false)
	if gr.Verdict.Value != verdict.Unusable {
		t.Errorf("regression: verdict %s", gr.Verdict.Value)
	}
	// The explicit opt-in keeps the verdict, and still says so.
	gr = rounds.Outcome{Verdict: verdict.Verdict{Value: verdict.Pass}}
	rounds.GuardWorkflows(&gr, got, true)
	if gr.Verdict.Value != verdict.Pass || !strings.Contains(strings.Join(report.NoteTexts(gr.Notes), "\n"), sentence) {
		t.Errorf("opt-in: verdict %s, notes %q", gr.Verdict.Value, report.NoteTexts(gr.Notes))
	}
	// No change: nothing said, nothing changed.
	gr = rounds.Outcome{Verdict: verdict.Verdict{Value: verdict.Pass}}
	rounds.GuardWorkflows(&gr, nil, false)
	if gr.Verdict.Value != verdict.Pass || len(gr.Notes) != 0 {
		t.Errorf("no change: %+v", gr)
	}
}

// A workflow that cannot be compared (here: a directory of more files
// than the bound) is said, never taken as unchanged; a symlink is compared
// by its target's name, not followed.
func TestWorkflowChangesErrOnTheSideOfSaying(t *testing.T) {
	files := map[string]string{}
	for i := range rounds.MaxWorkflowFiles + 1 {
		files[fmt.Sprintf(".github/workflows/w%04d.yml", i)] = "x"
	}
	big := writeTree(t, files)
	small := writeTree(t, map[string]string{".github/workflows/w0000.yml": "x"})
	got := rounds.WorkflowChanges(small, big)
	if len(got) == 0 || got[0].How != verdict.WorkflowUnreadable || got[0].Err == nil || !strings.Contains(got[0].Err.Error(), "more than") {
		t.Fatalf("too many files: %+v", got)
	}
	const said = "WARNING: head may change .github/workflows (loadgate cannot compare it: more than"
	if s := report.NoteText(got[0].Note()); !strings.HasPrefix(s, said) {
		t.Errorf("the warning %q does not start %q", s, said)
	}
	a := writeTree(t, map[string]string{"x/a.yml": gateWorkflow, "x/b.yml": gateWorkflow + "#"})
	b := writeTree(t, map[string]string{"x/a.yml": gateWorkflow, "x/b.yml": gateWorkflow + "#"})
	for root, target := range map[string]string{a: "../../x/a.yml", b: "../../x/b.yml"} {
		if err := os.MkdirAll(filepath.Join(root, ".github/workflows"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(root, ".github/workflows/gate.yml")); err != nil {
			t.Fatal(err)
		}
	}
	if got := rounds.WorkflowChanges(a, b); len(got) != 1 || got[0].Path != ".github/workflows/gate.yml" || got[0].How != verdict.WorkflowChanges {
		t.Errorf("symlinks to different files: %+v", got)
	}
}

// A pull request's own workflow file runs on pull_request and chooses the
// gate's inputs: the gate found head's change to it and said nothing. With
// GuardWorkflows (the Action on pull_request) the verdict is unusable,
// naming the file; the operator's opt-in keeps the verdict, warning; a gate
// run outside a pull_request workflow is not guarded.
func TestRegression_GateIgnoresHeadWorkflowChange(t *testing.T) {
	for _, tc := range []struct {
		name          string
		guard, allow  bool
		wantUnusable  bool
		wantWarnNotes bool
	}{
		{"pull_request workflow: unusable", true, false, true, true},
		{"opt-in: warned, verdict kept", true, true, false, true},
		{"not a pull_request workflow: not guarded", false, false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, scenarioWithStack)
			f.repo.files["b1"][".github/workflows/load-gate.yml"] = gateWorkflow
			writeFiles(t, f.repo.root, map[string]string{".github/workflows/load-gate.yml": "jobs: {gate: {steps: [{uses: ./, with: {tolerance: 400%}}]}}\n# loadgate\n"})
			f.cfg.GuardWorkflows, f.cfg.AllowWorkflowChanges = tc.guard, tc.allow
			gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner})
			if err != nil {
				t.Fatal(err)
			}
			if got := gr.Verdict.Value == verdict.Unusable; got != tc.wantUnusable {
				t.Errorf("verdict %s, want unusable %v", gr.Verdict.Value, tc.wantUnusable)
			}
			// Unusable is decided before any stack is built (issue 48: the adopting
			// pull request waited ten minutes of rounds to learn it).
			if up := strings.Contains(f.ev.String(), "up "); tc.wantUnusable && up {
				t.Errorf("a stack was brought up for a gate its workflow change decides:\n%s", f.ev)
			}
			warned := strings.Contains(strings.Join(report.NoteTexts(gr.Notes), "\n"), ".github/workflows/load-gate.yml")
			if warned != tc.wantWarnNotes {
				t.Errorf("notes name the workflow: %v, want %v\nnotes: %q", warned, tc.wantWarnNotes, report.NoteTexts(gr.Notes))
			}
		})
	}
}

// Regression (issue 48): the pull request that adopts loadgate failed itself:
// adding the gate's workflow is a workflow change, so the verdict was
// unusable. Where base runs no gate there is nothing to loosen: the gate
// runs and its verdict stands, noted "not enforced yet".
func TestRegression_AdoptingPullRequestFailsItself(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.repo.files["b1"][".github/workflows/ci.yml"] = "on: push\njobs: {t: {steps: [{run: go test ./...}]}}\n"
	writeFiles(t, f.repo.root, map[string]string{".github/workflows/load-gate.yml": gateWorkflow})
	f.cfg.GuardWorkflows = true
	gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner})
	if err != nil {
		t.Fatal(err)
	}
	if gr.Verdict.Value == verdict.Unusable || gr.Rounds == 0 {
		t.Errorf("verdict %s after %d rounds, want the gate's own verdict", gr.Verdict.Value, gr.Rounds)
	}
	const said = "not enforced yet: this pull request adds the gate (.github/workflows/load-gate.yml)"
	if notes := report.NoteTexts(gr.Notes); len(notes) == 0 || !strings.HasPrefix(notes[0], said) {
		t.Errorf("notes %q, want first %q", notes, said)
	}
}

// Issue 48/45: the tolerance is a bar like the thresholds. Base's scenario
// sets it; head's file cannot loosen it, and an operator's flag or input (on
// a pull request, the change's own workflow) can only tighten it.
// Base spells it in a gate: block, head in the deprecated top-level keys.
func TestToleranceOnlyTightens(t *testing.T) {
	base := "name: demo-api\ngate: {tolerance: 5%, tolerance_floor: 100us}\n"
	f := newFixture(t, strings.Replace(scenarioWithStack, "name: demo-api\n", base, 1))
	writeFiles(t, f.repo.root, map[string]string{"load/scenario.yaml": strings.Replace(scenarioWithStack, "name: demo-api\n",
		"name: demo-api\ntolerance: 50%\ntolerance_floor: 900ms\n", 1)})
	f.cfg.Compare.Tolerance = 0.2 // looser than base's 5%: not applied
	f.cfg.Compare.ToleranceFloor, f.cfg.ToleranceFloorSet = 20*time.Microsecond, true
	gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner})
	if err != nil {
		t.Fatal(err)
	}
	if v := gr.Verdict; v.Tolerance != 0.05 || v.ToleranceFloorMs != 0.02 {
		t.Errorf("judged at tolerance %v, floor %v ms; want base's 5%% and the operator's tighter 0.02 ms", v.Tolerance, v.ToleranceFloorMs)
	}
	notes := strings.Join(report.NoteTexts(gr.Notes), "\n")
	for _, want := range []string{
		"head changes tolerance 5% → 50%: not applied",
		"head changes tolerance_floor 100µs → 900ms: not applied",
		"the operator's tolerance 20% is looser than base's scenario's 5%: not applied",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	tol, floor, _ := rounds.ResolveTolerance(&scenario.Scenario{}, 0, 0, false)
	if tol != verdict.DefaultTolerance || floor != verdict.DefaultToleranceFloor {
		t.Errorf("no scenario key, no operator: %v %v; want the defaults", tol, floor)
	}
	if tol, floor, notes := rounds.ResolveTolerance(&scenario.Scenario{}, 0.3, time.Millisecond, true); tol != 0.3 || floor != time.Millisecond || len(notes) != 0 {
		t.Errorf("no scenario key: the operator's %v %v (notes %v)", tol, floor, notes)
	}
}
