package action_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/internal/githubfake"
)

const baseHead = "f95f852bd8fca8fcc58a9a2d6c842781e32a215e"

// commentEvent is the fixture's issue_comment payload made a comment on pull
// request #2, with body by login (of type typ) and association assoc, and action.
func commentEvent(t *testing.T, act, body, login, typ, assoc string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/issue_comment-created.json")
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	p["action"] = act
	issue := p["issue"].(map[string]any)
	issue["number"] = prNum
	issue["pull_request"] = map[string]any{"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/2"}
	c := p["comment"].(map[string]any)
	c["body"], c["author_association"] = body, assoc
	c["user"].(map[string]any)["login"], c["user"].(map[string]any)["type"] = login, typ
	out, _ := json.Marshal(p)
	path := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func onDemandWorld(t *testing.T) *fakeGitHub {
	f := newFake(t)
	f.SetPull(prNum, githubfake.Pull{HeadSHA: headSHA, BaseSHA: baseHead, BaseRef: "main"})
	f.SetPermission("maintainer", "maintain")
	f.SetPermission("reader", "read")
	return f
}

func checkOnDemand(t *testing.T, f *fakeGitHub, eventPath string) (*action.OnDemand, string, error) {
	t.Helper()
	ev, err := action.ReadEvent(&action.Env{EventName: "issue_comment", EventPath: eventPath})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := action.NewClient(&action.Env{APIURL: f.URL()}, token, nil)
	return action.CheckOnDemand(context.Background(), c, owner, repo, ev)
}

// A collaborator's /loadgate pins the pull request's head and base; a
// /loadgate COMMIT naming the head (a prefix) does the same.
func TestOnDemandByACollaboratorPinsTheCommits(t *testing.T) {
	f := onDemandWorld(t)
	for _, body := range []string{"/loadgate", "/loadgate ec26c3e5\nthanks", "  /loadgate  \n"} {
		od, why, err := checkOnDemand(t, f, commentEvent(t, "created", body, "maintainer", "User", "MEMBER"))
		want := action.OnDemand{PR: prNum, HeadSHA: headSHA, BaseSHA: baseHead, BaseRef: "main", By: "maintainer"}
		if err != nil || why != "" || od == nil || *od != want {
			t.Errorf("%q: %+v, %q, %v; want %+v", body, od, why, err, want)
		}
	}
}

// Nothing else runs the gate, and each refusal says why.
func TestOnDemandRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, act, body, login, typ, assoc string
		setup                              func(*fakeGitHub)
		why                                string
	}{
		{"a contributor (a fork's author)", "created", "/loadgate", "forker", "User", "CONTRIBUTOR", nil, "@forker's author association is CONTRIBUTOR"},
		{"no association", "created", "/loadgate", "someone", "User", "NONE", nil, "association is NONE"},
		{"a collaborator with read access", "created", "/loadgate", "reader", "User", "COLLABORATOR", nil, "@reader has read access"},
		{"a bot", "created", "/loadgate", "dependabot[bot]", "Bot", "COLLABORATOR", nil, "a bot: only a person"},
		{"an edited comment", "edited", "/loadgate", "maintainer", "User", "OWNER", nil, "the comment was edited, not created"},
		{"a commit that is not the head", "created", "/loadgate 1111111", "maintainer", "User", "OWNER", nil, "#2's head is ec26c3e57ca3, not 1111111"},
		{"a malformed command", "created", "/loadgate please", "maintainer", "User", "OWNER", nil, "write /loadgate, or /loadgate COMMIT"},
		{"a closed pull request", "created", "/loadgate", "maintainer", "User", "OWNER", func(f *fakeGitHub) {
			f.SetPull(prNum, githubfake.Pull{HeadSHA: headSHA, BaseSHA: baseHead, State: "closed"})
		}, "#2 is closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := onDemandWorld(t)
			if tc.setup != nil {
				tc.setup(f)
			}
			od, why, err := checkOnDemand(t, f, commentEvent(t, tc.act, tc.body, tc.login, tc.typ, tc.assoc))
			if od != nil || err != nil || !strings.Contains(why, tc.why) {
				t.Errorf("%+v, why %q, err %v; want a refusal containing %q", od, why, err, tc.why)
			}
		})
	}
	// Not the command at all: nothing to say; on an issue: refused.
	f := onDemandWorld(t)
	if od, why, err := checkOnDemand(t, f, commentEvent(t, "created", "LGTM /loadgate", "maintainer", "User", "OWNER")); od != nil || why != "" || err != nil {
		t.Errorf("not a command: %+v, %q, %v", od, why, err)
	}
	c, _ := action.NewClient(&action.Env{APIURL: f.URL()}, token, nil)
	onIssue := action.Event{Name: "issue_comment", Action: "created", Comment: &action.IssueComment{Body: "/loadgate", Login: "maintainer", UserType: "User", Association: "OWNER"}}
	if od, why, _ := action.CheckOnDemand(context.Background(), c, owner, repo, onIssue); od != nil || !strings.Contains(why, "on an issue, not a pull request") {
		t.Errorf("/loadgate on an issue: %+v, %q; want a refusal", od, why)
	}
}

// The step's outputs: run, the pull request and the pinned commits; a refusal is run=false.
func TestOnDemandStepOutputs(t *testing.T) {
	f := onDemandWorld(t)
	r := newRunner(t, f, "issue_comment", "")
	r.env["GITHUB_EVENT_PATH"] = commentEvent(t, "created", "/loadgate", "maintainer", "User", "OWNER")
	r.env[action.InputEnv(action.InToken)] = token
	if err := action.OnDemandStep(context.Background(), &r.stdout, r.getenv, nil); err != nil {
		t.Fatal(err)
	}
	out := r.outputs(t)
	if out[action.OutRun] != "true" || out[action.OutPR] != "2" || out[action.OutHeadSHA] != headSHA || out[action.OutBaseSHA] != baseHead || out[action.OutBaseRef] != "main" {
		t.Errorf("outputs %v", out)
	}
	r = newRunner(t, f, "issue_comment", "")
	r.env["GITHUB_EVENT_PATH"] = commentEvent(t, "created", "/loadgate", "forker", "User", "CONTRIBUTOR")
	r.env[action.InputEnv(action.InToken)] = token
	if err := action.OnDemandStep(context.Background(), &r.stdout, r.getenv, nil); err != nil {
		t.Fatal(err)
	}
	if out := r.outputs(t); out[action.OutRun] != "false" || out[action.OutHeadSHA] != "" {
		t.Errorf("a contributor's /loadgate: outputs %v, want run=false only", out)
	}
	if !strings.Contains(r.stdout.String(), "::notice::loadgate: @forker's author association is CONTRIBUTOR") {
		t.Errorf("no notice saying why:\n%s", r.stdout.String())
	}
}

// The gate and comment steps on the issue_comment event, the head checked out
// by SHA into the workspace: the manifest and comment name that head, and the
// verdict is set as the commit status loadgate/<base-ref>/<scenario> on it,
// naming the head and base, where a ruleset can require it (the run's own
// check is the default branch's).
func TestOnDemandGateCommentsAndSetsTheStatus(t *testing.T) {
	f := onDemandWorld(t)
	head := onDemandGate(t, f)
	cs := f.ours(prNum, "demo-api")
	if len(cs) != 1 || !strings.Contains(cs[0].Body, result.ShortHash(head)) {
		t.Fatalf("comments %v; want one naming head %s", cs, result.ShortHash(head))
	}
	st := f.Statuses(head)
	if want := "fail (exit 1): head " + result.ShortHash(head) + " against main"; len(st) != 1 || st[0].State != "failure" || st[0].Context != "loadgate/main/demo-api" || st[0].Description != want {
		t.Errorf("statuses on %s: %+v; want one failure, loadgate/main/demo-api, %q", head, st, want)
	}
}

// The status context names the base branch: a pass against release/1 must not
// satisfy main's required loadgate/main/demo-api. Before the fix both were
// loadgate/demo-api.
func TestRegression_StatusContextIgnoredTheBase(t *testing.T) {
	f := onDemandWorld(t)
	f.SetPull(prNum, githubfake.Pull{HeadSHA: headSHA, BaseSHA: baseHead, BaseRef: "release/1"})
	head := onDemandGate(t, f)
	if st := f.Statuses(head); len(st) != 1 || st[0].Context != "loadgate/release/1/demo-api" {
		t.Errorf("statuses on %s: %+v; want one, loadgate/release/1/demo-api", head, st)
	}
}

// onDemandGate runs the gate and comment steps of a maintainer's /loadgate on a
// fresh commit checked out in the workspace, the gate failing; it returns the commit.
func onDemandGate(t *testing.T, f *fakeGitHub) string {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		out, err := rounds.Git(context.Background(), dir, append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		if err != nil {
			t.Skip("git:", err)
		}
		return out
	}
	git("init", "-q")
	if err := os.WriteFile(filepath.Join(dir, "scenario.yaml"), []byte(demoScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	git("commit", "-qm", "head")
	head := git("rev-parse", "HEAD")

	results := filepath.Join(t.TempDir(), "results")
	if err := os.MkdirAll(results, 0o755); err != nil {
		t.Fatal(err)
	}
	g := &fakeGate{out: results, gr: rounds.Outcome{Scenario: result.Scenario{Name: "demo-api"}, Verdict: regressed()}}
	s := newStep(t, f, dir, g)
	s.r.env["GITHUB_EVENT_NAME"] = "issue_comment"
	s.r.env["GITHUB_EVENT_PATH"] = commentEvent(t, "created", "/loadgate", "maintainer", "User", "OWNER")
	s.r.env["GITHUB_WORKSPACE"] = dir
	s.r.env[action.InputEnv(action.InBase)] = baseHead
	if res := s.run(t); res.ExitCode != 1 {
		t.Errorf("exit %d, want 1 (the verdict fails)", res.ExitCode)
	}
	return head
}

// The fixture's comment was created at 2019-05-15T15:20:21Z.
var commentAt = time.Date(2019, 5, 15, 15, 20, 21, 0, time.UTC)

// A bare /loadgate pins the head when the step runs: a push after the comment
// (a force-push, or a commit dated after it) is refused, as the commenter did
// not read that head; /loadgate COMMIT still pins exactly. Before the fix the
// new head was gated.
func TestRegression_BareLoadgateGatesAHeadPushedAfterTheComment(t *testing.T) {
	for _, tc := range []struct {
		name string
		ev   githubfake.TimelineEvent
		why  string
	}{
		{"a commit after the comment", githubfake.TimelineEvent{Event: "committed", CommitID: headSHA, Actor: githubfake.User{Login: "author"}, CreatedAt: commentAt.Add(time.Minute)},
			"#2's head changed after the comment (commit ec26c3e57ca3 dated 2019-05-15 15:21:21 UTC)"},
		{"a force-push after the comment", githubfake.TimelineEvent{Event: "head_ref_force_pushed", CommitID: headSHA, Actor: githubfake.User{Login: "author", Type: "User"}, CreatedAt: commentAt.Add(time.Second)},
			"#2's head changed after the comment (force-pushed 2019-05-15 15:20:22 UTC)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := onDemandWorld(t)
			f.AddTimeline(prNum, githubfake.TimelineEvent{Event: "committed", CommitID: baseHead, Actor: githubfake.User{Login: "author"}, CreatedAt: commentAt.Add(-time.Hour)}, tc.ev)
			od, why, err := checkOnDemand(t, f, commentEvent(t, "created", "/loadgate", "maintainer", "User", "MEMBER"))
			if od != nil || err != nil || !strings.Contains(why, tc.why) || !strings.Contains(why, "/loadgate COMMIT") {
				t.Errorf("bare: %+v, %q, %v; want refused, %q", od, why, err, tc.why)
			}
			od, why, err = checkOnDemand(t, f, commentEvent(t, "created", "/loadgate ec26c3e5", "maintainer", "User", "MEMBER"))
			if od == nil || err != nil || od.HeadSHA != headSHA {
				t.Errorf("/loadgate COMMIT: %+v, %q, %v; want the named head", od, why, err)
			}
		})
	}
	// Commits dated before the comment: the gate runs.
	f := onDemandWorld(t)
	f.AddTimeline(prNum, githubfake.TimelineEvent{Event: "committed", CommitID: headSHA, Actor: githubfake.User{Login: "author"}, CreatedAt: commentAt.Add(-time.Minute)})
	if od, why, err := checkOnDemand(t, f, commentEvent(t, "created", "/loadgate", "maintainer", "User", "MEMBER")); od == nil || err != nil {
		t.Errorf("no push after the comment: %+v, %q, %v; want the gate", od, why, err)
	}
}

// GitHub answering nothing: the on-demand step is bounded (2 minutes; here
// 200 ms) and fails as unusable naming the call, the accept step warns. Before
// the fix neither had a deadline.
func TestRegression_AcceptAndOnDemandStepsHadNoDeadline(t *testing.T) {
	defer action.SetAPITimeout(200 * time.Millisecond)()
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	}))
	defer hang.Close()
	done := make(chan error, 2)
	od := newRunner(t, nil, "issue_comment", "")
	od.env["GITHUB_API_URL"] = hang.URL
	od.env["GITHUB_EVENT_PATH"] = commentEvent(t, "created", "/loadgate", "maintainer", "User", "OWNER")
	od.env[action.InputEnv(action.InToken)] = token
	acc := newRunner(t, nil, "pull_request", "pull_request-opened.json")
	acc.env["GITHUB_API_URL"] = hang.URL
	acc.env[action.InputEnv(action.InToken)] = token
	go func() { done <- action.OnDemandStep(context.Background(), &od.stdout, od.getenv, nil) }()
	go func() { done <- action.AcceptStep(context.Background(), &acc.stdout, acc.getenv, nil) }()
	var errs []error
	for range 2 {
		select {
		case err := <-done:
			errs = append(errs, err)
		case <-time.After(20 * time.Second):
			t.Fatal("a step still waits on the API after 20 s")
		}
	}
	var odErr error
	for _, err := range errs {
		if err != nil {
			odErr = err
		}
	}
	if odErr == nil || rounds.KindOf(odErr) != rounds.ErrUnusable || !strings.Contains(odErr.Error(), "reading @maintainer's permission") || !strings.Contains(odErr.Error(), "deadline exceeded") {
		t.Errorf("ondemand: %v; want unusable, naming the permission read, deadline exceeded", odErr)
	}
	if !strings.Contains(acc.stdout.String(), "::warning::loadgate: the loadgate:accept label is not checked: reading #2") {
		t.Errorf("accept: no warning of the API not answering:\n%s", acc.stdout.String())
	}
}
