package actrunner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Repo is a throwaway git repository a workflow runs in. Not safe for concurrent use.
type Repo struct {
	Dir string
}

// NewRepo copies src's checkout as it is (untracked, unignored files too) into
// dir, a new repository on main with one commit, origin github.com/<full> for act.
func NewRepo(ctx context.Context, src, dir, full string) (*Repo, error) {
	files, err := git(ctx, src, "ls-files", "-z", "-c", "-o", "--exclude-standard")
	if err != nil {
		return nil, err
	}
	for _, f := range strings.Split(strings.TrimRight(files, "\x00"), "\x00") {
		if f == "" {
			continue
		}
		if err := copyFile(filepath.Join(src, f), filepath.Join(dir, f)); err != nil {
			return nil, fmt.Errorf("actrunner: copy %s: %w", f, err)
		}
	}
	r := &Repo{Dir: dir}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"remote", "add", "origin", "https://github.com/" + full + ".git"},
	} {
		if _, err := r.Git(ctx, args...); err != nil {
			return nil, err
		}
	}
	if _, err := r.Commit(ctx, "base"); err != nil {
		return nil, err
	}
	return r, nil
}

// Write writes files (path relative to the repository → content).
func (r *Repo) Write(files map[string]string) error {
	for name, body := range files {
		p := filepath.Join(r.Dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return fmt.Errorf("actrunner: write %s: %w", name, err)
		}
	}
	return nil
}

// Commit commits every change and returns the new commit's SHA.
func (r *Repo) Commit(ctx context.Context, msg string) (string, error) {
	if _, err := r.Git(ctx, "add", "-A"); err != nil {
		return "", err
	}
	if _, err := r.Git(ctx, "commit", "-q", "--allow-empty", "-m", msg); err != nil {
		return "", err
	}
	return r.Git(ctx, "rev-parse", "HEAD")
}

// Export writes rev's tree into dir (no .git), as a runner downloads an action.
func (r *Repo) Export(ctx context.Context, rev, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "sh", r.Dir, rev, dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("actrunner: export %s: %w: %s", rev, err, out)
	}
	return nil
}

// Git runs git in the repository with a fixed author and returns its trimmed output.
func (r *Repo) Git(ctx context.Context, args ...string) (string, error) {
	return git(ctx, r.Dir, args...)
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.com",
		"GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@example.com", "GIT_CONFIG_NOSYSTEM=1")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("actrunner: git %s in %s: %w: %s", strings.Join(args, " "), dir, err, stderr.String())
	}
	return strings.TrimSpace(out.String()), nil
}

func copyFile(src, dst string) error {
	fi, err := os.Lstat(src)
	if err != nil {
		if os.IsNotExist(err) { // listed by git, deleted in the checkout
			return nil
		}
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, fi.Mode().Perm())
}
