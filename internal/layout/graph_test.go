package layout_test

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/internal/layout"
)

var update = flag.Bool("update", false, "rewrite docs/packages.svg from the tree's imports")

// goList is the module's import graph as go list states it.
func goList(t *testing.T) layout.Graph {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	g := layout.ParseGoList(out, module)
	if len(g) < 20 {
		t.Fatalf("go list named %d packages; the check read nothing useful", len(g))
	}
	return g
}

// TestPackagesSVG fails when docs/packages.svg no longer draws the tree's
// imports; go test -update rewrites it.
func TestPackagesSVG(t *testing.T) {
	got, err := layout.SVG(goList(t))
	if err != nil {
		t.Fatal(err)
	}
	const path = "../../docs/packages.svg"
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/layout -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: the imports changed (run go test ./internal/layout -update and look at it)", path)
	}
}

func TestSVGDeterministic(t *testing.T) {
	g := goList(t)
	a, err := layout.SVG(g)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if b, _ := layout.SVG(g); !bytes.Equal(a, b) {
			t.Fatal("two drawings of one graph differ")
		}
	}
}

// TestDesignNamesEveryPackage fails when docs/design.md's layout tables give
// a package no line: each is named in backquotes, or its top folder is
// (`bench/`, `examples/`).
func TestDesignNamesEveryPackage(t *testing.T) {
	design, err := os.ReadFile("../../docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	for pkg := range goList(t) {
		top, _, _ := strings.Cut(pkg, "/")
		if !bytes.Contains(design, []byte("| `"+pkg+"` |")) && !bytes.Contains(design, []byte("| `"+top+"/` |")) {
			t.Errorf("docs/design.md gives %s no line: add a row saying what it owns", pkg)
		}
	}
}
