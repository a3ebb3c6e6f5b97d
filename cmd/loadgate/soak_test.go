package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/soak"
)

const soakScenarioYAML = `
name: soak-cli
ceilings: {rate: 100, duration: 3h}
phases:
  - {name: ramp, pattern: ramp, from: 1, to: 10, duration: 1s}
  - {name: sustain, rate: 10, duration: 1s}
workloads:
  - {name: a, http: {path: /}}
`

func TestSoakRefusals(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	sc := writeScenario(t, soakScenarioYAML)
	ramp := writeScenario(t, "name: x\nphases: [{name: sustain, pattern: ramp, from: 1, to: 2, duration: 1s}]\nworkloads: [{name: a, http: {path: /}}]\n")
	for _, c := range []struct {
		name string
		args []string
		msg  string
	}{
		{"no duration", []string{"--scenario", sc, "--target", srv.URL}, "--duration is required"},
		{"above the scenario's ceiling", []string{"--scenario", sc, "--target", srv.URL, "--duration", "4h"}, "above ceilings.duration 3h"},
		{"above the operator's ceiling", []string{"--scenario", sc, "--target", srv.URL, "--duration", "2h", "--max-duration", "1h"}, "above the operator's --max-duration 1h"},
		{"not steady", []string{"--scenario", ramp, "--target", srv.URL, "--duration", "1h"}, "a soak holds one steady rate"},
		{"bad threshold", []string{"--scenario", sc, "--target", srv.URL, "--duration", "1h", "--leak-threshold", "lots"}, "--leak-threshold"},
		{"no such pid", []string{"--scenario", sc, "--target", srv.URL, "--duration", "1h", "--watch-pid", "999999999"}, "no such process"},
		{"pid in stack mode", []string{"--scenario", sc, "--target", "api:8080", "--compose", "c.yaml", "--duration", "1h", "--watch-pid", "1"}, "--watch-pid is for plain mode"},
		{"not loopback", []string{"--scenario", sc, "--target", "http://10.1.2.3:80", "--duration", "1h"}, "not a loopback address"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), append([]string{"soak", "--out", filepath.Join(t.TempDir(), "out")}, c.args...), &stdout, &stderr)
			if got := code(err); got != 2 {
				t.Fatalf("exit %d, want 2; err %v", got, err)
			}
			if msg := stderr.String() + err.Error(); !strings.Contains(msg, c.msg) {
				t.Errorf("message %q does not say %q", msg, c.msg)
			}
		})
	}
}

// A soak too short to conclude runs, writes everything, and says
// inconclusive in the result, the report and the exit message, with exit 1:
// never a pass.
func TestSoakTooShortIsInconclusive(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"soak", "--scenario", writeScenario(t, soakScenarioYAML), "--target", srv.URL,
		"--watch-pid", "1", "--duration", "2s", "--out", out, "--stats-interval", "200ms"}, &stdout, &stderr)
	if got := code(err); got != 1 {
		t.Fatalf("exit %d, want 1; err %v; stderr %s", got, err, stderr.String())
	}
	if !strings.Contains(err.Error(), "INCONCLUSIVE") || !strings.Contains(err.Error(), "NOT a pass") {
		t.Errorf("exit message %q", err)
	}
	if !strings.Contains(stderr.String(), "WARNING: a 2s soak cannot conclude") {
		t.Errorf("no warning up front:\n%s", stderr.String())
	}
	for _, f := range []string{"soak.json", "soak.md", "soak.svg", "result.json", "stats.jsonl", "snapshots.jsonl"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	var s soak.Result
	data, _ := os.ReadFile(filepath.Join(out, "soak.json"))
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if s.Verdict != soak.Inconclusive || len(s.Processes) != 2 {
		t.Fatalf("soak.json: verdict %s, %d processes (want inconclusive, pid 1 and the generator)", s.Verdict, len(s.Processes))
	}
	md, _ := os.ReadFile(filepath.Join(out, "soak.md"))
	if !strings.Contains(string(md), "**INCONCLUSIVE SOAK**") {
		t.Error("soak.md has no inconclusive banner")
	}
}

// SIGINT (the context) keeps what was measured, marked interrupted: exit 3.
func TestSoakInterrupted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := run(ctx, []string{"soak", "--scenario", writeScenario(t, soakScenarioYAML), "--target", srv.URL, "--duration", "1h", "--out", out}, &stdout, &stderr)
	if got := code(err); got != 3 {
		t.Fatalf("exit %d, want 3; err %v", got, err)
	}
	var s soak.Result
	data, _ := os.ReadFile(filepath.Join(out, "soak.json"))
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if !s.Interrupted || s.RanS >= 3600 {
		t.Errorf("interrupted %v after %v s", s.Interrupted, s.RanS)
	}
	if !strings.Contains(err.Error(), "INTERRUPTED") {
		t.Errorf("exit message %q", err)
	}
}

// run --watch-pid: the watched process appears in the result like a stack
// service.
func TestRunWatchPID(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "out")
	sc := writeScenario(t, "name: x\nphases: [{name: sustain, rate: 20, duration: 1s}]\nworkloads: [{name: a, http: {path: /}}]\n")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"run", "--scenario", sc, "--target", srv.URL, "--out", out,
		"--watch-pid", itoa(os.Getpid()), "--stats-interval", "100ms"}, &stdout, &stderr)
	if got := code(err); got != 0 {
		t.Fatalf("exit %d; err %v; stderr %s", got, err, stderr.String())
	}
	data, _ := os.ReadFile(filepath.Join(out, "result.json"))
	if !strings.Contains(string(data), `"name": "pid `+itoa(os.Getpid())) {
		t.Errorf("result.json has no watched process:\n%s", data)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(md), "| pid "+itoa(os.Getpid())) {
		t.Errorf("report.md has no row for the watched process")
	}
	if _, err := os.Stat(filepath.Join(out, "stats.jsonl")); err != nil {
		t.Error(err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestSoakHelpExitsZero(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"soak", "-h"}, &stdout, &stderr)
	if got := code(err); got != 0 || !strings.Contains(stderr.String(), "--leak-threshold") {
		t.Errorf("exit %d; help:\n%s", got, stderr.String())
	}
}

// Regression: the soak's exit code was decided by parsing its summary
// string, and an unusable soak's report said "STABLE (exit 0)". The code
// is soak.Result.ExitCode's, from the result as data, mapped in one
// place (exit.go).
func TestSoakExitIsMappedFromData(t *testing.T) {
	for _, c := range []struct {
		name string
		s    soak.Result
		want int
	}{
		{"stable", soak.Result{Usable: true, Verdict: soak.Stable}, 0},
		{"leak", soak.Result{Usable: true, Verdict: soak.Leak}, 1},
		{"inconclusive", soak.Result{Usable: true, Verdict: soak.Inconclusive}, 1},
		{"interrupted", soak.Result{Usable: true, Verdict: soak.Stable, Interrupted: true}, 3},
		{"unusable but stable", soak.Result{Usable: false, Verdict: soak.Stable}, 3},
		{"unusable leak", soak.Result{Usable: false, Verdict: soak.Leak}, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.s.ExitCode(); got != c.want {
				t.Errorf("ExitCode %d, want %d", got, c.want)
			}
			err := soakOutcome(&c.s, "soak: a summary that says nothing of its verdict", io.Discard)
			if got := code(err); got != c.want {
				t.Errorf("exit code %d, want %d (err %v)", got, c.want, err)
			}
		})
	}
}

// Regression: a faults scenario given to soak was refused with exit 3 after
// the stack was up. It is refused with exit 2 before any bring-up (the
// demo's faults.yaml has a stack: this test would need Docker otherwise).
func TestSoakRefusesAFaultsScenarioBeforeBringUp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"soak", "--scenario", "../../examples/demo/faults.yaml", "--duration", "1h",
		"--out", filepath.Join(t.TempDir(), "out")}, &stdout, &stderr)
	if got := code(err); got != 2 {
		t.Fatalf("exit %d, want 2; err %v", got, err)
	}
	if !strings.Contains(err.Error(), "faults.yaml:26: phase sustain injects faults") {
		t.Errorf("message %q", err)
	}
	base, perr := scenario.Load("../../examples/demo/faults.yaml", scenario.Options{})
	if perr != nil {
		t.Fatal(perr)
	}
	if _, err := soak.Scenario(base, time.Hour); err == nil {
		t.Error("soakScenario copied a faults scenario's phases")
	}
}

// A soak whose hours × workloads are more cells than scenario.MaxCells is
// refused (exit 2) before anything runs (soak.Scenario's cell check).
func TestSoakOfTooManyCellsIsRefused(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: wide\nceilings: {rate: 100, duration: 100h}\nphases: [{name: sustain, rate: 10, duration: 1s}]\nworkloads:\n")
	for i := range 30 {
		fmt.Fprintf(&b, "  - {name: w%d, http: {path: /}}\n", i)
	}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"soak", "--scenario", writeScenario(t, b.String()), "--target", "http://127.0.0.1:1",
		"--duration", "48h", "--out", filepath.Join(t.TempDir(), "out")}, &stdout, &stderr)
	if got := code(err); got != 2 || !strings.Contains(err.Error(), "1440 cells") {
		t.Errorf("soak of 48 h × 30 workloads: exit %d, want 2 (%v)", got, err)
	}
}
