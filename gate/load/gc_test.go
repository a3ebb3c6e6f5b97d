package load_test

import (
	"testing"

	"github.com/loadgate/loadgate/gate/load"
)

// The generator's collector is set only where the user left it alone.
func TestGeneratorGC(t *testing.T) {
	for _, c := range []struct {
		gogc, limit string
		set         bool
	}{
		{"", "", true},      // nothing set: loadgate's GOGC=400 and 1 GiB limit
		{"100", "", false},  // the user's GOGC decides
		{"off", "", false},  // even off
		{"", "2GiB", false}, // a memory limit of theirs too
		{"200", "1GiB", false},
	} {
		p, l, set := load.GC(c.gogc, c.limit)
		if set != c.set {
			t.Errorf("GOGC=%q GOMEMLIMIT=%q: set %v, want %v", c.gogc, c.limit, set, c.set)
		}
		if set && (p != load.GCPercent || l != load.GCMemLimit) {
			t.Errorf("GOGC=%q GOMEMLIMIT=%q: %d%%, %d B", c.gogc, c.limit, p, l)
		}
	}
}
