package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadgate/loadgate/compose"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/internal/enginetest"
	"github.com/loadgate/loadgate/internal/testtier"
)

// rotatedFiles is a repository whose windows gate plans 3 instance pairs
// of 2 windows each (5 s windows of 40/s, at most 6 rounds): one service.
var rotatedFiles = map[string]string{
	"compose.yaml": `services:
  api:
    build: {context: ./service}
    command: ["-role", "backend", "-listen", ":8080"]
    environment: {DELAY_MS: "1"}
    healthcheck: {test: ["CMD", "/service", "-healthcheck", "http://127.0.0.1:8080/healthz"], interval: 1s, timeout: 2s, retries: 10}
`,
	"scenario.yaml": `name: rotated
warmup: 1s
stack: {compose: [compose.yaml], target: "api:8080"}
phases: [{name: sustain, rate: 40, duration: 10s}]
workloads: [{name: profile, http: {path: "/profile/{n}"}}]
`,
}

// containerStates is the state of every container of pid's stacks.
func containerStates(t *testing.T, pid int) []string {
	t.Helper()
	host, _ := os.Hostname()
	out, err := exec.Command("docker", "ps", "-a", "--filter", fmt.Sprintf("label=%s=%s:%d", compose.LabelOwner, host, pid), "--format", "{{.State}}").Output()
	if err != nil {
		t.Fatalf("docker ps: %v", err)
	}
	return strings.Fields(string(out))
}

// A windows gate brings its 3 instance pairs up before round 1, runs its
// rounds in turn on them (1 2 3 1 2 3) with all but the running pair
// paused, and leaves nothing behind, whether it ends or is interrupted
// (SIGINT once every pair is up: exit 3).
func TestWindowsGateRotatesInstancesAndLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: stack tests not run")
	}
	testtier.Require(t, testtier.E2E)
	enginetest.Require(t, "windows gate tests")
	root := repoRoot(t)
	bin := buildLoadgate(t, root)
	files := map[string]string{}
	for k, v := range rotatedFiles {
		files[k] = v
	}
	repo := demoRepo(t, root, files)
	env := append(os.Environ(), "TMPDIR="+t.TempDir())
	start := func(t *testing.T, out string) (*exec.Cmd, *syncBuf) {
		cmd := exec.Command(bin, "gate", "--scenario", "scenario.yaml", "--base", "HEAD", "--rounds", "auto", "--max-rounds", "6",
			"--budget", "8m", "--round-shape", "windows", "--out", out, "--progress", "never")
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
		return cmd, stderr
	}
	// watch polls the gate's containers from round 1's load until round
	// 4's: the most running at once, and whether a poll saw all 3 pairs
	// up, one running (both sides of a duet) and the other 4 paused.
	watch := func(t *testing.T, cmd *exec.Cmd, stderr *syncBuf, out string) (most int, onePair bool) {
		waitForLoad(t, cmd, filepath.Join(out, "head", "round-1", "snapshots.jsonl"), stderr)
		next := filepath.Join(out, "head", "round-4", "snapshots.jsonl")
		for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
			var running, paused int
			for _, s := range containerStates(t, cmd.Process.Pid) {
				switch s {
				case "running":
					running++
				case "paused":
					paused++
				}
			}
			most = max(most, running)
			onePair = onePair || running == 2 && paused == 4
			if _, err := os.Stat(next); err == nil {
				break
			}
		}
		return most, onePair
	}

	t.Run("to the end", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out")
		cmd, stderr := start(t, out)
		// 3 pairs up, one running (a duet: both of its sides), 2 paused.
		if most, onePair := watch(t, cmd, stderr, out); most > 2 || !onePair {
			t.Errorf("rounds 1–3: at most %d containers running at once (want 2), one pair running and 4 containers paused seen: %v", most, onePair)
		}
		code, took := waitExit(t, cmd, 8*time.Minute, stderr)
		t.Logf("exit %d in %s", code, took.Round(time.Second))
		if code != 0 && code != 1 {
			t.Fatalf("exit %d, want a verdict (0 or 1)\n%s", code, stderr.String())
		}
		var got []int
		for i := 1; ; i++ {
			b, err := os.ReadFile(filepath.Join(out, "head", fmt.Sprintf("round-%d", i), "result.json"))
			if err != nil {
				break
			}
			var r result.Result
			if err := json.Unmarshal(b, &r); err != nil || r.Round == nil {
				t.Fatalf("round %d: %v", i, err)
			}
			got = append(got, r.Round.Instance)
		}
		if want := []int{1, 2, 3, 1, 2, 3}; !slices.Equal(got, want) {
			t.Errorf("the rounds' instances %v, want %v: in turn\n%s", got, want, stderr.String())
		}
		if !strings.Contains(stderr.String(), "the rounds in turn on them") {
			t.Errorf("the log does not say the rounds take the instances in turn:\n%s", stderr.String())
		}
		if left := leftovers(t, cmd.Process.Pid); len(left) > 0 {
			t.Errorf("left behind: %s", strings.Join(left, ", "))
		}
	})

	t.Run("interrupted", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out")
		cmd, stderr := start(t, out)
		waitForLoad(t, cmd, filepath.Join(out, "head", "round-2", "snapshots.jsonl"), stderr)
		if n := len(containerStates(t, cmd.Process.Pid)); n != 6 {
			t.Fatalf("during round 2: %d containers, want 6 (3 instance pairs): the test would prove less", n)
		}
		cmd.Process.Signal(syscall.SIGINT)
		code, took := waitExit(t, cmd, 4*time.Minute, stderr)
		t.Logf("exit %d %s after SIGINT", code, took.Round(time.Millisecond))
		if code != exitUnusable {
			t.Errorf("exit %d, want %d\n%s", code, exitUnusable, stderr.String())
		}
		if left := leftovers(t, cmd.Process.Pid); len(left) > 0 {
			t.Errorf("left behind after SIGINT: %s", strings.Join(left, ", "))
		}
	})
}
