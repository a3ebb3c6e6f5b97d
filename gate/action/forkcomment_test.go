package action_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"

	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/githubfake"
)

// forkArtifact is a fork's gate results (the gate step's Publish, its
// comment refused) and the workflow_run event of its run, which concluded
// as conclusion. forge edits the artifact's files before the commenter
// reads them.
type forkArtifact struct {
	dir string
	wr  *runner
	env *action.Env
	ev  action.Event
}

func newForkArtifact(t *testing.T, f *fakeGitHub, v verdict.Verdict, md, conclusion string) *forkArtifact {
	t.Helper()
	r := newRunner(t, f, "pull_request", "")
	r.env["GITHUB_EVENT_PATH"] = forkEvent(t, r.dir)
	in := inputs(r)
	in.Comment = false
	p := publication(r, v, md)
	publish(t, r, in, p)
	wr := newRunner(t, f, "workflow_run", "")
	wr.env["GITHUB_EVENT_PATH"] = workflowRunEvent(t, wr.dir, headSHA)
	env, ev := wr.envAndEvent(t)
	ev.RunConclusion = conclusion
	f.SetPull(prNum, githubfake.Pull{HeadSHA: headSHA})
	return &forkArtifact{dir: p.ResultsDir, wr: wr, env: env, ev: ev}
}

func (a *forkArtifact) comment(t *testing.T) (*action.Outcome, error) {
	t.Helper()
	return action.PublishFromDir(context.Background(), a.wr.action(), a.env, a.ev, a.dir, 0, token, "", nil)
}

// editJSON rewrites the artifact's JSON file name through edit.
func (a *forkArtifact) editJSON(t *testing.T, name string, edit func(map[string]any)) {
	t.Helper()
	p := filepath.Join(a.dir, name)
	var m map[string]any
	if err := json.Unmarshal([]byte(mustRead(t, p)), &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

const hostile = "x](https://evil.example/a) ![pixel](https://evil.example/p.png) @octocat <!-- hidden"

// Issue 33: the fork comment posted the artifact's Markdown as it was, so a
// fork's artifact could carry links, images and @-mentions into the base
// repository's comment, and an unclosed "<!--" hid the provenance footer.
// The comment is now rendered from verdict.json, every string escaped, the
// provenance line first: the Markdown parses to no image, no HTML but the
// marker, no link but the run's, and no mention.
func TestRegression_ForkCommentRenderedNotCopied(t *testing.T) {
	f := newFake(t)
	v := regressed()
	v.Workloads[0].Workload = "api " + hostile
	v.Workloads[0].Checks[0].Workload = v.Workloads[0].Workload
	v.Workloads[0].Phase = "sustain " + hostile
	v.Notes = []verdict.Note{{Code: verdict.NoteError, Detail: "boom " + hostile}}
	a := newForkArtifact(t, f, v, "# loadgate: demo-api\n\n"+hostile+"\n\n**PASS**\n", "failure")
	a.editJSON(t, "verdict.json", func(m map[string]any) {
		m["notes"] = []string{"note " + hostile}
		m["sides"].([]any)[0].(map[string]any)["name"] = "base " + hostile
	})
	o, err := a.comment(t)
	if err != nil || o.CommentAction != action.Created {
		t.Fatalf("outcome %+v, %v", o, err)
	}
	body := f.ours(prNum, "demo-api")[0].Body
	lines := strings.Split(body, "\n")
	if lines[0] != action.Marker("demo-api") || !strings.HasPrefix(lines[1], "<sub>⚠️ From the pull request's own results artifact") {
		t.Errorf("the provenance line is not first:\n%s", body)
	}
	if !strings.Contains(body, "**FAIL** (exit 1)") || strings.Contains(body, "**PASS**") {
		t.Errorf("the comment does not show verdict.json's verdict (fail), or shows the Markdown's:\n%s", body)
	}
	for _, n := range []string{"api ", "sustain ", "boom ", "note ", "base "} {
		if !strings.Contains(body, n) {
			t.Errorf("the comment lacks the escaped %q string", n)
		}
	}
	checkInert(t, body)
}

// checkInert fails t when body, parsed as GitHub Markdown, holds an image,
// raw HTML other than the marker line, a link other than the run's, or an
// @-mention.
func checkInert(t *testing.T, body string) {
	t.Helper()
	src := []byte(body)
	doc := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(text.NewReader(src))
	err := ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Image:
			t.Errorf("an image: %s", n.Destination)
		case *ast.Link:
			if !strings.HasPrefix(string(n.Destination), "https://github.com/Codertocat/Hello-World/actions/runs/") {
				t.Errorf("a link to %s", n.Destination)
			}
		case *ast.AutoLink:
			t.Errorf("an autolink to %s", n.URL(src))
		case *ast.RawHTML:
			var b bytes.Buffer
			for i := 0; i < n.Segments.Len(); i++ {
				seg := n.Segments.At(i)
				b.Write(seg.Value(src))
			}
			if s := b.String(); s != "<sub>" && s != "</sub>" {
				t.Errorf("raw HTML %q", s)
			}
		case *ast.HTMLBlock:
			var b bytes.Buffer
			for i := 0; i < n.Lines().Len(); i++ {
				seg := n.Lines().At(i)
				b.Write(seg.Value(src))
			}
			if s := strings.TrimSpace(b.String()); !strings.HasPrefix(s, action.Marker("demo-api")) || strings.Count(s, "<!--") != 1 {
				t.Errorf("an HTML block %q", s)
			}
		case *ast.Text:
			if regexp.MustCompile(`(^|[^\\\w])@[A-Za-z0-9]`).Match(n.Segment.Value(src)) {
				t.Errorf("an @-mention in %q", n.Segment.Value(src))
			}
		}
		return ast.WalkContinue, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(regexp.MustCompile(`(^|[^\\])<!--`).FindAllString(body, -1)); n != 1 {
		t.Errorf("%d HTML comment openings, want the marker's alone", n)
	}
}

// Issue 33: an artifact claiming pass, consistently in its manifest and its
// verdict.json, from a run that failed: a notice, no comment.
func TestRegression_ForkPassClaimedOnAFailedRun(t *testing.T) {
	f := newFake(t)
	a := newForkArtifact(t, f, regressed(), reportMD("**FAIL**"), "failure")
	a.editJSON(t, action.ManifestFile, func(m map[string]any) { m["verdict"], m["exit_code"] = "pass", 0 })
	a.editJSON(t, "verdict.json", func(m map[string]any) { m["value"], m["exit_code"] = "pass", 0 })
	o, err := a.comment(t)
	if err != nil || len(o.Notices) != 1 || !strings.Contains(o.Notices[0], "claims pass but its run concluded failure") || f.Count("POST") != 0 {
		t.Fatalf("forged pass: %+v, %v", o, err)
	}
	golden(t, "fork_notice.golden", a.wr.stdout.String())

	// The manifest and verdict.json disagree: a notice too.
	a = newForkArtifact(t, f, regressed(), reportMD("**FAIL**"), "failure")
	a.editJSON(t, action.ManifestFile, func(m map[string]any) { m["verdict"], m["exit_code"] = "pass", 0 })
	o, err = a.comment(t)
	if err != nil || len(o.Notices) != 1 || !strings.Contains(o.Notices[0], "verdict.json says fail") || f.Count("POST") != 0 {
		t.Fatalf("manifest and verdict.json disagree: %+v, %v", o, err)
	}
	// The true verdict of the failed run is commented.
	a = newForkArtifact(t, f, regressed(), reportMD("**FAIL**"), "failure")
	if o, err := a.comment(t); err != nil || o.CommentAction != action.Created {
		t.Fatalf("a failed run's fail: %+v, %v", o, err)
	}
}

// The fork comment as GitHub receives it.
func TestForkCommentGolden(t *testing.T) {
	f := newFake(t)
	a := newForkArtifact(t, f, regressed(), reportMD("**FAIL**"), "failure")
	if o, err := a.comment(t); err != nil || o.CommentAction != action.Created {
		t.Fatalf("%+v, %v", o, err)
	}
	body := f.ours(prNum, "demo-api")[0].Body
	checkInert(t, body)
	golden(t, "fork_comment.md.golden", body+"\n")
}

// Issue 33: the artifact was read with os.Open after an Lstat of the file
// alone, so a symbolic link to a directory on the way was followed. Every
// component is now refused when it is a symbolic link, and nothing outside
// the results directory is read (os.OpenRoot).
func TestRegression_ArtifactSymlinksRefused(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "report.md"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "report.md"), filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "real", "ok.md"), []byte("ok"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"sub/report.md": "sub is a symbolic link",
		"link.md":       "link.md is a symbolic link",
		"../x":          "not inside the results directory",
		"real":          "not a regular file",
	} {
		if _, err := action.ReadArtifactFile(dir, name, 1<<10); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadArtifactFile(%s): %v, want %q", name, err, want)
		}
	}
	if b, err := action.ReadArtifactFile(dir, "real/ok.md", 1<<10); err != nil || string(b) != "ok" {
		t.Errorf("a plain file: %q, %v", b, err)
	}
	if _, err := action.ReadArtifactFile(dir, "real/ok.md", 1); err == nil {
		t.Error("a file over the limit was read")
	}

	// Through the commenter: a manifest naming a report behind a link.
	f := newFake(t)
	a := newForkArtifact(t, f, regressed(), reportMD("**FAIL**"), "failure")
	if err := os.Symlink(outside, filepath.Join(a.dir, "sub")); err != nil {
		t.Fatal(err)
	}
	a.editJSON(t, action.ManifestFile, func(m map[string]any) { m["report"] = "sub/report.md" })
	if _, err := a.comment(t); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a report behind a directory link: %v", err)
	}
}

// golden compares got with testdata/name (-update rewrites it).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" { // comment_golden_test.go's -update
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./gate/action -run Fork -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run go test ./gate/action -run Fork -update after checking):\n%s", path, got)
	}
}
