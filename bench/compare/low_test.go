package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/internal/testtier"
)

// The low-rate table of make bench (issue 51) is produced: a short run of
// each tool at two low rates in both scheduling modes, through the
// orchestrator's own command line (-only-low, as make bench-low), has a row
// for every tool, mode and rate, each measured. Its figures are not judged:
// one second on a shared machine says nothing of lateness. vegeta takes part
// when bench/run.sh has built it (.bench/bin/vegeta); the e2e tier builds it
// from the module proxy as run.sh does.
func TestLowRateTableIsProduced(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.NumCPU() < 2 {
		t.Skip("the bench pins a server and a generator to two cores of a Linux machine")
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("taskset not found (util-linux)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	build := func(out, pkg string, env ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
		cmd.Dir, cmd.Env = root, append(os.Environ(), env...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
	}
	lg, srv, cmp := filepath.Join(dir, "loadgate"), filepath.Join(dir, "server"), filepath.Join(dir, "compare")
	build(lg, "./cmd/loadgate", "CGO_ENABLED=0")
	build(srv, "./bench/server")
	build(cmp, "./bench/compare")

	tools := []string{"loadgate"}
	vegeta := filepath.Join(root, ".bench", "bin", "vegeta")
	if _, err := os.Stat(vegeta); err != nil {
		if testtier.On(t, testtier.E2E) {
			vegeta = filepath.Join(dir, "vegeta")
			cmd := exec.CommandContext(ctx, "go", "install", "github.com/tsenart/vegeta/v12@v12.13.0")
			cmd.Dir, cmd.Env = dir, append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GOBIN="+dir)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("building vegeta: %v\n%s", err, b)
			}
		} else {
			t.Logf("vegeta left out: not built (%s); make bench builds it, LOADGATE_TEST_TIER=e2e does here", vegeta)
			vegeta = ""
		}
	}
	if vegeta != "" {
		tools = append(tools, "vegeta")
	}
	out := filepath.Join(dir, "lowrate.md")
	cmd := exec.CommandContext(ctx, "taskset", "-c", "0", cmp, "-only-low", "-low-rates", "20,1000", "-low-duration", "1s",
		"-low-modes", "rt,normal", "-quiet-wait", "0", "-retries", "0", "-tools", strings.Join(tools, ","),
		"-loadgate", lg, "-vegeta", vegeta, "-server", srv, "-work", filepath.Join(dir, "work"), "-out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("compare -only-low: %v\n%s", err, b)
	}
	md, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	report := string(md)
	if !strings.Contains(report, "## Low rates (1s each, both scheduling modes)") ||
		!strings.Contains(report, "| mode | rate /s | tool | sent | late share | lateness p50 ms | lateness p99 ms | lateness max ms | CPU µs/req |") {
		t.Fatalf("no low-rate table:\n%s", report)
	}
	if strings.Contains(report, "## Fixed rates") {
		t.Errorf("-only-low ran the fixed rates too:\n%s", report)
	}
	modes := []string{"rt", "normal"}
	if strings.Contains(report, "rt mode not run") {
		modes = modes[1:] // SCHED_RR refused here: the table says so
	}
	for _, mode := range modes {
		for _, rate := range []string{"20", "1000"} {
			for _, tool := range tools {
				row := "| " + mode + " | " + rate + " | " + tool + " | "
				i := strings.Index(report, row)
				if i < 0 {
					t.Errorf("no row %q in\n%s", row, report)
					continue
				}
				if line, _, _ := strings.Cut(report[i:], "\n"); strings.Contains(line, "not measured") {
					t.Errorf("row not measured: %s", line)
				}
			}
		}
	}
}
