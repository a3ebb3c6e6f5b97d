package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/result"
)

func code(err error) int {
	return exitCode(err, io.Discard)
}

func writeScenario(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "load.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const okScenario = `
name: cli
phases: [{name: sustain, rate: 50, duration: 300ms}]
workloads:
  - {name: a, share: 1, http: {path: /}, thresholds: {p99: %s}}
`

func TestRunExitCodes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Millisecond)
	}))
	defer srv.Close()
	cases := []struct {
		name     string
		scenario string
		args     []string
		want     int
		stderr   string // a fragment the error must hold
	}{
		{"pass", strings.Replace(okScenario, "%s", "5s", 1), nil, 0, ""},
		{"threshold broken", strings.Replace(okScenario, "%s", "1ms", 1), nil, 1, "verdict: fail"},
		{"not loopback", strings.Replace(okScenario, "%s", "5s", 1), []string{"--target", "http://10.1.2.3:80"}, 2, "not a loopback address"},
		{"bad scheme", strings.Replace(okScenario, "%s", "5s", 1), []string{"--target", "ftp://127.0.0.1/"}, 2, "scheme must be http or https"},
		{"unknown key", "name: x\nphases: [{name: sustain, rate: 1, duration: 1s}]\nworkloads: [{name: a, htpp: {path: /}}]\n", nil, 2, "load.yaml:3: workloads[0].htpp: unknown field"},
		{"ceiling", "name: x\nceilings: {rate: 10}\nphases: [{name: sustain, rate: 11, duration: 1s}]\nworkloads: [{name: a, http: {path: /}}]\n", nil, 2, "above ceilings.rate 10"},
		{"missing env", "name: x\nphases: [{name: sustain, rate: 1, duration: 1s}]\nworkloads: [{name: a, http: {path: /, headers: {X: '${LOADGATE_TEST_UNSET_VAR}'}}}]\n", nil, 2, "LOADGATE_TEST_UNSET_VAR is not set"},
		{"bad scale", strings.Replace(okScenario, "%s", "5s", 1), []string{"--scale", "2"}, 2, "scale"},
		{"unknown flag", strings.Replace(okScenario, "%s", "5s", 1), []string{"--nope"}, 2, "flag provided but not defined"},
		{"bad load priority", strings.Replace(okScenario, "%s", "5s", 1), []string{"--load-priority", "fifo"}, 2, `invalid value "fifo" for flag --load-priority: "fifo": want auto, rt or normal`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"run", "--scenario", writeScenario(t, c.scenario), "--target", srv.URL, "--out", out}, c.args...)
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), args, &stdout, &stderr)
			if got := code(err); got != c.want {
				t.Fatalf("exit %d, want %d; err %v; stderr %s", got, c.want, err, stderr.String())
			}
			msg := stderr.String()
			if err != nil {
				msg += err.Error()
			}
			if !strings.Contains(msg, c.stderr) {
				t.Errorf("message %q does not say %q", msg, c.stderr)
			}
			if c.want <= 1 {
				for _, f := range []string{"result.json", "report.md", "verdict.json", "snapshots.jsonl"} {
					if _, err := os.Stat(filepath.Join(out, f)); err != nil {
						t.Errorf("%s not written: %v", f, err)
					}
				}
				if !strings.Contains(stdout.String(), "verdict") {
					t.Errorf("no verdict printed:\n%s", stdout.String())
				}
			}
		})
	}
}

// The generator's scheduling is stated in the result, raised only where
// --load-priority says so, and lowered again when the load ends.
func TestRunLoadPriority(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	sc := writeScenario(t, strings.Replace(okScenario, "%s", "5s", 1))
	cases := []struct {
		args      []string
		sched     string // the result's load_scheduling
		why       string // a fragment of its reason; "" none
		needRaise bool
	}{
		// auto in a plain run: the target may share the generator's cpus.
		{nil, "SCHED_OTHER", "plain run mode", false},
		{[]string{"--load-priority", "normal"}, "SCHED_OTHER", "--load-priority normal", false},
		{[]string{"--load-priority", "rt"}, "SCHED_RR 1", "", true},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			if c.needRaise {
				if err := pin.CheckRaise(); err != nil {
					t.Skipf("no real-time policy here: %v", err)
				}
			}
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"run", "--scenario", sc, "--target", srv.URL, "--out", out}, c.args...)
			var stdout, stderr bytes.Buffer
			if err := run(context.Background(), args, &stdout, &stderr); code(err) != 0 {
				t.Fatalf("exit %d: %v\n%s", code(err), err, stderr.String())
			}
			res, err := result.ReadFile(filepath.Join(out, "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			tp := res.Topology
			if tp.LoadScheduling != c.sched || !strings.Contains(tp.LoadSchedulingWhy, c.why) || (c.why == "" && tp.LoadSchedulingWhy != "") {
				t.Errorf("load_scheduling %q (%q), want %q (%q)", tp.LoadScheduling, tp.LoadSchedulingWhy, c.sched, c.why)
			}
			if md, _ := os.ReadFile(filepath.Join(out, "report.md")); !strings.Contains(string(md), "generator "+c.sched) {
				t.Errorf("report.md does not state the generator's %s", c.sched)
			}
			if now, err := pin.ReadScheduling(); err != nil || now != "SCHED_OTHER" {
				t.Errorf("after the run this process runs %q (%v), want SCHED_OTHER again", now, err)
			}
		})
	}
}

// A run interrupted by a signal (the context) still writes a result that
// balances, says it is interrupted, and exits 3.
func TestRunInterrupted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "out")
	sc := writeScenario(t, "name: x\nphases: [{name: sustain, rate: 100, duration: 60s}]\nworkloads: [{name: a, http: {path: /}}]\n")
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := run(ctx, []string{"run", "--scenario", sc, "--target", srv.URL, "--out", out}, &stdout, &stderr)
	if got := code(err); got != 3 {
		t.Fatalf("exit %d, want 3 (unusable); err %v", got, err)
	}
	res, err := result.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.Usable || res.Offered != res.Recorded || res.Offered == 0 {
		t.Errorf("interrupted %v usable %v offered %d recorded %d", res.Interrupted, res.Usable, res.Offered, res.Recorded)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(md), "INTERRUPTED") {
		t.Errorf("report.md does not say the run was interrupted")
	}
}

func TestUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if got := code(run(context.Background(), nil, &stdout, &stderr)); got != 2 {
		t.Errorf("no arguments: exit %d, want 2", got)
	}
	if !strings.Contains(stderr.String(), "Examples:") {
		t.Errorf("usage has no examples")
	}
	if got := code(run(context.Background(), []string{"frobnicate"}, &stdout, &stderr)); got != 2 {
		t.Errorf("unknown command: exit %d, want 2", got)
	}
	stderr.Reset()
	if got := code(run(context.Background(), []string{"run", "-h"}, &stdout, &stderr)); got != 0 {
		t.Errorf("run -h: exit %d, want 0", got)
	}
	if !strings.Contains(stderr.String(), "--target") && !strings.Contains(stderr.String(), "-target") {
		t.Errorf("run -h does not list its flags:\n%s", stderr.String())
	}
}

func TestReportCommand(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "out")
	sc := writeScenario(t, strings.Replace(okScenario, "%s", "5s", 1))
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"run", "--scenario", sc, "--target", srv.URL, "--out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"report", "--format", "markdown", filepath.Join(out, "result.json")}, &stdout, &stderr); err != nil {
		t.Fatalf("report: %v", err)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if stdout.String() != string(md) {
		t.Errorf("report --format markdown differs from report.md")
	}
	if got := code(run(context.Background(), []string{"report", filepath.Join(out, "missing.json")}, &stdout, &stderr)); got != 2 {
		t.Errorf("report of a missing file: exit %d, want 2", got)
	}
}
