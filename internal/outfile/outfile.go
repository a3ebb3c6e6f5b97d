// Package outfile writes loadgate's results into a directory holding no earlier result
// (unless forced), never through a symlink; whole files are renamed into place (no half
// files), streams (Create) are created O_EXCL.
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

// ResultFiles mark a directory as already holding a run's or gate's result.
var ResultFiles = []string{"result.json", "verdict.json"}

// staleFiles are removed from a forced directory so no earlier file reads as the new result's.
var staleFiles = []string{"result.json", "verdict.json", "report.md", "latency.svg", "snapshots.jsonl", "stats.jsonl"}

// ExistsError is Dir's error for a directory already holding a result.
type ExistsError struct {
	Dir  string // the results directory
	File string // the result file found in it
	Flag string // the flag that allows replacing it, e.g. "--force"
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%s already holds a result (%s): pass %s to replace it, or choose another --out", e.Dir, e.File, e.Flag)
}

// Dir readies dir for a new result: one holding a result is an *ExistsError unless force,
// which removes the earlier result files (symlinks unfollowed).
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

// Create removes path's entry and creates it with O_EXCL for a stream, failing on a planted symlink.
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
