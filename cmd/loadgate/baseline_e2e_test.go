package main

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/enginetest"
	"github.com/loadgate/loadgate/internal/testtier"
)

// A gate against a stored baseline checks out the commit the baseline
// recorded and runs it beside head on this machine (the demo service's
// stack), reading the baseline and the scenario from --base; the report
// shows the stored numbers beside, at recording time. Commit 1's backend
// answers in 5 ms; the baseline of it is stored in commit 2; head (commit 3)
// answers in 25 ms. Then, in a shallow clone that lacks commit 1, the stored
// numbers stand alone and the report says why.
func TestGateAgainstBaselineRunsItsCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: stack tests not run")
	}
	testtier.Require(t, testtier.E2E)
	enginetest.Require(t, "a gate against a baseline")
	root := repoRoot(t)
	bin := buildLoadgate(t, root)

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
	compose := func(delayMS string) string {
		return `x-service: &service
  build: {context: ./service}
services:
  backend:
    <<: *service
    command: ["-role", "backend", "-listen", ":8081"]
    environment: {DELAY_MS: "` + delayMS + `"}
    healthcheck: {test: ["CMD", "/service", "-healthcheck", "http://127.0.0.1:8081/healthz"], interval: 1s, timeout: 2s, retries: 10}
  api:
    <<: *service
    command: ["-role", "api", "-listen", ":8080"]
    environment: {BACKEND_URL: "http://backend:8081"}
    depends_on: {backend: {condition: service_healthy}}
`
	}
	write := func(files map[string]string) {
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(repo, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	gitEnv := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	git := func(args ...string) string {
		t.Helper()
		c := exec.Command("git", args...)
		c.Dir, c.Env = repo, gitEnv
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	tmp := t.TempDir() // the gate's worktrees follow TMPDIR
	loadgate := func(dir string, args ...string) (string, int) {
		t.Helper()
		c := exec.Command(bin, args...)
		c.Dir, c.Env = dir, append(os.Environ(), "TMPDIR="+tmp)
		out, err := c.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}

	write(map[string]string{"service/Dockerfile": string(df), "compose.yaml": compose("5"), "scenario.yaml": `name: rerun
stack: {compose: [compose.yaml], target: "api:8080"}
warmup: 2s
phases: [{name: sustain, rate: 40, duration: 4s}]
workloads: [{name: profile, http: {path: "/profile/{n}"}, thresholds: {p95: 2s}}]
`})
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "the backend answers in 5 ms")
	recorded := git("rev-parse", "HEAD")
	measured := filepath.Join(t.TempDir(), "measured")
	if out, code := loadgate(repo, "run", "--scenario", "scenario.yaml", "--out", measured, "--progress", "never"); code != 0 {
		t.Fatalf("loadgate run: exit %d\n%s", code, out)
	}
	if out, code := loadgate(repo, "baseline", "save", "--name", "rel", "--dir", ".", "--commit", recorded, "--result", filepath.Join(measured, "result.json")); code != 0 {
		t.Fatalf("baseline save: exit %d\n%s", code, out)
	}
	git("add", "baselines")
	git("commit", "-q", "-m", "baselines: rel")
	protected := git("rev-parse", "HEAD")
	write(map[string]string{"compose.yaml": compose("25")})
	git("commit", "-q", "-am", "the backend answers in 25 ms")

	out := filepath.Join(t.TempDir(), "gate")
	began := time.Now()
	log, code := loadgate(repo, "gate", "--scenario", "scenario.yaml", "--against", "baseline:rel", "--base", protected, "--rounds", "4", "--out", out, "--progress", "never")
	t.Logf("gate against the re-measured baseline: exit %d in %s\n%s", code, time.Since(began).Round(time.Second), log)
	if code != 0 && code != 1 {
		t.Fatalf("exit %d, want a verdict", code)
	}
	base, err := result.ReadFile(filepath.Join(out, "base", "round-1", "result.json"))
	if err != nil {
		t.Fatalf("no base round: the baseline's commit did not run beside head: %v", err)
	}
	if base.Commit != recorded {
		t.Errorf("base round of commit %s, want the baseline's %s", base.Commit, recorded)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{"baseline rel is re-measured: its commit " + recorded[:12], "the baseline as stored, at recording time, on "} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md does not say %q", want)
		}
	}
	if v := logIntervals(t, "re-measured", out); v == verdict.Pass || v == verdict.Improvement {
		t.Errorf("verdict %s: head's backend is 20 ms slower than the baseline's commit", v)
	}

	// A shallow clone of commits 3 and 2 lacks commit 1: the stored
	// numbers stand alone, and the report says why.
	shallow := filepath.Join(t.TempDir(), "shallow")
	git("clone", "-q", "--depth", "2", "file://"+repo, shallow)
	out = filepath.Join(t.TempDir(), "stored")
	log, code = loadgate(shallow, "gate", "--scenario", "scenario.yaml", "--against", "baseline:rel", "--base", protected, "--rounds", "4", "--out", out, "--progress", "never")
	if code != 0 && code != 1 {
		t.Fatalf("exit %d, want a verdict\n%s", code, log)
	}
	if _, err := os.Stat(filepath.Join(out, "base")); err == nil {
		t.Errorf("a base side ran although the baseline's commit is not in the clone")
	}
	logIntervals(t, "stored numbers alone", out)
	md, _ = os.ReadFile(filepath.Join(out, "report.md"))
	if want := "baseline rel's commit could not be run here (commit " + recorded[:12] + " is not in this clone"; !strings.Contains(string(md), want) {
		t.Errorf("report.md does not say %q", want)
	}
}

// logIntervals logs a gate's latency comparisons (the interval's width is
// the figure to compare) and returns its verdict.
func logIntervals(t *testing.T, what, out string) verdict.Value {
	t.Helper()
	fh, err := os.Open(filepath.Join(out, "verdict.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	v, err := report.DecodeGateVerdict(fh)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for _, wv := range v.Workloads {
		for _, c := range wv.Comparisons {
			if c.Metric != verdict.MetricErrorRate {
				t.Logf("%s: %s %s %s: base %.2f ms, head %.2f ms, ratio %.3f, CI %+.1f%% … %+.1f%% (%s, ×/÷ %.2f), %s",
					what, c.Phase, c.Workload, c.Metric, c.Base, c.Head, c.Ratio, 100*(c.CILow-1), 100*(c.CIHigh-1), c.Interval,
					math.Sqrt(c.CIHigh/c.CILow), c.Value)
			}
		}
	}
	t.Logf("%s: verdict %s", what, v.Value)
	return v.Value
}
