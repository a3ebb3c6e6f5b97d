package action

import (
	"strings"
	"unicode/utf8"
)

const (
	// SummaryLimit is the step summary's limit: over it GitHub shows none.
	SummaryLimit = 1 << 20
	// CommentLimit is a comment body's limit in characters, counted here in bytes.
	CommentLimit = 65536
)

// Cut returns md within limit bytes, lines cut out for note, an open fence closed; the last
// "## " section (the verdict) is kept when it fits in half the limit. ok is false when it cut.
func Cut(md, note string, limit int) (out string, ok bool) {
	if len(md) <= limit {
		return md, true
	}
	note = strings.TrimSpace(note)
	if len(note)+4 > limit {
		return truncUTF8(note, limit), false
	}
	head, tail := md, ""
	if i := strings.LastIndex(md, "\n## "); i >= 0 && len(md)-i-1 <= limit/2 {
		head, tail = md[:i+1], md[i+1:]
	}
	// head + "\n" + note + "\n\n" + tail, and maybe a fence "```\n".
	budget := limit - len(tail) - len(note) - 3
	if budget < 0 {
		budget = 0
	}
	head = cutLines(head, budget-4)
	if fences(head)%2 == 1 {
		head += "```\n"
	}
	out = head + "\n" + note + "\n"
	if tail != "" {
		out += "\n" + tail
	}
	if len(out) > limit { // cannot happen; never exceed the limit
		out = truncUTF8(out, limit)
	}
	return out, false
}

// fences counts the lines of s that open or close a code fence.
func fences(s string) int {
	n := strings.Count(s, "\n```")
	if strings.HasPrefix(s, "```") {
		n++
	}
	return n
}

// cutLines is s's longest prefix within n bytes ending a line, else a UTF-8 one.
func cutLines(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	if i := strings.LastIndexByte(s[:n], '\n'); i >= 0 {
		return s[:i+1]
	}
	return truncUTF8(s, n) + "\n"
}

// truncUTF8 is s's longest prefix within n bytes not splitting a UTF-8 sequence.
func truncUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
