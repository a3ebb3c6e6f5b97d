package scenario_test

import (
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/scenario"
)

// ValidName is the one rule for names: what the parser accepts, and what
// baseline save and the pull request comment check again on names read
// back from a result file or an artifact.
func TestValidName(t *testing.T) {
	for _, s := range []string{"demo-api", "a", "A.b_c-9", "v1.4", strings.Repeat("x", 64)} {
		if !scenario.ValidName(s) {
			t.Errorf("ValidName(%q) = false, want true", s)
		}
	}
	for _, s := range []string{
		"", ".", "..", "../../escape", "a/b", `a\b`, "demo..api", "-x", ".hidden", "_x",
		"my api", "demo\n# PASS", "a|b", "a`b", "<b>", "x-->", "é", strings.Repeat("x", 65),
	} {
		if scenario.ValidName(s) {
			t.Errorf("ValidName(%q) = true, want false", s)
		}
	}
}
