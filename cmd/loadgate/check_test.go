package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// loadgate check names every problem of a scenario and its compose file
// at once, by file and line, and builds nothing (issue 48: errors stopped
// at the first, and only a run found a compose refusal).
func TestCheckNamesEveryProblem(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("compose.yaml", "services:\n  api:\n    image: scratch\n    privileged: true\n    cgroup: host\n")
	write("s.yaml", "name: x\nstack: {compose: [compose.yaml], target: api:80}\nphases:\n  - {name: a, rate: 5, duration: 1s}\nworkloads:\n  - {name: w, http: {path: /}}\n")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"check", "--scenario", filepath.Join(dir, "s.yaml")}, &stdout, &stderr)
	if got := exitCode(err, &stderr); got != 2 {
		t.Fatalf("exit %d, want 2\n%s", got, stderr.String())
	}
	for _, want := range []string{"compose.yaml:4: services.api.privileged", "compose.yaml:5: services.api.cgroup", "check: 2 problem(s)"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}

	write("s.yaml", "name: x\ntmeout: 5s\nphases:\n  - {name: a, rate: 0, duration: 1s}\nworkloads:\n  - {name: w, share: 0, http: {path: /}}\n")
	stdout.Reset()
	stderr.Reset()
	err = run(context.Background(), []string{"check", "--scenario", filepath.Join(dir, "s.yaml")}, &stdout, &stderr)
	if got := exitCode(err, &stderr); got != 2 || strings.Count(stderr.String(), "s.yaml:") != 3 {
		t.Errorf("exit %d, want 2 and the scenario's three errors:\n%s", got, stderr.String())
	}
}

// The README's scenario on the demo stack passes, and check says how a
// default gate would cut its judged phase: at least 10 rounds in the budget.
func TestCheckAcceptsTheDemo(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"check", "--scenario", "../../examples/demo/readme.yaml"}, &stdout, &stderr)
	out := stdout.String()
	if got := exitCode(err, &stderr); got != 0 || !strings.Contains(out, "ok: nothing the gate would refuse") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", got, out, stderr.String())
	}
	var rounds int
	if i := strings.Index(out, "; about "); i < 0 || !strings.Contains(out, "gate plan: sustain 1m0s cut into windows") {
		t.Errorf("no windows plan:\n%s", out)
	} else if _, err := fmt.Sscanf(out[i:], "; about %d rounds", &rounds); err != nil || rounds < 10 {
		t.Errorf("the README's scenario plans %d rounds (%v), want >= 10:\n%s", rounds, err, out)
	}
}

// A scenario with the deprecated top-level tolerance keys passes check, which
// names each by its line; with a gate: block beside one, check refuses it.
func TestCheckNamesTheOldToleranceKeys(t *testing.T) {
	dir := t.TempDir()
	body := "phases:\n  - {name: a, rate: 5, duration: 1s}\nworkloads:\n  - {name: w, http: {path: /}}\n"
	path := filepath.Join(dir, "s.yaml")
	for _, c := range []struct {
		head, want string
		code       int
	}{
		{"name: x\ntolerance: 5%\n", "s.yaml:2: tolerance: a top-level key is deprecated: write it as gate: {tolerance: …}", 0},
		{"name: x\ngate: {tolerance: 5%}\ntolerance: 5%\n", "s.yaml:3: tolerance: given twice, here and as gate.tolerance (line 2)", 2},
	} {
		if err := os.WriteFile(path, []byte(c.head+body), 0o644); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), []string{"check", "--scenario", path}, &stdout, &stderr)
		if got := exitCode(err, &stderr); got != c.code || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%q: exit %d, want %d and %q:\n%s", c.head, got, c.code, c.want, stderr.String())
		}
	}
}
