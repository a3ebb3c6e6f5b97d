package actrunner_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/actrunner"
	"github.com/loadgate/loadgate/internal/enginetest"
	"github.com/loadgate/loadgate/internal/githubfake"
	"github.com/loadgate/loadgate/internal/mdtext"
	"github.com/loadgate/loadgate/internal/testtier"
)

// The user's repository in these scenarios: this checkout (for the demo
// stack), testdata/api.yaml as load/api.yaml, and the example workflows
// of the docs as its .github/workflows; loadgate/loadgate@v1 is this
// checkout's action as committed there (no release: the binary step
// builds it with go build).
const userRepoName = "loadgate-e2e/app"

// Each act run is bounded by this; the e2e runs all together by make e2e's.
const runTimeout = 12 * time.Minute

var tools *actrunner.Tools

// setup skips outside the e2e tier and without Docker, builds act and
// fetches the actions once, and fails t when a run left a stack behind.
func setup(t *testing.T) context.Context {
	t.Helper()
	testtier.Require(t, testtier.E2E)
	enginetest.Require(t, "the workflow runs on act")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	t.Cleanup(cancel)
	if tools == nil {
		cache, err := actrunner.CacheDir()
		if err != nil {
			t.Fatal(err)
		}
		if tools, err = actrunner.Prepare(ctx, cache); err != nil {
			t.Fatal(err)
		}
	}
	before, err := actrunner.TakeSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		now, err := actrunner.TakeSnapshot(context.Background())
		if err != nil {
			t.Error(err)
			return
		}
		if left := before.Left(now); len(left) > 0 {
			t.Errorf("the run left Docker objects behind: %v", left)
		}
	})
	return ctx
}

type user struct {
	*actrunner.Repo
	base   string // main's commit
	action string // loadgate/loadgate@v1's code: the base commit's tree
	tmp    string
}

// newUser makes the user's repository, with main at its first commit.
func newUser(t *testing.T, ctx context.Context) *user {
	t.Helper()
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	r, err := actrunner.NewRepo(ctx, strings.TrimSpace(string(root)), filepath.Join(tmp, "repo"), userRepoName)
	if err != nil {
		t.Fatal(err)
	}
	scenario, err := os.ReadFile("testdata/api.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(r.Dir, ".github", "workflows")); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"load/api.yaml": string(scenario)}
	examples, _ := filepath.Glob(filepath.Join(r.Dir, "examples", "workflows", "*.yml"))
	for _, f := range examples {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Join(".github", "workflows", filepath.Base(f))] = string(b)
	}
	if err := r.Write(files); err != nil {
		t.Fatal(err)
	}
	u := &user{Repo: r, tmp: tmp, action: filepath.Join(tmp, "action")}
	if u.base, err = r.Commit(ctx, "the user's repository"); err != nil {
		t.Fatal(err)
	}
	if err := r.Export(ctx, u.base, u.action); err != nil {
		t.Fatal(err)
	}
	return u
}

// change commits files on a new branch off main and returns the commit.
func (u *user) change(t *testing.T, ctx context.Context, branch string, files map[string]string) string {
	t.Helper()
	if _, err := u.Git(ctx, "checkout", "-q", "-B", branch, u.base); err != nil {
		t.Fatal(err)
	}
	if err := u.Write(files); err != nil {
		t.Fatal(err)
	}
	sha, err := u.Commit(ctx, "change on "+branch)
	if err != nil {
		t.Fatal(err)
	}
	return sha
}

// run runs workflow on event with payload and logs what a reader of the
// test needs: the command's figures and the summary's first lines.
func (u *user) run(t *testing.T, ctx context.Context, api *actrunner.API, spec actrunner.Spec) *actrunner.Result {
	t.Helper()
	spec.Repo, spec.Timeout = u.Repo, runTimeout
	if spec.Uses == nil {
		spec.Uses = map[string]string{}
	}
	spec.Uses["loadgate/loadgate@v1"] = u.action
	res, err := tools.Run(ctx, u.tmp, spec, api)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("act %s -W %s: exit %d, job %s, %s; gate step exit %d, verdict %q",
		spec.Event, spec.Workflow, res.Exit, res.JobResult, res.Wall.Round(time.Second),
		res.StepExit["gate/gate"], res.Output("gate", "verdict"))
	t.Logf("summary (first lines):\n%s", firstLines(res.Summary, 6))
	var notes []string
	for _, kind := range []string{"::error", "::warning", "::notice"} {
		notes = append(notes, res.Grep(kind)...)
	}
	t.Logf("annotations:\n%s", strings.Join(notes, "\n"))
	if t.Failed() || testing.Verbose() {
		t.Logf("log:\n%s", lastLines(res.Log(), 60))
	}
	return res
}

func firstLines(s string, n int) string {
	l := strings.SplitN(strings.TrimSpace(s), "\n", n+1)
	return strings.Join(l[:min(n, len(l))], "\n")
}

func lastLines(s string, n int) string {
	l := strings.Split(s, "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

// stepOutput is output name of the one top-level step that set it.
func stepOutput(res *actrunner.Result, name string) string {
	for id, o := range res.Outputs {
		if v, ok := o[name]; ok && !strings.Contains(id, "/") {
			return v
		}
	}
	return ""
}

// The scenario the runs gate (testdata/api.yaml's name).
const scenarioName = "e2e-api"

// stored is pull request pr's comments as the API stored them, each logged
// with its first lines.
func stored(t *testing.T, api *actrunner.API, pr int) []*githubfake.Comment {
	t.Helper()
	cs := api.Comments(pr)
	for _, c := range cs {
		t.Logf("comment %d on #%d by %s (%s), stored (first lines):\n%s", c.ID, pr, c.User.Login, c.User.Type, firstLines(c.Body, 6))
	}
	return cs
}

// oneComment is pull request pr's only comment, by the workflow's token
// (github-actions[bot]), carrying the scenario's marker on its first line;
// it fails t when there is not exactly one.
func oneComment(t *testing.T, api *actrunner.API, pr int) *githubfake.Comment {
	t.Helper()
	cs := stored(t, api, pr)
	if len(cs) != 1 {
		t.Fatalf("#%d has %d comments, want 1 (requests: %v)", pr, len(cs), api.Requests())
	}
	c := cs[0]
	if c.User != (githubfake.User{Login: action.GitHubActionsBot, Type: "Bot"}) {
		t.Errorf("comment by %+v, want github-actions[bot], the workflow token's account", c.User)
	}
	if first, _, _ := strings.Cut(c.Body, "\n"); first != action.Marker(scenarioName) {
		t.Errorf("comment's first line %q, want the marker %q", first, action.Marker(scenarioName))
	}
	return c
}

// titled checks that body has the gate's title for verdict v ("# loadgate
// gate: e2e-api — PASS") and, after it, a bold headline.
func titled(t *testing.T, body, v string) {
	t.Helper()
	title := "# loadgate gate: " + scenarioName + " — " + action.VerdictWord(verdict.Value(v))
	_, after, ok := strings.Cut(body, "\n"+title+"\n")
	if !ok {
		t.Errorf("the comment has no title %q:\n%s", title, firstLines(body, 8))
		return
	}
	if !strings.HasPrefix(strings.TrimLeft(after, "\n"), "**") {
		t.Errorf("no bold headline after the title:\n%s", firstLines(after, 4))
	}
}

// TestQuickStartPullRequest: the README's quick start
// (examples/workflows/load-gate.yml) on pull request #7, pushed twice,
// against an API that stores the comment:
//
//  1. a head that changes no code the stack runs passes the required check
//     and creates the comment (title with the verdict, bold headline); with
//     no release of the action, the binary step builds loadgate;
//  2. the same pull request pushed again, its head now making the demo's
//     backend slower (20 → 40 ms a profile), fails the check naming the
//     workload, and the one comment is edited to say so, not duplicated.
func TestQuickStartPullRequest(t *testing.T) {
	ctx := setup(t)
	u := newUser(t, ctx)
	const pr = 7
	head := u.change(t, ctx, "feature", map[string]string{"NOTES.md": "a change the stack does not run\n"})
	payload, err := actrunner.PullRequestPayload(actrunner.PR{Number: pr, Repo: userRepoName,
		BaseRef: "main", HeadRef: "feature", BaseSHA: u.base, HeadSHA: head})
	if err != nil {
		t.Fatal(err)
	}
	api := actrunner.NewAPI(userRepoName)
	defer api.Close()
	res := u.run(t, ctx, api, actrunner.Spec{Workflow: ".github/workflows/load-gate.yml", Event: "pull_request", Payload: payload})

	if res.Exit != 0 || res.JobResult != "success" {
		t.Errorf("job: act exit %d, %q; want 0, success", res.Exit, res.JobResult)
	}
	v := res.Output("gate", "verdict")
	if !slices.Contains([]string{"pass", "inconclusive"}, v) {
		t.Errorf("verdict %q, want pass (or inconclusive: neither fails the check)", v)
	}
	if !strings.Contains(res.Summary, "# loadgate gate: ") || !strings.Contains(res.Summary, "\n\n**") {
		t.Errorf("job summary has no loadgate title and headline:\n%s", firstLines(res.Summary, 20))
	}
	// The binary step, release absent: the release list was asked, and
	// the binary built from the action's source.
	if !slices.ContainsFunc(api.Requests(), func(r string) bool {
		return strings.HasPrefix(r, "GET /api/v3/repos/loadgate/loadgate/releases?")
	}) {
		t.Errorf("the binary step never asked for the releases: %v", api.Requests())
	}
	if len(res.Grep("::warning title=loadgate::ref v1: no release of this repository matches it: building")) != 1 {
		t.Errorf("the binary step does not say that v1 has no release: %v", res.Grep("title=loadgate::ref"))
	}
	if got := res.Output("gate/bin", "verify"); got != "source" {
		t.Errorf("binary step verify=%q, want source (no release: built)", got)
	}
	if len(res.Grep("loadgate built from")) == 0 {
		t.Errorf("no go build of loadgate in the log")
	}
	if b := res.Output("gate", "binary"); b == "" {
		t.Errorf("no binary output")
	}
	noTokenInGateStep(t, res)
	// The comment, read back from the server.
	c := oneComment(t, api, pr)
	titled(t, c.Body, v)
	if !strings.Contains(c.Body, result.ShortHash(head)) {
		t.Errorf("the comment does not name the head commit %s", result.ShortHash(head))
	}
	id, body1 := c.ID, c.Body
	if len(res.Grep(fmt.Sprintf("loadgate: created comment %d on #%d", id, pr))) != 1 {
		t.Errorf("the comment step does not log the comment it created: %v", res.Grep("comment"))
	}

	// Pushed again: the head now slows the backend down.
	const cf = "examples/demo/compose.yaml"
	b, err := os.ReadFile(filepath.Join(u.Dir, cf))
	if err != nil {
		t.Fatal(err)
	}
	const from, to = "${DEMO_DELAY_MS:-20}ms", "${DEMO_DELAY_MS:-40}ms"
	if !strings.Contains(string(b), from) {
		t.Fatalf("%s has no %s", cf, from)
	}
	if err := u.Write(map[string]string{cf: strings.Replace(string(b), from, to, 1)}); err != nil {
		t.Fatal(err)
	}
	head2, err := u.Commit(ctx, "slower, pushed to feature")
	if err != nil {
		t.Fatal(err)
	}
	payload, err = actrunner.PullRequestPayload(actrunner.PR{Number: pr, Repo: userRepoName, Action: "synchronize",
		BaseRef: "main", HeadRef: "feature", BaseSHA: u.base, HeadSHA: head2})
	if err != nil {
		t.Fatal(err)
	}
	res = u.run(t, ctx, api, actrunner.Spec{Workflow: ".github/workflows/load-gate.yml", Event: "pull_request", Payload: payload})
	v = res.Output("gate", "verdict")
	// The comment is the same one, edited, whatever the verdict.
	c = oneComment(t, api, pr)
	if c.ID != id || !slices.Equal(api.Edited(), []int64{id}) || api.Count("POST") != 1 {
		t.Errorf("comment %d, edits %v, %d POSTs; want comment %d edited once and no second POST", c.ID, api.Edited(), api.Count("POST"), id)
	}
	if c.Body == body1 || !strings.Contains(c.Body, result.ShortHash(head2)) {
		t.Errorf("the edited comment does not name the new head %s:\n%s", result.ShortHash(head2), lastLines(c.Body, 3))
	}
	titled(t, c.Body, v)
	if len(res.Grep(fmt.Sprintf("loadgate: edited comment %d on #%d", id, pr))) != 1 {
		t.Errorf("the comment step does not log the edit: %v", res.Grep("comment"))
	}
	if v == "inconclusive" && strings.Contains(res.Summary, "generator fell behind its schedule") {
		// The gate rightly calls nothing on such rounds (a loaded machine).
		t.Skipf("the generator fell behind its schedule on this machine: inconclusive, as designed; no regression to check")
	}
	// The regression fails the required check, and the comment says so.
	if v != "regression" || res.JobResult != "failure" || res.StepExit["gate/gate"] != 1 {
		t.Errorf("verdict %q, job %q, gate step exit %d; want regression, failure, 1", v, res.JobResult, res.StepExit["gate/gate"])
	}
	if r := res.Output("gate", "regressions"); !strings.Contains(r, "profile") {
		t.Errorf("regressions output %q does not name profile", r)
	}
	if !strings.Contains(c.Body, "profile") {
		t.Errorf("the comment does not name the regressed workload profile")
	}
}

// TestManualDispatchWithoutInputs: load-gate-manual.yml dispatched with no
// inputs (the defaults) gates the branch against the default branch's tip.
func TestManualDispatchWithoutInputs(t *testing.T) {
	ctx := setup(t)
	u := newUser(t, ctx)
	u.change(t, ctx, "try-this", map[string]string{"NOTES.md": "a manual run\n"})
	// actions/checkout with fetch-depth 0 leaves origin's branches; act
	// copies the repository instead, so they are made here.
	if _, err := u.Git(ctx, "update-ref", "refs/remotes/origin/main", u.base); err != nil {
		t.Fatal(err)
	}
	payload, err := actrunner.DispatchPayload(userRepoName, "refs/heads/try-this", nil)
	if err != nil {
		t.Fatal(err)
	}
	api := actrunner.NewAPI(userRepoName)
	defer api.Close()
	res := u.run(t, ctx, api, actrunner.Spec{Workflow: ".github/workflows/load-gate-manual.yml", Event: "workflow_dispatch", Payload: payload})
	// The loadgate step has no id there: act numbers it, "1".
	if code, ok := res.StepExit["1/gate"]; ok {
		t.Errorf("gate step exit %d, want 0", code)
	}
	if res.Exit != 0 || res.JobResult != "success" {
		t.Errorf("job: act exit %d, %q; want 0, success", res.Exit, res.JobResult)
	}
	if v := res.Output("1", "verdict"); v == "" {
		t.Errorf("no verdict output: %v", res.Outputs)
	}
	// No pull request, no comment.
	if n := api.Count("POST"); n != 0 {
		t.Errorf("%d POSTs to the API on a manual run; want none", n)
	}
}

// TestWorkflowChanges: a head that changes the quick start's loadgate step
// is refused (the pull request's workflow chose the inputs), and the
// comment says so; one that only bumps the pinned checkout before it is
// gated as usual. That second one comes from a fork: its run's token is
// read-only (the gate's comment step is refused, a notice), and its
// comment comes from the workflow_run path: load-gate-comment.yml,
// triggered by the run, downloads the run's results artifact (the one act's
// artifact server stored, served by the API as GitHub serves a run's
// artifacts) and comments from it.
func TestWorkflowChanges(t *testing.T) {
	ctx := setup(t)
	u := newUser(t, ctx)
	wf := ".github/workflows/load-gate.yml"
	orig, err := os.ReadFile(filepath.Join(u.Dir, wf))
	if err != nil {
		t.Fatal(err)
	}
	const checkout = "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683"
	const bumped = "actions/checkout@0123456789abcdef0123456789abcdef01234567"
	const pr = 9
	for _, c := range []struct {
		name, from, to string
		refused        bool
		fork           string // the head's repository when a fork's
	}{
		{"loosens-its-step", "scenario: load/api.yaml", "scenario: load/api.yaml\n          tolerance: \"50%\"", true, ""},
		{"bumps-checkout", checkout, bumped, false, "forker/app"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(string(orig), c.from) {
				t.Fatalf("%s has no %q", wf, c.from)
			}
			head := u.change(t, ctx, c.name, map[string]string{wf: strings.Replace(string(orig), c.from, c.to, 1)})
			payload, err := actrunner.PullRequestPayload(actrunner.PR{Number: pr, Repo: userRepoName, HeadRepo: c.fork,
				BaseRef: "main", HeadRef: c.name, BaseSHA: u.base, HeadSHA: head})
			if err != nil {
				t.Fatal(err)
			}
			api := actrunner.NewAPI(userRepoName)
			defer api.Close()
			api.ReadOnly = c.fork != "" // a fork's pull request gets a read-only token
			const runID = 4242
			res := u.run(t, ctx, api, actrunner.Spec{Workflow: wf, Event: "pull_request", Payload: payload,
				Uses: map[string]string{bumped: tools.Local[checkout]},
				Env:  map[string]string{"GITHUB_RUN_ID": strconv.Itoa(runID)}})
			v := res.Output("gate", "verdict")
			if c.refused {
				if res.JobResult != "failure" || res.StepExit["gate/gate"] == 0 || v != "unusable" {
					t.Errorf("job %q, gate step exit %d, verdict %q; want failure, non-zero, unusable", res.JobResult, res.StepExit["gate/gate"], v)
				}
				if !strings.Contains(res.Summary, "changes the workflow") {
					t.Errorf("the summary does not say the workflow changed:\n%s", firstLines(res.Summary, 12))
				}
				// The refusal is commented too.
				cm := oneComment(t, api, pr)
				titled(t, cm.Body, "unusable")
				if !strings.Contains(cm.Body, "changes the workflow") {
					t.Errorf("the comment does not say the workflow changed:\n%s", firstLines(cm.Body, 12))
				}
				return
			}
			// Gated: measured and judged (the verdict depends on this
			// shared machine's noise), not refused.
			if v == "" || v == "unusable" || res.StepExit["gate/gate"] >= 2 {
				t.Errorf("verdict %q, gate step exit %d; want a measured verdict", v, res.StepExit["gate/gate"])
			}
			if strings.Contains(res.Summary, "changes the workflow") {
				t.Errorf("a pinned-ref bump counted as a workflow change:\n%s", firstLines(res.Summary, 12))
			}
			forkComment(t, ctx, u, api, res, actrunner.Run{ID: runID, Workflow: "load-gate", Event: "pull_request",
				Repo: userRepoName, HeadRepo: c.fork, HeadRef: c.name, HeadSHA: head}, pr)
		})
	}
}

// forkComment is the workflow_run path of a fork's pull request pr whose
// load-gate run (res, as run) is done: its comment step was refused (read
// only token: a notice, no comment), then load-gate-comment.yml runs on
// workflow_run with the run's artifact, and comments. Run again where v1's
// release binary does not match its SHA256SUMS, it comments nothing.
func forkComment(t *testing.T, ctx context.Context, u *user, api *actrunner.API, res *actrunner.Result, run actrunner.Run, pr int) {
	t.Helper()
	if n := api.Comments(pr); len(n) != 0 || len(res.Grep("a pull request from a fork gets a read-only token")) == 0 {
		t.Errorf("the fork's run: %d comments, notice %v; want none and the read-only notice", len(n), res.Grep("no comment"))
	}
	zip := res.Uploaded["load-gate-results"]
	if len(zip) == 0 {
		t.Fatalf("the run uploaded no load-gate-results artifact (uploaded: %d)", len(res.Uploaded))
	}
	run.Conclusion = res.JobResult
	api.Lock()
	api.ReadOnly = false // the workflow_run workflow's token is the base repository's
	api.Unlock()
	api.AddArtifact(run.ID, "load-gate-results", zip)
	api.SetPull(pr, githubfake.Pull{HeadSHA: run.HeadSHA, HeadRef: run.HeadRef, HeadRepo: run.HeadRepo})
	payload, err := actrunner.WorkflowRunPayload(run)
	if err != nil {
		t.Fatal(err)
	}
	// The workflow_run workflow runs from the default branch.
	if _, err := u.Git(ctx, "checkout", "-q", "main"); err != nil {
		t.Fatal(err)
	}
	cr := u.run(t, ctx, api, actrunner.Spec{Workflow: ".github/workflows/load-gate-comment.yml", Event: "workflow_run", Payload: payload,
		Env: map[string]string{"GITHUB_RUN_ID": strconv.FormatInt(run.ID+1, 10)}})
	if cr.Exit != 0 || cr.JobResult != "success" {
		t.Errorf("the comment workflow: act exit %d, job %q; want 0, success", cr.Exit, cr.JobResult)
	}
	// The comment action's step has no id: act numbers it.
	if got := stepOutput(cr, "pr"); got != strconv.Itoa(pr) {
		t.Errorf("the comment action's pr output %q, want %d (outputs %v)", got, pr, cr.Outputs)
	}
	if !slices.ContainsFunc(api.Requests(), func(r string) bool {
		return strings.HasPrefix(r, fmt.Sprintf("GET /api/v3/repos/%s/actions/runs/%d/artifacts", userRepoName, run.ID))
	}) {
		t.Errorf("download-artifact never listed the run's artifacts: %v", api.Requests())
	}
	c := oneComment(t, api, pr)
	body := strings.SplitN(c.Body, "\n", 3)
	if len(body) < 3 || !strings.HasPrefix(body[1], "<sub>⚠️ From the pull request's own results artifact") {
		t.Errorf("the fork comment does not open with its provenance:\n%s", firstLines(c.Body, 4))
	}
	want := res.Output("gate", "verdict")
	titled(t, c.Body, want)
	if !strings.Contains(c.Body, "**"+action.VerdictWord(verdict.Value(want))+"**") || !strings.Contains(c.Body, result.ShortHash(run.HeadSHA)) {
		t.Errorf("the fork comment does not state verdict %s of %s:\n%s", want, result.ShortHash(run.HeadSHA), firstLines(c.Body, 8))
	}

	// The same run where v1's release binary does not match its
	// SHA256SUMS: the comment action's binary step refuses it (exit 2),
	// never works around it by building, and nothing is commented.
	bad := actrunner.NewAPI(userRepoName)
	defer bad.Close()
	bad.AddArtifact(run.ID, "load-gate-results", zip)
	bad.SetPull(pr, githubfake.Pull{HeadSHA: run.HeadSHA, HeadRef: run.HeadRef, HeadRepo: run.HeadRepo})
	asset := "loadgate-linux-" + runtime.GOARCH
	sum := sha256.Sum256([]byte("the binary that was released"))
	bad.AddRelease("loadgate/loadgate", u.base, githubfake.Release{Tag: "v1.9.1", Assets: map[string][]byte{
		asset: []byte("a binary replaced on the way"), "SHA256SUMS": []byte(hex.EncodeToString(sum[:]) + "  " + asset + "\n")}})
	br := u.run(t, ctx, bad, actrunner.Spec{Workflow: ".github/workflows/load-gate-comment.yml", Event: "workflow_run", Payload: payload,
		Env: map[string]string{"GITHUB_RUN_ID": strconv.FormatInt(run.ID+2, 10)}})
	if br.JobResult != "failure" || len(br.Grep("::error title=loadgate::"+asset+" of v1.9.1 does not match the release's SHA256SUMS: refused")) != 1 {
		t.Errorf("a release binary that does not match SHA256SUMS: job %q, errors %v; want failure and the refusal", br.JobResult, br.Grep("::error"))
	}
	// (comment/action.yml's build step logs nothing of its own: its start is
	// act's.)
	built := br.Grep("Run Main Build loadgate from the action's source")
	if len(built) != 0 || len(bad.Comments(pr)) != 0 {
		t.Errorf("a mismatched release binary was worked around: build step %v, %d comments", built, len(bad.Comments(pr)))
	}
	if len(cr.Grep("Run Main Build loadgate from the action's source")) != 1 {
		t.Errorf("the first comment run (no release) did not build loadgate: the check above proves nothing")
	}
}

// TestReleasePush: load-gate-release.yml on three pushes to a release
// branch, its commits pushed to a local bare repository standing for
// GitHub's (git's url.<base>.insteadOf), which the workflow's store step
// pushes to as well:
//  1. the push that creates the branch: no baseline yet, so head runs alone,
//     passes its thresholds and its results are stored and committed as
//     baseline release, and the summary says so (exit 0);
//  2. a harmless change: gated against the baseline, whose recorded commit
//     (push 1's) is checked out and run beside it: a pass, nothing stored;
//  3. a change that makes the demo api's /profile do 10× the CPU work: the
//     same gate, a regression, the job fails.
//
// loadgate/loadgate has a release, v1.9.0, whose assets this repository's
// release workflow built (releaseAssets): the binary step resolves v1 to it,
// downloads its binary and checks it against its SHA256SUMS instead of building.
func TestReleasePush(t *testing.T) {
	ctx := setup(t)
	u := newUser(t, ctx)
	const tag = "v1.9.0"
	assets := releaseAssets(t, ctx, u.tmp, tag)
	asset := "loadgate-linux-" + runtime.GOARCH
	if _, err := u.Git(ctx, "checkout", "-q", "-b", "release/1.x", u.base); err != nil {
		t.Fatal(err)
	}
	remote := filepath.Join(u.tmp, "remote.git")
	if out, err := exec.CommandContext(ctx, "git", "clone", "-q", "--bare", u.Dir, remote).CombinedOutput(); err != nil {
		t.Fatalf("git clone --bare: %v: %s", err, out)
	}
	api := actrunner.NewAPI(userRepoName)
	defer api.Close()
	api.AddRelease("loadgate/loadgate", u.base, githubfake.Release{Tag: tag, Assets: assets})
	api.AddRelease("loadgate/loadgate", u.base, githubfake.Release{Tag: "v2.0.0-rc.1", Prerelease: true}) // not v1's
	env := map[string]string{"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "url." + remote + ".insteadOf",
		"GIT_CONFIG_VALUE_0": api.ServerURL() + "/" + userRepoName + ".git"}
	tip := func() (sha, subject string) {
		out, err := exec.CommandContext(ctx, "git", "-C", remote, "log", "-1", "--format=%H %s", "release/1.x").Output()
		if err != nil {
			t.Fatal(err)
		}
		sha, subject, _ = strings.Cut(strings.TrimSpace(string(out)), " ")
		return sha, subject
	}
	// push commits files on the branch's tip as the remote has it, pushes
	// it there and runs the workflow on that push.
	push := func(n int, files map[string]string) (head string, res *actrunner.Result) {
		t.Helper()
		before := strings.Repeat("0", 40) // the push creates the branch
		if n > 1 {
			before, _ = tip()
			if _, err := u.Git(ctx, "fetch", "-q", remote, "release/1.x"); err != nil {
				t.Fatal(err)
			}
			if _, err := u.Git(ctx, "reset", "-q", "--hard", "FETCH_HEAD"); err != nil {
				t.Fatal(err)
			}
		}
		if err := u.Write(files); err != nil {
			t.Fatal(err)
		}
		head, err := u.Commit(ctx, fmt.Sprintf("release push %d", n))
		if err != nil {
			t.Fatal(err)
		}
		if out, err := exec.CommandContext(ctx, "git", "-C", u.Dir, "push", "-q", remote, "HEAD:refs/heads/release/1.x").CombinedOutput(); err != nil {
			t.Fatalf("git push: %v: %s", err, out)
		}
		payload, err := actrunner.PushPayload(userRepoName, "refs/heads/release/1.x", before, head)
		if err != nil {
			t.Fatal(err)
		}
		res = u.run(t, ctx, api, actrunner.Spec{Workflow: ".github/workflows/load-gate-release.yml", Event: "push", Payload: payload, Env: env})
		t.Logf("push %d: baseline %q, verdict %q, job %s in %s", n, res.Output("gate", "baseline"), res.Output("gate", "verdict"), res.JobResult, res.Wall.Round(time.Second))
		return head, res
	}

	// 1. No baseline yet: stored, and said.
	first, res := push(1, map[string]string{"NOTES.md": "release 1.0\n"})
	if res.JobResult != "success" || res.Output("gate", "verdict") != "pass" || res.Output("gate", "baseline") != "record" {
		t.Fatalf("push 1: job %q, verdict %q, baseline %q; want success, pass, record", res.JobResult, res.Output("gate", "verdict"), res.Output("gate", "baseline"))
	}
	if want := mdtext.Escape("no baseline `release` yet: this run's results are stored as it"); !strings.Contains(res.Summary, want) {
		t.Errorf("push 1: the summary does not say %q:\n%s", want, firstLines(res.Summary, 20))
	}
	if _, subject := tip(); subject != "baselines: release at "+first[:12] {
		t.Fatalf("push 1: remote tip %q, want the stored baseline's commit", subject)
	}
	// The binary step, release present: downloaded, its sum checked (gh,
	// which verifies the attestation, is not on this runner), not built.
	if got := res.Output("gate/bin", "verify"); got != "checksum" {
		t.Errorf("binary step verify=%q, want checksum (the release's binary)", got)
	}
	if len(res.Grep("loadgate v1: release v1.9.0")) == 0 || len(res.Grep("loadgate v1.9.0: released binary "+asset+", sha256 checked")) == 0 {
		t.Errorf("the binary step does not say it took v1.9.0's checked binary: %v", res.Grep("loadgate v1"))
	}
	if len(res.Grep("loadgate built from")) != 0 {
		t.Errorf("loadgate was built although v1 has a release")
	}
	if !slices.Contains(api.Requests(), "GET /loadgate/loadgate/releases/download/v1.9.0/"+asset) {
		t.Errorf("the release's binary was not downloaded: %v", api.Requests())
	}

	// 2. A harmless change: the baseline's commit runs beside it.
	_, res = push(2, map[string]string{"NOTES.md": "release 1.0.1\n"})
	reMeasured := "baseline release is re-measured: its commit " + first[:12] + " ran here as the base side"
	if v := res.Output("gate", "verdict"); res.JobResult != "success" || (v != "pass" && v != "inconclusive") || res.Output("gate", "baseline") != "re-measured" {
		t.Errorf("push 2: job %q, verdict %q, baseline %q; want success, pass, re-measured", res.JobResult, v, res.Output("gate", "baseline"))
	}
	if !strings.Contains(res.Summary, reMeasured) || !strings.Contains(res.Summary, "at recording time, on ") {
		t.Errorf("push 2: the summary does not say %q beside the stored numbers:\n%s", reMeasured, res.Summary)
	}
	if _, subject := tip(); subject != "release push 2" {
		t.Errorf("push 2: remote tip %q: a baseline stays until it is deleted", subject)
	}

	// 3. The api's /profile does 10× the CPU work: a regression against the
	// baseline's commit. (A backend 10 ms slower, 20 → 30 ms, was called a
	// pass here on 7 December at a load average of 13–15, p95 1.9 s: under
	// such CPU starvation queueing hides a wait; CPU work is not hidden.)
	compose, err := os.ReadFile(filepath.Join(u.Dir, "examples", "demo", "compose.yaml"))
	if err != nil || !strings.Contains(string(compose), "PROFILE_CPU_ROUNDS: 950\n") {
		t.Fatalf("examples/demo/compose.yaml: %v, or no PROFILE_CPU_ROUNDS: 950 to slow", err)
	}
	slowed := strings.Replace(string(compose), "PROFILE_CPU_ROUNDS: 950\n", "PROFILE_CPU_ROUNDS: 9500\n", 1)
	_, res = push(3, map[string]string{"examples/demo/compose.yaml": slowed})
	// A regression; fail where an absolute threshold broke too (fail outranks it).
	if v := res.Output("gate", "verdict"); res.JobResult != "failure" || (v != "regression" && v != "fail") ||
		res.Output("gate", "regressions") != `["profile"]` || res.Output("gate", "baseline") != "re-measured" {
		t.Errorf("push 3: job %q, verdict %q, regressions %s, baseline %q; want failure, regression of profile, re-measured",
			res.JobResult, v, res.Output("gate", "regressions"), res.Output("gate", "baseline"))
	}
	if n := api.Count("POST"); n != 0 {
		t.Errorf("%d POSTs: comment is false here", n)
	}
}

// TestOwnSelfTest: this repository's .github/workflows/load-gate.yml
// dispatched by hand runs its self-test job, this commit's action through
// `uses: ./` (built from source), on the demo, shortened by its inputs.
func TestOwnSelfTest(t *testing.T) {
	ctx := setup(t)
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	r, err := actrunner.NewRepo(ctx, strings.TrimSpace(string(root)), filepath.Join(tmp, "repo"), "loadgate/loadgate")
	if err != nil {
		t.Fatal(err)
	}
	main, err := r.Git(ctx, "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	// checkout's fetch-depth 0 leaves origin/main, the manual run's base.
	if _, err := r.Git(ctx, "update-ref", "refs/remotes/origin/main", main); err != nil {
		t.Fatal(err)
	}
	payload, err := actrunner.DispatchPayload("loadgate/loadgate", "refs/heads/main", map[string]string{"rounds": "2", "scale": "0.2"})
	if err != nil {
		t.Fatal(err)
	}
	api := actrunner.NewAPI("loadgate/loadgate")
	defer api.Close()
	u := &user{Repo: r, tmp: tmp, action: filepath.Join(tmp, "unused")}
	res := u.run(t, ctx, api, actrunner.Spec{Workflow: ".github/workflows/load-gate.yml", Event: "workflow_dispatch", Payload: payload})
	if res.Steps["self-test"] != "" || res.Steps["load-gate"] != "" {
		t.Logf("steps: %v", res.Steps)
	}
	if code, ok := res.StepExit["gate/gate"]; ok && code >= 2 {
		t.Errorf("gate step exit %d, want a verdict (0 or 1)", code)
	}
	if v := res.Output("gate", "verdict"); v == "" || v == "unusable" {
		t.Errorf("verdict %q, want a measured one", v)
	}
	if len(res.Grep("loadgate built from")) == 0 {
		t.Errorf("uses: ./ did not build loadgate from the checkout")
	}
	noTokenInGateStep(t, res)
	if !strings.Contains(res.Summary, "loadgate gate") {
		t.Errorf("no gate summary:\n%s", firstLines(res.Summary, 12))
	}
}

// noTokenInGateStep fails t when the gate step saw a github-token: act, as
// Gitea's and Forgejo's runners, puts a composite action's inputs in its
// steps' env, which GitHub's runner does not.
func noTokenInGateStep(t *testing.T, res *actrunner.Result) {
	t.Helper()
	if w := res.Grep("the gate step was given a github-token"); len(w) > 0 {
		t.Errorf("the gate step, where the pull request's code runs, had the token: %v", w)
	}
}

// releaseAssets runs this repository's release workflow
// (.github/workflows/release.yml) on a push of tag, and returns the assets
// its build step (scripts/release.sh) made in dist/: loadgate-linux-amd64,
// -arm64, loadgate-darwin-amd64, -arm64 and SHA256SUMS, checked: every
// binary has its one line in SHA256SUMS, and this machine's says tag as its
// version. Offline, three parts of the workflow cannot run and are left
// out of the copy that runs: actions/attest-build-provenance (GitHub's OIDC
// token and Sigstore), and the Publish and major-tag steps (gh against
// GitHub's release API: the caller puts the assets in its API's release,
// as Publish would); the vet and unit test step is left out for time (make
// test runs it). An upload-artifact step takes dist/ out of the run.
func releaseAssets(t *testing.T, ctx context.Context, tmp, tag string) map[string][]byte {
	t.Helper()
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatal(err)
	}
	r, err := actrunner.NewRepo(ctx, strings.TrimSpace(string(root)), filepath.Join(tmp, "loadgate-src"), "loadgate/loadgate")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(r.Dir, ".github/workflows/release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	wf := string(b)
	cut := func(from, to, with string) {
		i, j := strings.Index(wf, from), strings.Index(wf, to)
		if i < 0 || (to != "" && j < i) {
			t.Fatalf("release.yml has no %q before %q: the offline copy needs updating", from, to)
		}
		if to == "" {
			j = len(wf)
		}
		wf = wf[:i] + with + wf[j:]
	}
	cut("      - name: Vet and unit tests\n", "      - name: Build\n", "")
	cut("      - uses: actions/attest-build-provenance@", "", "      - uses: actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02 # v4.6.2\n        with: {name: dist, path: dist}\n")
	const offline = ".github/workflows/release-offline.yml"
	if err := r.Write(map[string]string{offline: wf}); err != nil {
		t.Fatal(err)
	}
	sha, err := r.Commit(ctx, "release "+tag)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := actrunner.PushPayload("loadgate/loadgate", "refs/tags/"+tag, sha, sha)
	if err != nil {
		t.Fatal(err)
	}
	api := actrunner.NewAPI("loadgate/loadgate")
	defer api.Close()
	u := &user{Repo: r, tmp: tmp, action: filepath.Join(tmp, "unused")}
	res := u.run(t, ctx, api, actrunner.Spec{Workflow: offline, Event: "push", Payload: payload})
	if res.Exit != 0 || res.JobResult != "success" {
		t.Fatalf("the release workflow: act exit %d, job %q; want 0, success", res.Exit, res.JobResult)
	}
	zr, err := zip.NewReader(bytes.NewReader(res.Uploaded["dist"]), int64(len(res.Uploaded["dist"])))
	if err != nil {
		t.Fatalf("the dist artifact: %v", err)
	}
	assets := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		if assets[f.Name], err = io.ReadAll(rc); err != nil {
			t.Fatal(err)
		}
		rc.Close()
	}
	sums := string(assets["SHA256SUMS"])
	t.Logf("the release workflow's SHA256SUMS:\n%s", sums)
	for _, name := range []string{"loadgate-linux-amd64", "loadgate-linux-arm64", "loadgate-darwin-amd64", "loadgate-darwin-arm64"} {
		sum := sha256.Sum256(assets[name])
		if len(assets[name]) == 0 || strings.Count(sums, "  "+name+"\n") != 1 || !strings.Contains(sums, hex.EncodeToString(sum[:])+"  "+name+"\n") {
			t.Errorf("%s (%d bytes) does not match its one line in SHA256SUMS", name, len(assets[name]))
		}
	}
	if len(assets) != 5 {
		t.Errorf("dist holds %d files, want the four binaries and SHA256SUMS", len(assets))
	}
	bin := filepath.Join(tmp, "loadgate-"+tag)
	if err := os.WriteFile(bin, assets["loadgate-linux-"+runtime.GOARCH], 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.CommandContext(ctx, bin, "version").CombinedOutput(); err != nil || !strings.Contains(string(out), tag) {
		t.Errorf("loadgate version: %q, %v; want %s", out, err, tag)
	}
	return assets
}
