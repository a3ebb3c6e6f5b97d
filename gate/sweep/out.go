package sweep

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/loadgate/loadgate/gate/session"
	"github.com/loadgate/loadgate/internal/outfile"
)

// PrepareOut refuses (session.ErrUsage) a directory holding a result unless force, which clears old steps.
func PrepareOut(out string, force bool) error {
	if !force {
		if _, err := os.Lstat(filepath.Join(out, "sweep.json")); err == nil {
			return session.Usagef("sweep: --out %s already holds a sweep (sweep.json): give another --out, or --force to replace it", out)
		} else if !errors.Is(err, os.ErrNotExist) {
			return session.Usagef("sweep: --out %s: %w", out, err)
		}
	}
	if err := outfile.Dir(out, force, "--force"); err != nil {
		return session.Usagef("sweep: --out %w", err)
	}
	if force {
		if err := os.RemoveAll(filepath.Join(out, "steps")); err != nil {
			return session.Usagef("sweep: --out %s: %w", out, err)
		}
	}
	return nil
}
