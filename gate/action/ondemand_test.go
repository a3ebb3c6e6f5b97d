package action_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
// verdict is set as the commit status loadgate/<scenario> on it, where a
// ruleset can require it (the run's own check is the default branch's).
func TestOnDemandGateCommentsAndSetsTheStatus(t *testing.T) {
	f := onDemandWorld(t)
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
	res := s.run(t)
	if res.ExitCode != 1 {
		t.Errorf("exit %d, want 1 (the verdict fails)", res.ExitCode)
	}
	cs := f.ours(prNum, "demo-api")
	if len(cs) != 1 || !strings.Contains(cs[0].Body, result.ShortHash(head)) {
		t.Fatalf("comments %v; want one naming head %s", cs, result.ShortHash(head))
	}
	st := f.Statuses(head)
	if len(st) != 1 || st[0].State != "failure" || st[0].Context != "loadgate/demo-api" || st[0].Description != "fail (exit 1)" {
		t.Errorf("statuses on %s: %+v; want one failure, loadgate/demo-api", head, st)
	}
}
