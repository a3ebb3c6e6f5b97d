package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/sweep"
	"github.com/loadgate/loadgate/internal/enginetest"
	"github.com/loadgate/loadgate/internal/testtier"
)

const sweepScenario = `
name: sweep-cli
late_after: 1s
timeout: 1s
ceilings: {rate: 100, duration: 1m}
phases: [{name: sustain, rate: 10, duration: 1s}]
workloads:
  - {name: a, share: 1, http: {path: /}, thresholds: {p95: 5s, error_rate: 0.1%}}
`

func sweepRun(t *testing.T, ctx context.Context, url string, args ...string) (string, error, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	all := append([]string{"sweep", "--scenario", writeScenario(t, sweepScenario), "--target", url, "--out", out, "--warmup", "0s", "--progress", "never"}, args...)
	var stdout, stderr bytes.Buffer
	err := run(ctx, all, &stdout, &stderr)
	return out, err, stderr.String()
}

// A stack that refuses everything fast: the first step does not hold, the
// sweep runs one step more and stops, names no sustainable rate, degrades
// at the first rate, by honest refusal; every file is written; exit 0.
func TestSweepRefusingTargetStopsOneStepAfter(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	out, err, stderr := sweepRun(t, context.Background(), srv.URL, "--rates", "10,20,40,80", "--step", "500ms")
	if c := code(err); c != 0 {
		t.Fatalf("exit %d (%v)\n%s", c, err, stderr)
	}
	sw, err := sweep.ReadFile(filepath.Join(out, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sw.Steps) != 2 || sw.SustainableRate != nil || sw.DegradesAt == nil || *sw.DegradesAt != 10 {
		t.Fatalf("steps %d sustainable %v degrades %v manner %q", len(sw.Steps), sw.SustainableRate, sw.DegradesAt, sw.Manner)
	}
	// The manner is the first step's, from what it recorded: honest refusal
	// while the generator kept its schedule. A step of 5 requests is behind
	// when one of them went out 5 ms late (a loaded machine), and then the
	// sweep says so rather than blaming the stack (sweep.Classify's first
	// rule; its manners are judged on fixed steps in gate/sweep).
	first := sw.Steps[0]
	want := sweep.HonestRefusal
	if first.GeneratorExplains() && first.StalledS <= sweep.OwnLatenessStall*first.DurationS {
		want = sweep.GeneratorLimit
		t.Logf("the generator fell behind at step 1 (lateness p99 %.1f ms, %d late): this machine is loaded", first.Generator.LatenessP99MS, first.Late)
	}
	if sw.Manner != want || sw.MannerStep != 1 || first.Manner != want || sweep.Classify(nil, first) != want {
		t.Errorf("manner %q at step %d (step 1: %q, generator %+v, stalled %.3f s), want %q", sw.Manner, sw.MannerStep, first.Manner, first.Generator, first.StalledS, want)
	}
	for _, s := range sw.Steps {
		res, err := result.ReadFile(filepath.Join(out, s.Result))
		if err != nil {
			t.Fatal(err)
		}
		if res.Offered != res.Recorded || res.Offered != s.Offered || s.Failures["status 503"] != s.Offered {
			t.Errorf("step %d: offered %d recorded %d, step offered %d failures %v", s.Number, res.Offered, res.Recorded, s.Offered, s.Failures)
		}
	}
	for _, f := range []string{"sweep.md", "sweep.svg"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if !strings.Contains(stderr, "sweep step 2 of 4") || strings.Contains(stderr, "sweep step 3 of 4") {
		t.Errorf("progress lines:\n%s", stderr)
	}
}

// Ctrl-C during a step keeps what was measured, marks the sweep
// interrupted, and exits 3.
func TestSweepInterruptedKeepsWhatWasMeasured(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	var served sync.WaitGroup
	served.Add(1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			once.Do(func() { served.Done() })
		}
	}))
	defer srv.Close()
	go func() { served.Wait(); cancel() }() // the first request of the first step: SIGINT
	out, err, stderr := sweepRun(t, ctx, srv.URL, "--rates", "10,20", "--step", "30s")
	if c := code(err); c != 3 {
		t.Fatalf("exit %d (%v), want 3\n%s", c, err, stderr)
	}
	sw, rerr := sweep.ReadFile(filepath.Join(out, "sweep.json"))
	if rerr != nil {
		t.Fatal(rerr)
	}
	if !sw.Interrupted || len(sw.Steps) != 1 || !sw.Steps[0].Interrupted || sw.Steps[0].Held || sw.DegradesAt != nil {
		t.Errorf("interrupted %v steps %+v degrades %v", sw.Interrupted, sw.Steps, sw.DegradesAt)
	}
	if !strings.Contains(err.Error(), "interrupted after 1 of 2 step(s)") {
		t.Errorf("error %v", err)
	}
}

// A rate above a ceiling is refused before anything runs, never clamped.
func TestSweepRefusals(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("a refused sweep sent a request")
	}))
	defer srv.Close()
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--rates", "10,200"}, "step 2 of --rates (200.0 req/s) is refused: "},
		{[]string{"--rates", "10,50", "--max-rate", "20"}, "above the operator's --max-rate 20"},
		{[]string{"--rates", "20,10"}, "the stairs go up"},
		{[]string{"--rates", "10", "--step", "2m"}, "above ceilings.duration"},
		{[]string{"--warmup", "-1s"}, "not a duration of 0 or more"},
	} {
		out, err, stderr := sweepRun(t, context.Background(), srv.URL, c.args...)
		if code(err) != 2 {
			t.Errorf("%v: exit %d (%v), want 2", c.args, code(err), err)
			continue
		}
		var shown strings.Builder
		exitCode(err, &shown) // the message as the user reads it
		if msg := stderr + shown.String(); !strings.Contains(msg, c.msg) {
			t.Errorf("%v: %q does not say %q", c.args, msg, c.msg)
		}
		if _, err := os.Stat(filepath.Join(out, "sweep.json")); err == nil {
			t.Errorf("%v: a refused sweep wrote sweep.json", c.args)
		}
	}
}

func TestSweepHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"sweep", "-h"}, &stdout, &stderr)
	if code(err) != 0 || !strings.Contains(stderr.String(), "Usage: loadgate sweep") || !strings.Contains(stderr.String(), "Examples:") {
		t.Errorf("exit %d\n%s", code(err), stderr.String())
	}
}

// moduleRoot is the directory of go.mod above this test's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = parent
	}
}

// The demo's sweep stack comes up once for the whole sweep and is gone
// after it: two short steps on the pool, each with its stack services'
// CPU and memory, and no labelled resource left behind.
func TestSweepDemoStack(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: stack tests not run")
	}
	testtier.Require(t, testtier.E2E) // by default: the sweep on loopback, examples/demo's stack
	enginetest.Require(t, "the sweep's stack test")
	root := moduleRoot(t)
	bin := filepath.Join(t.TempDir(), "loadgate")
	if b, err := exec.Command("go", "build", "-o", bin, filepath.Join(root, "cmd", "loadgate")).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	out := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "sweep", "--scenario", filepath.Join(root, "examples", "demo", "sweep.yaml"),
		"--rates", "10,20", "--step", "2s", "--warmup", "1s", "--out", out, "--progress", "never")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	if left := leftovers(t, cmd.Process.Pid); len(left) > 0 {
		t.Errorf("left behind: %s", strings.Join(left, ", "))
	}
	if err != nil {
		t.Fatalf("exit %v\n%s", err, stderr.String())
	}
	if n := strings.Count(stderr.String(), "Started"); n > 1 {
		t.Errorf("the stack came up %d times, want once:\n%s", n, stderr.String())
	}
	sw, err := sweep.ReadFile(filepath.Join(out, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sw.Steps) != 2 || sw.Topology.TargetPath == "" || sw.Topology.TargetPath == "loopback" {
		t.Fatalf("steps %d topology %+v", len(sw.Steps), sw.Topology)
	}
	// The stack and the generator pinned apart: --load-priority auto raises
	// the generator where it may, and says why not where it may not.
	tp := sw.Topology
	switch {
	case tp.Pinned && pin.CheckRaise() == nil:
		if tp.LoadScheduling != "SCHED_RR 1" || tp.LoadSchedulingWhy != "" {
			t.Errorf("pinned apart, raising permitted: generator %q (%q), want SCHED_RR 1", tp.LoadScheduling, tp.LoadSchedulingWhy)
		}
	case tp.LoadSchedulingWhy == "":
		t.Errorf("generator %q not raised and no reason stated (pinned %t: %s)", tp.LoadScheduling, tp.Pinned, tp.PinnedReason)
	}
	for _, s := range sw.Steps {
		if s.Offered == 0 || len(s.Services) == 0 || s.Services[0].Name != "pool" {
			t.Errorf("step %d: offered %d services %+v", s.Number, s.Offered, s.Services)
		}
	}
	var text bytes.Buffer
	if err := report.SweepText(&text, sw); err != nil {
		t.Fatal(err)
	}
	t.Logf("sweep of the demo stack:\n%s", text.String())
}
