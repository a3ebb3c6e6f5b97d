package sandbox_test

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
	"time"

	"github.com/loadgate/loadgate/internal/sandbox"
)

// run runs script boxed in dir with PATH only, skipping (failing under
// LOADGATE_REQUIRE_NETNS=1, as CI sets) where no box can be made.
func run(t *testing.T, ctx context.Context, dir, script string, hide ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var out bytes.Buffer
	err := sandbox.Run(ctx, sandbox.Spec{Argv: []string{"sh", "-c", script}, Dir: dir,
		Env: []string{"PATH=" + os.Getenv("PATH"), fmt.Sprintf("TESTPID=%d", os.Getpid())}, Hide: hide}, &out)
	if errors.Is(err, sandbox.ErrUnavailable) {
		if os.Getenv("LOADGATE_REQUIRE_NETNS") == "1" {
			t.Fatalf("no box on this system: %v", err)
		}
		t.Skipf("no box on this system: %v", err)
	}
	return out.String(), err
}

// The command runs in its directory, writes there, and its exit status
// comes back.
func TestRunWritesItsDirectoryAndExits(t *testing.T) {
	dir := t.TempDir()
	out, err := run(t, t.Context(), dir, "echo built > artifact; echo done; exit 3")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("exit: %v, want status 3; output %q", err, out)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "artifact")); err != nil || string(b) != "built\n" {
		t.Errorf("artifact = %q, %v", b, err)
	}
	if !strings.Contains(out, "done") {
		t.Errorf("output %q lacks the command's", out)
	}
}

// The attacks of issue 33 from a head's stack.prepare: read the gate's
// environment through /proc, reach the Docker socket, read a persisted
// checkout token or the other side's checkout, unmount what hides them.
func TestRegression_PrepareReachesTheRunner(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "service.go"), []byte("base's code"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitConfig := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(gitConfig, []byte("extraheader = AUTHORIZATION: basic c2VjcmV0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`
cat /proc/$TESTPID/environ 2>/dev/null && echo LEAK:environ
ls /proc | grep -qx "$TESTPID" && echo LEAK:pid
ls -A /run /var/run | grep -v '^/\|^$\|^\.sandbox-empty$' && echo LEAK:run
grep -q "base's code" %[1]s/service.go 2>/dev/null && echo LEAK:other
echo tampered > %[1]s/service.go 2>/dev/null
grep -q extraheader %[2]s && echo LEAK:token
umount %[1]s 2>/dev/null; umount /run 2>/dev/null; umount /proc 2>/dev/null
grep -q "base's code" %[1]s/service.go 2>/dev/null && echo LEAK:unmounted
cat /proc/$TESTPID/environ 2>/dev/null && echo LEAK:environ-after-umount
echo checked`, other, gitConfig)
	out, err := run(t, t.Context(), dir, script, other, gitConfig)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Contains(out, "LEAK") || !strings.Contains(out, "checked") {
		t.Errorf("the box leaked:\n%s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(other, "service.go")); string(b) != "base's code" {
		t.Errorf("the other side's checkout was rewritten: %q", b)
	}
	if b, _ := os.ReadFile(gitConfig); !strings.Contains(string(b), "extraheader") {
		t.Errorf("the git config was rewritten: %q", b)
	}
}

// Nothing the command starts outlives it: a daemon left running is killed
// with the box.
func TestNothingOutlivesTheBox(t *testing.T) {
	mark := fmt.Sprintf("%d.25", 300+os.Getpid()%1000)
	if _, err := run(t, t.Context(), t.TempDir(), "sleep "+mark+" & echo started"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := sleepers(mark)
		if left == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d processes `sleep %s` outlived the box", left, mark)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func sleepers(mark string) int {
	n := 0
	ps, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range ps {
		if b, err := os.ReadFile(p); err == nil && string(b) == "sleep\x00"+mark+"\x00" {
			n++
		}
	}
	return n
}

// A cancelled context ends the box and what it runs, promptly.
func TestCancelEndsTheBox(t *testing.T) {
	if _, err := run(t, t.Context(), t.TempDir(), "true"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- sandbox.Run(ctx, sandbox.Spec{Argv: []string{"sleep", "600"}, Dir: os.TempDir(),
			Env: []string{"PATH=" + os.Getenv("PATH")}}, &bytes.Buffer{})
	}()
	time.Sleep(200 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a cancelled box reported success")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the box outlived its context by 30 s")
	}
}
