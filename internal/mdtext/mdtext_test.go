package mdtext_test

import (
	"strings"
	"testing"

	"github.com/loadgate/loadgate/internal/mdtext"
)

// No string can make Markdown structure once escaped: one line, no
// unescaped markup character. (gate/github's TestEscapeMarkdown checks the
// exact output.)
func TestEscapeIsOneInertLine(t *testing.T) {
	for _, s := range []string{"x\n# PASS", "a|b", "[l](u)", "<!-- x -->", "`c`", "\u2028# h", "1. x\n- y"} {
		got := mdtext.Escape(s)
		if strings.ContainsAny(got, "\n\r\u2028") {
			t.Errorf("Escape(%q) = %q: a line break", s, got)
		}
		for i, r := range got {
			if strings.ContainsRune("|[]<>`#", r) && (i == 0 || got[i-1] != '\\') {
				t.Errorf("Escape(%q) = %q: %q unescaped at %d", s, got, r, i)
			}
		}
	}
}
