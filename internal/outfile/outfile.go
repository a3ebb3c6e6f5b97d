// Package outfile writes loadgate's results into a directory that holds no
// earlier result (unless forced), never through a symlink. Whole files go
// to an O_EXCL temporary file renamed over the destination (no half files);
// streams (Create) remove what is at their name and create it with O_EXCL.
package outfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Mode is the permission of every file written.
const Mode fs.FileMode = 0o644

// ResultFiles are the files of a run's or a gate's results that mark a
// directory as already holding a result.
var ResultFiles = []string{"result.json", "verdict.json"}

// staleFiles are removed from a forced directory so that no earlier file
// reads as the new result's.
var staleFiles = []string{"result.json", "verdict.json", "report.md", "latency.svg", "snapshots.jsonl", "stats.jsonl"}

// ExistsError is returned by Dir for a directory that already holds a
// result. Its message names the directory, the file and the flag.
type ExistsError struct {
	Dir  string // the results directory
	File string // the result file found in it
	Flag string // the flag that allows replacing it, e.g. "--force"
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%s already holds a result (%s): pass %s to replace it, or choose another --out", e.Dir, e.File, e.Flag)
}

// Dir makes dir ready for a new result. One already holding a result is an
// *ExistsError naming flag, unless force, which removes the earlier
// top-level files (symlinks unfollowed).
func Dir(dir string, force bool, flag string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err // names dir
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

// existing returns the first result file found in dir, "" if none.
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

// remove removes the directory entry at path (a symlink itself, never its
// target); a missing entry is fine, a directory is an error.
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

// WriteFile writes data to path through a temporary file renamed over it: a
// symlink at path is replaced, and on error path is unchanged.
func WriteFile(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write is WriteFile with the content rendered by render into a buffered
// writer; an error of render leaves path as it was and names path.
func Write(path string, render func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err // names the directory
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
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
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Create opens path for a stream written during a run: the entry at path is
// removed and the file created with O_EXCL, so a symlink planted meanwhile
// makes it fail.
func Create(path string) (*os.File, error) {
	if err := remove(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, Mode)
	if err != nil {
		return nil, err // names path
	}
	return f, nil
}
