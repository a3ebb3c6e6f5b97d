package report_test

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

// unescapedPipe is a '|' not preceded by an odd run of backslashes.
var unescapedPipe = regexp.MustCompile(`(^|[^\\])(\\\\)*\|`)

// unescapedHTML is an HTML tag or a link's "](" not escaped.
var unescapedHTML = regexp.MustCompile(`(^|[^\\])(<img|\]\()`)

// Issue 10: a name read from a result file (an artifact a fork uploaded)
// entered the report as Markdown: a newline made a heading, a '|' split a
// table cell, a '"' ended the mermaid title. Every such string is escaped.
func TestRegression_GateReportEscapesNamesFromResults(t *testing.T) {
	const wl, ph, svc = "api_read\n# PASS|<img src=x>", `sus"tain|x`, "db\n- [x](http://evil)"
	gr := gateFixture(t, shape{sustain: 1, recover: 1, ingestOK: 400}, calm[:3], func(base, head []*result.Result) {
		for _, r := range append(append([]*result.Result{}, base...), head...) {
			r.Target = "api:8080`|x"
			r.NotMeasured = append(r.NotMeasured, "x\n## injected")
			for i := range r.Phases {
				if r.Phases[i].Name == "sustain" {
					r.Phases[i].Name = ph
				}
				for j := range r.Phases[i].Workloads {
					if r.Phases[i].Workloads[j].Name == "api_read" {
						r.Phases[i].Workloads[j].Name = wl
					}
				}
			}
			r.Stack.Services[1].Name = svc
			r.Scenario.Thresholds[wl] = r.Scenario.Thresholds["api_read"]
		}
	})
	gr.Notes = []verdict.Note{{Code: verdict.NoteTeardown, Side: "head", Detail: "note with *emphasis* and\n# a heading"}}
	for _, render := range []func(io.Writer, rounds.Outcome) error{report.CompareMarkdown, report.CompareSummary} {
		var b bytes.Buffer
		if err := render(&b, gr); err != nil {
			t.Fatal(err)
		}
		checkEscaped(t, b.String())
	}
}

// checkEscaped fails on Markdown structure made by a name in md.
func checkEscaped(t *testing.T, md string) {
	t.Helper()
	if !strings.Contains(md, `api_read \# PASS\|\<img src=x\>`) {
		t.Errorf("the workload's name is not escaped as expected:\n%s", md)
	}
	cols := 0
	inFence := false
	for _, line := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(line, "```"):
			inFence = !inFence
		case inFence && strings.HasPrefix(strings.TrimSpace(line), "title "):
			if n := strings.Count(line, `"`); n != 2 {
				t.Errorf("mermaid title %q has %d quotes: the name ends the string", line, n)
			}
		case inFence && strings.HasPrefix(strings.TrimSpace(line), "x-axis [\""):
			if n, labels := strings.Count(line, `"`), strings.Count(line, `", "`)+1; n != 2*labels {
				t.Errorf("mermaid axis %q has %d quotes for %d labels: a name ends its string", line, n, labels)
			}
		case strings.HasPrefix(line, "# PASS"), strings.HasPrefix(line, "## injected"), strings.HasPrefix(line, "# a heading"), strings.HasPrefix(line, "- [x]"):
			t.Errorf("a name made Markdown structure: %q", line)
		case unescapedHTML.MatchString(strings.ReplaceAll(line, "]("+report.DocsURL, "")):
			t.Errorf("unescaped HTML or link: %q", line)
		case strings.HasPrefix(line, "| ---") || strings.HasPrefix(line, "| --"):
			cols = len(unescapedPipe.FindAllString(line, -1))
		case strings.HasPrefix(line, "|") && cols > 0:
			if n := len(unescapedPipe.FindAllString(line, -1)); n != cols {
				t.Errorf("table row %q has %d cell borders, its header %d: a name split a cell", line, n, cols)
			}
		case line == "":
			cols = 0
		}
	}
}

// Issue 10: the unusable banner read "Is the docker daemon running?.
// Nothing is compared": a reason that ends its sentence takes no period.
func TestRegression_UnusableBannerReadsWell(t *testing.T) {
	for reason, want := range map[string]string{
		"compose up: Cannot connect to the Docker daemon. Is the docker daemon running?": "daemon running? Nothing is compared",
		"the stack failed": "the stack failed. Nothing is compared",
	} {
		gr := rounds.Outcome{Rounds: 3, Scenario: result.Scenario{Name: "demo-api"},
			Verdict: verdict.Verdict{Value: verdict.Unusable, Notes: []verdict.Note{{Code: verdict.NoteError, Detail: reason}}}}
		var b bytes.Buffer
		if err := report.CompareMarkdown(&b, gr); err != nil {
			t.Fatal(err)
		}
		first := bannerLine(b.String())
		if !strings.Contains(first, want) || strings.Contains(first, "?.") || strings.Contains(first, "..") {
			t.Errorf("banner %q, want it to contain %q", first, want)
		}
	}
}

// bannerLine is a report's first quoted line (a banner such as UNUSABLE
// GATE), which follows the title and the headline; "" when none.
func bannerLine(md string) string {
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "## ") {
			break
		}
		if strings.HasPrefix(l, "> ") {
			return l
		}
	}
	return ""
}
