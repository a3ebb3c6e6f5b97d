package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
)

// rewriteResult reads the result at src, lets edit change it, and writes it
// to a new file.
func rewriteResult(t *testing.T, src string, edit func(r *result.Result)) string {
	t.Helper()
	r, err := result.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	edit(r)
	p := filepath.Join(t.TempDir(), "result.json")
	if err := r.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// listFiles lists every file under dir, relative to it.
func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// Issue 10: a result whose scenario.name was "../../escape" made baseline
// save write escape/b1.json in the parent of --dir. Every name that goes
// into the path is checked (scenario.ValidName) and the final path must be
// inside baselines/: refused with exit 2, nothing written anywhere.
func TestRegression_BaselineSaveEscapesDir(t *testing.T) {
	res := runResult(t, cmpScenario, 0)
	for _, name := range []string{"../../escape", "..", "a/b", "/etc/x", "demo..api", "x\n# PASS", ""} {
		top := t.TempDir()
		root := filepath.Join(top, "a", "repo")
		if err := os.MkdirAll(root, 0o755); err != nil {
			t.Fatal(err)
		}
		bad := rewriteResult(t, res, func(r *result.Result) { r.Scenario.Name = name })
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), []string{"baseline", "save", "--result", bad, "--name", "b1", "--dir", root}, &stdout, &stderr)
		if code(err) != 2 || !strings.Contains(err.Error(), "not a valid scenario name") {
			t.Errorf("scenario name %q: exit %d (%v), want 2 naming the scenario name", name, code(err), err)
		}
		if files := listFiles(t, top); len(files) != 0 {
			t.Errorf("scenario name %q: files written: %v", name, files)
		}
	}
	// The baseline's own name, likewise.
	root := t.TempDir()
	var stdout, stderr bytes.Buffer
	for _, name := range []string{"../x", "..", "a..b", "x/y"} {
		if got := code(run(context.Background(), []string{"baseline", "save", "--result", res, "--name", name, "--dir", root}, &stdout, &stderr)); got != 2 {
			t.Errorf("--name %q: exit %d, want 2", name, got)
		}
	}
	if files := listFiles(t, root); len(files) != 0 {
		t.Errorf("files written: %v", files)
	}
}

// A baselines/<scenario> that is a symbolic link out of the repository (a
// pull request can commit one) is not written through.
func TestRegression_BaselineSaveFollowsSymlinkOut(t *testing.T) {
	res := runResult(t, cmpScenario, 0)
	root, outside := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "baselines"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "baselines", "cmp")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"baseline", "save", "--result", res, "--name", "main", "--dir", root}, &stdout, &stderr)
	if code(err) != 2 || !strings.Contains(err.Error(), "leads out of") {
		t.Errorf("exit %d (%v), want 2: the path leads out of baselines/", code(err), err)
	}
	if files := listFiles(t, outside); len(files) != 0 {
		t.Errorf("written outside through the link: %v", files)
	}
	if _, err := rounds.LoadBaseline(root, "main", ""); err == nil {
		t.Error("a baseline behind a link out of baselines/ was read")
	}
}

// Issue 10: baseline save stored results that compare and report refuse
// (exit 0 there, exit 3 here). It checks them with the same function
// compare does (verdict.Thresholds' reasons): exit 3 naming why, nothing
// stored; and loadBaseline refuses such a file if one is stored anyway.
func TestRegression_BaselineSaveStoresBrokenResults(t *testing.T) {
	res := runResult(t, cmpScenario, 0)
	cases := []struct {
		name string
		edit func(r *result.Result)
		want string
	}{
		{"offered≠recorded", func(r *result.Result) { r.Recorded-- }, "offered"},
		{"negative counts", func(r *result.Result) {
			w := &r.Phases[0].Workloads[0]
			w.Abandoned, w.Offered = -1, w.Offered-1
		}, "negative count"},
		{"failure classes not adding up", func(r *result.Result) {
			w := &r.Phases[0].Workloads[0]
			w.Failures = map[string]int64{"status_500": 7}
		}, "failures by class sum to 7"},
		{"no judged phase", func(r *result.Result) {
			for i := range r.Phases {
				r.Phases[i].Judged, r.Phases[i].Recover = false, false
			}
		}, "no judged phase"},
		{"latency count≠successes", func(r *result.Result) {
			w := &r.Phases[0].Workloads[0]
			w.Succeeded--
			w.Failed++
			w.Failures = map[string]int64{"timeout": w.Failed}
		}, "latency summary counts"},
		{"marked unusable", func(r *result.Result) {
			r.Usable, r.Unusable = false, []string{"the stack died"}
		}, "the stack died"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bad := rewriteResult(t, res, c.edit)
			// compare refuses it: exit 3.
			var stdout, stderr bytes.Buffer
			if got := code(run(context.Background(), []string{"compare", bad, bad}, &stdout, &stderr)); got != 3 {
				t.Fatalf("compare: exit %d, want 3 (the case is not broken for compare)", got)
			}
			root := t.TempDir()
			err := run(context.Background(), []string{"baseline", "save", "--result", bad, "--name", "main", "--dir", root}, &stdout, &stderr)
			if code(err) != 3 || !strings.Contains(report.ErrorText(err), c.want) {
				t.Errorf("baseline save: exit %d (%v), want 3 saying %q", code(err), err, c.want)
			}
			if files := listFiles(t, root); len(files) != 0 {
				t.Errorf("stored: %v", files)
			}
			// Stored by other means: reading it back is refused too.
			if err := os.MkdirAll(filepath.Join(root, "baselines", "cmp"), 0o755); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(bad)
			if err := os.WriteFile(filepath.Join(root, "baselines", "cmp", "main.json"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := rounds.LoadBaseline(root, "main", ""); err == nil || !strings.Contains(report.ErrorText(err), c.want) {
				t.Errorf("loadBaseline: %v, want a refusal saying %q", err, c.want)
			}
		})
	}
	// And a sound result is stored (exit 0), inside baselines/.
	root := t.TempDir()
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"baseline", "save", "--result", res, "--name", "main", "--dir", root}, &stdout, &stderr); err != nil {
		t.Fatalf("a sound result: %v", err)
	}
	if files := listFiles(t, root); len(files) != 1 || files[0] != filepath.Join("baselines", "cmp", "main.json") {
		t.Errorf("stored %v", files)
	}
}
