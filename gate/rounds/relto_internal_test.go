package rounds

import (
	"path/filepath"
	"strings"
	"testing"
)

// Regression: relTo fell back to the absolute path for a file outside the
// side's checkout, and that path went into the notes of the report and the
// pull-request comment (the runner's directories).
func TestRegression_RelToLeaksTheRunnersPath(t *testing.T) {
	root := t.TempDir()
	s := &Side{Root: root}
	in := filepath.Join(root, "baselines", "demo-api", "main.json")
	if got := relTo(s, in); got != "baselines/demo-api/main.json" {
		t.Errorf("inside: %q", got)
	}
	out := filepath.Join(t.TempDir(), "runner", "work", "baselines", "demo-api", "main.json")
	got := relTo(s, out)
	if got != "demo-api/main.json" || strings.Contains(got, filepath.Dir(out)) {
		t.Errorf("outside the checkout: %q, want demo-api/main.json", got)
	}
}
