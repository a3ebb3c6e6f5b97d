package scenario_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/scenario"
)

func ExampleCompileTemplate() {
	t := scenario.CompileTemplate(`/items?page={n}&sort={order}&token=${TOKEN}`,
		map[string]string{"TOKEN": "s3cret"}, map[string][]string{"order": {"asc", "desc"}})
	for k := int64(0); k < 3; k++ {
		fmt.Println(string(t.AppendTo(nil, k)))
	}
	// Output:
	// /items?page=0&sort=asc&token=s3cret
	// /items?page=1&sort=desc&token=s3cret
	// /items?page=2&sort=asc&token=s3cret
}

// One grammar for the scenario's validation and the engine's expansion
// (they used to disagree: the engine took {0x} for a placeholder, and an
// unresolved ${X} for a {X} var).
func TestCompileTemplateGrammar(t *testing.T) {
	env := map[string]string{"TOKEN": "{n}", "Q": `a"b`}
	vars := map[string][]string{"user": {"ann", "bob"}, "0x": {"zero"}, "X": {"var"}, "empty": nil}
	cases := []struct {
		in     string
		k      int64
		want   string
		static bool
	}{
		{"/plain", 3, "/plain", true},
		{"", 3, "", true},
		{"/u/{user}/{n}", 3, "/u/bob/3", false},
		{`{"id":{n},"who":"{user}"}`, 4, `{"id":4,"who":"ann"}`, false},         // JSON braces stay literal
		{"{0x}", 1, "{0x}", true},                                               // a name starts with a letter or _
		{"{nope}", 1, "{nope}", true},                                           // unknown: literal (Parse refuses it)
		{"{empty}", 1, "{empty}", true},                                         // a var without values
		{"${TOKEN}", 9, "{n}", true},                                            // an env value is never a placeholder
		{"${X}", 1, "${X}", true},                                               // unresolved env stays as written, not {X}
		{"${Q}/{n}", 2, `a"b/2`, false},                                         // env substituted as given
		{"${bad name}/{n}", 2, "${bad name}/{n}", true},                         // malformed ${: all literal
		{"{{n}}", 5, "{5}", false},                                              // the inner {n}
		{"{n", 5, "{n", true},                                                   // unclosed
		{"{user}{user}{n}", 1, "bobbob1", false},                                // adjacent placeholders
		{"${TOKEN}${TOKEN}", 0, "{n}{n}", true},                                 // adjacent env values
		{"/é/{n}/ü", 12345678901, "/é/12345678901/ü", false},                    // bytes kept
		{"/{user}?p={n}", 1 << 40, "/ann?p=" + fmt.Sprint(int64(1)<<40), false}, // k mod len
	}
	for _, c := range cases {
		tm := scenario.CompileTemplate(c.in, env, vars)
		if got := string(tm.AppendTo(nil, c.k)); got != c.want {
			t.Errorf("CompileTemplate(%q).AppendTo(%d) = %q, want %q", c.in, c.k, got, c.want)
		}
		if tm.Static() != c.static {
			t.Errorf("CompileTemplate(%q).Static() = %v, want %v", c.in, tm.Static(), c.static)
		}
	}
	// AppendTo appends, and does not allocate when the buffer has room.
	tm := scenario.CompileTemplate("/u/{user}/{n}", nil, vars)
	buf := make([]byte, 0, 64)
	buf = append(buf, "http://h"...)
	if got := string(tm.AppendTo(buf, 1)); got != "http://h/u/bob/1" {
		t.Errorf("AppendTo after a prefix = %q", got)
	}
	if a := testing.AllocsPerRun(100, func() { buf = tm.AppendTo(buf[:0], 12345) }); a != 0 {
		t.Errorf("AppendTo allocates %v times per call with room in the buffer", a)
	}
	var zero scenario.Template
	if got := zero.AppendTo([]byte("x"), 1); string(got) != "x" || !zero.Static() {
		t.Errorf("the zero Template appended %q", got)
	}
}

// FuzzCompileTemplate: no template panics the compiler, and without vars,
// env or a {n}, expansion gives back exactly what was written.
func FuzzCompileTemplate(f *testing.F) {
	for _, s := range []string{"/items?page={n}", `{"a":{"b":"{x}"}}`, "${TOKEN}/{n}", "${", "{", "}{", "${A}{B}", "é{n}"} {
		f.Add(s, int64(7))
	}
	f.Fuzz(func(t *testing.T, s string, k int64) {
		if k < 0 {
			k = 0 // sequence numbers count from 0
		}
		tm := scenario.CompileTemplate(s, nil, nil)
		got := string(tm.AppendTo(nil, k))
		if strings.Contains(s, "{n}") {
			return
		}
		if got != s || !tm.Static() {
			t.Fatalf("CompileTemplate(%q) without placeholders: %q, static %v", s, got, tm.Static())
		}
	})
}
