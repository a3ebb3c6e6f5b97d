package actrunner_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/internal/actrunner"
)

// TestHistoryPush: load-gate-history.yml on two pushes to main. Each gates
// the pushed commit against the previous entry's (the first against its
// parent) with a read-only step, and its record job appends the entry to
// the loadgate-data branch of the remote (a local bare repository standing
// for GitHub's, through git's url.<base>.insteadOf) and renders the history
// into the summary. The second push's base is the first entry's commit,
// read back from the data branch.
func TestHistoryPush(t *testing.T) {
	ctx := setup(t)
	u := newUser(t, ctx)
	// The user names the scenario the history keeps (its name: key).
	wf := filepath.Join(".github", "workflows", "load-gate-history.yml")
	b, err := os.ReadFile(filepath.Join(u.Dir, wf))
	if err != nil || !strings.Contains(string(b), "SCENARIO_NAME: api ") {
		t.Fatalf("%s: %v, or no SCENARIO_NAME: api to set", wf, err)
	}
	if err := u.Write(map[string]string{wf: strings.Replace(string(b), "SCENARIO_NAME: api ", "SCENARIO_NAME: e2e-api ", 1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Commit(ctx, "history: the scenario's name"); err != nil {
		t.Fatal(err)
	}
	remote := filepath.Join(u.tmp, "remote.git")
	api := actrunner.NewAPI(userRepoName)
	defer api.Close()
	// Under act, a checkout of the repository is a copy of its directory,
	// whose origin is https://github.com/<repo> (act reads the name from
	// it): both that URL and the run's server URL lead to the remote, and
	// the directory fetches the remote's branches before each run, as
	// actions/checkout's fetch-depth: 0 would.
	github := "https://github.com/" + userRepoName + ".git"
	env := map[string]string{"GIT_CONFIG_COUNT": "2",
		"GIT_CONFIG_KEY_0": "url." + remote + ".insteadOf", "GIT_CONFIG_VALUE_0": api.ServerURL() + "/" + userRepoName + ".git",
		"GIT_CONFIG_KEY_1": "url." + remote + ".insteadOf", "GIT_CONFIG_VALUE_1": github}

	var heads []string
	for i, note := range []string{"first change\n", "second change\n"} {
		before, err := u.Git(ctx, "rev-parse", "HEAD")
		if err != nil {
			t.Fatal(err)
		}
		if err := u.Write(map[string]string{"NOTES.md": note}); err != nil {
			t.Fatal(err)
		}
		head, err := u.Commit(ctx, strings.TrimSpace(note))
		if err != nil {
			t.Fatal(err)
		}
		heads = append(heads, head)
		if i == 0 { // the remote holds main; the data branch comes from the record job
			if out, err := exec.CommandContext(ctx, "git", "clone", "-q", "--bare", u.Dir, remote).CombinedOutput(); err != nil {
				t.Fatalf("git clone --bare: %v: %s", err, out)
			}
		} else if out, err := exec.CommandContext(ctx, "git", "-C", u.Dir, "push", "-q", remote, "HEAD:refs/heads/main").CombinedOutput(); err != nil {
			t.Fatalf("git push: %v: %s", err, out)
		}
		if out, err := exec.CommandContext(ctx, "git", "-C", u.Dir, "-c", "url."+remote+".insteadOf="+github, "fetch", "-q", "origin").CombinedOutput(); err != nil {
			t.Fatalf("git fetch: %v: %s", err, out)
		}
		payload, err := actrunner.PushPayload(userRepoName, "refs/heads/main", strings.TrimSpace(before), head)
		if err != nil {
			t.Fatal(err)
		}
		res := u.run(t, ctx, api, actrunner.Spec{Workflow: wf, Event: "push", Payload: payload, Env: env})
		if res.JobResult != "success" || res.Steps["history"] != "success" {
			t.Fatalf("push %d: job %q, record step %q; want both success", i+1, res.JobResult, res.Steps["history"])
		}
		wantBase := strings.TrimSpace(before) // the first push: its parent
		if i > 0 {
			wantBase = heads[i-1] // the previous entry's commit, from the data branch
		}
		if got := res.Output("previous", "base"); !strings.HasPrefix(wantBase, got) || got == "" {
			t.Errorf("push %d gated against %q, want %s", i+1, got, wantBase)
		}
		if !strings.Contains(res.Summary, "e2e-api") {
			t.Errorf("push %d: the summary does not render the history:\n%s", i+1, firstLines(res.Summary, 12))
		}
	}
	// The data branch holds one entry per push, named by its commit.
	out, err := exec.CommandContext(ctx, "git", "-C", remote, "ls-tree", "--name-only", "loadgate-data:e2e-api").Output()
	if err != nil {
		t.Fatalf("the remote has no loadgate-data branch with e2e-api entries: %v", err)
	}
	entries := strings.Fields(string(out))
	t.Logf("loadgate-data:e2e-api: %q", entries)
	if len(entries) != 2 {
		t.Fatalf("%d entries, want 2", len(entries))
	}
	name := regexp.MustCompile(`^\d+-([0-9a-f]{12})\.json$`)
	for i, e := range entries {
		m := name.FindStringSubmatch(e)
		if m == nil || !strings.HasPrefix(heads[i], m[1]) {
			t.Errorf("entry %d is %q, want <unix-seconds>-%.12s.json", i+1, e, heads[i])
		}
	}
}
