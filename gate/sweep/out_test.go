package sweep_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/loadgate/loadgate/gate/session"
	"github.com/loadgate/loadgate/gate/sweep"
)

// A directory holding a sweep is refused without force; with force the
// earlier sweep's steps are cleared.
func TestPrepareOut(t *testing.T) {
	out := t.TempDir()
	if err := os.MkdirAll(filepath.Join(out, "steps", "1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "sweep.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := sweep.PrepareOut(out, false); !errors.Is(err, session.ErrUsage) {
		t.Errorf("a sweep there, no force: %v, want a usage error", err)
	}
	if err := sweep.PrepareOut(out, true); err != nil {
		t.Fatalf("force: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "steps")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("force left the earlier steps: %v", err)
	}
}
