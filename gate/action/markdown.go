package action

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/mdtext"
)

// EscapeMarkdown makes s plain text on one line of GitHub Markdown (mdtext.Escape).
func EscapeMarkdown(s string) string { return mdtext.Escape(s) }

// EscapeCode renders s as a one-line inline code span, safe in a table cell.
func EscapeCode(s string) string { return mdtext.Code(s) }

// VerdictWord is the verdict as the comment's title shows it (PASS…), else UNKNOWN.
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

// Titled puts the verdict in the report's title ("# loadgate gate: NAME — REGRESSION"), or adds one.
func Titled(md, scenario string, v verdict.Value) string {
	return titledWord(md, scenario, VerdictWord(v))
}

// titledWord is Titled with the title's word given ("REGRESSION, ACCEPTED").
func titledWord(md, scenario, word string) string {
	name := EscapeMarkdown(scenario)
	if name == "" {
		name = "(unnamed scenario)"
	}
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

// linkURL is s made safe inside a Markdown link, or "" when not an http(s) URL.
func linkURL(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return ""
	}
	r := strings.NewReplacer("(", "%28", ")", "%29", "<", "%3C", ">", "%3E", " ", "%20", "`", "%60", "\"", "%22", "[", "%5B", "]", "%5D")
	return r.Replace(u.String())
}

var shaRE = regexp.MustCompile(`^[0-9a-fA-F]{7,64}$`)
