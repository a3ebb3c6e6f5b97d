package mdtext_test

import (
	"strings"
	"testing"

	"github.com/loadgate/loadgate/internal/mdtext"
)

// No string can make Markdown structure once escaped: one line, no
// unescaped markup character. (gate/action's TestEscapeMarkdown checks the
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

// An underscore inside a word is inert and left as is; one that could open
// or close emphasis is escaped.
func TestEscapeUnderscores(t *testing.T) {
	for in, want := range map[string]string{
		"api_read": "api_read", "a__b": "a__b", "_a": `\_a`, "a_": `a\_`,
		"a._b_.c": `a.\_b\_.c`, "x-_y_-z": `x-\_y\_-z`, "a_ b": `a\_ b`,
	} {
		if got := mdtext.Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

// A mermaid title cannot end its quoted string, its line or the fence.
func TestMermaid(t *testing.T) {
	for in, want := range map[string]string{
		"sustain":       "sustain",
		`a"b`:           "a'b",
		"x\n```\n# h":   "x   h",
		"a #quot; b; c": "a quot b c",
	} {
		if got := mdtext.Mermaid(in); got != want {
			t.Errorf("Mermaid(%q) = %q, want %q", in, got, want)
		}
	}
}
