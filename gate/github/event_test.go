package github_test

import (
	"testing"

	lggh "github.com/loadgate/loadgate/gate/github"
)

func TestReadEventFixtures(t *testing.T) {
	const base, head = "f95f852bd8fca8fcc58a9a2d6c842781e32a215e", "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
	cases := []struct {
		name, file string
		want       lggh.Event
	}{
		{"pull_request", "pull_request-opened.json", lggh.Event{Name: "pull_request", Action: "opened", PR: 2, BaseSHA: base, HeadSHA: head, BaseRef: "master", HeadRef: "changes"}},
		{"pull_request", "pull_request-synchronize.json", lggh.Event{Name: "pull_request", Action: "synchronize", PR: 2, BaseSHA: base, HeadSHA: head, BaseRef: "master", HeadRef: "changes"}},
		{"workflow_run", "workflow_run-completed.with-pull-requests.json", lggh.Event{Name: "workflow_run", Action: "completed", PR: 2, BaseSHA: base, BaseRef: "master",
			HeadSHA: "3484a3fb816e0859fd6e1cea078d76385ff50625", HeadRef: "master", RunID: 289782451, RunEvent: "repository_dispatch", RunConclusion: "success"}},
	}
	for _, c := range cases {
		env := &lggh.Env{EventName: c.name, EventPath: "testdata/" + c.file}
		got, err := lggh.ReadEvent(env)
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

	got, err := lggh.ReadEvent(&lggh.Env{EventName: "workflow_dispatch", EventPath: "testdata/workflow_dispatch.json"})
	if err != nil || got.PR != 0 || got.Inputs["name"] != "Mona the Octocat" {
		t.Errorf("workflow_dispatch: %+v, %v", got, err)
	}

	// A fork's pull request.
	dir := t.TempDir()
	got, err = lggh.ReadEvent(&lggh.Env{EventName: "pull_request", EventPath: forkEvent(t, dir)})
	if err != nil || !got.Fork || got.PR != 2 {
		t.Errorf("fork: %+v, %v", got, err)
	}

	// Outside Actions: no event file, no error.
	if got, err := lggh.ReadEvent(&lggh.Env{EventName: "push"}); err != nil || got.Name != "push" {
		t.Errorf("no event path: %+v, %v", got, err)
	}
	if _, err := lggh.ReadEvent(&lggh.Env{EventName: "pull_request", EventPath: "testdata/missing.json"}); err == nil {
		t.Error("a missing event file is not an error")
	}
	if _, err := lggh.ParseEvent("pull_request", []byte(`{"action":"opened"}`)); err == nil {
		t.Error("a pull_request payload without pull_request parsed")
	}
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{"GITHUB_REPOSITORY": "octo-org/octo-repo", "GITHUB_RUN_ID": "77", "GITHUB_ACTIONS": "true", "GITHUB_API_URL": "https://ghe.example/api/v3/"}
	e, err := lggh.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if e.Owner != "octo-org" || e.Repo != "octo-repo" || e.RunID != 77 || !e.Actions || e.APIURL != "https://ghe.example/api/v3" ||
		e.RunURL() != "https://github.com/octo-org/octo-repo/actions/runs/77" {
		t.Errorf("FromEnv = %+v", e)
	}
	for _, bad := range []map[string]string{{"GITHUB_REPOSITORY": "nope"}, {"GITHUB_RUN_ID": "x"}} {
		if _, err := lggh.FromEnv(func(k string) string { return bad[k] }); err == nil {
			t.Errorf("FromEnv(%v) accepted", bad)
		}
	}
	// Every variable FromEnv reads is listed.
	read := map[string]bool{}
	_, _ = lggh.FromEnv(func(k string) string { read[k] = true; return "" })
	for _, k := range lggh.EnvNames {
		delete(read, k)
	}
	if len(read) != 0 {
		t.Errorf("FromEnv reads unlisted variables %v", read)
	}
}
