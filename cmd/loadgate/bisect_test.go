package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/bisect"
	"github.com/loadgate/loadgate/internal/enginetest"
	"github.com/loadgate/loadgate/internal/testtier"
)

// bisect -h leads with its usage and examples, then its flags (the gate's among them).
func TestBisectHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"bisect", "-h"}, &stdout, &stderr)
	if code(err) != 0 {
		t.Fatalf("exit %d: %v", code(err), err)
	}
	h := stderr.String()
	ex, fl := strings.Index(h, "Examples:"), strings.Index(h, "Flags:")
	if !strings.HasPrefix(h, "Usage: loadgate bisect") || ex < 0 || fl < ex || !strings.Contains(h, "loadgate bisect --scenario") {
		t.Errorf("help is not usage, examples, flags:\n%s", h)
	}
	for _, f := range []string{"-good ref", "-bad ref", "-workload name", "-budget", "-duet", "-tolerance", "not attributable"} {
		if !strings.Contains(h, f) {
			t.Errorf("help lacks %q", f)
		}
	}
}

// Bad input exits 2 with one clear line, before any gate or directory.
func TestBisectRefusals(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dir := gitRepo(t, map[string]string{"load.yaml": "name: b\nphases: [{name: sustain, rate: 10, duration: 1s}]\nworkloads: [{name: a, http: {path: /}}]\n"})
	c := exec.Command("git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", "commit", "-q", "--allow-empty", "-m", "second")
	c.Dir = dir
	if b, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	out := filepath.Join(t.TempDir(), "out")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--good", "HEAD~1", "--bad", "HEAD"}, "--scenario is required"},
		{[]string{"--scenario", "load.yaml", "--bad", "HEAD"}, "--good REF is required"},
		{[]string{"--scenario", "load.yaml", "--good", "HEAD~1"}, "--bad REF is required"},
		{[]string{"--scenario", "load.yaml", "--good", "v9.9.9", "--bad", "HEAD"}, `--good "v9.9.9" is not a commit`},
		{[]string{"--scenario", "load.yaml", "--good", "HEAD", "--bad", "HEAD"}, "same commit"},
		{[]string{"--scenario", "load.yaml", "--good", "HEAD", "--bad", "HEAD~1"}, "is not an ancestor"},
		{[]string{"--scenario", "load.yaml", "--good", "HEAD~1", "--bad", "HEAD", "--rounds", "0"}, "--rounds must be at least 1"},
		{[]string{"--scenario", "load.yaml", "--good", "HEAD~1", "--bad", "HEAD", "--workload"}, "flag needs an argument: --workload"},
		{[]string{"--scenario", "load.yaml", "--good", "HEAD~1", "--bad", "HEAD", "extra"}, `unexpected argument "extra"`},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"bisect", "--out", out}, c.args...), &stdout, &stderr)
		if got := exitCode(err, &stderr); got != 2 || !strings.Contains(stderr.String(), c.want) || strings.Count(strings.TrimSpace(stderr.String()), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", c.args, got, stderr.String(), c.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused bisection made --out")
	}
}

// One place maps a bisection's answer to its exit code: 0 only when a commit is named.
func TestBisectExitMapping(t *testing.T) {
	c := &bisect.Commit{SHA: strings.Repeat("a", 40), Subject: "s"}
	for _, c := range []struct {
		o    bisect.Outcome
		want int
	}{
		{bisect.Outcome{Answer: bisect.Found, Commit: c}, 0},
		{bisect.Outcome{Answer: bisect.NotAttributable, Commit: c}, 1},
		{bisect.Outcome{Answer: bisect.NotReproduced}, 1},
		{bisect.Outcome{Answer: bisect.Stopped}, 1},
		{bisect.Outcome{Answer: bisect.NotAttributable}, 1}, // no commit: still no panic
	} {
		var stderr bytes.Buffer
		if got := exitCode(bisectExit(c.o), &stderr); got != c.want {
			t.Errorf("%s: exit %d, want %d", c.o.Answer, got, c.want)
		}
		if c.want != 0 && !strings.HasPrefix(stderr.String(), "loadgate: bisect: ") {
			t.Errorf("%s: stderr %q", c.o.Answer, stderr.String())
		}
	}
}

// demoHistory commits the demo service with a backend delay per commit
// (delays[0] the good commit) into a new repository: profile's latency is
// the delay. It returns the repository and its commits, oldest first.
func demoHistory(t *testing.T, root string, delays []int) (string, []string) {
	t.Helper()
	repo := t.TempDir()
	svc := filepath.Join(repo, "service")
	if err := os.MkdirAll(filepath.Join(svc, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(svc, "bin", "service"), "./examples/demo/service")
	build.Dir, build.Env = root, append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the demo service: %v\n%s", err, out)
	}
	df, err := os.ReadFile(filepath.Join(root, "examples", "demo", "service", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"service/Dockerfile": string(df),
		// tolerance 50%: the unchanged commits pass on a busy 2-core machine, a 10× delay does not.
		"scenario.yaml": `name: bisect-demo
stack: {compose: [compose.yaml], target: "api:8080"}
warmup: 1s
tolerance: 50%
late_after: 5ms
phases: [{name: sustain, rate: 40, duration: 4s}]
workloads: [{name: profile, http: {path: "/profile/{n}"}}]
`,
	}
	gitEnv := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	git := func(args ...string) string {
		c := exec.Command("git", args...)
		c.Dir, c.Env = repo, gitEnv
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	var commits []string
	for i, d := range delays {
		files["compose.yaml"] = fmt.Sprintf(`x-service: &service
  build: {context: ./service}
services:
  backend:
    <<: *service
    command: ["-role", "backend", "-listen", ":8081"]
    environment: {DELAY_MS: "%d"}
    healthcheck: {test: ["CMD", "/service", "-healthcheck", "http://127.0.0.1:8081/healthz"], interval: 1s, timeout: 2s, retries: 10}
  api:
    <<: *service
    command: ["-role", "api", "-listen", ":8080"]
    environment: {BACKEND_URL: "http://backend:8081", SEARCH_ITERATIONS: "10"}
    depends_on: {backend: {condition: service_healthy}}
`, d)
		files["NOTES"] = fmt.Sprintf("commit %d\n", i)
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(repo, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		git("add", "-A")
		git("commit", "-q", "-m", fmt.Sprintf("commit %d: backend delay %d ms", i, d))
		commits = append(commits, git("rev-parse", "HEAD"))
	}
	git("tag", "good", commits[0])
	return repo, commits
}

// On the demo stack, a history of five commits after the good one where
// commit 2 makes the backend 10× slower (judged on p50, robust on a busy machine): bisect names commit 2 in three
// gates (2 against good, 1 against good, 2 against 1), each its own
// directory (regression: the second gate refused to start, its cpus planned
// from the affinity the first gate's generator left on the process); then an
// interrupted bisection exits 3 leaving no container or worktree.
func TestBisectDemoHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: stack tests not run")
	}
	testtier.Require(t, testtier.E2E) // by default: gate/bisect's tests with gates faked
	enginetest.Require(t, "bisect e2e")
	root := repoRoot(t)
	bin := buildLoadgate(t, root)
	repo, commits := demoHistory(t, root, []int{4, 4, 40, 40, 40})
	tmp := t.TempDir()
	env := append(os.Environ(), "TMPDIR="+tmp)
	wtRoot := filepath.Join(tmp, fmt.Sprintf("loadgate-worktrees-%d", os.Getuid()))

	out := filepath.Join(t.TempDir(), "out")
	start := time.Now()
	cmd := exec.Command(bin, "bisect", "--scenario", "scenario.yaml", "--good", "good", "--bad", "HEAD", "--rounds", "6",
		"--round-shape", "scenario", "--percentile", "p50", "--out", out, "--progress", "never")
	cmd.Dir, cmd.Env = repo, env
	var stdout bytes.Buffer
	stderr := &syncBuf{}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	code, _ := waitExit(t, cmd, 15*time.Minute, stderr)
	t.Logf("bisect: exit %d in %s\n%s\n%s", code, time.Since(start).Round(time.Second), progressLines(stderr.String()), stdout.String())
	if code != 0 {
		t.Fatalf("exit %d, want 0 (found)", code)
	}
	var o bisect.Outcome
	b, err := os.ReadFile(filepath.Join(out, "bisect.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	if o.Answer != bisect.Found || o.Commit == nil || o.Commit.SHA != commits[2] || len(o.Gates) != 3 {
		t.Fatalf("answer %s %+v after %d gates, want found %s after 3", o.Answer, o.Commit, len(o.Gates), commits[2])
	}
	for _, g := range o.Gates {
		if _, err := os.Stat(filepath.Join(g.Dir, "verdict.json")); err != nil {
			t.Errorf("gate %d: %v", g.K, err)
		}
	}
	if !strings.Contains(stdout.String(), "**FOUND:**") || !strings.Contains(stderr.String(), "bisect gate 3 of ≈3") {
		t.Errorf("summary or progress missing")
	}
	if ents, _ := os.ReadDir(wtRoot); len(ents) != 0 {
		t.Errorf("worktrees left after the bisection: %v", ents)
	}

	// Interrupted in its first gate's load: exit 3, nothing left.
	out2 := filepath.Join(t.TempDir(), "out")
	cmd = exec.Command(bin, "bisect", "--scenario", "scenario.yaml", "--good", "good", "--bad", "HEAD", "--rounds", "6",
		"--round-shape", "scenario", "--percentile", "p50", "--out", out2, "--progress", "never")
	cmd.Dir, cmd.Env = repo, env
	stderr = &syncBuf{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		if left := leftovers(t, pid); len(left) > 0 {
			c := exec.Command(bin, "down", "--all")
			c.Env = env
			c.Run()
		}
	})
	gate1 := filepath.Join(out2, "gate-1-"+commits[2][:12])
	waitForLoad(t, cmd, filepath.Join(gate1, "head", "round-1", "snapshots.jsonl"), stderr)
	cmd.Process.Signal(syscall.SIGINT)
	code, took := waitExit(t, cmd, 5*time.Minute, stderr)
	t.Logf("interrupted: exit %d after %s\n%s", code, took.Round(time.Millisecond), progressLines(stderr.String()))
	if code != 3 {
		t.Errorf("exit %d after SIGINT, want 3", code)
	}
	if left := leftovers(t, pid); len(left) > 0 {
		t.Errorf("left behind: %s", strings.Join(left, ", "))
	}
	if ents, _ := os.ReadDir(wtRoot); len(ents) != 0 {
		t.Errorf("worktrees left after the interrupt: %v", ents)
	}
	if b, err := os.ReadFile(filepath.Join(out2, "bisect.json")); err != nil || !strings.Contains(string(b), `"error"`) {
		t.Errorf("bisect.json of the interrupted bisection: %v\n%s", err, b)
	}
}

// progressLines is the bisection's own lines of a log.
func progressLines(log string) string {
	var ls []string
	for l := range strings.SplitSeq(log, "\n") {
		if strings.HasPrefix(l, "loadgate: bisect") {
			ls = append(ls, l)
		}
	}
	return strings.Join(ls, "\n")
}
