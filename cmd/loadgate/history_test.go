package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/result"
)

// historyRepo is a clone with an empty bare remote, origin.
func historyRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	clone := filepath.Join(root, "clone")
	for _, args := range [][]string{{"init", "-q", "--bare", filepath.Join(root, "remote.git")}, {"init", "-q", clone},
		{"-C", clone, "remote", "add", "origin", filepath.Join(root, "remote.git")}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return clone
}

// gateResults writes the results directory of a three-round gate of
// commit head (factor × base's latency) against commit base, as `compare
// --out` and the gate's rounds leave it.
func gateResults(t *testing.T, base, head string, factor float64) string {
	t.Helper()
	dir := t.TempDir()
	args := []string{"compare", "--out", dir}
	for i, jitter := range []float64{0, 0.004, -0.004} {
		b := withCommit(t, recordedRound(t, "base", 2*i, 1), base)
		h := withCommit(t, recordedRound(t, "head", 2*i+1, factor*(1+jitter)), head)
		rd := filepath.Join(dir, "head", fmt.Sprintf("round-%d", i+1))
		os.MkdirAll(rd, 0o755)
		data, err := os.ReadFile(h)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(rd, "result.json"), data, 0o644)
		args = append(args, "--base", b, "--head", h)
	}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), args, &stdout, &stderr); code(err) > 1 {
		t.Fatalf("compare: %v\n%s", err, stderr.String())
	}
	return dir
}

func withCommit(t *testing.T, path, commit string) string {
	t.Helper()
	r, err := result.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r.Commit = commit
	if err := r.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func runHistory(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), append([]string{"history"}, args...), &stdout, &stderr)
	return exitCode(err, &stderr), stdout.String(), stderr.String()
}

// Pushes recorded one by one: previous names the newest entry, two
// steady entries pass, five +6% steps (each under a gate's 10%) fail the
// cumulative rule (exit 1) with the table and an SVG written; a pull
// request's event is refused and writes nothing.
func TestHistoryRecordAndRender(t *testing.T) {
	clone := historyRepo(t)
	out := filepath.Join(t.TempDir(), "history")
	commit := func(i int) string { return fmt.Sprintf("c0ffee%02x%032x", i, i) }
	factors := []float64{1, 1, 1.06, 1.06, 1.06, 1.06, 1.06}
	t.Setenv("GITHUB_EVENT_NAME", "push")
	for i, f := range factors {
		if got, prev, stderr := runHistory(t, "previous", "--scenario", "cmp", "--dir", clone); got != 0 || i > 0 && strings.TrimSpace(prev) != commit(i-1) || i == 0 && prev != "" {
			t.Fatalf("entry %d: previous exit %d, %q (%s)", i, got, prev, stderr)
		}
		base := commit(i - 1)
		if i == 0 {
			base = strings.Repeat("b", 40) // the first entry's gate: against a commit that is no entry
		}
		if got, stdout, stderr := runHistory(t, "record", "--from", gateResults(t, base, commit(i), f), "--ref", "main", "--dir", clone); got != 0 || !strings.Contains(stdout, "recorded cmp/") {
			t.Fatalf("record %d: exit %d\n%s%s", i, got, stdout, stderr)
		}
		if i == 2 {
			if got, md, stderr := runHistory(t, "--scenario", "cmp", "--dir", clone, "--out", out); got != 0 || !strings.Contains(md, "**PASS**") {
				t.Fatalf("three steady entries: exit %d\n%s%s", got, md, stderr)
			}
		}
	}
	got, md, stderr := runHistory(t, "--scenario", "cmp", "--dir", clone, "--out", out)
	if got != 1 || !strings.Contains(md, "**REGRESSION**") || !strings.Contains(md, "over 6 links") || !strings.Contains(stderr, "verdict: regression") {
		t.Errorf("five +6%% steps: exit %d, want 1\n%s%s", got, md, stderr)
	}
	for _, f := range []string{"history.md", "history.json", "history-sustain-a-p95.svg"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if got, js, _ := runHistory(t, "--scenario", "cmp", "--dir", clone, "--out", out, "--since", commit(5), "--format", "json"); got != 0 || !strings.Contains(js, `"since": 5`) {
		t.Errorf("since entry 6: exit %d, want 0 (one +6%% link)\n%.400s", got, js)
	}

	t.Setenv("GITHUB_EVENT_NAME", "pull_request")
	if got, _, stderr := runHistory(t, "record", "--from", gateResults(t, commit(6), commit(7), 1), "--ref", "main", "--dir", clone); got != 2 || !strings.Contains(stderr, "never on a pull_request event") {
		t.Errorf("record from a pull request: exit %d, want 2\n%s", got, stderr)
	}
	if _, prev, _ := runHistory(t, "previous", "--scenario", "cmp", "--dir", clone); strings.TrimSpace(prev) != commit(6) {
		t.Errorf("after a refused record, previous is %q, want entry 7's", prev)
	}
}

// Bad input is exit 2 with the reason; a scenario without entries is an
// empty history, exit 0.
func TestHistoryBadInput(t *testing.T) {
	clone := historyRepo(t)
	t.Setenv("GITHUB_EVENT_NAME", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--dir", clone}, "--scenario NAME is required"},
		{[]string{"--scenario", "cmp", "--dir", clone, "--format", "xml"}, "--format must be markdown or json"},
		{[]string{"--scenario", "../etc", "--dir", clone}, "not a path segment"},
		{[]string{"--scenario", "cmp", "--dir", filepath.Join(clone, "nope")}, "history: load"},
		{[]string{"record", "--dir", clone, "--ref", "main"}, "--from DIR and --ref BRANCH are required"},
		{[]string{"record", "--dir", clone, "--ref", "main", "--from", t.TempDir()}, "verdict.json"},
		{[]string{"previous", "--dir", clone}, "--scenario NAME is required"},
		{[]string{"--scenario", "cmp", "--dir", clone, "--since", "v9.9"}, "v9.9"},
	} {
		if got, _, stderr := runHistory(t, c.args...); got != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want 2 naming %q\n%s", c.args, got, c.want, stderr)
		}
	}
	if got, md, stderr := runHistory(t, "--scenario", "cmp", "--dir", clone, "--out", t.TempDir()); got != 0 || !strings.Contains(md, "No entry yet") {
		t.Errorf("empty history: exit %d\n%s%s", got, md, stderr)
	}
}
