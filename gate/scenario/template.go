package scenario

import (
	"strconv"
	"strings"
)

// Templates: {n} is the workload's sequence number, {name} takes vars[name] in
// turn, ${NAME} an environment variable resolved at run start and never stored.

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range []byte(s) {
		letter := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

type token struct {
	text string // literal text, or the variable name
	kind byte   // 0 literal, '{' var, '$' env
}

// tokens splits a template; a bad "${" is reported, a "{" that starts no {name}
// is literal (JSON bodies are full of braces).
func tokens(s string) (out []token, bad string) {
	lit := 0
	flush := func(i int) {
		if i > lit {
			out = append(out, token{text: s[lit:i]})
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '$' && strings.HasPrefix(s[i:], "${") {
			end := strings.IndexByte(s[i:], '}')
			if end < 0 || !isIdent(s[i+2:i+end]) {
				if end < 0 {
					end = len(s) - i - 1
				}
				return out, s[i : i+end+1]
			}
			flush(i)
			out = append(out, token{text: s[i+2 : i+end], kind: '$'})
			i += end
			lit = i + 1
			continue
		}
		if s[i] == '{' {
			end := strings.IndexByte(s[i:], '}')
			if end > 0 && isIdent(s[i+1:i+end]) {
				flush(i)
				out = append(out, token{text: s[i+1 : i+end], kind: '{'})
				i += end
				lit = i + 1
			}
		}
	}
	flush(len(s))
	return out, ""
}

func templateVars(s string) []string { return names(s, '{') }

func envRefs(s string) []string { return names(s, '$') }

func names(s string, kind byte) []string {
	toks, _ := tokens(s)
	var out []string
	for _, t := range toks {
		if t.kind == kind {
			out = append(out, t.text)
		}
	}
	return out
}

func badEnvRef(s string) string {
	_, bad := tokens(s)
	return bad
}

// ExpandEnv replaces each ${NAME} in s found in env; {var} placeholders are left.
func ExpandEnv(s string, env map[string]string) string {
	toks, bad := tokens(s)
	if bad != "" {
		return s
	}
	var b strings.Builder
	for _, t := range toks {
		switch v, ok := env[t.text]; {
		case t.kind == '$' && ok:
			b.WriteString(v)
		case t.kind == '$':
			b.WriteString("${" + t.text + "}")
		case t.kind == '{':
			b.WriteString("{" + t.text + "}")
		default:
			b.WriteString(t.text)
		}
	}
	return b.String()
}

// Template is a path, body or message compiled once, ${NAME} substituted.
// Read-only after CompileTemplate.
type Template struct {
	parts []templatePart
}

type templatePart struct {
	lit  string   // kind 0: literal text
	kind byte     // 0 literal, 'n' the sequence number, 'v' a var's values
	vals []string // kind 'v'
}

// CompileTemplate compiles s; a malformed "${" leaves it literal.
func CompileTemplate(s string, env map[string]string, vars map[string][]string) Template {
	toks, bad := tokens(s)
	if bad != "" {
		toks = []token{{text: s}}
	}
	var t Template
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			t.parts = append(t.parts, templatePart{lit: lit.String()})
			lit.Reset()
		}
	}
	for _, tk := range toks {
		switch vals, ok := vars[tk.text]; {
		case tk.kind == '$':
			if v, ok := env[tk.text]; ok {
				lit.WriteString(v)
			} else {
				lit.WriteString("${" + tk.text + "}")
			}
		case tk.kind == '{' && tk.text == "n":
			flush()
			t.parts = append(t.parts, templatePart{kind: 'n'})
		case tk.kind == '{' && ok && len(vals) > 0:
			flush()
			t.parts = append(t.parts, templatePart{kind: 'v', vals: vals})
		case tk.kind == '{':
			lit.WriteString("{" + tk.text + "}")
		default:
			lit.WriteString(tk.text)
		}
	}
	flush()
	return t
}

// AppendTo appends the k-th request's text (k from 0): {n} is k, {var} is
// vars[var][k mod len]. It does not allocate when b has room.
func (t *Template) AppendTo(b []byte, k int64) []byte {
	for i := range t.parts {
		p := &t.parts[i]
		switch p.kind {
		case 0:
			b = append(b, p.lit...)
		case 'n':
			b = strconv.AppendInt(b, k, 10)
		case 'v':
			b = append(b, p.vals[k%int64(len(p.vals))]...)
		}
	}
	return b
}

// Static reports whether every request gets the same bytes.
func (t *Template) Static() bool {
	for _, p := range t.parts {
		if p.kind != 0 {
			return false
		}
	}
	return true
}
