package rounds

import (
	"context"
	"fmt"
	"sync"
)

// Repo is what a gate needs of version control; GitRepo is git's.
type Repo interface {
	Root() string                                           // the top directory; head's checkout when head is the working tree
	Commit(ctx context.Context, ref string) (string, error) // "" is HEAD
	Dirty(ctx context.Context) bool                         // uncommitted changes to tracked files
	AddWorktree(ctx context.Context, name, commit string) (string, error)
	Close() error // removes every checkout AddWorktree made
}

// GitRepo is a Repo of git; its worktrees live in one locked directory per run.
type GitRepo struct {
	root, runID string
	onEmergency func(func(context.Context) error) func()
	mu          sync.Mutex
	wt          *worktreeSet
}

// OpenGit finds dir's repository; onEmergency (may be nil) registers the
// worktrees' removal with signal cleanup.
func OpenGit(ctx context.Context, dir, runID string, onEmergency func(func(context.Context) error) func()) (*GitRepo, error) {
	root, err := Git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, err
	}
	return &GitRepo{root: root, runID: runID, onEmergency: onEmergency}, nil
}

func (r *GitRepo) Root() string { return r.root }

func (r *GitRepo) Commit(ctx context.Context, ref string) (string, error) {
	if ref == "" {
		return Git(ctx, r.root, "rev-parse", "HEAD")
	}
	return Git(ctx, r.root, "rev-parse", "--verify", "--end-of-options", ref+"^{commit}")
}

func (r *GitRepo) Dirty(ctx context.Context) bool {
	st, _ := Git(ctx, r.root, "status", "--porcelain", "--untracked-files=no")
	return st != ""
}

func (r *GitRepo) AddWorktree(ctx context.Context, name, commit string) (string, error) {
	r.mu.Lock()
	if r.wt == nil {
		wt, err := newWorktreeSet(r.root, r.runID, r.onEmergency)
		if err != nil {
			r.mu.Unlock()
			return "", err
		}
		r.wt = wt
	}
	wt := r.wt
	r.mu.Unlock()
	return wt.add(ctx, name, commit)
}

func (r *GitRepo) Close() error {
	r.mu.Lock()
	wt := r.wt
	r.mu.Unlock()
	if wt == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*gitTimeout)
	defer cancel()
	if err := wt.remove(ctx); err != nil {
		return fmt.Errorf("removing worktrees: %w (loadgate down --all retries)", err)
	}
	return nil
}

var _ Repo = (*GitRepo)(nil)
