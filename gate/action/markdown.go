package action

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/mdtext"
)

// EscapeMarkdown makes s (a name, a target, a reason: any string read from
// a result, a scenario or an artifact) plain text on one line of GitHub
// Markdown: internal/mdtext.Escape, the rule gate/report uses too. Line
// breaks and control characters become spaces (no new heading, list, quote
// or table row); \ ` * _ ~ [ ] ( ) < > & | # @ ! $ and a leading - + = or
// "1." are backslash-escaped (no emphasis, code span, link, HTML, entity,
// cell split, #reference, @mention, math or list).
func EscapeMarkdown(s string) string { return mdtext.Escape(s) }

// EscapeCode renders s as an inline code span on one line, safe in a table
// cell (internal/mdtext.Code).
func EscapeCode(s string) string { return mdtext.Code(s) }

// VerdictWord is the verdict as the comment's title shows it: PASS,
// REGRESSION, NOT MEASURED, UNUSABLE, …; UNKNOWN for a value that is not a
// verdict.
func VerdictWord(v verdict.Value) string {
	if !knownVerdict(v) {
		return "UNKNOWN"
	}
	return strings.ToUpper(string(v))
}

func knownVerdict(v verdict.Value) bool {
	switch v {
	case verdict.Pass, verdict.Fail, verdict.Regression, verdict.Improvement,
		verdict.Inconclusive, verdict.NotMeasured, verdict.Unusable:
		return true
	}
	return false
}

var titleRE = regexp.MustCompile(`^# (loadgate[A-Za-z ]*):`)

// Titled gives the report's title line the scenario's name and the verdict
// word, "# loadgate gate: demo-api — REGRESSION", so that a reviewer reads
// the verdict without opening the comment (the detailed verdict stays the
// report's last section). The title is the first line that starts with
// "# loadgate…:" among the report's first lines (after a banner such as
// UNUSABLE GATE); it is rewritten whole, so that a title rendered without a
// name ("# loadgate gate: ") still names the scenario. A report without
// such a title gets one on top.
func Titled(md, scenario string, v verdict.Value) string {
	name := EscapeMarkdown(scenario)
	if name == "" {
		name = "(unnamed scenario)"
	}
	word := VerdictWord(v)
	lines := strings.SplitAfter(md, "\n")
	for i, l := range lines {
		if i >= 12 || strings.HasPrefix(l, "## ") {
			break
		}
		m := titleRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		nl := ""
		if strings.HasSuffix(l, "\n") {
			nl = "\n"
		}
		lines[i] = "# " + m[1] + ": " + name + " — " + word + nl
		return strings.Join(lines, "")
	}
	return "# loadgate: " + name + " — " + word + "\n\n" + md
}

// linkURL returns s as a URL safe inside a Markdown link's parentheses, or
// "" when s is not an absolute http(s) URL.
func linkURL(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return ""
	}
	r := strings.NewReplacer("(", "%28", ")", "%29", "<", "%3C", ">", "%3E", " ", "%20", "`", "%60", "\"", "%22", "[", "%5B", "]", "%5D")
	return r.Replace(u.String())
}

var shaRE = regexp.MustCompile(`^[0-9a-fA-F]{7,64}$`)
