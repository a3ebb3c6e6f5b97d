package scenario

import "strings"

// Templates. Path and body are templates: {n} is the workload's sequence
// number and {name} takes the values of vars[name] in turn. Path, body and
// header values may also hold ${NAME} references to environment variables,
// resolved by ResolveEnv when a run starts and never stored in the
// Scenario (so they never reach the hash or a result).

// isIdent reports whether s is a template or environment variable name.
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

// token is one piece of a template: literal text, a {var} or a ${ENV}.
type token struct {
	text string // literal text, or the variable name
	kind byte   // 0 literal, '{' var, '$' env
}

// tokens splits a template. A "${" that does not start a valid ${NAME} is
// reported as bad (Parse rejects it); a "{" that does not start a valid
// {name} is literal text (JSON bodies are full of braces).
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

// templateVars returns the {var} names used in s, in order.
func templateVars(s string) []string { return names(s, '{') }

// envRefs returns the ${NAME} names used in s, in order.
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

// badEnvRef returns the first malformed "${..." in s, or "".
func badEnvRef(s string) string {
	_, bad := tokens(s)
	return bad
}

// ExpandEnv replaces each ${NAME} in s with env[NAME], as returned by
// ResolveEnv. A reference missing from env is left as written. {var}
// placeholders are left for the engine.
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
