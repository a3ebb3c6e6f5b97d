package rounds

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

	"github.com/loadgate/loadgate/compose"
	"github.com/loadgate/loadgate/internal/sandbox"
)

// Attack (issue 46): head's stack.prepare reads the run's id (which names base's containers:
// `pid: container:loadgate-<id>-base-…` in a compose file it then rewrites) from its own path,
// a listing of the temporary directory, /proc/self/mountinfo or the repository's
// .git/worktrees. Base's checkout is boxed here without hiding the repository, to be strict.
func TestRegression_PrepareReadsTheRunID(t *testing.T) {
	repo, err := os.MkdirTemp(".", ".runid-test-") // outside the temporary directory, as a workspace
	if err != nil {
		t.Fatal(err)
	}
	if repo, err = filepath.Abs(repo); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(repo) })
	env := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	for _, args := range [][]string{{"init", "-q"}, {"commit", "-q", "--allow-empty", "-m", "x"}} {
		c := exec.Command("git", args...)
		c.Dir, c.Env = repo, env
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	ctx := context.Background()
	runID := compose.NewRunID()
	w, err := newWorktreeSet(repo, runID, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.remove(ctx)
	base, err := w.add(ctx, "base", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var out bytes.Buffer
	script := fmt.Sprintf(`pwd; cat .git; ls -AR /tmp "$TMPDIR" 2>/dev/null; cat /proc/self/mountinfo; cat %s/.git/worktrees/*/gitdir; env; echo checked`, repo)
	err = sandbox.Run(ctx, sandbox.Spec{Argv: []string{"sh", "-c", script}, Dir: base, Root: base,
		Env: []string{"PATH=" + os.Getenv("PATH")}}, &out)
	if errors.Is(err, sandbox.ErrUnavailable) {
		if os.Getenv("LOADGATE_REQUIRE_NETNS") == "1" {
			t.Fatalf("no box on this system: %v", err)
		}
		t.Skipf("no box on this system: %v", err)
	}
	if err != nil || !strings.Contains(out.String(), "checked") {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if strings.Contains(out.String(), runID) {
		t.Errorf("the run id %s is readable in the box:\n%s", runID, out.String())
	}
}
