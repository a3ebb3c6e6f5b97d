package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// --load-priority rt where the system does not permit a real-time policy
// (as nobody, with this machine's RLIMIT_RTPRIO of 0) is refused before
// anything starts: exit 2, naming the flag and what is missing.
func TestLoadPriorityRtRefusedWithoutPermission(t *testing.T) {
	if runtime.GOOS != "linux" || os.Getuid() != 0 {
		t.Skip("needs Linux and root, to run loadgate as nobody")
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(0xe, &lim); err != nil || lim.Cur > 0 { // RLIMIT_RTPRIO
		t.Skipf("RLIMIT_RTPRIO %d here: nobody may raise", lim.Cur)
	}
	bin := selfAsLoadgate(t)
	dir := filepath.Dir(bin) // t.TempDir's: root's alone until opened
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sc := filepath.Join(dir, "load.yaml")
	if err := os.WriteFile(sc, []byte("name: x\nphases: [{name: sustain, rate: 10, duration: 1s}]\nworkloads: [{name: a, http: {path: /}}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--scenario", sc, "--target", "http://127.0.0.1:1/", "--out", filepath.Join(dir, "out"), "--load-priority", "rt")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("exit %v, want 2\n%s", err, stderr.String())
	}
	if msg := stderr.String(); !strings.Contains(msg, "--load-priority rt") || !strings.Contains(msg, "not permitted") || !strings.Contains(msg, "CAP_SYS_NICE") {
		t.Errorf("stderr does not say why: %s", msg)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
		t.Errorf("an output directory was made before the refusal: %v", err)
	}
}
