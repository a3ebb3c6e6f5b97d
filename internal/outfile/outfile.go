// Package outfile writes loadgate's results into a directory holding no earlier result
// (unless forced), never through a symlink; whole files are renamed into place (no half
// files), streams (Create) are created O_EXCL.
//
// The results directory is often inside the change's checkout (the Action's loadgate-results),
// where head may commit symlinks and its containers may plant them during the run. So a
// results directory (Dir, Results) must not itself be a symlink, and every write below it goes
// through an os.Root opened on it, refusing a symlink on the way: nothing is written outside.
// Paths under no results directory are written through an os.Root on their parent.
package outfile

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Mode is the permission of every file written.
const Mode fs.FileMode = 0o644

// ResultFiles mark a directory as already holding a run's, gate's or bisection's result.
var ResultFiles = []string{"result.json", "verdict.json", "bisect.json"}

// staleFiles are removed from a forced directory so no earlier file reads as the new result's.
var staleFiles = []string{"result.json", "verdict.json", "report.md", "latency.svg", "snapshots.jsonl", "stats.jsonl", "bisect.json", "bisect.md"}

// ExistsError is Dir's error for a directory already holding a result.
type ExistsError struct {
	Dir  string // the results directory
	File string // the result file found in it
	Flag string // the flag that allows replacing it, e.g. "--force"
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%s already holds a result (%s): pass %s to replace it, or choose another --out", e.Dir, e.File, e.Flag)
}

// SymlinkError is a write refused because its way goes through a symbolic link.
type SymlinkError struct {
	Path string // the symlink
}

func (e *SymlinkError) Error() string {
	return fmt.Sprintf("%s is a symbolic link: loadgate writes results through none (remove it, or name a real directory)", e.Path)
}

// roots are the results directories (absolute, clean) that Results made: a write below one is
// checked from it down. Safe for concurrent use.
var roots struct {
	sync.Mutex
	dirs map[string]bool
}

// Results makes dir (refusing a symlink) and registers it as a results directory: no later
// write below it follows a symlink. Writers that find dir made by Dir need not call it.
func Results(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if fi, err := os.Lstat(abs); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return &SymlinkError{Path: dir}
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return err // names dir
	}
	roots.Lock()
	defer roots.Unlock()
	if roots.dirs == nil {
		roots.dirs = map[string]bool{}
	}
	roots.dirs[abs] = true
	return nil
}

// rootOf is the longest results directory holding abs, or "".
func rootOf(abs string) string {
	roots.Lock()
	defer roots.Unlock()
	best := ""
	for d := range roots.dirs {
		if (abs == d || strings.HasPrefix(abs, d+string(filepath.Separator)) || d == string(filepath.Separator)) && len(d) > len(best) {
			best = d
		}
	}
	return best
}

// open opens the os.Root that path is written through and path's name in it: below a results
// directory, that directory (see openTop) with no symlink on the way down to path's parent;
// elsewhere, path's parent.
func open(path string) (*os.Root, string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, "", err
	}
	top := rootOf(abs)
	if top == "" || top == abs {
		r, err := os.OpenRoot(filepath.Dir(abs))
		return r, filepath.Base(abs), err
	}
	r, err := openTop(top)
	if err != nil {
		return nil, "", err
	}
	rel, _ := filepath.Rel(top, abs)
	if err := noSymlink(r, top, filepath.Dir(rel), false); err != nil {
		r.Close()
		return nil, "", err
	}
	return r, rel, nil
}

// openTop opens the results directory top, which must still be a directory, not a symlink
// (a container may have swapped it since Results): checked on the open directory itself.
func openTop(top string) (*os.Root, error) {
	fi, err := os.Lstat(top)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, &SymlinkError{Path: top}
	}
	r, err := os.OpenRoot(top)
	if err != nil {
		return nil, err
	}
	if rfi, err := r.Stat("."); err != nil || !os.SameFile(fi, rfi) {
		r.Close()
		return nil, &SymlinkError{Path: top} // swapped between Lstat and open
	}
	return r, nil
}

// noSymlink checks each directory of rel in r (top's root) is one; make creates those missing.
func noSymlink(r *os.Root, top, rel string, make bool) error {
	if rel == "." {
		return nil
	}
	parts := strings.Split(rel, string(filepath.Separator))
	for i := range parts {
		p := filepath.Join(parts[:i+1]...)
		fi, err := r.Lstat(p)
		if make && errors.Is(err, fs.ErrNotExist) {
			if err = r.Mkdir(p, 0o755); err == nil || errors.Is(err, fs.ErrExist) {
				fi, err = r.Lstat(p)
			}
		}
		switch {
		case err != nil:
			return fmt.Errorf("%s: %w", filepath.Join(top, p), err)
		case fi.Mode()&fs.ModeSymlink != 0:
			return &SymlinkError{Path: filepath.Join(top, p)}
		case !fi.IsDir():
			return fmt.Errorf("%s is not a directory", filepath.Join(top, p))
		}
	}
	return nil
}

// MkdirAll makes dir and its parents; below a results directory, through none that is a symlink.
func MkdirAll(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	top := rootOf(abs)
	switch top {
	case "":
		return os.MkdirAll(abs, 0o755)
	case abs:
		return Results(abs)
	}
	r, err := openTop(top)
	if err != nil {
		return err
	}
	defer r.Close()
	rel, _ := filepath.Rel(top, abs)
	return noSymlink(r, top, rel, true)
}

// Dir readies dir for a new result: one holding a result is an *ExistsError unless force,
// which removes the earlier result files (symlinks unfollowed). dir itself must not be a
// symlink (*SymlinkError); it becomes a results directory (see Results).
func Dir(dir string, force bool, flag string) error {
	if err := Results(dir); err != nil {
		return err
	}
	if !force {
		if found := existing(dir); found != "" {
			return &ExistsError{Dir: dir, File: found, Flag: flag}
		}
		return nil
	}
	for _, name := range staleFiles {
		if err := remove(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

func existing(dir string) string {
	for _, name := range ResultFiles {
		p := filepath.Join(dir, name)
		if _, err := os.Lstat(p); err == nil {
			return p
		}
	}
	rounds, _ := filepath.Glob(filepath.Join(dir, "*", "round-*", "result.json"))
	if len(rounds) > 0 {
		return rounds[0]
	}
	return ""
}

// remove removes path's entry (a symlink, not its target); missing is fine, a directory an error.
func remove(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%s is a directory, not a file loadgate writes", path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// WriteFile writes data to path via a temporary file renamed over it: on error path is unchanged.
func WriteFile(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write is WriteFile with the content from render; a render error leaves path as it was.
func Write(path string, render func(io.Writer) error) (err error) {
	r, rel, err := open(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer r.Close()
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	tmpRel := filepath.Join(filepath.Dir(rel), "."+filepath.Base(rel)+".tmp-"+hex.EncodeToString(suffix[:]))
	tmp, err := r.OpenFile(tmpRel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			r.Remove(tmpRel)
		}
	}()
	bw := bufio.NewWriter(tmp)
	if err := render(bw); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Chmod(Mode); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := r.Rename(tmpRel, rel); err != nil { // replaces a symlink at rel, never follows it
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Create removes path's entry and creates it with O_EXCL for a stream, failing on a planted symlink.
func Create(path string) (*os.File, error) {
	r, rel, err := open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer r.Close()
	fi, err := r.Lstat(rel)
	switch {
	case err == nil && fi.IsDir():
		return nil, fmt.Errorf("%s is a directory, not a file loadgate writes", path)
	case err == nil:
		if err := r.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	f, err := r.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, Mode)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}
