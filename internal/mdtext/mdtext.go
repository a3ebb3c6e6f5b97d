// Package mdtext escapes untrusted strings for GitHub Markdown, the one rule
// for gate/report and gate/action.
package mdtext

import (
	"regexp"
	"strings"
	"unicode"
)

// Escape makes s plain text on one line of GitHub Markdown (paragraph,
// heading, list item or table cell): control characters become spaces,
// bidi controls are dropped, and characters with a meaning inside a line
// (\ ` * _ ~ [ ] < > & | # @ $, a leading - + = or "1.") are
// backslash-escaped. Intraword underscores and ( ) ! stay: they are inert.
func Escape(s string) string {
	s = oneLine(s)
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	if m := orderedRE.FindStringIndex(s); m != nil {
		b.WriteString(s[:m[1]-1] + `\`)
		s = s[m[1]-1:]
	} else if s != "" && strings.ContainsRune("-+=", rune(s[0])) {
		b.WriteByte('\\')
	}
	for i, r := range s {
		if r < 0x80 && strings.ContainsRune(escaped, r) && !(r == '_' && intraword(s, i)) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// intraword: the underscore run at s[i] lies between ASCII letters or
// digits, where CommonMark cannot open or close emphasis.
func intraword(s string, i int) bool {
	lo, hi := i, i
	for lo > 0 && s[lo-1] == '_' {
		lo--
	}
	for hi < len(s) && s[hi] == '_' {
		hi++
	}
	return lo > 0 && hi < len(s) && isAlnum(s[lo-1]) && isAlnum(s[hi])
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// Mermaid makes s plain text on one line inside a double-quoted mermaid
// string: '"' becomes '\”', and '`', '#' and ';' are dropped.
func Mermaid(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '"':
			return '\''
		case '`', '#', ';':
			return -1
		}
		return r
	}, oneLine(s))
}

const escaped = "\\`*_~[]<>&|#@$"

var orderedRE = regexp.MustCompile(`^[0-9]{1,9}[.)]`)

// Code renders s as a one-line inline code span safe in a table cell: the
// fence outruns s's backticks and '|' is escaped (GitHub splits cells first).
func Code(s string) string {
	s = oneLine(s)
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	s = strings.ReplaceAll(s, "|", `\|`)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || s == "" {
		s = " " + s + " "
	}
	return fence + s + fence
}

// oneLine replaces control characters (line breaks included) by spaces and
// drops bidirectional-text controls.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\u2028' || r == '\u2029' || unicode.IsControl(r):
			return ' '
		case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069', r == '\u200e', r == '\u200f', r == '\u061c':
			return -1
		}
		return r
	}, s)
}
