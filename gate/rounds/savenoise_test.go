package rounds_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

// SaveNoise writes the calibration where the gate reads it, by default.
func TestSaveNoise(t *testing.T) {
	root := t.TempDir()
	path, err := rounds.SaveNoise(root, "", &verdict.Noise{Scenario: "checkout"})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := rounds.NoisePath(root, "checkout")
	if path != want || filepath.Dir(path) != filepath.Join(root, "baselines", "checkout") {
		t.Errorf("written to %s, want %s", path, want)
	}
	if _, err := os.Stat(path); err != nil {
		t.Error(err)
	}
}
