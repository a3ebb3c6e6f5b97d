package action_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/githubfake"
)

func inputs(r *runner) action.Inputs {
	return action.Inputs{
		Scenario: "examples/demo/scenario.yaml", Against: "base", FailOn: action.FailOnRegression,
		Comment: true, Token: token, ResultsDir: filepath.Join(r.dir, "results"),
	}
}

func publication(r *runner, v verdict.Verdict, md string) action.Publication {
	res := filepath.Join(r.dir, "results")
	return action.Publication{
		Scenario: "demo-api", ScenarioFile: "examples/demo/scenario.yaml", Verdict: v, Markdown: md,
		ReportPath: filepath.Join(res, "report.md"), ResultsDir: res,
	}
}

// writeVerdictJSON writes dir/verdict.json as the gate does (report.WriteGate).
func writeVerdictJSON(t *testing.T, dir, scenario string, v verdict.Verdict) {
	t.Helper()
	gr := rounds.Outcome{
		Scenario: result.Scenario{Name: scenario, Hash: "sha256:abcd"},
		Base:     rounds.SideResults{Name: "base", Ref: baseSHA, Commit: baseSHA},
		Head:     rounds.SideResults{Name: "head", Ref: "working tree", Commit: headSHA},
		Rounds:   3, Verdict: v,
	}
	var b bytes.Buffer
	if err := report.CompareJSON(&b, gr); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, action.VerdictFile), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func publish(t *testing.T, r *runner, in action.Inputs, p action.Publication) *action.Outcome {
	t.Helper()
	env, ev := r.envAndEvent(t)
	if err := os.MkdirAll(p.ResultsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.ReportPath, []byte(p.Markdown), 0o644); err != nil {
		t.Fatal(err)
	}
	writeVerdictJSON(t, p.ResultsDir, p.Scenario, p.Verdict)
	out, err := action.Publish(r.action(), env, ev, in, p)
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	// The comment step, after the gate step: its outcome joins the gate's.
	c := action.PublishComment(context.Background(), r.action(), env, ev, in, p.ResultsDir, nil)
	out.CommentID, out.CommentCreated, out.CommentAction = c.CommentID, c.CommentCreated, c.CommentAction
	out.CommentAuthor, out.CommentRemoved, out.CommentCut = c.CommentAuthor, c.CommentRemoved, c.CommentCut
	out.Notices = append(out.Notices, c.Notices...)
	out.Warnings = append(out.Warnings, c.Warnings...)
	return out
}

// A gate publication on a pull request writes the summary and the outputs
// and creates the comment; the next run edits the same comment; others'
// comments are untouched. Both with a token whose identity GET /user gives
// (a personal token) and with one it does not (GITHUB_TOKEN: 403).
func TestPublishCreatesThenEdits(t *testing.T) {
	for _, login := range []string{"", "loadgate-ci"} {
		name := "installation token"
		if login != "" {
			name = "user token"
		}
		t.Run(name, func(t *testing.T) {
			f := newFake(t)
			f.Login = login
			marker := action.Marker("demo-api")
			quoted := f.Seed(prNum, "octocat", "User", "Looks slow to me. The bot wrote:\n> "+marker+"\n> # loadgate: demo-api\n> REGRESSION")
			human := f.Seed(prNum, "mallory", "User", marker+"\n# loadgate: demo-api\nPASS, trust me")
			other := f.Seed(prNum, botName, "Bot", action.Marker("other-scenario")+"\n# loadgate: other-scenario")
			if login != "" {
				// A bot's comment with our marker is not ours when we know who we are.
				f.Seed(prNum, "some-app[bot]", "Bot", marker+"\nnot ours")
			}
			// Our own bot identity (another workflow of the repository) quoting
			// the marker mid-body: the marker is not its first line.
			botQuote := f.Seed(prNum, botName, "Bot", "Other tool's summary:\n"+marker+"\nquoted")
			saved := map[int64]string{quoted.ID: quoted.Body, human.ID: human.Body, other.ID: other.Body, botQuote.ID: botQuote.Body}

			r := newRunner(t, f, "pull_request", "pull_request-opened.json")
			md := reportMD("**FAIL** (exit 1): a threshold is broken.")
			out := publish(t, r, inputs(r), publication(r, regressed(), md))

			if out.ExitCode != 1 || !out.CommentCreated || out.CommentID == 0 {
				t.Fatalf("outcome %+v", out)
			}
			if got := r.read(t, r.summary); got != md {
				t.Errorf("summary:\n%q\nwant\n%q", got, md)
			}
			o := r.outputs(t)
			want := map[string]string{
				"verdict":     "fail",
				"regressions": `["api_read","ingest"]`,
				"report":      filepath.Join(r.dir, "results", "report.md"),
				"results-dir": filepath.Join(r.dir, "results"),
			}
			for k, v := range want {
				if o[k] != v {
					t.Errorf("output %s = %q, want %q", k, o[k], v)
				}
			}
			if len(o) != len(action.OutputNames) {
				t.Errorf("outputs %v, want exactly %v", o, action.OutputNames)
			}
			stdout := r.stdout.String()
			for _, s := range []string{
				"::add-mask::" + token,
				"::error file=examples/demo/scenario.yaml,title=loadgate demo-api%3A api_read regression::api_read: sustain: regression — p95 61.2 ms, limit 50 ms (n=2\u2009811): regression%0Arecover: regression — p99 95.0 ms, limit 80 ms (n=700): regression\n",
				"::error file=examples/demo/scenario.yaml,title=loadgate demo-api%3A ingest fail::ingest: sustain: fail — error_rate 2%25 > 0.1%25 (n=900)\n",
			} {
				if !strings.Contains(stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout)
				}
			}
			if strings.Contains(stdout, "item") {
				t.Errorf("a passing workload is annotated:\n%s", stdout)
			}
			// The comment step masks the token before it prints anything.
			if i, j := strings.Index(stdout, "::add-mask::"+token), strings.Index(stdout, token); i < 0 || j != i+len("::add-mask::") {
				t.Errorf("the token is first printed at %d, not in its mask (%d)", j, i)
			}
			mine := f.ours(prNum, "demo-api")
			if len(mine) != 1 || mine[0].ID != out.CommentID {
				t.Fatalf("our comments %+v, want one with id %d", mine, out.CommentID)
			}
			if !strings.Contains(mine[0].Body, "**FAIL** (exit 1)") || !strings.Contains(mine[0].Body, "/actions/runs/4242") {
				t.Errorf("comment body:\n%s", mine[0].Body)
			}

			// The second run edits it in place.
			r2 := newRunner(t, f, "pull_request", "pull_request-synchronize.json")
			md2 := reportMD("**PASS** (exit 0): every check holds.")
			out2 := publish(t, r2, inputs(r2), publication(r2, passing(), md2))
			if out2.ExitCode != 0 || out2.CommentCreated || out2.CommentID != out.CommentID {
				t.Fatalf("second outcome %+v, want an edit of %d", out2, out.CommentID)
			}
			mine = f.ours(prNum, "demo-api")
			if len(mine) != 1 || !strings.Contains(mine[0].Body, "**PASS**") || strings.Contains(mine[0].Body, "FAIL") {
				t.Fatalf("after the second run, our comments: %+v", mine)
			}
			if got := f.Count("POST"); got != 1 {
				t.Errorf("%d comments created, want 1", got)
			}
			if len(f.Edited()) != 1 || f.Edited()[0] != out.CommentID {
				t.Errorf("edited %v, want only %d", f.Edited(), out.CommentID)
			}
			for _, c := range f.Comments(prNum) {
				if want, ok := saved[c.ID]; ok && c.Body != want {
					t.Errorf("comment %d by %s changed to %q", c.ID, c.User.Login, c.Body)
				}
			}
			if o := r2.outputs(t); o["verdict"] != "pass" || o["regressions"] != "[]" {
				t.Errorf("second outputs %v", o)
			}
			// The same body again: nothing to edit.
			r3 := newRunner(t, f, "pull_request", "pull_request-synchronize.json")
			out3 := publish(t, r3, inputs(r3), publication(r3, passing(), md2))
			if out3.CommentID != out.CommentID || len(f.Edited()) != 1 {
				t.Errorf("an unchanged body was edited again: %+v, edits %v", out3, f.Edited())
			}
		})
	}
}

// More than 100 comments: the existing one on page 2 is found and edited.
func TestPublishPagesThroughComments(t *testing.T) {
	f := newFake(t)
	for i := range 130 {
		f.Seed(prNum, "octocat", "User", fmt.Sprintf("comment %d", i))
	}
	mine := f.Seed(prNum, botName, "Bot", action.Marker("demo-api")+"\nold report")
	for i := range 5 {
		f.Seed(prNum, "octocat", "User", fmt.Sprintf("later comment %d", i))
	}
	r := newRunner(t, f, "pull_request", "pull_request-opened.json")
	out := publish(t, r, inputs(r), publication(r, passing(), reportMD("**PASS**")))
	if out.CommentCreated || out.CommentID != mine.ID {
		t.Fatalf("outcome %+v, want an edit of %d", out, mine.ID)
	}
	if f.Count("POST") != 0 {
		t.Error("a duplicate comment was created")
	}
	var pages []string
	for _, q := range f.Requests() {
		if strings.HasPrefix(q, "GET /repos/") && strings.Contains(q, "/comments") {
			pages = append(pages, q)
		}
	}
	if len(pages) != 2 || !strings.Contains(pages[0], "per_page=100") || !strings.Contains(pages[1], "page=2") {
		t.Errorf("listed %v, want pages 1 and 2 of 100", pages)
	}
}

// A read-only token (a fork's GITHUB_TOKEN) gets 403: a notice, the summary
// and outputs still written, the verdict's exit code.
func TestPublishForbiddenIsANotice(t *testing.T) {
	for _, v := range []verdict.Verdict{regressed(), passing()} {
		f := newFake(t)
		f.CreateStatus = 403
		r := newRunner(t, f, "pull_request", "pull_request-opened.json")
		md := reportMD("verdict " + string(v.Value))
		out := publish(t, r, inputs(r), publication(r, v, md))
		if want := v.ExitCode(); out.ExitCode != want {
			t.Errorf("%s: exit %d, want %d", v.Value, out.ExitCode, want)
		}
		if len(out.Notices) != 1 || !strings.Contains(out.Notices[0], "HTTP 403") || len(out.Warnings) != 0 {
			t.Errorf("%s: notices %q warnings %q", v.Value, out.Notices, out.Warnings)
		}
		if !strings.Contains(r.stdout.String(), "::notice::loadgate: no comment on #2 (HTTP 403)") {
			t.Errorf("no notice printed:\n%s", r.stdout.String())
		}
		if r.read(t, r.summary) != md || r.outputs(t)["verdict"] != string(v.Value) {
			t.Errorf("%s: summary or outputs missing", v.Value)
		}
	}
}

// On a fork the notice points at the workflow_run workflow, and the results
// carry what it needs.
func TestPublishForkThenCommentFromArtifact(t *testing.T) {
	f := newFake(t)
	f.CreateStatus = 403
	r := newRunner(t, f, "pull_request", "")
	r.env["GITHUB_EVENT_PATH"] = forkEvent(t, r.dir)
	p := publication(r, regressed(), reportMD("**FAIL**"))
	out := publish(t, r, inputs(r), p)
	if len(out.Notices) != 1 || !strings.Contains(out.Notices[0], "loadgate comment --from DIR") {
		t.Fatalf("notices %q", out.Notices)
	}
	var m action.Manifest
	if err := json.Unmarshal([]byte(r.read(t, filepath.Join(p.ResultsDir, action.ManifestFile))), &m); err != nil {
		t.Fatal(err)
	}
	head := "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
	if m.PR != prNum || m.HeadSHA != head || m.Report != "report.md" || m.Scenario != "demo-api" || m.ExitCode != 1 {
		t.Fatalf("manifest %+v", m)
	}

	// The workflow_run workflow: the write token, the artifact.
	f.CreateStatus = 0
	wr := newRunner(t, f, "workflow_run", "")
	wr.env["GITHUB_EVENT_PATH"] = workflowRunEvent(t, wr.dir, head)
	env, ev := wr.envAndEvent(t)
	if ev.PR != 0 || ev.HeadSHA != head || !ev.Fork {
		t.Fatalf("fork workflow_run event %+v", ev)
	}

	// The pull request moved on: no comment.
	f.SetPull(prNum, githubfake.Pull{HeadSHA: "1111111111111111111111111111111111111111"})
	o, err := action.PublishFromDir(context.Background(), wr.action(), env, ev, p.ResultsDir, m.PR, token, "", nil)
	if err != nil || len(o.Notices) != 1 || !strings.Contains(o.Notices[0], "no comment") || f.Count("POST") != 1 {
		t.Fatalf("stale head: %+v, %v", o, err)
	}
	// An artifact of another commit: no comment, not even a lookup.
	o, err = action.PublishFromDir(context.Background(), wr.action(), env, action.Event{Name: "workflow_run", HeadSHA: "2222222222222222222222222222222222222222"}, p.ResultsDir, m.PR, token, "", nil)
	if err != nil || len(o.Notices) != 1 || !strings.Contains(o.Notices[0], "artifact is of commit") {
		t.Fatalf("foreign artifact: %+v, %v", o, err)
	}

	// Regression: a pull request of another fork carrying the same commit
	// got this run's comment. The head repository and branch must match.
	f.SetPull(prNum, githubfake.Pull{HeadSHA: head, HeadRepo: "carrier/Hello-World"})
	o, err = action.PublishFromDir(context.Background(), wr.action(), env, ev, p.ResultsDir, m.PR, token, "", nil)
	if err != nil || len(o.Notices) != 1 || !strings.Contains(o.Notices[0], "carrier/Hello-World") || f.Count("POST") != 1 {
		t.Fatalf("another repository's pull request: %+v, %v", o, err)
	}
	f.SetPull(prNum, githubfake.Pull{HeadSHA: head})
	o, err = action.PublishFromDir(context.Background(), wr.action(), env, ev, p.ResultsDir, m.PR, token, "", nil)
	if err != nil || !o.CommentCreated || o.ExitCode != 0 {
		t.Fatalf("PublishFromDir: %+v, %v", o, err)
	}
	mine := f.ours(prNum, "demo-api")
	if len(mine) != 1 || !strings.Contains(mine[0].Body, "**FAIL**") || !strings.Contains(mine[0].Body, "results artifact") {
		t.Fatalf("comments %+v", mine)
	}
}

func forkEvent(t *testing.T, dir string) string {
	t.Helper()
	var p map[string]any
	if err := json.Unmarshal([]byte(mustRead(t, "testdata/pull_request-opened.json")), &p); err != nil {
		t.Fatal(err)
	}
	head := p["pull_request"].(map[string]any)["head"].(map[string]any)
	head["repo"].(map[string]any)["full_name"] = "forker/Hello-World"
	head["repo"].(map[string]any)["id"] = 99
	return writeJSON(t, dir, "fork.json", p)
}

func workflowRunEvent(t *testing.T, dir, head string) string {
	t.Helper()
	var p map[string]any
	if err := json.Unmarshal([]byte(mustRead(t, "testdata/workflow_run-completed.with-pull-requests.json")), &p); err != nil {
		t.Fatal(err)
	}
	run := p["workflow_run"].(map[string]any)
	run["event"] = "pull_request"
	run["head_sha"] = head
	run["pull_requests"] = []any{} // as GitHub sends it for a fork
	run["head_repository"].(map[string]any)["full_name"] = "forker/Hello-World"
	return writeJSON(t, dir, "workflow_run.json", p)
}

func writeJSON(t *testing.T, dir, name string, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// No token: a notice, no request, the summary written.
func TestPublishWithoutToken(t *testing.T) {
	f := newFake(t)
	r := newRunner(t, f, "pull_request", "pull_request-opened.json")
	in := inputs(r)
	in.Token = ""
	md := reportMD("**FAIL**")
	out := publish(t, r, in, publication(r, regressed(), md))
	if out.ExitCode != 1 || len(out.Notices) != 1 || !strings.Contains(out.Notices[0], "no github-token") {
		t.Fatalf("outcome %+v", out)
	}
	if len(f.Requests()) != 0 {
		t.Errorf("requests without a token: %v", f.Requests())
	}
	if r.read(t, r.summary) != md {
		t.Error("no summary")
	}
	if strings.Contains(r.stdout.String(), "add-mask") {
		t.Error("an empty token was masked")
	}
}

// Not a pull request (workflow_dispatch): no comment, no notice.
func TestPublishDispatchDoesNotComment(t *testing.T) {
	f := newFake(t)
	r := newRunner(t, f, "workflow_dispatch", "workflow_dispatch.json")
	out := publish(t, r, inputs(r), publication(r, passing(), reportMD("**PASS**")))
	if out.CommentID != 0 || len(out.Notices) != 0 || len(f.Requests()) != 0 {
		t.Fatalf("outcome %+v, requests %v", out, f.Requests())
	}
}

// A 5xx while commenting is a warning, never the step's failure.
func TestPublishServerErrorIsAWarning(t *testing.T) {
	f := newFake(t)
	f.ListStatus = 502
	r := newRunner(t, f, "pull_request", "pull_request-opened.json")
	out := publish(t, r, inputs(r), publication(r, passing(), reportMD("**PASS**")))
	if out.ExitCode != 0 || len(out.Warnings) != 1 || !strings.Contains(r.stdout.String(), "::warning::") {
		t.Fatalf("outcome %+v\n%s", out, r.stdout.String())
	}
}

func bigReport(n int) string {
	var b strings.Builder
	b.WriteString("# loadgate: demo-api\n\n## Sustain (judged)\n\n| workload | p95 | note |\n| --- | --: | --- |\n")
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "| w%06d | %d ms | é ✓ 数 |\n", i, i%97)
	}
	b.WriteString("\n## Verdict\n\n**REGRESSION** (exit 1): api_read is slower.\n")
	return b.String()
}

// A summary over 1 MiB is cut, with a note, and keeps the verdict.
func TestSummaryOverLimitIsCut(t *testing.T) {
	r := newRunner(t, nil, "workflow_dispatch", "workflow_dispatch.json")
	// What an earlier command of the same step already wrote counts too.
	if err := os.WriteFile(r.summary, []byte(strings.Repeat("x", 1000)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	md := bigReport(3 << 20)
	out := publish(t, r, inputs(r), publication(r, regressed(), md))
	got := r.read(t, r.summary)
	if !out.SummaryCut || len(got) > action.SummaryLimit {
		t.Fatalf("cut %v, summary %d bytes (limit %d)", out.SummaryCut, len(got), action.SummaryLimit)
	}
	if len(got) < action.SummaryLimit-200 {
		t.Errorf("summary %d bytes: cut far below the limit", len(got))
	}
	if !utf8.ValidString(got) || !strings.Contains(got, "GitHub shows at most 1 MiB") ||
		!strings.HasSuffix(got, "## Verdict\n\n**REGRESSION** (exit 1): api_read is slower.\n") {
		t.Errorf("summary end:\n%s", got[len(got)-600:])
	}
	if !strings.Contains(got, "\n| w000000 |") {
		t.Error("the head of the report is gone")
	}
}

// A comment over 65 536 characters is cut with a note, keeps the marker
// first and the verdict, and GitHub accepts it.
func TestCommentOverLimitIsCut(t *testing.T) {
	f := newFake(t)
	r := newRunner(t, f, "pull_request", "pull_request-opened.json")
	out := publish(t, r, inputs(r), publication(r, regressed(), bigReport(200_000)))
	if !out.CommentCreated || !out.CommentCut {
		t.Fatalf("outcome %+v", out)
	}
	body := f.ours(prNum, "demo-api")[0].Body
	if len(body) > action.CommentLimit || utf8.RuneCountInString(body) > 65536 || !utf8.ValidString(body) {
		t.Fatalf("body %d bytes", len(body))
	}
	if !strings.HasPrefix(body, action.Marker("demo-api")+"\n# loadgate: demo-api") ||
		!strings.Contains(body, "GitHub limits a comment to 65\u2009536 characters") ||
		!strings.Contains(body, "## Verdict\n\n**REGRESSION** (exit 1)") ||
		!strings.HasSuffix(body, "/actions/runs/4242) · [results artifact](https://github.com/Codertocat/Hello-World/actions/runs/4242#artifacts)</sub>") {
		t.Errorf("body start %q … end %q", body[:200], body[len(body)-400:])
	}
	// A table cut mid-way is ended by a blank line before the note.
	if !strings.Contains(body, " |\n\n> ✂️ **Cut:**") {
		t.Error("the note does not follow a whole table row and a blank line")
	}
}

// Outside Actions (no GITHUB_OUTPUT, no GITHUB_STEP_SUMMARY) nothing panics.
func TestPublishOutsideActions(t *testing.T) {
	r := newRunner(t, nil, "", "")
	delete(r.env, "GITHUB_OUTPUT")
	delete(r.env, "GITHUB_STEP_SUMMARY")
	delete(r.env, "GITHUB_ACTIONS")
	in := inputs(r)
	out := publish(t, r, in, publication(r, regressed(), reportMD("x")))
	if out.ExitCode != 1 || len(out.Notices) != 2 {
		t.Fatalf("outcome %+v", out)
	}
	if strings.Contains(r.stdout.String(), token) {
		t.Error("the token was printed outside Actions (add-mask echoes it)")
	}
}

// An unwritable outputs file is an error (go-githubactions panics; Publish
// does not).
func TestPublishUnwritableOutputIsAnError(t *testing.T) {
	r := newRunner(t, nil, "workflow_dispatch", "workflow_dispatch.json")
	r.env["GITHUB_OUTPUT"] = filepath.Join(r.dir, "missing", "output.txt")
	env, ev := r.envAndEvent(t)
	p := publication(r, passing(), "x")
	out, err := action.Publish(r.action(), env, ev, inputs(r), p)
	if err == nil || !strings.Contains(err.Error(), "setting output verdict") || out == nil || out.ExitCode != 0 {
		t.Fatalf("out %+v err %v", out, err)
	}
}

func TestExitCodeAndRegressions(t *testing.T) {
	cases := []struct {
		v                                          verdict.Value
		regression, inconclusive, threshold, never int
	}{
		{verdict.Pass, 0, 0, 0, 0},
		{verdict.Improvement, 0, 0, 0, 0},
		{verdict.Inconclusive, 0, 1, 0, 0}, // fail-on inconclusive: a required check that must decide
		{verdict.Regression, 1, 1, 0, 0},
		{verdict.Fail, 1, 1, 1, 0},
		{verdict.NotMeasured, 1, 1, 1, 0},
		{verdict.Unusable, 3, 3, 3, 3},
		{"", 1, 1, 1, 0},
	}
	for _, c := range cases {
		v := verdict.Verdict{Value: c.v}
		for failOn, want := range map[action.FailOn]int{action.FailOnRegression: c.regression, action.FailOnInconclusive: c.inconclusive,
			action.FailOnThreshold: c.threshold, action.FailOnNever: c.never} {
			if got := action.ExitCode(v, failOn); got != want {
				t.Errorf("ExitCode(%q, %s) = %d, want %d", c.v, failOn, got, want)
			}
		}
	}
	if got := action.Regressions(regressed()); strings.Join(got, ",") != "api_read,ingest" {
		t.Errorf("Regressions = %v", got)
	}
	if got := action.Regressions(verdict.Verdict{}); got == nil || len(got) != 0 {
		t.Errorf("Regressions of nothing = %#v, want empty", got)
	}
}

// Under fail-on threshold a regression is a warning, a threshold an error.
func TestAnnotationLevelFollowsFailOn(t *testing.T) {
	r := newRunner(t, nil, "workflow_dispatch", "workflow_dispatch.json")
	in := inputs(r)
	in.FailOn = action.FailOnThreshold
	out := publish(t, r, in, publication(r, regressed(), "x"))
	s := r.stdout.String()
	if out.ExitCode != 1 || !strings.Contains(s, "::warning file=examples/demo/scenario.yaml,title=loadgate demo-api%3A api_read regression::") ||
		!strings.Contains(s, "::error file=examples/demo/scenario.yaml,title=loadgate demo-api%3A ingest fail::") {
		t.Errorf("exit %d\n%s", out.ExitCode, s)
	}
}

func TestMarker(t *testing.T) {
	if got := action.Marker("demo-api"); got != "<!-- loadgate:comment scenario=demo-api -->" {
		t.Errorf("Marker = %q", got)
	}
	if got := action.Marker("x --> <b>"); strings.Count(got, "-->") != 1 || strings.Contains(got, "<b>") {
		t.Errorf("Marker of a hostile name = %q", got)
	}
	// A report quoting a marker does not carry a second live one.
	body, _ := action.CommentBody("demo-api", "see "+action.Marker("demo-api"), "")
	if strings.Count(body, "<!-- loadgate:") != 1 {
		t.Errorf("body %q", body)
	}
}
