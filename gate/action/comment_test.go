package action_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/githubfake"
)

// A token kind: what GET /user and GraphQL's viewer answer, and whom the
// token's comments are by.
type tokenKind struct {
	name   string
	login  string   // GET /user's login; "" → 403
	viewer string   // GraphQL viewer's login; "" → 403
	as     fakeUser // the author of the token's comments
}

var tokenKinds = []tokenKind{
	{"personal token", "loadgate-ci", "", fakeUser{Login: "loadgate-ci", Type: "User"}},
	{"GITHUB_TOKEN (/user 403)", "", "github-actions[bot]", fakeUser{Login: "github-actions[bot]", Type: "Bot"}},
	{"app token (/user 403)", "", "loadgate-app[bot]", fakeUser{Login: "loadgate-app[bot]", Type: "Bot"}},
	{"user token refused on /user", "", "loadgate-ci", fakeUser{Login: "loadgate-ci", Type: "User"}},
	{"GITHUB_TOKEN, /user and GraphQL 403", "", "", fakeUser{Login: "github-actions[bot]", Type: "Bot"}},
	{"app token, /user and GraphQL 403", "", "", fakeUser{Login: "loadgate-app[bot]", Type: "Bot"}},
}

// An outcome: the verdicts of two gate runs.
type outcome struct {
	name        string
	first, then verdict.Value
}

var outcomes = []outcome{
	{"pass, then pass", verdict.Pass, verdict.Pass},
	{"pass, then regression", verdict.Pass, verdict.Regression},
	{"usable, then unusable", verdict.Regression, verdict.Unusable},
	{"unusable, then usable", verdict.Unusable, verdict.Pass},
}

const (
	baseSHA = "f95f852bd8fca8fcc58a9a2d6c842781e32a215e"
	headSHA = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
)

// gateMarkdown renders the gate report of a run of verdict v, as the gate
// does (report.CompareMarkdown); an unusable one knows only the scenario,
// the commits and the reason.
func gateMarkdown(t *testing.T, v verdict.Value) (verdict.Verdict, string) {
	t.Helper()
	gr := rounds.Outcome{
		Scenario: result.Scenario{Name: "demo-api", Hash: "sha256:abcd"},
		Base:     rounds.SideResults{Name: "base", Ref: baseSHA, Commit: baseSHA},
		Head:     rounds.SideResults{Name: "head", Ref: "working tree", Commit: headSHA},
		Rounds:   3,
	}
	switch v {
	case verdict.Unusable:
		gr.Verdict = verdict.Verdict{Value: v, Workloads: []verdict.WorkloadVerdict{}, Notes: []verdict.Note{{Code: verdict.NoteError, Detail: "gate: head side (ec26c3e57ca3) is unusable: compose up: Cannot connect to the Docker daemon"}}}
	case verdict.Regression:
		gr.Verdict = regressed()
		gr.Verdict.Value = verdict.Regression
	default:
		gr.Verdict = passing()
	}
	var b bytes.Buffer
	if err := report.CompareMarkdown(&b, gr); err != nil {
		t.Fatal(err)
	}
	return gr.Verdict, b.String()
}

// seedImpostors adds what must never be edited nor removed: the marker as
// first line by a person, by another app, by a user whose login is the bot's
// without [bot]; the token's own account quoting the marker mid-body.
func seedImpostors(f *fakeGitHub, own fakeUser) map[int64]string {
	m := action.Marker("demo-api")
	saved := map[int64]string{}
	for _, c := range []*fakeComment{
		f.Seed(prNum, "mallory", "User", m+"\n# loadgate gate: demo-api — PASS\ntrust me"),
		f.Seed(prNum, "other-app[bot]", "Bot", m+"\nnot ours"),
		f.Seed(prNum, "github-actions", "User", m+"\na user named like the bot"),
		f.Seed(prNum, "loadgate-app", "User", m+"\na user named like the app"),
		f.Seed(prNum, own.Login, own.Type, "Quoting:\n"+m+"\nnot a marker line"),
		f.Seed(prNum, own.Login, own.Type, action.Marker("other-scenario")+"\nanother scenario"),
	} {
		saved[c.ID] = c.Body
	}
	return saved
}

// loadgateComments are the scenario's comments by the token's account:
// what a reviewer sees as loadgate's comment.
func (f *fakeGitHub) loadgateComments(own fakeUser) []*fakeComment {
	var out []*fakeComment
	for _, c := range f.Comments(prNum) {
		if c.User == own && strings.HasPrefix(c.Body, action.Marker("demo-api")+"\n") {
			out = append(out, c)
		}
	}
	return out
}

// runGate is one gate step on a pull_request event (Publish).
func runGate(t *testing.T, f *fakeGitHub, runID string, v verdict.Value) *action.Outcome {
	t.Helper()
	r := newRunner(t, f, "pull_request", "pull_request-opened.json")
	r.env["GITHUB_RUN_ID"] = runID
	vd, md := gateMarkdown(t, v)
	return publish(t, r, inputs(r), publication(r, vd, md))
}

// runFork is the fork pattern: the gate step on the fork's pull request
// writes its results (the comment refused, 403), then the workflow_run
// workflow comments from them with its own token (PublishFromDir).
func runFork(t *testing.T, f *fakeGitHub, runID string, v verdict.Value) *action.Outcome {
	t.Helper()
	r := newRunner(t, f, "pull_request", "")
	r.env["GITHUB_EVENT_PATH"] = forkEvent(t, r.dir)
	in := inputs(r)
	in.Comment = false // the fork's token cannot comment
	vd, md := gateMarkdown(t, v)
	p := publication(r, vd, md)
	publish(t, r, in, p)

	wr := newRunner(t, f, "workflow_run", "")
	wr.env["GITHUB_EVENT_PATH"] = workflowRunEvent(t, wr.dir, headSHA)
	env, ev := wr.envAndEvent(t)
	fmt.Sscan(runID, &ev.RunID) // the triggering run
	f.SetPull(prNum, githubfake.Pull{HeadSHA: headSHA})
	out, err := action.PublishFromDir(context.Background(), wr.action(), env, ev, p.ResultsDir, 0, token, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func did(o *action.Outcome) string {
	s := o.CommentAction
	if s == "" {
		s = "no comment"
	}
	if len(o.CommentRemoved) > 0 {
		s += fmt.Sprintf(", %d older copy removed", len(o.CommentRemoved))
	}
	return s
}

// TestCommentPaths is the table of every comment path: event × token kind
// × outcome → the count of loadgate comments after two runs, always 1; a
// third run identical to the second leaves the comment unchanged (no
// PATCH) where the token's account is known; no comment of anyone else is
// ever edited or removed. Run with -v to print the table.
func TestCommentPaths(t *testing.T) {
	type row struct{ event, token, outcome, run1, run2, run3, after2, after3 string }
	var rows []row
	for _, event := range []string{"pull_request", "workflow_run"} {
		for _, tk := range tokenKinds {
			for _, oc := range outcomes {
				name := event + "/" + tk.name + "/" + oc.name
				t.Run(name, func(t *testing.T) {
					f := newFake(t)
					f.Login, f.Viewer, f.As = tk.login, tk.viewer, &tk.as
					saved := seedImpostors(f, tk.as)
					run := runGate
					if event == "workflow_run" {
						run = runFork
					}
					o1 := run(t, f, "4242", oc.first)
					o2 := run(t, f, "4243", oc.then)
					n2 := len(f.loadgateComments(tk.as))
					o3 := run(t, f, "4243", oc.then) // a re-run: the same body
					mine := f.loadgateComments(tk.as)
					rows = append(rows, row{event, tk.name, oc.name, did(o1), did(o2), did(o3), fmt.Sprint(n2), fmt.Sprint(len(mine))})

					if n2 != 1 || len(mine) != 1 {
						t.Fatalf("loadgate comments after two runs %d, after three %d; want 1 (runs: %s / %s / %s)", n2, len(mine), did(o1), did(o2), did(o3))
					}
					if o1.CommentAction != action.Created {
						t.Errorf("first run: %s, want created", did(o1))
					}
					assumedWrong := tk.viewer == "" && tk.login == "" && tk.as.Login != action.GitHubActionsBot
					if assumedWrong {
						// The account was guessed wrong: the created comment's
						// author corrects it, and our older copy goes.
						if o2.CommentAction != action.Created || len(o2.CommentRemoved) != 1 || o2.CommentAuthor.Login != tk.as.Login {
							t.Errorf("second run: %s as %s, want created with the older copy removed", did(o2), o2.CommentAuthor)
						}
					} else {
						if o2.CommentAction != action.Edited || o2.CommentID != o1.CommentID {
							t.Errorf("second run: %s %d, want edited %d", did(o2), o2.CommentID, o1.CommentID)
						}
						if o3.CommentAction != action.Unchanged || o3.CommentID != o1.CommentID {
							t.Errorf("third run: %s, want unchanged", did(o3))
						}
					}
					// Never someone else's.
					for id, body := range saved {
						found := false
						for _, c := range f.Comments(prNum) {
							if c.ID == id {
								found = true
								if c.Body != body {
									t.Errorf("comment %d by %s was edited to %.80q", id, c.User.Login, c.Body)
								}
							}
						}
						if !found {
							t.Errorf("comment %d was removed", id)
						}
					}
					// The comment: the verdict word in the title, the detailed
					// verdict last, then the footer's links.
					body := mine[0].Body
					word := action.VerdictWord(oc.then)
					if !strings.Contains(body, "\n# loadgate gate: demo-api — "+word+"\n") {
						t.Errorf("no title with %s:\n%s", word, body)
					}
					runURL := "https://github.com/Codertocat/Hello-World/actions/runs/4243"
					links := "[workflow run](" + runURL + ") · [results artifact](" + runURL + "#artifacts)</sub>"
					if event == "workflow_run" {
						// Rendered again from verdict.json, the provenance first.
						lines := strings.Split(body, "\n")
						if !strings.HasPrefix(lines[1], "<sub>⚠️ From the pull request's own results artifact") || !strings.HasSuffix(lines[1], links) {
							t.Errorf("provenance line: %q", lines[1])
						}
					} else {
						if !strings.HasSuffix(body, links) {
							t.Errorf("footer: %q", body[max(0, len(body)-300):])
						}
						if i, j := strings.LastIndex(body, "\n## Verdict\n"), strings.LastIndex(body, "\n## "); i < 0 || i != j {
							t.Errorf("the verdict is not the last section")
						}
					}
					if oc.then == verdict.Unusable {
						for _, s := range []string{"demo-api", baseSHA[:12], headSHA[:12], "Cannot connect to the Docker daemon"} {
							if !strings.Contains(body, s) {
								t.Errorf("the unusable comment does not name %q:\n%s", s, body)
							}
						}
					}
				})
			}
		}
	}
	var b strings.Builder
	b.WriteString("| event | token | outcome | run 1 | run 2 | run 3 (= run 2) | loadgate comments after 2 runs | after 3 |\n| --- | --- | --- | --- | --- | --- | --: | --: |\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.event, r.token, r.outcome, r.run1, r.run2, r.run3, r.after2, r.after3)
	}
	t.Logf("comment paths:\n%s", b.String())
	if p := os.Getenv("LOADGATE_COMMENT_TABLE"); p != "" {
		if err := os.WriteFile(filepath.Clean(p), []byte(b.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// Older versions left duplicates (issue 10): the next run keeps the oldest
// of ours, edits it, and removes the others; never another's.
func TestUpsertRemovesOurDuplicates(t *testing.T) {
	f := newFake(t)
	f.Viewer = botName
	m := action.Marker("demo-api")
	keep := f.Seed(prNum, botName, "Bot", m+"\nold 1")
	dup := f.Seed(prNum, botName, "Bot", m+"\nold 2")
	imp := f.Seed(prNum, "mallory", "User", m+"\nmine")
	out := runGate(t, f, "4242", verdict.Pass)
	if out.CommentAction != action.Edited || out.CommentID != keep.ID || len(out.CommentRemoved) != 1 || out.CommentRemoved[0] != dup.ID {
		t.Fatalf("outcome %+v", out)
	}
	if f.Count("POST") != 0 || len(f.Deleted()) != 1 || imp.Body != m+"\nmine" {
		t.Errorf("posts %d, deleted %v, impostor %q", f.Count("POST"), f.Deleted(), imp.Body)
	}
}

// A token refused on GET /user is never guessed to be "any bot": an
// impostor bot's comment with the marker is not edited, and the second run
// edits our own comment (issue 10: every run added a comment).
func TestTokenRefusedOnUser(t *testing.T) {
	f := newFake(t)
	f.Viewer = botName // GITHUB_TOKEN: /user 403, viewer github-actions[bot]
	imp := f.Seed(prNum, "evil-app[bot]", "Bot", action.Marker("demo-api")+"\nfake PASS")
	o1 := runGate(t, f, "4242", verdict.Regression)
	o2 := runGate(t, f, "4243", verdict.Pass)
	if o1.CommentAction != action.Created || o2.CommentAction != action.Edited || o2.CommentID != o1.CommentID || f.Count("POST") != 1 {
		t.Fatalf("runs %s, %s; %d comments created", did(o1), did(o2), f.Count("POST"))
	}
	if imp.Body != action.Marker("demo-api")+"\nfake PASS" || len(f.Edited()) != 1 || f.Edited()[0] != o1.CommentID {
		t.Errorf("edited %v; impostor %q", f.Edited(), imp.Body)
	}
	if o2.CommentAuthor.Login != botName || o2.CommentAuthor.How != "GraphQL viewer" {
		t.Errorf("author %s", o2.CommentAuthor)
	}
	var gql bool
	for _, r := range f.Requests() {
		gql = gql || r == "POST /graphql"
	}
	if !gql {
		t.Error("GraphQL viewer was not asked")
	}
}

// A 5xx on GET /user is not a refusal: no guess (which could duplicate a
// personal token's comment), a warning, no comment.
func TestUserServerErrorIsNoGuess(t *testing.T) {
	f := newFake(t)
	f.UserStatus = 502
	out := runGate(t, f, "4242", verdict.Pass)
	if out.CommentAction != "" || f.Count("POST") != 0 || len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0], "GET /user") {
		t.Fatalf("outcome %+v", out)
	}
}

// "edited" is printed only when the body changed; "unchanged" otherwise.
func TestCommentLogSaysUnchanged(t *testing.T) {
	f := newFake(t)
	f.Login = "loadgate-ci"
	for i, want := range []string{"created", "edited", "unchanged"} {
		r := newRunner(t, f, "pull_request", "pull_request-opened.json")
		v := verdict.Pass
		if i == 0 {
			v = verdict.Regression
		}
		vd, md := gateMarkdown(t, v)
		publish(t, r, inputs(r), publication(r, vd, md))
		if !strings.Contains(r.stdout.String(), "loadgate: "+want+" comment ") {
			t.Errorf("run %d: log lacks %q:\n%s", i+1, want, r.stdout.String())
		}
		if want != "edited" && strings.Contains(r.stdout.String(), " edited comment") {
			t.Errorf("run %d says edited", i+1)
		}
	}
	if len(f.Edited()) != 1 {
		t.Errorf("PATCHes %v, want 1", f.Edited())
	}
}

// The footer's artifact link: the artifact-url input when given, else the
// run's artifacts list; on the loadgate comment path, --artifact-url.
func TestFooterLinksTheArtifact(t *testing.T) {
	f := newFake(t)
	f.Login = "loadgate-ci"
	r := newRunner(t, f, "pull_request", "pull_request-opened.json")
	in := inputs(r)
	in.ArtifactURL = "https://github.com/Codertocat/Hello-World/actions/runs/4242/artifacts/123"
	publish(t, r, in, publication(r, passing(), reportMD("**PASS**")))
	body := f.ours(prNum, "demo-api")[0].Body
	if !strings.Contains(body, "[results artifact]("+in.ArtifactURL+")") {
		t.Errorf("footer %q", body[len(body)-300:])
	}

	// loadgate comment --artifact-url (a link with parentheses is encoded).
	wr := newRunner(t, f, "workflow_run", "")
	wr.env["GITHUB_EVENT_PATH"] = workflowRunEvent(t, wr.dir, headSHA)
	env, ev := wr.envAndEvent(t)
	f.SetPull(prNum, githubfake.Pull{HeadSHA: headSHA})
	if _, err := action.PublishFromDir(context.Background(), wr.action(), env, ev, in.ResultsDir, prNum, token, "https://github.com/x/y/a(1)", nil); err != nil {
		t.Fatal(err)
	}
	body = f.ours(prNum, "demo-api")[0].Body
	if first := strings.Split(body, "\n")[1]; !strings.Contains(first, "[workflow run](https://github.com/Codertocat/Hello-World/actions/runs/289782451)") ||
		!strings.Contains(first, "[results artifact](https://github.com/x/y/a%281%29)") {
		t.Errorf("provenance line %q", first)
	}
}

// A manifest from the artifact (untrusted) with a hostile scenario name,
// verdict or head is refused: no marker is ever built from it.
func TestManifestIsChecked(t *testing.T) {
	for _, bad := range []string{
		`"scenario": "../x"`, `"scenario": "demo\n# PASS"`, `"scenario": ""`,
		`"verdict": "pass\n# hi"`, `"head_sha": "ec26c3e) [x](y"`,
	} {
		dir := t.TempDir()
		m := `{"schema":"loadgate/github/v1","scenario":"demo-api","pr":2,"head_sha":"` + headSHA + `","verdict":"pass","report":"r.md",` + bad + `}`
		if err := os.WriteFile(filepath.Join(dir, action.ManifestFile), []byte(m), 0o644); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "r.md"), []byte("x"), 0o644)
		if _, _, err := action.ReadManifest(dir); err == nil {
			t.Errorf("manifest with %s accepted", bad)
		}
	}
}

// Strings from a result, a scenario or an artifact cannot make Markdown
// structure: no heading from a newline, no cell from a pipe, no link, no
// mention, no HTML.
func TestEscapeMarkdown(t *testing.T) {
	cases := map[string]string{
		"demo-api":                "demo-api",
		"api_read":                "api_read",
		"_x_":                     `\_x\_`,
		"x\n# PASS":               `x \# PASS`,
		"a|b":                     `a\|b`,
		"[click](http://x)":       `\[click\](http://x)`,
		"<img src=x>":             `\<img src=x\>`,
		"@octocat #1":             `\@octocat \#1`,
		"- item":                  `\- item`,
		"1. first":                `1\. first`,
		"**bold** `code` ~s~ $m$": `\*\*bold\*\* \` + "`" + `code\` + "`" + ` \~s\~ \$m\$`,
		"<!-- loadgate:x -->":     `\<!-- loadgate:x --\>`,
		"rtl\u202eevil":           "rtlevil",
		"tab\there\r\nnext":       "tab here  next",
	}
	for in, want := range cases {
		if got := action.EscapeMarkdown(in); got != want {
			t.Errorf("EscapeMarkdown(%q) = %q, want %q", in, got, want)
		}
		if strings.ContainsAny(action.EscapeMarkdown(in), "\n\r") {
			t.Errorf("EscapeMarkdown(%q) has a line break", in)
		}
	}
	for in, want := range map[string]string{
		"demo-api": "`demo-api`", "a|b": "`a\\|b`", "a`b": "``a`b``", "`x": "`` `x ``", "x\ny": "`x y`",
	} {
		if got := action.EscapeCode(in); got != want {
			t.Errorf("EscapeCode(%q) = %q, want %q", in, got, want)
		}
	}
}

// The title carries the verdict word and the scenario's name, also when
// the report rendered it without a name (an unusable gate).
func TestTitled(t *testing.T) {
	for _, c := range []struct{ md, want string }{
		{"# loadgate gate: demo-api\n\nx\n\n## Verdict\n", "# loadgate gate: demo-api — REGRESSION\n\nx\n\n## Verdict\n"},
		{"> **UNUSABLE GATE** — why.\n\n# loadgate gate: \n\nx", "> **UNUSABLE GATE** — why.\n\n# loadgate gate: demo-api — REGRESSION\n\nx"},
		{"# loadgate: demo-api\n", "# loadgate: demo-api — REGRESSION\n"},
		{"no title\n## Verdict\n", "# loadgate: demo-api — REGRESSION\n\nno title\n## Verdict\n"},
	} {
		if got := action.Titled(c.md, "demo-api", verdict.Regression); got != c.want {
			t.Errorf("Titled(%q) = %q, want %q", c.md, got, c.want)
		}
	}
	if got := action.Titled("# loadgate gate: x\n", "a\n# b", "bogus"); got != "# loadgate gate: a \\# b — UNKNOWN\n" {
		t.Errorf("hostile: %q", got)
	}
}

// Secrets resolved from ${ENV} are masked before anything is logged, inside
// Actions only, line by line, escaped as the runner unescapes them.
func TestMaskValues(t *testing.T) {
	var b bytes.Buffer
	in := map[string]string{"GITHUB_ACTIONS": "true"}
	action.MaskEnv(&b, func(k string) string { return in[k] }, map[string]string{
		"API_TOKEN": "s3cr3t-value", "MULTI": "line-one\nline-two\n", "PCT": "100%done", "SHORT": "ab", "EMPTY": "", "DUP": "s3cr3t-value",
	})
	want := "::add-mask::s3cr3t-value\n::add-mask::line-one\n::add-mask::line-two\n::add-mask::100%25done\n"
	if b.String() != want {
		t.Errorf("masks:\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	action.MaskValues(&b, func(string) string { return "" }, "s3cr3t-value")
	if b.Len() != 0 {
		t.Errorf("outside Actions: %q (add-mask echoes the secret)", b.String())
	}
}

func TestWhoAmIGraphQLURL(t *testing.T) {
	for api, want := range map[string]string{
		"https://api.github.com":     "https://api.github.com/graphql",
		"https://ghe.example/api/v3": "https://ghe.example/api/graphql",
	} {
		if got := (&action.Env{APIURL: api}).GraphQL(); got != want {
			t.Errorf("GraphQL() of %s = %s, want %s", api, got, want)
		}
	}
	if got := (&action.Env{APIURL: "x", GraphQLURL: "https://g/graphql"}).GraphQL(); got != "https://g/graphql" {
		t.Errorf("GITHUB_GRAPHQL_URL not used: %s", got)
	}
}

// A scenario's ${ENV} references cannot read the runner's or the action's
// tokens.
func TestWithoutRunnerSecrets(t *testing.T) {
	env := map[string]string{"GITHUB_TOKEN": "t1", "INPUT_GITHUB-TOKEN": "t2", "ACTIONS_RUNTIME_TOKEN": "t3", "API_TOKEN": "ok", "INPUT_SCENARIO": "s"}
	look := action.WithoutRunnerSecrets(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	for k := range env {
		v, ok := look(k)
		if hidden := action.IsRunnerSecret(k); hidden == ok || hidden && v != "" {
			t.Errorf("%s: %q %v (runner secret %v)", k, v, ok, hidden)
		}
	}
	if _, ok := look("API_TOKEN"); !ok {
		t.Error("a scenario's own secret is hidden")
	}
}

// TestRegression_CutNoteGroupsLikeReports: the cut note of a long comment
// wrote its numbers with an ordinary space ("123 456") where every report
// groups digits with a thin space; it now writes them as report.Count does.
func TestRegression_CutNoteGroupsLikeReports(t *testing.T) {
	md := "# loadgate: demo-api\n\n" + strings.Repeat("| w | 1 ms |\n", 9000)
	md += strings.Repeat("x", 123456-len(md))
	body, cut := action.CommentBody("demo-api", md, "")
	if !cut {
		t.Fatalf("a %d-byte report was not cut", len(md))
	}
	for _, want := range []string{
		"GitHub limits a comment to 65\u2009536 characters",
		"(123\u2009456 bytes in all)",
		"(" + report.Count(int64(len(md))) + " bytes in all)",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the cut note lacks %q:\n%s", want, body[len(body)-400:])
		}
	}
	if strings.Contains(body, "123 456") || strings.Contains(body, "65 536") {
		t.Error("the cut note groups digits with an ordinary space")
	}
}
