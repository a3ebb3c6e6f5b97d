package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/result"
)

// --out refuses a directory that already holds a result unless --force
// (exit 2, naming the directory and the flag), and writes every file
// without following a symlink planted at its name.
func TestRunOutRefusesAndReplaces(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "out")
	sc := writeScenario(t, strings.Replace(okScenario, "%s", "5s", 1))
	runOut := func(extra ...string) (error, string) {
		var stdout, stderr bytes.Buffer
		args := append([]string{"run", "--scenario", sc, "--target", srv.URL, "--out", out, "--progress", "never"}, extra...)
		err := run(context.Background(), args, &stdout, &stderr)
		return err, stderr.String()
	}
	if err, stderr := runOut(); err != nil {
		t.Fatalf("first run: %v\n%s", err, stderr)
	}
	first, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}

	// Again without --force: refused before any load is sent, nothing touched.
	err, stderr := runOut()
	if got := code(err); got != 2 {
		t.Fatalf("second run without --force: exit %d, want 2; err %v\n%s", got, err, stderr)
	}
	msg := err.Error()
	if !strings.Contains(msg, out) || !strings.Contains(msg, "result.json") || !strings.Contains(msg, "--force") {
		t.Errorf("refusal %q: want the dir %s, result.json and --force named", msg, out)
	}
	if again, _ := os.ReadFile(filepath.Join(out, "result.json")); !bytes.Equal(again, first) {
		t.Error("the refused run changed result.json")
	}

	// A symlink planted at report.md (and snapshots.jsonl) pointing
	// elsewhere: --force replaces the links, their target is unchanged.
	victim := filepath.Join(t.TempDir(), "victim.md")
	if err := os.WriteFile(victim, []byte("not loadgate's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"report.md", "snapshots.jsonl", "verdict.json"} {
		p := filepath.Join(out, name)
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(victim, p); err != nil {
			t.Fatal(err)
		}
	}
	if err, stderr := runOut("--force"); err != nil {
		t.Fatalf("run --force: %v\n%s", err, stderr)
	}
	if got, _ := os.ReadFile(victim); string(got) != "not loadgate's\n" {
		t.Errorf("the symlink's target was written through: %q", got)
	}
	for _, name := range []string{"report.md", "snapshots.jsonl", "verdict.json", "result.json"} {
		fi, err := os.Lstat(filepath.Join(out, name))
		if err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s: %v (%v), want a regular file", name, fi.Mode(), err)
		}
	}
	if md, _ := os.ReadFile(filepath.Join(out, "report.md")); !strings.Contains(string(md), "# loadgate: cli") {
		t.Errorf("report.md = %.80q", md)
	}
	if _, err := result.ReadFile(filepath.Join(out, "result.json")); err != nil {
		t.Error(err)
	}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}
