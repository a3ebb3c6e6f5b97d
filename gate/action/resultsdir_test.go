package action_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/action"
)

// Attack (issue 46): head commits loadgate-results/loadgate-github.json (and the fallback
// loadgate-comment.md) as symbolic links to a runner file (~/.local/bin/bash); the gate step
// wrote its manifest through them. Now the links are replaced, their targets untouched.
func TestRegression_HeadCommitsManifestAsSymlink(t *testing.T) {
	r := newRunner(t, nil, "workflow_dispatch", "workflow_dispatch.json")
	p := publication(r, passing(), "# report\n")
	p.ReportPath, p.CommentPath = "", "" // the Markdown goes to the fallback file
	victim := filepath.Join(t.TempDir(), "bash")
	if err := os.WriteFile(victim, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(p.ResultsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{action.ManifestFile, "loadgate-comment.md"} {
		if err := os.Symlink(victim, filepath.Join(p.ResultsDir, name)); err != nil {
			t.Fatal(err)
		}
	}
	env, ev := r.envAndEvent(t)
	if _, err := action.Publish(r.action(), env, ev, inputs(r), p); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "#!/bin/sh\n" {
		t.Errorf("written through the committed symlink: %q", b)
	}
	for _, name := range []string{action.ManifestFile, "loadgate-comment.md"} {
		fi, err := os.Lstat(filepath.Join(p.ResultsDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !fi.Mode().IsRegular() {
			t.Errorf("%s: %v, want a regular file", name, fi.Mode())
		}
	}
	if _, md, err := action.ReadManifest(p.ResultsDir); err != nil || md != "# report\n" {
		t.Errorf("ReadManifest: %q, %v", md, err)
	}
}

// Attack (issue 46): head commits loadgate-results itself as a symbolic link to a runner
// directory: the gate step refuses it (an error naming the link), writing nothing there.
func TestRegression_HeadCommitsResultsDirAsSymlink(t *testing.T) {
	r := newRunner(t, nil, "workflow_dispatch", "workflow_dispatch.json")
	p := publication(r, passing(), "# report\n")
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, p.ResultsDir); err != nil {
		t.Fatal(err)
	}
	env, ev := r.envAndEvent(t)
	out, err := action.Publish(r.action(), env, ev, inputs(r), p)
	if err == nil || !strings.Contains(err.Error(), "symbolic link") || out.ExitCode != 0 {
		t.Fatalf("Publish through a symlinked results-dir: %v (exit %d), want an error naming the link", err, out.ExitCode)
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Errorf("written through the symlinked results-dir: %v", ents)
	}
}
