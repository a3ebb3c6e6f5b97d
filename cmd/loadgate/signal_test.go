package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadgate/loadgate/compose"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/internal/enginetest"
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
func TestSignalMidLoadLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: stack tests not run")
	}
	enginetest.Require(t, "signal tests")
	root := repoRoot(t)
	bin := filepath.Join(t.TempDir(), "loadgate")
	if out, err := exec.Command("go", "build", "-o", bin, filepath.Join(root, "cmd", "loadgate")).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
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
			cmd := exec.Command(bin, "run", "--scenario", scen, "--out", out, "--progress", "never")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pid := cmd.Process.Pid
			t.Cleanup(func() {
				if left := leftovers(t, pid); len(left) > 0 {
					exec.Command(bin, "down", "--all").Run()
				}
			})
			// Wait until the load is running: two snapshots written.
			deadline := time.Now().Add(3 * time.Minute)
			for {
				b, _ := os.ReadFile(filepath.Join(out, "snapshots.jsonl"))
				if bytes.Count(b, []byte("\n")) >= 2 {
					break
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("the load never started:\n%s", stderr.String())
				}
				time.Sleep(200 * time.Millisecond)
			}
			if len(leftovers(t, pid)) == 0 {
				t.Fatalf("no labelled resources while the run is up: the test would prove nothing")
			}
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
			if left := leftovers(t, pid); len(left) > 0 {
				t.Errorf("left behind after %v: %s", sig, strings.Join(left, ", "))
			}
			res, rerr := result.ReadFile(filepath.Join(out, "result.json"))
			if rerr != nil {
				t.Fatalf("no result after %v: %v", sig, rerr)
			}
			if !res.Interrupted || res.Offered != res.Recorded || res.Offered == 0 {
				t.Errorf("interrupted %v offered %d recorded %d", res.Interrupted, res.Offered, res.Recorded)
			}
			if _, err := os.Stat(filepath.Join(out, "logs", "api.log")); err != nil {
				t.Errorf("the api's logs were not saved: %v", err)
			}
		})
	}
}
