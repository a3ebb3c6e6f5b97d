package main

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadgate/loadgate/internal/testtier"
)

// scripts/release.sh, as release.yml runs it on a tag: every target's
// binary in the directory, static and stamped with the version, and a
// SHA256SUMS that `sha256sum -c` verifies. The default tier builds this
// machine's target; make e2e all four (linux and darwin, amd64 and arm64).
func TestReleaseScript(t *testing.T) {
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	targets := []string{runtime.GOOS + "/" + runtime.GOARCH}
	if testtier.On(t, testtier.E2E) {
		targets = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"}
	}
	const ver = "v1.2.3-test.1"
	dir := filepath.Join(t.TempDir(), "dist")
	script := filepath.Join(strings.TrimSpace(string(root)), "scripts", "release.sh")
	// Bounded by the test's deadline, the script's go builds and all.
	ctx := t.Context()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-30*time.Second))
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, "bash", append([]string{script, ver, dir}, targets...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("release.sh: %v\n%s", err, out)
	}
	check := exec.Command("sha256sum", "--check", "--strict", "SHA256SUMS")
	check.Dir = dir
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("sha256sum -c SHA256SUMS: %v\n%s", err, out)
	}
	sums, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(targets)+1 || strings.Count(string(sums), "\n") != len(targets) {
		t.Errorf("dist holds %d files and SHA256SUMS %d lines; want %d binaries, each with one line:\n%s", len(entries), strings.Count(string(sums), "\n"), len(targets), sums)
	}
	for _, tg := range targets {
		goos, goarch, _ := strings.Cut(tg, "/")
		name := "loadgate-" + goos + "-" + goarch
		bin := filepath.Join(dir, name)
		if !strings.Contains(string(sums), "  "+name+"\n") {
			t.Errorf("SHA256SUMS has no line for %s", name)
		}
		// How it was built: static, trimmed, for this target (the build
		// info; with -trimpath it leaves -ldflags out), the tag stamped in
		// it (another OS's binary cannot say it itself).
		bi, err := buildinfo.ReadFile(bin)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		settings := map[string]string{}
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
		if settings["CGO_ENABLED"] != "0" || settings["-trimpath"] != "true" || settings["GOOS"] != goos || settings["GOARCH"] != goarch {
			t.Errorf("%s built with %v; want CGO_ENABLED=0, -trimpath, %s", name, settings, tg)
		}
		if !bytes.Contains(mustRead(t, bin), []byte(ver)) {
			t.Errorf("%s does not hold the version %s", name, ver)
		}
		if goos == runtime.GOOS && goarch == runtime.GOARCH {
			out, err := exec.Command(bin, "version").Output()
			if err != nil || strings.TrimSpace(string(out)) != "loadgate "+ver {
				t.Errorf("%s version: %q, %v; want \"loadgate %s\"", name, out, err, ver)
			}
		}
	}
	// A release is never built over another, nor under a tag that is not one.
	for _, args := range [][]string{{ver, dir}, {"1.2.3", t.TempDir()}, {ver, t.TempDir(), "linux"}} {
		if out, err := exec.Command("bash", append([]string{script}, args...)...).CombinedOutput(); exitStatus(err) != 2 {
			t.Errorf("release.sh %v: %v, want exit 2\n%s", args, err, out)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func exitStatus(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}
