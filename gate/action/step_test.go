package action_test

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

// fakeGate is action.Gate: it returns what it is given, and records the
// inputs it was run with.
type fakeGate struct {
	gr   rounds.Outcome
	out  string
	err  error
	runs []action.Inputs
}

func (g *fakeGate) Run(_ context.Context, in action.Inputs) (rounds.Outcome, string, error) {
	g.runs = append(g.runs, in)
	return g.gr, g.out, g.err
}

const demoScenario = "name: demo-api\nphases: [{name: sustain, rate: 10, duration: 1s}]\nworkloads: [{name: a, http: {path: /}}]\n"

// stepHarness is one step on a pull_request event: the workspace dir holds
// scenario.yaml (its basename is not the scenario's name), the runner's
// environment has the inputs. rendered is what Reports was given.
type stepHarness struct {
	r        *runner
	step     action.Step
	rendered []rounds.Outcome
	stdout   bytes.Buffer
}

func newStep(t *testing.T, f *fakeGitHub, dir string, g action.Gate) *stepHarness {
	t.Helper()
	s := &stepHarness{r: newRunner(t, f, "pull_request", "pull_request-opened.json")}
	if dir == "" {
		dir = t.TempDir()
	}
	if _, err := os.Stat(filepath.Join(dir, "scenario.yaml")); err != nil {
		if err := os.WriteFile(filepath.Join(dir, "scenario.yaml"), []byte(demoScenario), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, v := range map[string]string{
		action.InScenario:   "scenario.yaml",
		action.InResultsDir: filepath.Join(s.r.dir, "results"),
	} {
		s.r.env[action.InputEnv(name)] = v
	}
	s.step = action.Step{
		Gate: g,
		Reports: func(out string, gr rounds.Outcome) ([]byte, error) {
			s.rendered = append(s.rendered, gr)
			var md bytes.Buffer
			if err := report.CompareMarkdown(&md, gr); err != nil {
				return nil, err
			}
			for _, f := range []string{"report.md", "comment.md"} {
				if err := os.WriteFile(filepath.Join(out, f), md.Bytes(), 0o644); err != nil {
					return nil, err
				}
			}
			return md.Bytes(), nil
		},
		Getenv:    s.r.getenv,
		LookupEnv: func(k string) (string, bool) { v, ok := s.r.env[k]; return v, ok },
		Stdout:    &s.stdout,
		Stderr:    &bytes.Buffer{},
		Dir:       dir,
	}
	return s
}

func (s *stepHarness) run(t *testing.T) action.StepResult {
	t.Helper()
	res, err := s.step.Run(context.Background())
	if err != nil {
		t.Fatalf("step: %v", err)
	}
	// The comment step, as action.yml runs it next: the token, the gate's
	// results-dir output.
	env := maps.Clone(s.r.env)
	env[action.InputEnv(action.InToken)] = token
	c, err := action.CommentStep(context.Background(), &s.stdout, func(k string) string { return env[k] }, s.r.outputs(t)[action.OutResultsDir])
	if err != nil {
		t.Fatalf("comment step: %v", err)
	}

	if res.Outcome != nil {
		res.Outcome.CommentAction, res.Outcome.CommentID = c.CommentAction, c.CommentID
	}
	return res
}

// Issue 10: on an unusable gate the marker was built from the scenario
// file's basename ("scenario" for scenario.yaml) instead of the scenario's
// name, so the unusable comment was a second one beside the verdict. The
// name is derived the same way for every outcome: one comment, edited.
func TestRegression_UnusableGateMarkerIsTheScenarioName(t *testing.T) {
	f := newFake(t)
	f.Login = "loadgate-ci"
	dir := t.TempDir()
	results := filepath.Join(t.TempDir(), "results")
	if err := os.MkdirAll(results, 0o755); err != nil {
		t.Fatal(err)
	}
	usable := &fakeGate{out: results, gr: rounds.Outcome{
		Head:    rounds.SideResults{Name: "head", Results: []*result.Result{{Scenario: result.Scenario{Name: "demo-api"}}}},
		Verdict: passing(),
	}}
	if res := newStep(t, f, dir, usable).run(t); res.Outcome.CommentAction != action.Created || res.ExitCode != 0 {
		t.Fatalf("usable gate: comment %q, exit %d; want created, 0", res.Outcome.CommentAction, res.ExitCode)
	}
	unusable := &fakeGate{err: rounds.Unusablef("gate: head side is unusable: compose up: no Docker engine")}
	res := newStep(t, f, dir, unusable).run(t)
	if res.ExitCode != 3 || res.Verdict.Value != verdict.Unusable {
		t.Errorf("unusable gate: exit %d, verdict %s; want 3, unusable", res.ExitCode, res.Verdict.Value)
	}
	if res.Outcome.CommentAction != action.Edited {
		t.Errorf("unusable gate: comment %q, want the verdict's comment edited", res.Outcome.CommentAction)
	}
	if ours := f.ours(prNum, "demo-api"); len(ours) != 1 || len(f.ours(prNum, "scenario")) != 0 {
		t.Errorf("%d comments with demo-api's marker, %d with the file's name; want one, none", len(ours), len(f.ours(prNum, "scenario")))
	}
}

// Issue 10: the unusable comment read "# loadgate gate: " with no name,
// scenario "", base and head "unknown", and "running?. Nothing". It now
// names the scenario, both commits and the reason, on one line.
func TestRegression_UnusableReportNamesScenarioCommitsReason(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git:", err)
	}
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		out, err := rounds.Git(context.Background(), dir, append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	git("init", "-q")
	if err := os.WriteFile(filepath.Join(dir, "scenario.yaml"), []byte(demoScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	git("commit", "-qm", "base")
	base := git("rev-parse", "HEAD")
	git("commit", "-qm", "head", "--allow-empty")
	head := git("rev-parse", "HEAD")

	g := &fakeGate{err: rounds.Unusable(errors.New("gate: head side (" + head[:12] + ") is unusable: compose up:\n  Cannot connect to the Docker daemon. Is the docker daemon running?\n"))}
	s := newStep(t, nil, dir, g) // no GitHub: no comment, the summary still written
	s.r.env[action.InputEnv(action.InBase)] = "HEAD~1"
	res := s.run(t)
	if len(s.rendered) != 1 {
		t.Fatalf("rendered %d reports, want 1", len(s.rendered))
	}
	gr := s.rendered[0]
	if gr.Scenario.Name != "demo-api" || gr.Scenario.File != "scenario.yaml" || gr.Head.Commit != head || gr.Base.Commit != base {
		t.Fatalf("completed %+v / %+v / %+v", gr.Scenario, gr.Base, gr.Head)
	}
	summary := s.r.read(t, s.r.summary)
	for _, want := range []string{"# loadgate gate: demo-api", "- **scenario** demo-api `", "`" + base[:12] + "`", "`" + head[:12] + "`", "Cannot connect to the Docker daemon"} {
		if !strings.Contains(summary, want) {
			t.Errorf("the unusable summary lacks %q:\n%s", want, summary)
		}
	}
	if strings.Contains(summary, "`unknown`") || strings.Contains(summary, "**scenario**  ") || strings.Contains(summary, "# loadgate gate: \n") {
		t.Errorf("the unusable summary still says unknown:\n%s", summary)
	}
	if r := res.Verdict.Notes[0].Detail; strings.Contains(r, "\n") || strings.HasSuffix(r, ".") {
		t.Errorf("reason %q: not one line without a final period", r)
	}
	if out := s.r.outputs(t); out[action.OutVerdict] != "unusable" || res.ExitCode != 3 {
		t.Errorf("verdict output %q, exit %d; want unusable, 3", out[action.OutVerdict], res.ExitCode)
	}
}

// fail-on never: a regression exits 0, and the report says the step's
// exit code is not the verdict's; the outputs still say fail.
func TestStepFailOnNeverSaysTheExitCode(t *testing.T) {
	g := &fakeGate{gr: rounds.Outcome{Scenario: result.Scenario{Name: "demo-api"}, Verdict: regressed()}}
	s := newStep(t, nil, "", g)
	s.r.env[action.InputEnv(action.InFailOn)] = "never"
	g.out = s.r.env[action.InputEnv(action.InResultsDir)]
	if err := os.MkdirAll(g.out, 0o755); err != nil {
		t.Fatal(err)
	}
	res := s.run(t)
	if res.ExitCode != 0 || res.FailOn != action.FailOnNever {
		t.Errorf("exit %d under fail-on %s, want 0 under never", res.ExitCode, res.FailOn)
	}
	if notes := strings.Join(report.NoteTexts(s.rendered[0].Notes), "\n"); !strings.Contains(notes, "fail-on never: this step exits 0, not the verdict's 1") {
		t.Errorf("the report's notes do not say the step's exit code: %q", notes)
	}
	if out := s.r.outputs(t); out[action.OutVerdict] != "fail" {
		t.Errorf("verdict output %q, want fail", out[action.OutVerdict])
	}
}

// A bad input is refused (exit 2) naming the input, annotated as an
// error, before the gate runs or anything is published; so is a gate
// that was refused.
func TestStepRefusesBeforePublishing(t *testing.T) {
	g := &fakeGate{}
	s := newStep(t, nil, "", g)
	s.r.env[action.InputEnv(action.InRounds)] = "many"
	_, err := s.step.Run(context.Background())
	if rounds.KindOf(err) != rounds.ErrUsage || !strings.Contains(err.Error(), action.InRounds) {
		t.Errorf("bad input: %v, want a refusal naming %q", err, action.InRounds)
	}
	if len(g.runs) != 0 {
		t.Error("the gate ran on bad inputs")
	}
	if !strings.Contains(s.stdout.String(), "::error") {
		t.Errorf("no error annotation:\n%s", s.stdout.String())
	}

	refused := &fakeGate{err: rounds.Usagef("gate: --scenario-from head is refused against a baseline")}
	s = newStep(t, nil, "", refused)
	_, err = s.step.Run(context.Background())
	if rounds.KindOf(err) != rounds.ErrUsage || len(s.rendered) != 0 {
		t.Errorf("refused gate: %v, %d reports rendered; want the refusal, none", err, len(s.rendered))
	}
	if summary := s.r.read(t, s.r.summary); summary != "" {
		t.Errorf("a refused gate published a summary:\n%s", summary)
	}
}

// The inputs the gate is run with are the resolved ones: the base is the
// pull request's base commit when the base input is empty.
func TestStepRunsTheGateWithResolvedInputs(t *testing.T) {
	g := &fakeGate{gr: rounds.Outcome{Scenario: result.Scenario{Name: "demo-api"}, Verdict: passing()}}
	s := newStep(t, nil, "", g)
	g.out = s.r.env[action.InputEnv(action.InResultsDir)]
	os.MkdirAll(g.out, 0o755)
	s.run(t)
	if len(g.runs) != 1 || g.runs[0].Base != "f95f852bd8fca8fcc58a9a2d6c842781e32a215e" || !g.runs[0].GuardWorkflows {
		t.Errorf("gate run with %+v, want the event's base commit and the workflow guard", g.runs)
	}
}

// Issue 33: actions/checkout's default persist-credentials keeps the token
// in the checkout's git config, where head's stack.prepare and Docker
// builds can read it. The gate step says so, naming the key, never the
// value; also when the header sits in a file the config includes (as
// newer checkouts write it).
func TestPersistedCredentialsWarned(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git:", err)
	}
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := rounds.Git(ctx, dir, "init", "-q"); err != nil {
		t.Fatal(err)
	}
	if got := action.PersistedCredentials(ctx, dir); len(got) != 0 {
		t.Fatalf("a fresh repository: %v", got)
	}
	const secret = "AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzX3NlY3JldA=="
	inc := filepath.Join(t.TempDir(), "credentials.gitconfig")
	if err := os.WriteFile(inc, []byte("[http \"https://github.com/\"]\n\textraheader = "+secret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := rounds.Git(ctx, dir, "config", "include.path", inc); err != nil {
		t.Fatal(err)
	}
	if got := action.PersistedCredentials(ctx, dir); len(got) != 1 || got[0] != "http.https://github.com/.extraheader" {
		t.Fatalf("an included header: %v", got)
	}
	results := filepath.Join(t.TempDir(), "results")
	if err := os.MkdirAll(results, 0o755); err != nil {
		t.Fatal(err)
	}
	g := &fakeGate{out: results, gr: rounds.Outcome{Verdict: passing()}}
	s := newStep(t, nil, dir, g)
	s.run(t)
	out := s.stdout.String()
	if !strings.Contains(out, "::warning::loadgate: the checkout keeps a token in its git config (http.https://github.com/.extraheader)") {
		t.Errorf("no warning:\n%s", out)
	}
	if strings.Contains(out, "eC1hY2Nlc3Mt") {
		t.Error("the header's value was printed")
	}
}
