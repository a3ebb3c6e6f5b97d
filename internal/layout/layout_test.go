package layout_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/internal/layout"
)

const module = "github.com/loadgate/loadgate/"

// TestNoImportUpward fails when a package imports one of a higher stage,
// or when a package is not placed in layout.Stages.
func TestNoImportUpward(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	n := 0
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		pkg := strings.TrimPrefix(f[0], module)
		if strings.Contains(pkg, "/testdata/") {
			continue
		}
		n++
		at, ok := layout.Stage(pkg)
		if !ok {
			t.Errorf("%s is not placed in layout.Stages", pkg)
			continue
		}
		for _, imp := range f[1:] {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			dep := strings.TrimPrefix(imp, module)
			if s, ok := layout.Stage(dep); ok && s > at {
				t.Errorf("%s (stage %d) imports %s (stage %d), which sits above it", pkg, at, dep, s)
			}
		}
	}
	if n < 20 {
		t.Fatalf("go list named %d packages; the check read nothing useful", n)
	}
}
