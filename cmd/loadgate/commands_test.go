package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

// Every command's -h exits 0 with its help on stderr (compare and baseline
// exited 2).
func TestEveryHelpExitsZero(t *testing.T) {
	for _, args := range [][]string{
		{"run", "-h"}, {"gate", "-h"}, {"compare", "-h"}, {"baseline", "-h"}, {"baseline", "save", "-h"},
		{"up", "-h"}, {"down", "-h"}, {"report", "-h"}, {"comment", "-h"}, {"calibrate", "-h"},
		{"history", "-h"}, {"history", "record", "-h"}, {"history", "previous", "-h"}, {"merge", "-h"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), args, &stdout, &stderr)
		if got := exitCode(err, &stderr); got != 0 {
			t.Errorf("%v: exit %d (%v), want 0", args, got, err)
		}
		if !strings.Contains(stderr.String(), "Usage:") {
			t.Errorf("%v: no help on stderr:\n%s", args, stderr.String())
		}
		if strings.Contains(stderr.String(), "loadgate: help") {
			t.Errorf("%v: help reported as an error:\n%s", args, stderr.String())
		}
	}
}

// exitCode is the one mapping from what a command returned to the exit
// code.
func TestExitCodeMapping(t *testing.T) {
	pass := verdict.Verdict{Value: verdict.Pass}
	for _, c := range []struct {
		err  error
		want int
		msg  string
	}{
		{nil, 0, ""},
		{errHelp, 0, ""},
		{verdictExit(pass), 0, ""},
		{verdictExit(verdict.Verdict{Value: verdict.Inconclusive}), 0, ""},
		{verdictExit(verdict.Verdict{Value: verdict.Regression}), 1, "verdict: regression"},
		{verdictExit(verdict.Verdict{Value: verdict.NotMeasured}), 1, "verdict: not measured"},
		{verdictExit(rounds.ErrorVerdict("x")), 3, "verdict: unusable"},
		{verdictCode(verdict.Verdict{Value: verdict.Fail}, 0, "fail-on never"), 0, ""},
		{verdictCode(verdict.Verdict{Value: verdict.Regression}, 1, "fail-on regression"), 1, "fail-on regression"},
		{usageErr("bad flag"), 2, "bad flag"},
		{unusable(errors.New("no engine")), 3, "no engine"},
		{fmt.Errorf("run: %w", unusable(errors.New("stack down"))), 3, "run: stack down"},
		{shown(rounds.Usagef("flag provided but not defined")), 2, ""},
		{errors.New("kindless"), 2, "kindless"},
	} {
		var stderr bytes.Buffer
		if got := exitCode(c.err, &stderr); got != c.want {
			t.Errorf("%v: exit %d, want %d", c.err, got, c.want)
		}
		if c.msg == "" && stderr.Len() > 0 || c.msg != "" && !strings.Contains(stderr.String(), c.msg) {
			t.Errorf("%v: stderr %q, want %q", c.err, stderr.String(), c.msg)
		}
	}
}

// gitRepo makes a repository in dir with files committed, and changes the
// working directory to it for the test.
func gitRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, body := range files {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "base"}} {
		c := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		c.Dir = dir
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	t.Chdir(dir)
	return dir
}

// Regression (issue 9): `loadgate gate --compose c.yaml --base HEAD` with a
// scenario without a stack: section crashed with a nil dereference
// (SIGSEGV) before any Docker call. It is now exit 2 naming --target, and
// the base worktree is removed.
func TestRegression_GateComposeWithoutStackSection(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	gitRepo(t, map[string]string{
		"load.yaml": "name: plain\nphases: [{name: sustain, rate: 10, duration: 1s}]\nworkloads: [{name: a, http: {path: /}}]\n",
		"c.yaml":    "services: {api: {image: scratch}}\n",
	})
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"gate", "--scenario", "load.yaml", "--compose", "c.yaml", "--base", "HEAD", "--out", filepath.Join(t.TempDir(), "out"), "--progress", "never"}, &stdout, &stderr)
	if got := code(err); got != 2 || !strings.Contains(err.Error(), "--target") {
		t.Fatalf("exit %d (%v), want 2 asking for --target\n%s", got, err, stderr.String())
	}
	if ents, _ := filepath.Glob(filepath.Join(os.Getenv("TMPDIR"), "loadgate-worktrees-*", "*")); len(ents) != 0 {
		t.Errorf("worktrees left: %v", ents)
	}
}

// stack.prepare runs the same way in run, up and gate: whenever the
// scenario has one, also when --compose replaces its compose files (run
// and up skipped it then). A prepare that fails is unusable (exit 3) and
// nothing else is started, so this needs no Docker engine.
func TestPrepareRunsInEveryCommand(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	root := gitRepo(t, map[string]string{
		"load/load.yaml": "name: prep\nphases: [{name: sustain, rate: 10, duration: 1s}]\nworkloads: [{name: a, http: {path: /}}]\n" +
			"stack: {compose: [compose.yaml], target: api:8080, prepare: [./prepare.sh]}\n",
		"load/compose.yaml": "services: {api: {image: scratch}}\n",
		"load/prepare.sh":   "#!/bin/sh\necho ran >> \"$(dirname \"$0\")/ran\"\nexit 7\n",
		"other.yaml":        "services: {api: {image: scratch}}\n",
	})
	out := t.TempDir()
	for _, args := range [][]string{
		{"run", "--scenario", "load/load.yaml", "--out", filepath.Join(out, "r1")},
		{"run", "--scenario", "load/load.yaml", "--compose", "other.yaml", "--target", "api:8080", "--out", filepath.Join(out, "r2")},
		{"up", "--scenario", "load/load.yaml", "--compose", "other.yaml"},
		{"gate", "--scenario", "load/load.yaml", "--compose", "other.yaml", "--base", "HEAD", "--rounds", "1", "--out", filepath.Join(out, "g")},
	} {
		os.Remove(filepath.Join(root, "load", "ran"))
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), args, &stdout, &stderr)
		if got := code(err); got != 3 || !strings.Contains(err.Error(), "stack.prepare") {
			t.Errorf("%v: exit %d (%v), want 3 from stack.prepare", args, got, err)
		}
		if args[0] != "gate" {
			if _, err := os.Stat(filepath.Join(root, "load", "ran")); err != nil {
				t.Errorf("%v: prepare did not run in the scenario's directory: %v", args, err)
			}
		}
	}
}

// Operator ceilings: a scenario asking for more is refused (exit 2) naming
// the flag, before any request; its own higher ceilings do not raise them.
func TestRunOperatorCeilings(t *testing.T) {
	sc := writeScenario(t, "name: big\nceilings: {rate: 1000000, in_flight: 100000}\nmax_in_flight: 5000\nphases: [{name: sustain, rate: 50, duration: 300ms}]\nworkloads: [{name: a, http: {path: /}}]\n")
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--max-rate", "10"}, "--max-rate 10"},
		{[]string{"--max-duration", "100ms"}, "--max-duration 100ms"},
		{[]string{"--max-in-flight", "512"}, "--max-in-flight 512"},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"run", "--scenario", sc, "--target", "http://127.0.0.1:1", "--out", filepath.Join(t.TempDir(), "o")}, c.flags...)
		err := run(context.Background(), args, &stdout, &stderr)
		if got := code(err); got != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d (%v), want 2 naming %q", c.flags, got, err, c.want)
		}
	}
}
