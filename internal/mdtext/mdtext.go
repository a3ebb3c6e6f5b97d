// Package mdtext escapes untrusted strings (names, targets, reasons read
// from a result, a scenario or an artifact) for GitHub Markdown. It is a
// leaf package so that both gate/report (which renders the reports) and
// gate/github (the comment's title and footer) use the same rules.
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
//     \ ` * _ ~ [ ] ( ) < > & | # @ ! $ (no emphasis, code span, link,
//     image, HTML tag or comment, entity, table cell split, #reference,
//     @mention or math), and so is a leading - + = or "1." (no list, no
//     setext heading, should s start a line).
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
	for _, r := range s {
		if r < 0x80 && strings.ContainsRune(escaped, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

const escaped = "\\`*_~[]()<>&|#@!$"

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
