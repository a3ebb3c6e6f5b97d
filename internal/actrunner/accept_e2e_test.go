package actrunner_test

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/actrunner"
	"github.com/loadgate/loadgate/internal/githubfake"
)

// slower commits, on a new branch off main, the demo's backend made slower
// (20 → 40 ms a profile) and returns the commit.
func slower(t *testing.T, ctx context.Context, u *user, branch string) string {
	t.Helper()
	const cf = "examples/demo/compose.yaml"
	b, err := os.ReadFile(filepath.Join(u.Dir, cf))
	if err != nil {
		t.Fatal(err)
	}
	const from, to = "${DEMO_DELAY_MS:-20}ms", "${DEMO_DELAY_MS:-40}ms"
	if !strings.Contains(string(b), from) {
		t.Fatalf("%s has no %s", cf, from)
	}
	return u.change(t, ctx, branch, map[string]string{cf: strings.Replace(string(b), from, to, 1)})
}

// uploadedFile is file name of the run's load-gate-results artifact.
func uploadedFile(t *testing.T, res *actrunner.Result, name string) string {
	t.Helper()
	z := res.Uploaded["load-gate-results"]
	r, err := zip.NewReader(bytes.NewReader(z), int64(len(z)))
	if err != nil {
		t.Fatalf("the load-gate-results artifact: %v", err)
	}
	for _, f := range r.File {
		if filepath.Base(f.Name) == name {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			b, _ := io.ReadAll(rc)
			return string(b)
		}
	}
	t.Fatalf("the artifact has no %s", name)
	return ""
}

// TestAcceptLabel: the quick start (examples/workflows/load-gate.yml) on
// pull request #9, whose head makes the demo's backend slower, after a
// maintainer (write access) added loadgate:accept to it once the run's
// first attempt had ended, and re-ran it (attempt 2): the accept step (with the token) finds the label, the gate step
// (without) judges the regression as measured and exits 0, and the job
// passes. The comment's title says ACCEPTED, the comment and the job
// summary name the maintainer and the head, and the artifact's verdict.json
// carries the accepted field beside the unchanged verdict.
func TestAcceptLabel(t *testing.T) {
	ctx := setup(t)
	u := newUser(t, ctx)
	const pr, runID = 9, 900
	head := slower(t, ctx, u, "slower")
	payload, err := actrunner.PullRequestPayload(actrunner.PR{Number: pr, Repo: userRepoName, BaseRef: "main", HeadRef: "slower", BaseSHA: u.base, HeadSHA: head})
	if err != nil {
		t.Fatal(err)
	}
	api := actrunner.NewAPI(userRepoName)
	defer api.Close()
	began := time.Now().Add(-time.Minute).UTC()
	api.SetRun(runID, githubfake.Run{HeadSHA: head, Event: "pull_request", CreatedAt: began})
	api.SetAttempt(runID, 1, githubfake.Attempt{HeadSHA: head, UpdatedAt: began.Add(15 * time.Second)})
	api.SetPull(pr, githubfake.Pull{HeadSHA: head, HeadRef: "slower", HeadRepo: userRepoName, BaseSHA: u.base, Labels: []string{verdict.AcceptLabel}})
	api.SetPermission("maintainer", "write")
	api.AddTimeline(pr, githubfake.TimelineEvent{Event: "labeled", Label: verdict.AcceptLabel,
		Actor: githubfake.User{Login: "maintainer", Type: "User"}, CreatedAt: began.Add(30 * time.Second)})
	res := u.run(t, ctx, api, actrunner.Spec{Workflow: ".github/workflows/load-gate.yml", Event: "pull_request", Payload: payload,
		Env: map[string]string{"GITHUB_RUN_ID": strconv.Itoa(runID), "GITHUB_RUN_ATTEMPT": "2"}})

	v := res.Output("gate", "verdict")
	if !slices.Contains([]string{"regression", "fail"}, v) {
		t.Fatalf("verdict %q: the slower head did not fail on this machine, so there is nothing to accept", v)
	}
	if res.Exit != 0 || res.JobResult != "success" {
		t.Errorf("job: act exit %d, %q; want 0, success (the failing verdict accepted)", res.Exit, res.JobResult)
	}
	if acc := res.Output("gate/accept", "accepted"); !strings.Contains(acc, `"by":"maintainer"`) {
		t.Errorf("the accept step's output %q, want maintainer's acceptance", acc)
	}
	noTokenInGateStep(t, res)
	line := "Accepted by @maintainer (write access) with the label"
	if !strings.Contains(strings.ReplaceAll(res.Summary, `\`, ""), line) {
		t.Errorf("the job summary does not say who accepted it:\n%s", firstLines(res.Summary, 8))
	}
	c := oneComment(t, api, pr)
	if !strings.Contains(c.Body, "— "+action.VerdictWord(verdict.Value(v))+", ACCEPTED\n") || !strings.Contains(strings.ReplaceAll(c.Body, `\`, ""), line) ||
		!strings.Contains(c.Body, result.ShortHash(head)) {
		t.Errorf("the comment does not say the %s is accepted, by whom, on %s:\n%s", v, result.ShortHash(head), firstLines(c.Body, 8))
	}
	vj := uploadedFile(t, res, "verdict.json")
	if !strings.Contains(vj, `"accepted": {`) || !strings.Contains(vj, `"value": "`+v+`"`) || !strings.Contains(vj, `"exit_code": 1,`) {
		t.Errorf("verdict.json: no accepted field, or the verdict changed:\n%s", firstLines(vj, 12))
	}
}

// TestOnDemandComment: load-gate-on-demand.yml on a maintainer's
// "/loadgate" comment on pull request #11: the ondemand action checks the
// commenter and pins the head and base, the gate judges that head against
// that base and comments, the workflow replies naming the commit gated, and
// the verdict is set as the commit status loadgate/main/e2e-api on the head. A reader's "/loadgate" runs no gate.
//
// act runs actions/checkout for real when it names a ref (and offline it
// cannot fetch), so here the workflow's checkout has no ref: the head is
// checked out in the working tree beforehand, which is what the ref does.
func TestOnDemandComment(t *testing.T) {
	ctx := setup(t)
	u := newUser(t, ctx)
	const pr = 11
	wf := ".github/workflows/load-gate-on-demand.yml"
	b, err := os.ReadFile(filepath.Join(u.Dir, wf))
	if err != nil {
		t.Fatal(err)
	}
	const ref = "          ref: ${{ steps.pr.outputs.head-sha }}   # the pinned head, by SHA (a fork's too)\n"
	if !strings.Contains(string(b), ref) {
		t.Fatalf("%s has no checkout by the pinned SHA", wf)
	}
	head := u.change(t, ctx, "feature", map[string]string{"NOTES.md": "a change the stack does not run\n",
		wf: strings.Replace(string(b), ref, "", 1)})
	api := actrunner.NewAPI(userRepoName)
	defer api.Close()
	api.SetPull(pr, githubfake.Pull{HeadSHA: head, HeadRef: "feature", HeadRepo: userRepoName, BaseSHA: u.base, BaseRef: "main"})
	api.SetPermission("maintainer", "write")
	api.SetPermission("reader", "read")
	payload, err := actrunner.IssueCommentPayload(actrunner.Comment{PR: pr, Repo: userRepoName, Body: "/loadgate", Login: "maintainer", Association: "MEMBER"})
	if err != nil {
		t.Fatal(err)
	}
	res := u.run(t, ctx, api, actrunner.Spec{Workflow: wf, Event: "issue_comment", Payload: payload, Env: map[string]string{"GITHUB_RUN_ID": "1100"}})
	if got := res.Output("pr", "head-sha"); got != head || res.Output("pr", "base-sha") != u.base || res.Output("pr", "run") != "true" {
		t.Errorf("ondemand outputs %v; want run, head %s, base %s", res.Outputs["pr"], head, u.base)
	}
	v := res.Output("gate", "verdict")
	if !slices.Contains([]string{"pass", "inconclusive"}, v) || res.JobResult != "success" {
		t.Errorf("verdict %q, job %q; want pass (or inconclusive), success", v, res.JobResult)
	}
	noTokenInGateStep(t, res)
	cs := api.Comments(pr)
	if len(cs) != 2 || !strings.HasPrefix(cs[0].Body, action.Marker(scenarioName)+"\n") {
		t.Fatalf("#%d has %d comments, want the gate's and the reply", pr, len(cs))
	}
	titled(t, cs[0].Body, v)
	if !strings.Contains(cs[0].Body, result.ShortHash(head)) {
		t.Errorf("the comment does not name the head %s", result.ShortHash(head))
	}
	if want := "gated head " + head + " against main (" + u.base + "): " + v + "."; !strings.Contains(cs[1].Body, want) {
		t.Errorf("the reply %q does not say %q", cs[1].Body, want)
	}
	st := api.Statuses(head)
	if len(st) != 1 || st[0].State != "success" || st[0].Context != action.StatusContext("main", scenarioName) {
		t.Errorf("statuses on the head: %+v; want one success, %s", st, action.StatusContext("main", scenarioName))
	}

	// A collaborator with read access: the ondemand step refuses, nothing runs.
	payload, err = actrunner.IssueCommentPayload(actrunner.Comment{PR: pr, Repo: userRepoName, Body: "/loadgate", Login: "reader", Association: "COLLABORATOR"})
	if err != nil {
		t.Fatal(err)
	}
	res = u.run(t, ctx, api, actrunner.Spec{Workflow: wf, Event: "issue_comment", Payload: payload, Env: map[string]string{"GITHUB_RUN_ID": "1101"}})
	if res.Output("pr", "run") != "false" || res.Output("gate", "verdict") != "" || len(api.Statuses(head)) != 1 || len(api.Comments(pr)) != 2 {
		t.Errorf("a reader's /loadgate: run %q, verdict %q, %d statuses, %d comments; want false, none, 1, 2",
			res.Output("pr", "run"), res.Output("gate", "verdict"), len(api.Statuses(head)), len(api.Comments(pr)))
	}
	if len(res.Grep("@reader has read access")) == 0 {
		t.Errorf("the refusal does not say why: %v", res.Grep("loadgate"))
	}
}
