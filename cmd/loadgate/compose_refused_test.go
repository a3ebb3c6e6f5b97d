package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a compose file refused for a key that reaches the host exited
// 3 (unusable) where the README promises 2 (refused, bad input); it exits 2
// with file:line, the key and the stack.allow name, before any engine call.
func TestRegression_ComposeRefusalExits2(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("compose.yaml", "services:\n  api:\n    image: scratch\n    privileged: true\n")
	write("load.yaml", `name: refused
stack: {compose: [compose.yaml], target: "api:8080"}
phases: [{name: sustain, rate: 1, duration: 1s}]
workloads: [{name: a, http: {path: /}}]
`)
	for _, args := range [][]string{
		{"up", "--allow-overlap", "--scenario", filepath.Join(dir, "load.yaml")},
		{"run", "--allow-overlap", "--scenario", filepath.Join(dir, "load.yaml"), "--out", filepath.Join(t.TempDir(), "out")},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), args, &stdout, &stderr)
		got := exitCode(err, &stderr)
		if got != exitUsage {
			t.Errorf("%s: exit %d, want %d: %s", args[0], got, exitUsage, stderr.String())
		}
		if want := `compose.yaml:4: services.api.privileged (true)`; !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), `"privileged" in stack.allow (in a gate, base's scenario)`) {
			t.Errorf("%s: stderr lacks %q:\n%s", args[0], want, stderr.String())
		}
		t.Logf("exit %d, user sees: %s", got, strings.TrimSpace(stderr.String()))
	}
}
