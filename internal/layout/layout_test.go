package layout_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/loadgate/loadgate/internal/layout"
)

const module = "github.com/loadgate/loadgate/"

// TestNoImportUpward fails when a package imports one of a higher stage,
// or when a package is not placed in layout.Stages.
func TestNoImportUpward(t *testing.T) {
	if len(layout.StageNames) != len(layout.Stages) {
		t.Errorf("%d stage names for %d stages", len(layout.StageNames), len(layout.Stages))
	}
	g := goList(t)
	for _, pkg := range slices.Sorted(maps.Keys(g)) {
		at, ok := layout.Stage(pkg)
		if !ok {
			t.Errorf("%s is not placed in layout.Stages", pkg)
			continue
		}
		for _, dep := range g[pkg] {
			if s, ok := layout.Stage(dep); ok && s > at {
				t.Errorf("%s (stage %d) imports %s (stage %d), which sits above it", pkg, at, dep, s)
			}
		}
	}
}
