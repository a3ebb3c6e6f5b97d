// Package mdtext escapes untrusted strings (names, targets, reasons read
// from a result, a scenario or an artifact) for GitHub Markdown. It is a
// leaf package so that both gate/report (which renders the reports) and
// gate/action (the comment's title and footer) use the same rules.
package mdtext

import (
	"regexp"
	"strings"
	"unicode"
)

// Escape makes s (a name, a target, a reason: any string read from
// a result, a scenario or an artifact) plain text on one line of GitHub
// Markdown, in a paragraph, a heading, a list item or a table cell:
//
//   - line breaks, tabs and other control characters become spaces, so
//     that s cannot end the line it is on (no new heading, list, quote or
//     table row), and bidirectional-text controls are dropped;
//   - the characters with a meaning inside a line are backslash-escaped:
//     \ ` * _ ~ [ ] < > & | # @ $ (no emphasis, code span, link,
//     image, HTML tag or comment, entity, table cell split, #reference,
//     @mention or math), and so is a leading - + = or "1." (no list, no
//     setext heading, should s start a line). An underscore inside a word
//     (a run of them between two ASCII letters or digits, as in api_read)
//     is left as it is: it can neither open nor close emphasis there; so
//     are '(', ')' and '!', inert once '[' and ']' are escaped (no link,
//     no image).
//
// The rendered text reads as s did (with its line breaks as spaces).
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

// intraword reports whether the run of underscores at s[i] is between two
// ASCII letters or digits: inert in CommonMark (an underscore run so
// flanked can neither open nor close emphasis).
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

// Mermaid makes s plain text inside a double-quoted mermaid string (a
// chart's title), on one line: control characters become spaces, '"' (which
// would end the string) becomes '\”, and '`' (a fence) and '#' and ';'
// (mermaid's entity codes #quot; and statement separator) are dropped.
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

// Code renders s as an inline code span, on one line, safe in a
// table cell: the fence is longer than any run of backticks in s, and '|'
// is escaped (GitHub splits table cells before it parses code spans, and
// drops the backslash inside the span).
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
