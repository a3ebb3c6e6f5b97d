package action_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sethvargo/go-githubactions"

	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/githubfake"
)

const (
	owner   = "Codertocat"
	repo    = "Hello-World"
	prNum   = 2 // the fixtures' pull request
	token   = "ghs_test-token-123"
	botName = "github-actions[bot]"
)

// The fake GitHub is internal/githubfake's, on the fixtures' repository.
type (
	fakeUser    = githubfake.User
	fakeComment = githubfake.Comment
)

// fakeGitHub is the part of the REST API loadgate uses (githubfake):
// comments with Link pagination, editing, GET /user, GET a pull request.
type fakeGitHub struct {
	*githubfake.Server
}

func newFake(t *testing.T) *fakeGitHub {
	f := &fakeGitHub{githubfake.New(owner, repo, token, "")}
	t.Cleanup(f.Close)
	return f
}

// ours returns the comments that start with the scenario's marker and are
// by the author our token comments as.
func (f *fakeGitHub) ours(pr int, scenario string) []*fakeComment {
	var out []*fakeComment
	me := f.Author()
	for _, c := range f.Comments(pr) {
		if c.User == me && strings.HasPrefix(c.Body, action.Marker(scenario)+"\n") {
			out = append(out, c)
		}
	}
	return out
}

// runner is a fake runner: environment, files, and the action's stdout.
type runner struct {
	dir     string
	env     map[string]string
	stdout  bytes.Buffer
	summary string
	output  string
}

func newRunner(t *testing.T, f *fakeGitHub, eventName, eventFile string) *runner {
	t.Helper()
	dir := t.TempDir()
	r := &runner{dir: dir, summary: filepath.Join(dir, "step_summary.md"), output: filepath.Join(dir, "output.txt")}
	for _, p := range []string{r.summary, r.output} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r.env = map[string]string{
		"GITHUB_ACTIONS":      "true",
		"GITHUB_EVENT_NAME":   eventName,
		"GITHUB_REPOSITORY":   owner + "/" + repo,
		"GITHUB_SERVER_URL":   "https://github.com",
		"GITHUB_STEP_SUMMARY": r.summary,
		"GITHUB_OUTPUT":       r.output,
		"GITHUB_RUN_ID":       "4242",
		"GITHUB_SHA":          "ec26c3e57ca3a959ca5aad62de7213c562f8c821",
	}
	if f != nil {
		r.env["GITHUB_API_URL"] = f.URL()
	}
	if eventFile != "" {
		r.env["GITHUB_EVENT_PATH"] = filepath.Join("testdata", eventFile)
	}
	return r
}

func (r *runner) getenv(k string) string { return r.env[k] }

func (r *runner) action() *githubactions.Action {
	return githubactions.New(githubactions.WithWriter(&r.stdout), githubactions.WithGetenv(r.getenv))
}

func (r *runner) envAndEvent(t *testing.T) (*action.Env, action.Event) {
	t.Helper()
	env, err := action.FromEnv(r.getenv)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := action.ReadEvent(env)
	if err != nil {
		t.Fatal(err)
	}
	return env, ev
}

// outputs parses GITHUB_OUTPUT's multi-line syntax: name<<DELIM\nvalue\nDELIM.
func (r *runner) outputs(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(r.output)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		if lines[i] == "" {
			continue
		}
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			t.Fatalf("GITHUB_OUTPUT line %d: %q is not name<<DELIM", i+1, lines[i])
		}
		var val []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			val = append(val, lines[i])
		}
		if i == len(lines) {
			t.Fatalf("GITHUB_OUTPUT: %s: no closing %s", name, delim)
		}
		if _, dup := out[name]; dup {
			t.Errorf("GITHUB_OUTPUT: %s set twice", name)
		}
		out[name] = strings.Join(val, "\n")
	}
	return out
}

func (r *runner) read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A verdict with one regressed workload and one failed one.
func regressed() verdict.Verdict {
	return verdict.Verdict{
		Value: verdict.Fail,
		Workloads: []verdict.WorkloadVerdict{
			{Phase: "sustain", Workload: "api_read", Value: verdict.Regression, Checks: []verdict.Check{
				{Phase: "sustain", Workload: "api_read", Metric: "p95", Limit: 50, Observed: 61.2, Count: 2811, Value: verdict.Regression},
			}},
			{Phase: "sustain", Workload: "item", Value: verdict.Pass, Checks: []verdict.Check{}},
			{Phase: "sustain", Workload: "ingest", Value: verdict.Fail, Checks: []verdict.Check{
				{Phase: "sustain", Workload: "ingest", Metric: "error_rate", Limit: 0.001, Observed: 0.02, Count: 900, Value: verdict.Fail},
			}},
			{Phase: "recover", Workload: "api_read", Value: verdict.Regression, Checks: []verdict.Check{
				{Phase: "recover", Workload: "api_read", Metric: "p99", Limit: 80, Observed: 95, Count: 700, Value: verdict.Regression},
			}},
		},
		Notes: []verdict.Note{},
	}
}

func passing() verdict.Verdict {
	return verdict.Verdict{Value: verdict.Pass, Workloads: []verdict.WorkloadVerdict{
		{Phase: "sustain", Workload: "api_read", Value: verdict.Pass, Checks: []verdict.Check{}},
	}, Notes: []verdict.Note{}}
}

func reportMD(verdictLine string) string {
	return "# loadgate: demo-api\n\n- **scenario** demo-api `sha256:abcd`\n\n## Sustain (judged)\n\n| workload | p95 |\n| --- | --: |\n| api_read | 61.2 |\n\n## Verdict\n\n" + verdictLine + "\n"
}
