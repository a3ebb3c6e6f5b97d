package rounds

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loadgate/loadgate/compose"
	"golang.org/x/sys/unix"
)

// Worktrees live in $TMPDIR/loadgate-worktrees-<uid>/<random>/ beside a lock
// flock(2)ed while the gate runs: the kernel drops it however the process
// dies, so a sweeper that gets it knows the owner is gone. The directory is not
// named by the run id: a side's stack.prepare sees its checkout's path (and the
// repository's .git/worktrees), and the run id names the other side's containers.

const (
	worktreeOwnerFile = "owner.json"
	worktreeLockFile  = "lock"
	worktreeYoung     = time.Minute // a lockless run directory this young may be being created
	gitTimeout        = time.Minute // of every git call of the worktree lifecycle
)

func worktreeRoot() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("loadgate-worktrees-%d", os.Getuid()))
}

type worktreeOwner struct {
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Repo    string    `json:"repo"`
	Run     string    `json:"run"`
	Created time.Time `json:"created"`
}

type worktreeSet struct {
	dir, repo string
	lock      *os.File
	mu        sync.Mutex
	paths     []string
	unreg     func()
}

// newWorktreeSet creates and locks the run's directory, its removal registered with onEmergency.
func newWorktreeSet(repo, runID string, onEmergency func(func(context.Context) error) func()) (*worktreeSet, error) {
	root := worktreeRoot()
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("gate: worktree directory: %w", err)
	}
	var name [8]byte
	_, _ = rand.Read(name[:])
	dir := filepath.Join(root, hex.EncodeToString(name[:]))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("gate: worktree directory: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, worktreeLockFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err == nil {
		if err = unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			lock.Close()
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("gate: worktree lock: %w", err)
	}
	host, _ := os.Hostname()
	b, _ := json.MarshalIndent(worktreeOwner{Host: host, PID: os.Getpid(), Repo: repo, Run: runID, Created: time.Now().UTC()}, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, worktreeOwnerFile), append(b, '\n'), 0o600); err != nil {
		lock.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("gate: worktree owner file: %w", err)
	}
	w := &worktreeSet{dir: dir, repo: repo, lock: lock}
	if onEmergency != nil {
		w.unreg = onEmergency(w.remove)
	}
	return w, nil
}

func (w *worktreeSet) add(ctx context.Context, name, commit string) (string, error) {
	p := filepath.Join(w.dir, name)
	ctx, cancel := context.WithTimeout(ctx, 5*gitTimeout)
	defer cancel()
	w.mu.Lock()
	w.paths = append(w.paths, p) // before add: a half-made one is removed too
	w.mu.Unlock()
	if _, err := Git(ctx, w.repo, "worktree", "add", "--detach", p, commit); err != nil {
		return "", err
	}
	return p, nil
}

// remove removes the worktrees and run directory, then unlocks; safe to
// call again and concurrently (signal cleanup may race).
func (w *worktreeSet) remove(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lock == nil {
		return nil
	}
	err := removeWorktrees(ctx, w.repo, w.dir, w.paths)
	if err == nil {
		w.lock.Close()
		w.lock = nil
		if w.unreg != nil {
			w.unreg()
		}
	}
	return err
}

// removeWorktrees removes paths from repo, prunes and removes dir.
func removeWorktrees(ctx context.Context, repo, dir string, paths []string) error {
	var errs []error
	repoOK := repo != ""
	if repoOK {
		if _, err := os.Stat(repo); err != nil {
			repoOK = false
		}
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if repoOK {
			gctx, cancel := context.WithTimeout(ctx, gitTimeout)
			_, err := Git(gctx, repo, "worktree", "remove", "--force", p)
			cancel()
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		errs = append(errs, fmt.Errorf("remove %s: %w", dir, err))
	} else {
		errs = nil // git's own complaint about a directory now gone is moot; prune drops its record
	}
	if repoOK {
		gctx, cancel := context.WithTimeout(ctx, gitTimeout)
		if _, err := Git(gctx, repo, "worktree", "prune"); err != nil {
			errs = append(errs, err)
		}
		cancel()
	}
	return errors.Join(errs...)
}

// SweepWorktrees removes the worktrees of gates no longer running and
// returns the run directories removed.
func SweepWorktrees(ctx context.Context) (removed []string, err error) {
	root := worktreeRoot()
	ents, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("worktrees: %w", err)
	}
	var errs []error
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		what, rerr := sweepWorktreeDir(ctx, dir)
		if rerr != nil {
			errs = append(errs, fmt.Errorf("worktrees %s left: %w", dir, rerr))
		}
		if what != "" {
			removed = append(removed, what)
		}
	}
	return removed, errors.Join(errs...)
}

// sweepWorktreeDir removes dir if its owner is gone and says whose it was.
func sweepWorktreeDir(ctx context.Context, dir string) (string, error) {
	lock, err := os.OpenFile(filepath.Join(dir, worktreeLockFile), os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		st, serr := os.Stat(dir)
		if serr != nil || time.Since(st.ModTime()) < worktreeYoung {
			return "", nil // perhaps a gate creating it right now
		}
	} else if err != nil {
		return "", err
	} else {
		defer lock.Close()
		if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			if errors.Is(err, unix.EWOULDBLOCK) {
				return "", nil // a live gate's
			}
			return "", fmt.Errorf("lock: %w", err)
		}
	}
	var o worktreeOwner
	if b, err := os.ReadFile(filepath.Join(dir, worktreeOwnerFile)); err == nil {
		_ = json.Unmarshal(b, &o)
	} else if st, serr := os.Stat(dir); serr != nil || time.Since(st.ModTime()) < worktreeYoung {
		return "", nil // locked a moment before its owner file is written: a gate starting
	}
	var paths []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() {
			paths = append(paths, filepath.Join(dir, e.Name()))
		}
	}
	if err := removeWorktrees(ctx, o.Repo, dir, paths); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s (%s)", dir, o), nil
}

func (o worktreeOwner) String() string {
	parts := []string{"a dead gate"}
	if o.Run != "" {
		parts = append(parts, "run "+o.Run)
	}
	if o.PID > 0 {
		parts = append(parts, "pid "+strconv.Itoa(o.PID))
	}
	if o.Repo != "" {
		parts = append(parts, "repository "+o.Repo)
	}
	return strings.Join(parts, ", ")
}

// Git runs git in dir and returns trimmed output; errors carry stderr.
func Git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

const DownAllBound = 5 * time.Minute

// DownAll removes what earlier runs left (worktrees, then the stacks'
// containers, networks, volumes and images), saying on log what went. It ends
// within DownAllBound: a hung engine must not hang a CI job's cleanup step.
func DownAll(ctx context.Context, log io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, DownAllBound)
	defer cancel()
	var errs []error
	wts, err := SweepWorktrees(ctx)
	for _, w := range wts {
		fmt.Fprintf(log, "removed the worktrees of %s\n", w)
	}
	if err != nil {
		errs = append(errs, err)
	}
	if err := compose.Available(ctx); err != nil {
		errs = append(errs, fmt.Errorf("no Docker engine: %w", err))
	} else {
		r, err := compose.Sweep(ctx)
		fmt.Fprintf(log, "removed what earlier runs left: %s\n", r)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
