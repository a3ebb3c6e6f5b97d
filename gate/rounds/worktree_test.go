package rounds

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A gate's worktree directory is swept only once its lock is free (the
// owner died); a live one's — this process's own included — never.
func TestSweepWorktrees(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	repo := t.TempDir()
	env := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	for _, args := range [][]string{{"init", "-q"}, {"commit", "-q", "--allow-empty", "-m", "x"}} {
		c := exec.Command("git", args...)
		c.Dir, c.Env = repo, env
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	ctx := context.Background()
	live, err := newWorktreeSet(repo, "live1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer live.remove(ctx)
	dead, err := newWorktreeSet(repo, "dead1", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []*worktreeSet{live, dead} {
		if _, err := w.add(ctx, "base", "HEAD"); err != nil {
			t.Fatal(err)
		}
	}
	// A leftover without lock or owner file, old enough not to be a gate
	// being created right now, and a fresh one that may be.
	old := filepath.Join(worktreeRoot(), "old1")
	fresh := filepath.Join(worktreeRoot(), "fresh1")
	for _, d := range []string{old, fresh} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-2 * worktreeYoung)
	os.Chtimes(old, past, past)

	if removed, err := SweepWorktrees(ctx); err != nil || len(removed) != 1 || !strings.Contains(removed[0], "old1") {
		t.Fatalf("sweep beside two live gates removed %v (%v), want only old1", removed, err)
	}
	// The dead gate's process "dies": its lock goes with it.
	dead.lock.Close()
	removed, err := SweepWorktrees(ctx)
	if err != nil || len(removed) != 1 || !strings.Contains(removed[0], "dead1") || !strings.Contains(removed[0], repo) {
		t.Fatalf("sweep removed %v (%v), want dead1 naming its repository", removed, err)
	}
	for _, d := range []string{dead.dir, old} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s still there (%v)", d, err)
		}
	}
	for _, d := range []string{live.dir, fresh} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
	list := func() string {
		c := exec.Command("git", "worktree", "list", "--porcelain")
		c.Dir = repo
		b, err := c.Output()
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if l := list(); strings.Contains(l, dead.dir) || !strings.Contains(l, live.dir) {
		t.Errorf("git worktree list after the sweep:\n%s", l)
	}
	if err := live.remove(ctx); err != nil {
		t.Fatal(err)
	}
	if l := list(); strings.Count(l, "worktree ") != 1 {
		t.Errorf("git worktree list after remove:\n%s", l)
	}
}
