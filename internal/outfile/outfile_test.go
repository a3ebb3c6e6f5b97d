package outfile_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/internal/outfile"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A symlink planted where a file goes is replaced, never followed: its
// target keeps its content, for whole files and for streams.
func TestSymlinkReplacedNotFollowed(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"report.md", "snapshots.jsonl"} {
		link := filepath.Join(dir, name)
		if err := os.Symlink(victim, link); err != nil {
			t.Fatal(err)
		}
		if name == "report.md" {
			if err := outfile.WriteFile(link, []byte("# new\n")); err != nil {
				t.Fatal(err)
			}
		} else {
			f, err := outfile.Create(link)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.WriteString(f, "# new\n"); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
		if got := read(t, victim); got != "precious\n" {
			t.Errorf("%s: the symlink's target was written: %q", name, got)
		}
		fi, err := os.Lstat(link)
		if err != nil || fi.Mode()&os.ModeSymlink != 0 || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: %v, %v: want a regular file, mode 0644", name, fi.Mode(), err)
		}
		if got := read(t, link); got != "# new\n" {
			t.Errorf("%s = %q", name, got)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("left behind: %v", entries)
	}
}

// A render error leaves the destination as it was and no temporary file.
func TestWriteErrorKeepsOld(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "verdict.json")
	if err := outfile.WriteFile(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	err := outfile.Write(path, func(w io.Writer) error {
		io.WriteString(w, "half")
		return errors.New("boom")
	})
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("err %v: want one naming %s", err, path)
	}
	if got := read(t, path); got != "old" {
		t.Errorf("after a failed write: %q", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

func TestDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "out")
	if err := outfile.Dir(dir, false, "--force"); err != nil {
		t.Fatalf("a new dir: %v", err)
	}
	if err := outfile.Dir(dir, false, "--force"); err != nil {
		t.Fatalf("an empty dir: %v", err)
	}
	for _, name := range []string{"result.json", "verdict.json", filepath.Join("head", "round-2", "result.json")} {
		t.Run(name, func(t *testing.T) {
			d := t.TempDir()
			p := filepath.Join(d, name)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
			err := outfile.Dir(d, false, "--force")
			var ee *outfile.ExistsError
			if !errors.As(err, &ee) || ee.File != p || !strings.Contains(err.Error(), d) || !strings.Contains(err.Error(), "--force") {
				t.Fatalf("err %v: want an ExistsError naming %s and --force", err, p)
			}
			if err := outfile.Dir(d, true, "--force"); err != nil {
				t.Fatalf("forced: %v", err)
			}
		})
	}
	// Forced: the earlier result's top-level files are gone (a symlink
	// removed, its target kept); directories are left alone.
	d := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	os.WriteFile(filepath.Join(d, "result.json"), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(d, "stats.jsonl"), []byte("{}"), 0o644)
	os.Symlink(victim, filepath.Join(d, "report.md"))
	os.Mkdir(filepath.Join(d, "logs"), 0o755)
	if err := outfile.Dir(d, true, "--force"); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(d)
	if len(entries) != 1 || entries[0].Name() != "logs" || read(t, victim) != "keep" {
		t.Errorf("after a forced Dir: %v, victim %q", entries, read(t, victim))
	}
}

// outsideDir is a directory outside the results with a file that must keep its content.
func outsideDir(t *testing.T) (dir, victim string) {
	t.Helper()
	dir = t.TempDir()
	victim = filepath.Join(dir, "bash")
	if err := os.WriteFile(victim, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, victim
}

// onlyVictim fails t unless dir holds just its victim, unchanged.
func onlyVictim(t *testing.T, dir, victim string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || read(t, victim) != "#!/bin/sh\n" {
		t.Errorf("written outside the results directory: %v, %q", ents, read(t, victim))
	}
}

// Attack (issue 46): head commits the results directory itself (loadgate-results) as a
// symbolic link to a directory of the runner (~/.local/bin): refused, nothing written there.
func TestRegression_ResultsDirectoryIsASymlink(t *testing.T) {
	elsewhere, victim := outsideDir(t)
	out := filepath.Join(t.TempDir(), "loadgate-results")
	if err := os.Symlink(elsewhere, out); err != nil {
		t.Fatal(err)
	}
	var se *outfile.SymlinkError
	if err := outfile.Dir(out, true, "--force"); !errors.As(err, &se) || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("Dir through a symlink: %v, want a *SymlinkError", err)
	}
	if err := outfile.Results(out); !errors.As(err, &se) {
		t.Fatalf("Results through a symlink: %v, want a *SymlinkError", err)
	}
	onlyVictim(t, elsewhere, victim)
}

// Attack (issue 46): head commits (or its container plants, through a bind of the checkout)
// a symlink below the results directory, loadgate-results/base -> ~/.local/bin, where
// loadgate then makes round directories, saves logs and writes results: each refused.
func TestRegression_SymlinkBelowTheResultsDirectory(t *testing.T) {
	elsewhere, victim := outsideDir(t)
	out := t.TempDir()
	if err := outfile.Dir(out, false, "--force"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(out, "base")); err != nil {
		t.Fatal(err)
	}
	var se *outfile.SymlinkError
	if err := outfile.MkdirAll(filepath.Join(out, "base", "round-1")); !errors.As(err, &se) {
		t.Errorf("MkdirAll: %v, want a *SymlinkError", err)
	}
	if err := outfile.MkdirAll(filepath.Join(out, "base", "logs")); !errors.As(err, &se) {
		t.Errorf("MkdirAll: %v, want a *SymlinkError", err)
	}
	if err := outfile.WriteFile(filepath.Join(out, "base", "bash"), []byte("owned\n")); !errors.As(err, &se) {
		t.Errorf("WriteFile: %v, want a *SymlinkError", err)
	}
	if f, err := outfile.Create(filepath.Join(out, "base", "bash")); !errors.As(err, &se) {
		t.Errorf("Create: %v, want a *SymlinkError", err)
		if f != nil {
			f.Close()
		}
	}
	onlyVictim(t, elsewhere, victim)
	// A real directory below is made and written as before.
	if err := outfile.MkdirAll(filepath.Join(out, "head", "round-1")); err != nil {
		t.Fatal(err)
	}
	if err := outfile.WriteFile(filepath.Join(out, "head", "round-1", "result.json"), []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
}

// Attack (issue 46): during the run a container swaps the results directory for a symlink
// (rm -r loadgate-results; ln -s ~/.local/bin loadgate-results): later writes are refused.
func TestRegression_ResultsDirectorySwappedForASymlink(t *testing.T) {
	elsewhere, victim := outsideDir(t)
	out := filepath.Join(t.TempDir(), "loadgate-results")
	if err := outfile.Dir(out, false, "--force"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(out, out+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, out); err != nil {
		t.Fatal(err)
	}
	var se *outfile.SymlinkError
	if err := outfile.WriteFile(filepath.Join(out, "bash"), []byte("owned\n")); err == nil {
		// The final name is replaced, not followed; but not in the other directory either.
		t.Errorf("WriteFile into a swapped results directory succeeded")
	} else if !errors.As(err, &se) {
		t.Errorf("WriteFile: %v, want a *SymlinkError", err)
	}
	if err := outfile.MkdirAll(filepath.Join(out, "base")); !errors.As(err, &se) {
		t.Errorf("MkdirAll: %v, want a *SymlinkError", err)
	}
	onlyVictim(t, elsewhere, victim)
}
