package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/loadgate/loadgate/compose"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/internal/enginetest"
	"github.com/loadgate/loadgate/internal/testtier"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("git rev-parse: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// leftovers lists what carries io.loadgate.owner=<host>:<pid>.
func leftovers(t *testing.T, pid int) []string {
	host, _ := os.Hostname()
	return enginetest.Leftovers(t, fmt.Sprintf("%s=%s:%d", compose.LabelOwner, host, pid))
}

// A run of the demo stack interrupted with SIGINT (then, separately,
// SIGTERM) in the middle of its load leaves no container, network or volume
// behind, and writes a result that balances and says it was interrupted.
// By default: TestSignalMidLoadPlain (the process and its result) and
// compose's TestStackLifecycle and TestCancelledUpTearsDown (teardown).
func TestSignalMidLoadLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: stack tests not run")
	}
	testtier.Require(t, testtier.E2E)
	enginetest.Require(t, "signal tests")
	root := repoRoot(t)
	bin := buildLoadgate(t, root)
	demo := filepath.Join(root, "examples", "demo")
	scen := writeScenario(t, fmt.Sprintf(`
name: sigint
stack:
  compose: [%s]
  prepare: [%s]
  target: api:8080
phases: [{name: sustain, rate: 50, duration: 2m}]
workloads: [{name: list, http: {path: "/items?page={n}"}}]
`, filepath.Join(demo, "compose.yaml"), filepath.Join(demo, "build.sh")))
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			cmd, stderr := startRun(t, bin, "--scenario", scen, "--out", out)
			pid := cmd.Process.Pid
			t.Cleanup(func() {
				if left := leftovers(t, pid); len(left) > 0 {
					exec.Command(bin, "down", "--all").Run()
				}
			})
			res := interruptMidLoad(t, cmd, stderr, out, sig, snapshotsWritten(out, 2), func() {
				if len(leftovers(t, pid)) == 0 {
					t.Fatalf("no labelled resources while the run is up: the test would prove nothing")
				}
			})
			if left := leftovers(t, pid); len(left) > 0 {
				t.Errorf("left behind after %v: %s", sig, strings.Join(left, ", "))
			}
			if res == nil {
				return
			}
			if _, err := os.Stat(filepath.Join(out, "logs", "api.log")); err != nil {
				t.Errorf("the api's logs were not saved: %v", err)
			}
		})
	}
}

// The program (this test binary as loadgate), SIGINTed in the middle of a
// plain run's load, stops it, writes a result that balances and says it was interrupted, and exits
// 3: the default tier's version of TestSignalMidLoadLeavesNothing.
func TestSignalMidLoadPlain(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: process tests not run")
	}
	bin := selfAsLoadgate(t)
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1) }))
	defer srv.Close()
	scen := writeScenario(t, "name: sigint\nphases: [{name: sustain, rate: 50, duration: 2m}]\nworkloads: [{name: a, http: {path: /}}]\n")
	out := filepath.Join(t.TempDir(), "out")
	cmd, stderr := startRun(t, bin, "--scenario", scen, "--target", srv.URL, "--out", out)
	loadRunning := func() bool { return served.Load() >= 10 }
	interruptMidLoad(t, cmd, stderr, out, syscall.SIGINT, loadRunning, func() {})
}

// startRun starts `bin run --progress never args...`, its stderr kept.
func startRun(t *testing.T, bin string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(bin, append([]string{"run", "--progress", "never"}, args...)...)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &stderr
}

// snapshotsWritten reports whether the run writing to out has written n
// snapshots (the file is buffered: they show some seconds late).
func snapshotsWritten(out string, n int) func() bool {
	return func() bool {
		b, _ := os.ReadFile(filepath.Join(out, "snapshots.jsonl"))
		return bytes.Count(b, []byte("\n")) >= n
	}
}

// interruptMidLoad waits until cmd, a run writing to out, is loading,
// calls running, sends sig, and checks the exit (3) and the result
// (interrupted, balanced), which it returns (nil when unreadable).
func interruptMidLoad(t *testing.T, cmd *exec.Cmd, stderr *bytes.Buffer, out string, sig syscall.Signal, loading func() bool, running func()) *result.Result {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for !loading() {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the load never started:\n%s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	running()
	cmd.Process.Signal(sig)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("loadgate did not stop within 2 minutes of %v:\n%s", sig, stderr.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("exit %v, want 3 (unusable: interrupted)\n%s", err, stderr.String())
	}
	res, rerr := result.ReadFile(filepath.Join(out, "result.json"))
	if rerr != nil {
		t.Errorf("no result after %v: %v", sig, rerr)
		return nil
	}
	if !res.Interrupted || res.Offered != res.Recorded || res.Offered == 0 {
		t.Errorf("interrupted %v offered %d recorded %d", res.Interrupted, res.Offered, res.Recorded)
	}
	return res
}

// buildLoadgate builds the binary under test into a temp dir.
func buildLoadgate(t *testing.T, root string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "loadgate")
	if out, err := exec.Command("go", "build", "-o", bin, filepath.Join(root, "cmd", "loadgate")).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestMain runs the program when this test binary is started as
// "loadgate" (selfAsLoadgate's copy), so that the default tier's tests of
// the process need no go build.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "loadgate" {
		main()
		return
	}
	os.Exit(m.Run())
}

// selfAsLoadgate copies this test binary to a temp dir as "loadgate": the
// program itself (TestMain), readable by any user.
func selfAsLoadgate(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "loadgate")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// syncBuf is a bytes.Buffer safe to read while a child process writes it.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitForLoad waits (bounded) until file has at least two lines: the load
// is running. It kills cmd and fails t when it never does.
func waitForLoad(t *testing.T, cmd *exec.Cmd, file string, stderr *syncBuf) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		b, _ := os.ReadFile(file)
		if bytes.Count(b, []byte("\n")) >= 2 {
			return
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the load never started (%s):\n%s", file, stderr.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitExit waits at most limit for cmd to exit and returns its exit code
// and how long it took; past limit it kills cmd and fails t.
func waitExit(t *testing.T, cmd *exec.Cmd, limit time.Duration, stderr *syncBuf) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		took := time.Since(start)
		var ee *exec.ExitError
		if err == nil {
			return 0, took
		}
		if errors.As(err, &ee) {
			return ee.ExitCode(), took
		}
		t.Fatalf("wait: %v", err)
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Fatalf("loadgate did not exit within %s:\n%s", limit, stderr.String())
	}
	return -1, 0
}

// Two SIGINTs in quick succession: the second exits at once (exit 3) after
// removing this process's containers, networks, volumes and images — not
// after the orderly teardown.
func TestSecondSignalExitsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: stack tests not run")
	}
	testtier.Require(t, testtier.E2E) // by default: TestHandleSignals
	enginetest.Require(t, "signal tests")
	root := repoRoot(t)
	bin := buildLoadgate(t, root)
	demo := filepath.Join(root, "examples", "demo")
	scen := writeScenario(t, fmt.Sprintf(`
name: sigint-twice
stack:
  compose: [%s]
  prepare: [%s]
  target: api:8080
phases: [{name: sustain, rate: 50, duration: 2m}]
workloads: [{name: list, http: {path: "/items?page={n}"}}]
`, filepath.Join(demo, "compose.yaml"), filepath.Join(demo, "build.sh")))
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(bin, "run", "--scenario", scen, "--out", out, "--progress", "never")
	stderr := &syncBuf{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		if left := leftovers(t, pid); len(left) > 0 {
			exec.Command(bin, "down", "--all").Run()
		}
	})
	waitForLoad(t, cmd, filepath.Join(out, "snapshots.jsonl"), stderr)
	if len(leftovers(t, pid)) == 0 {
		t.Fatalf("no labelled resources while the run is up: the test would prove nothing")
	}
	cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(100 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	code, took := waitExit(t, cmd, 30*time.Second, stderr)
	t.Logf("exit %d %s after the second SIGINT", code, took.Round(time.Millisecond))
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, "interrupt") || strings.Contains(l, "removed") {
			t.Logf("stderr: %s", l)
		}
	}
	if code != exitUnusable {
		t.Errorf("exit %d, want %d\n%s", code, exitUnusable, stderr.String())
	}
	if took > emergencyBound+3*time.Second {
		t.Errorf("took %s to exit after the second signal, want at most %s", took, emergencyBound+3*time.Second)
	}
	if !strings.Contains(stderr.String(), "second interrupt") {
		t.Errorf("stderr does not say the second signal was taken:\n%s", stderr.String())
	}
	if left := leftovers(t, pid); len(left) > 0 {
		t.Errorf("left behind after two SIGINTs: %s", strings.Join(left, ", "))
	}
}

// demoRepo is a committed git repository of files, beside the demo
// service's binary and Dockerfile under service/ (build: ./service).
func demoRepo(t *testing.T, root string, files map[string]string) string {
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
	files["service/Dockerfile"] = string(df)
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(repo, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitEnv := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "demo"}} {
		c := exec.Command("git", args...)
		c.Dir, c.Env = repo, gitEnv
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return repo
}

// A gate killed with SIGKILL mid-round leaves two stacks and a git worktree;
// `loadgate down --all` (run from outside the repository) removes every
// container, network, volume and image carrying the dead gate's owner label
// and its worktree (directory and git's record of it), and exits 0.
func TestKilledGateThenDownAll(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: stack tests not run")
	}
	testtier.Require(t, testtier.E2E) // by default: gate/stack's TestSweep
	enginetest.Require(t, "signal tests")
	root := repoRoot(t)
	bin := buildLoadgate(t, root)

	// A repository of its own (the gate adds worktrees to it): the demo
	// service's binary and a compose file with a named volume, committed.
	repo := demoRepo(t, root, map[string]string{
		"compose.yaml": `x-service: &service
  build: {context: ./service}
services:
  backend:
    <<: *service
    command: ["-role", "backend", "-listen", ":8081"]
    environment: {DELAY_MS: "1"}
    healthcheck: {test: ["CMD", "/service", "-healthcheck", "http://127.0.0.1:8081/healthz"], interval: 1s, timeout: 2s, retries: 10}
  api:
    <<: *service
    command: ["-role", "api", "-listen", ":8080"]
    environment: {BACKEND_URL: "http://backend:8081", SEARCH_ITERATIONS: "10"}
    volumes: [data:/data]
    depends_on: {backend: {condition: service_healthy}}
volumes:
  data: {}
`,
		"scenario.yaml": `name: killed-gate
stack: {compose: [compose.yaml], target: "api:8080"}
phases: [{name: sustain, rate: 20, duration: 2m}]
workloads: [{name: list, http: {path: "/items?page={n}"}}]
`,
	})
	// The gate's worktree root follows TMPDIR: a private one.
	tmp := t.TempDir()
	env := append(os.Environ(), "TMPDIR="+tmp)
	wtRoot := filepath.Join(tmp, fmt.Sprintf("loadgate-worktrees-%d", os.Getuid()))

	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(bin, "gate", "--scenario", "scenario.yaml", "--base", "HEAD", "--rounds", "1", "--out", out, "--progress", "never")
	cmd.Dir, cmd.Env = repo, env
	stderr := &syncBuf{}
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
	// Round 1 runs base first (ABBA): both stacks are up once its load runs.
	waitForLoad(t, cmd, filepath.Join(out, "base", "round-1", "snapshots.jsonl"), stderr)
	left := leftovers(t, pid)
	kinds := map[string]int{}
	for _, l := range left {
		kind, _, _ := strings.Cut(l, " ")
		kinds[kind]++
	}
	t.Logf("while the gate runs: %v", kinds)
	for _, k := range []string{"container", "network", "volume", "image"} {
		if kinds[k] == 0 {
			t.Fatalf("no labelled %s while the gate runs (%v): the test would prove nothing", k, left)
		}
	}
	if ents, _ := os.ReadDir(wtRoot); len(ents) != 1 {
		t.Fatalf("%d run directories in %s while the gate runs, want 1", len(ents), wtRoot)
	}
	// While the gate is alive, down --all leaves its stacks and worktree alone.
	live := exec.Command(bin, "down", "--all")
	live.Env = env
	if b, err := live.CombinedOutput(); err != nil {
		t.Fatalf("down --all beside a live gate: %v\n%s", err, b)
	}
	if n := len(leftovers(t, pid)); n != len(left) {
		t.Fatalf("down --all removed a live gate's resources: %d left of %d", n, len(left))
	}
	if ents, _ := os.ReadDir(wtRoot); len(ents) != 1 {
		t.Fatalf("down --all removed a live gate's worktree")
	}

	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if n := len(leftovers(t, pid)); n == 0 {
		t.Fatal("SIGKILL left nothing behind: the test would prove nothing")
	}
	down := exec.Command(bin, "down", "--all")
	down.Dir, down.Env = t.TempDir(), env // from outside the repository
	var dout syncBuf
	down.Stdout, down.Stderr = &dout, &dout
	start := time.Now()
	if err := down.Start(); err != nil {
		t.Fatal(err)
	}
	code, _ := waitExit(t, down, 2*time.Minute, &dout)
	t.Logf("down --all: exit %d in %s:\n%s", code, time.Since(start).Round(time.Millisecond), dout.String())
	if code != 0 {
		t.Errorf("down --all exit %d, want 0", code)
	}
	if left := leftovers(t, pid); len(left) > 0 {
		t.Errorf("left behind after down --all: %s", strings.Join(left, ", "))
	}
	if ents, _ := os.ReadDir(wtRoot); len(ents) != 0 {
		t.Errorf("worktree directories left in %s: %v", wtRoot, ents)
	}
	wl := exec.Command("git", "worktree", "list", "--porcelain")
	wl.Dir = repo
	b, err := wl.Output()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "worktree "); n != 1 {
		t.Errorf("git still lists %d worktrees, want only the main one:\n%s", n, b)
	}
}
