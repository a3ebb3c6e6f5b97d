package action_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/action"
)

func TestReadEventFixtures(t *testing.T) {
	const base, head = "f95f852bd8fca8fcc58a9a2d6c842781e32a215e", "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
	cases := []struct {
		name, file string
		want       action.Event
	}{
		{"pull_request", "pull_request-opened.json", action.Event{Name: "pull_request", Action: "opened", PR: 2, BaseSHA: base, HeadSHA: head, BaseRef: "master", HeadRef: "changes"}},
		{"pull_request", "pull_request-synchronize.json", action.Event{Name: "pull_request", Action: "synchronize", PR: 2, BaseSHA: base, HeadSHA: head, BaseRef: "master", HeadRef: "changes"}},
		{"workflow_run", "workflow_run-completed.with-pull-requests.json", action.Event{Name: "workflow_run", Action: "completed", PR: 2, BaseSHA: base, BaseRef: "master",
			HeadSHA: "3484a3fb816e0859fd6e1cea078d76385ff50625", HeadRef: "master", RunID: 289782451, RunEvent: "repository_dispatch", RunConclusion: "success"}},
	}
	for _, c := range cases {
		env := &action.Env{EventName: c.name, EventPath: "testdata/" + c.file}
		got, err := action.ReadEvent(env)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if got.Inputs != nil || got.Name != c.want.Name || got.Action != c.want.Action || got.PR != c.want.PR ||
			got.BaseSHA != c.want.BaseSHA || got.HeadSHA != c.want.HeadSHA || got.BaseRef != c.want.BaseRef ||
			got.HeadRef != c.want.HeadRef || got.Fork || got.RunID != c.want.RunID || got.RunEvent != c.want.RunEvent ||
			got.RunConclusion != c.want.RunConclusion {
			t.Errorf("%s:\n got %+v\nwant %+v", c.file, got, c.want)
		}
	}

	got, err := action.ReadEvent(&action.Env{EventName: "workflow_dispatch", EventPath: "testdata/workflow_dispatch.json"})
	if err != nil || got.PR != 0 || got.Inputs["name"] != "Mona the Octocat" || got.DefaultBranch != "master" || got.HeadRef != "master" {
		t.Errorf("workflow_dispatch: %+v, %v", got, err)
	}

	// A fork's pull request.
	dir := t.TempDir()
	got, err = action.ReadEvent(&action.Env{EventName: "pull_request", EventPath: forkEvent(t, dir)})
	if err != nil || !got.Fork || got.PR != 2 {
		t.Errorf("fork: %+v, %v", got, err)
	}

	// Outside Actions: no event file, no error.
	if got, err := action.ReadEvent(&action.Env{EventName: "push"}); err != nil || got.Name != "push" {
		t.Errorf("no event path: %+v, %v", got, err)
	}
	if _, err := action.ReadEvent(&action.Env{EventName: "pull_request", EventPath: "testdata/missing.json"}); err == nil {
		t.Error("a missing event file is not an error")
	}
	if _, err := action.ParseEvent("pull_request", []byte(`{"action":"opened"}`)); err == nil {
		t.Error("a pull_request payload without pull_request parsed")
	}
	if _, err := action.ParseEvent("workflow_run", []byte(`{"action":"completed"}`)); err == nil {
		t.Error("a workflow_run payload without workflow_run parsed")
	}
}

// Events other than pull requests and runs: the action of one go-github
// knows but loadgate reads nothing else of, an event go-github does not
// know, a push, and malformed payloads of each kind.
func TestParseEventOthers(t *testing.T) {
	ev, err := action.ReadEvent(&action.Env{EventName: "issue_comment", EventPath: "testdata/issue_comment-created.json"})
	if err != nil || ev.Action != "created" || ev.PR != 0 || ev.BaseSHA != "" || ev.HeadSHA != "" {
		t.Errorf("issue_comment: %+v, %v", ev, err)
	}
	ev, err = action.ParseEvent("schedule", []byte(`{"schedule":"*/5 * * * *"}`))
	if err != nil || ev.Name != "schedule" || ev.Action != "" || ev.PR != 0 {
		t.Errorf("schedule: %+v, %v", ev, err)
	}
	ev, err = action.ParseEvent("push", []byte(`{"ref":"refs/heads/main","before":"aaaa","after":"bbbb","repository":{"full_name":"o/r"}}`))
	if err != nil || ev.HeadSHA != "bbbb" || ev.HeadRef != "main" || ev.BaseSHA != "" || ev.Before != "aaaa" || ev.PR != 0 {
		t.Errorf("push: %+v, %v", ev, err)
	}
	ev, err = action.ParseEvent("push", []byte(`{"ref":"refs/heads/release/1.x","before":"0000000000000000000000000000000000000000","after":"bbbb","created":true}`))
	if err != nil || ev.Before != "" || ev.HeadSHA != "bbbb" {
		t.Errorf("push that creates a branch: before %q, %v; want none", ev.Before, err)
	}
	ev, err = action.ParseEvent("pull_request_target", []byte(mustRead(t, "testdata/pull_request-opened.json")))
	if err != nil || ev.PR != 2 || ev.Action != "opened" || ev.BaseRef != "master" {
		t.Errorf("pull_request_target: %+v, %v", ev, err)
	}
	ev, err = action.ParseEvent("workflow_dispatch", []byte(`{"inputs":{"rounds":3,"auto":true,"none":null,"s":"x"}}`))
	if err != nil || ev.Inputs["rounds"] != "3" || ev.Inputs["auto"] != "true" || ev.Inputs["none"] != "" || ev.Inputs["s"] != "x" || len(ev.Inputs) != 4 {
		t.Errorf("workflow_dispatch typed inputs: %+v, %v", ev.Inputs, err)
	}
	for _, c := range []struct{ name, payload string }{
		{"pull_request", `{"action":`},
		{"workflow_run", `[1,2]`},
		{"workflow_dispatch", `{"inputs":"rounds=3"}`},
		{"push", `{"after":7}`},
		{"schedule", `not json`},
	} {
		if ev, err := action.ParseEvent(c.name, []byte(c.payload)); err == nil {
			t.Errorf("ParseEvent(%s, %q) = %+v, want an error", c.name, c.payload, ev)
		} else if !strings.Contains(err.Error(), "event payload ("+c.name+")") {
			t.Errorf("ParseEvent(%s, %q): error %q does not name the event", c.name, c.payload, err)
		}
	}
}

// A workflow_run whose pull requests list several: the one whose head is
// the run's head wins over the first.
func TestParseEventWorkflowRunPicksHead(t *testing.T) {
	payload := `{"action":"completed","workflow_run":{"id":5,"head_sha":"h2","head_branch":"b",
		"pull_requests":[{"number":7,"head":{"sha":"h1"},"base":{"sha":"b1","ref":"main"}},
		                 {"number":8,"head":{"sha":"h2"},"base":{"sha":"b2","ref":"rel"}}],
		"repository":{"id":1,"full_name":"o/r"},"head_repository":{"id":1,"full_name":"o/r"}}}`
	ev, err := action.ParseEvent("workflow_run", []byte(payload))
	if err != nil || ev.PR != 8 || ev.BaseSHA != "b2" || ev.BaseRef != "rel" || ev.Fork || ev.RunID != 5 {
		t.Errorf("got %+v, %v; want #8 on b2 (rel), not a fork", ev, err)
	}
	// A deleted fork: no head repository.
	ev, err = action.ParseEvent("workflow_run", []byte(`{"workflow_run":{"id":5,"repository":{"id":1}}}`))
	if err != nil || !ev.Fork {
		t.Errorf("no head repository: %+v, %v; want a fork", ev, err)
	}
}

// FuzzParseEvent: no payload panics the decoder, and what parses keeps the
// pull request number non-negative. The seeds are the fixtures cut to what
// loadgate reads (the fuzzer stalls on the whole 28 kB payloads; the
// fixtures themselves are TestReadEventFixtures').
func FuzzParseEvent(f *testing.F) {
	for _, c := range []struct{ name, payload string }{
		{"pull_request", `{"action":"opened","number":2,"pull_request":{"number":2,` +
			`"head":{"ref":"changes","sha":"ec26c3e57ca3a959ca5aad62de7213c562f8c821","repo":{"id":186853002,"full_name":"Codertocat/Hello-World"}},` +
			`"base":{"ref":"master","sha":"f95f852bd8fca8fcc58a9a2d6c842781e32a215e","repo":{"id":186853002,"full_name":"Codertocat/Hello-World"}}}}`},
		{"workflow_run", `{"action":"completed","workflow_run":{"id":289782451,"event":"repository_dispatch","conclusion":"success",` +
			`"head_sha":"3484a3fb816e0859fd6e1cea078d76385ff50625","head_branch":"master",` +
			`"pull_requests":[{"number":2,"head":{"sha":"ec26c3e5"},"base":{"ref":"master","sha":"f95f852b"}}],` +
			`"repository":{"id":1,"full_name":"o/r"},"head_repository":{"id":1,"full_name":"o/r"}}}`},
		{"workflow_dispatch", `{"inputs":{"name":"Mona the Octocat","rounds":3,"auto":true,"none":null},"ref":"refs/heads/master"}`},
		{"issue_comment", `{"action":"created","issue":{"number":1}}`},
		{"push", `{"ref":"refs/heads/main","before":"aaaa","after":"bbbb"}`},
		{"schedule", `{"schedule":"*/5 * * * *"}`},
		{"pull_request", `null`},
	} {
		f.Add(c.name, []byte(c.payload))
	}
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		ev, err := action.ParseEvent(name, data)
		if err != nil {
			if ev.Name != "" || ev.PR != 0 {
				t.Fatalf("error %v with a filled event %+v", err, ev)
			}
			return
		}
		if ev.Name != name {
			t.Fatalf("Name = %q, want %q", ev.Name, name)
		}
		if !json.Valid(data) {
			t.Fatalf("invalid JSON %q parsed as %+v", data, ev)
		}
	})
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{"GITHUB_REPOSITORY": "octo-org/octo-repo", "GITHUB_RUN_ID": "77", "GITHUB_ACTIONS": "true", "GITHUB_API_URL": "https://ghe.example/api/v3/"}
	e, err := action.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if e.Owner != "octo-org" || e.Repo != "octo-repo" || e.RunID != 77 || !e.Actions || e.APIURL != "https://ghe.example/api/v3" ||
		e.RunURL() != "https://github.com/octo-org/octo-repo/actions/runs/77" {
		t.Errorf("FromEnv = %+v", e)
	}
	for _, bad := range []map[string]string{{"GITHUB_REPOSITORY": "nope"}, {"GITHUB_RUN_ID": "x"}} {
		if _, err := action.FromEnv(func(k string) string { return bad[k] }); err == nil {
			t.Errorf("FromEnv(%v) accepted", bad)
		}
	}
	if got := e.GraphQL(); got != "https://ghe.example/api/graphql" {
		t.Errorf("GraphQL() on GHE = %q, want it derived from GITHUB_API_URL", got)
	}
	for _, bad := range []map[string]string{{"GITHUB_REPOSITORY": "a/b/c"}, {"GITHUB_RUN_ID": "-1"}, {"GITHUB_ACTIONS": "yes please"}} {
		if _, err := action.FromEnv(func(k string) string { return bad[k] }); err == nil {
			t.Errorf("FromEnv(%v) accepted", bad)
		}
	}
	// Outside Actions: the defaults; values are trimmed.
	e, err = action.FromEnv(func(k string) string {
		return map[string]string{"GITHUB_SHA": " abc\n", "GITHUB_OUTPUT": "/tmp/out"}[k]
	})
	if err != nil || e.Actions || e.APIURL != "https://api.github.com" || e.ServerURL != "https://github.com" ||
		e.GraphQL() != "https://api.github.com/graphql" || e.SHA != "abc" || e.Output != "/tmp/out" || e.RunURL() != "" {
		t.Errorf("FromEnv outside Actions = %+v, %v", e, err)
	}
	// The event file is ReadEvent's: a malformed one fails there, naming
	// GITHUB_EVENT_PATH's event, not in FromEnv.
	bad := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(bad, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err = action.FromEnv(func(k string) string {
		return map[string]string{"GITHUB_EVENT_PATH": bad, "GITHUB_EVENT_NAME": "pull_request"}[k]
	})
	if err != nil || e.EventPath != bad {
		t.Fatalf("FromEnv with a malformed event file: %+v, %v", e, err)
	}
	if _, err := action.ReadEvent(e); err == nil || !strings.Contains(err.Error(), "pull_request") {
		t.Errorf("ReadEvent of a malformed file: %v", err)
	}
}

// The history is never written for a pull request's events.
func TestHistoryWritable(t *testing.T) {
	for _, ev := range []string{"", "push", "workflow_dispatch", "schedule"} {
		if err := action.HistoryWritable(ev); err != nil {
			t.Errorf("%q: %v", ev, err)
		}
	}
	for _, ev := range []string{"pull_request", "pull_request_target", "workflow_run", "issue_comment", "merge_group"} {
		if err := action.HistoryWritable(ev); err == nil || !strings.Contains(err.Error(), ev) {
			t.Errorf("%q: %v, want a refusal naming it", ev, err)
		}
	}
}
