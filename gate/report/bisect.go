package report

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/loadgate/loadgate/gate/bisect"
	"github.com/loadgate/loadgate/gate/verdict"
)

// BisectStart is a bisection's first line: its range and the most gates it takes.
func BisectStart(good bisect.Commit, commits []bisect.Commit) string {
	n := len(commits)
	return fmt.Sprintf("loadgate: bisect: %s after %s up to %s, at most %s", plural(n, "commit", "commits"),
		commitText(good.SHA), commitText(commits[n-1].SHA), plural(bisect.Estimate(n), "gate", "gates"))
}

// BisectProgress is a bisection's progress line of gate g: as it starts, or done.
func BisectProgress(g bisect.Gate, est, n int, done bool) string {
	head := fmt.Sprintf("loadgate: bisect gate %d of ≈%d: ", g.K, est)
	if !done {
		return head + fmt.Sprintf("%s (commit %d of %d, %q) against %s %s", commitText(g.Head.SHA), g.Pair.Head, n,
			oneLine(g.Head.Subject), againstWord(g.Pair), commitText(g.Base.SHA))
	}
	took := (time.Duration(g.Seconds) * time.Second).String()
	if g.Error != "" {
		return head + fmt.Sprintf("%s: %s after %s", commitText(g.Head.SHA), gateEnd(g), took)
	}
	return head + fmt.Sprintf("%s %s: %s in %s", commitText(g.Head.SHA), callWord(g.Call), bisectLead(g, textStyle), took)
}

// BisectAnswer is a bisection's answer in one line of plain text.
func BisectAnswer(o bisect.Outcome) string {
	return strings.ReplaceAll(bisectAnswer(o, textStyle), "**", "")
}

// BisectMarkdown writes a bisection: its answer, then each gate.
func BisectMarkdown(w io.Writer, o bisect.Outcome, out string) error {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	line("## Bisect · %s..%s", mdCommit(o.Good.SHA), mdCommit(o.Bad.SHA))
	line("")
	line("%s", bisectAnswer(o, mdStyle))
	line("")
	line("%s for %s between good and bad (at most %d).", plural(len(o.Gates), "gate", "gates"), plural(o.N, "commit", "commits"), o.Estimate)
	if len(o.Workloads) > 0 {
		line("A gate's call looks at %s only.", strings.Join(mdEscAll(o.Workloads), ", "))
	}
	line("")
	line("| gate | head | against | verdict | call | change that decided it | time | results |")
	line("| ---: | --- | --- | --- | --- | --- | ---: | --- |")
	for _, g := range o.Gates {
		dir := g.Dir
		if rel, err := filepath.Rel(out, g.Dir); err == nil && filepath.IsLocal(rel) {
			dir = rel
		}
		v, call := string(g.Verdict), callWord(g.Call)
		if g.Error != "" {
			v, call = gateEnd(g), dash
		}
		line("| %d | %s %s (%d of %d) | %s %s | %s | %s | %s | %s | `%s` |", g.K, mdCommit(g.Head.SHA), mdEsc(oneLine(g.Head.Subject)), g.Pair.Head, o.N,
			againstWord(g.Pair), mdCommit(g.Base.SHA), v, call, bisectLead(g, mdStyle), seconds(g.Seconds), strings.ReplaceAll(filepath.ToSlash(dir), "`", "'"))
	}
	line("")
	line("Each gate is an ordinary paired gate (`loadgate gate`, its report in its directory). A commit gated against the good one " +
		"halves the range by its cumulative change, the change the direct gate judged; the first commit whose cumulative change is a " +
		"regression is then gated against its parent, which names it, or finds the change spread over several commits. " +
		"The bad commit is taken as regressed from the direct gate, not gated again. A bisection is as sure as each gate: " +
		"one wrong call sends it to the wrong half.")
	_, err := io.WriteString(w, b.String())
	return err
}

// BisectJSON writes a bisection as indented JSON (bisect.json).
func BisectJSON(w io.Writer, o bisect.Outcome) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(o)
}

// WriteBisect writes bisect.md and bisect.json to out and the markdown to stdout.
func WriteBisect(out string, o bisect.Outcome, stdout, log io.Writer) error {
	var md strings.Builder
	if err := BisectMarkdown(&md, o, out); err != nil {
		return err
	}
	if err := writeFiles(out, []namedRender{
		{"bisect.md", func(w io.Writer) error { _, err := io.WriteString(w, md.String()); return err }},
		{"bisect.json", func(w io.Writer) error { return BisectJSON(w, o) }},
	}); err != nil {
		return err
	}
	if _, err := io.WriteString(stdout, md.String()); err != nil {
		return err
	}
	fmt.Fprintf(log, "loadgate: bisect results in %s (bisect.md, bisect.json, one directory per gate)\n", out)
	return nil
}

func bisectAnswer(o bisect.Outcome, st style) string {
	commit := func(c bisect.Commit) string {
		return commitCode(c.SHA, st) + " (" + quoted(c.Subject, st) + ")"
	}
	last := bisect.Gate{}
	if len(o.Gates) > 0 {
		last = o.Gates[len(o.Gates)-1]
	}
	left := fmt.Sprintf("the first commit past the tolerance is after %s, at most %s (%s)", commitCode(o.Lo.SHA, st), commitCode(o.Hi.SHA, st), plural(o.Left, "commit", "commits"))
	answer := o.Answer
	if o.Commit == nil && (answer == bisect.Found || answer == bisect.NotAttributable) {
		answer = "" // no commit to name
	}
	switch answer {
	case bisect.Found:
		p, _ := o.Parent(*o.Commit)
		return fmt.Sprintf("**FOUND:** %s is the first commit that regressed against its parent %s: %s.", commit(*o.Commit), commitCode(p.SHA, st), bisectLead(last, st))
	case bisect.NotAttributable:
		p, _ := o.Parent(*o.Commit)
		s := fmt.Sprintf("**NOT ATTRIBUTABLE:** the change since %s first crosses the tolerance at %s, yet against its parent %s it is within it (%s): "+
			"the regression is spread over several commits, no one commit made it.", commitCode(o.Good.SHA, st), commit(*o.Commit), commitCode(p.SHA, st), bisectLead(last, st))
		if o.Commit.SHA == o.Bad.SHA {
			s += " Bad's cumulative regression is the direct gate's, not gated again."
		}
		return s
	case bisect.NotReproduced:
		return fmt.Sprintf("**NOT REPRODUCED:** %s against %s, its parent, is no regression in this gate (%s): the direct gate's call did not repeat.",
			commit(o.Bad), commitCode(o.Good.SHA, st), bisectLead(last, st))
	case bisect.Stopped:
		return fmt.Sprintf("**UNDECIDED:** gate %d (%s against %s) did not decide: %s; %s. Run it again with a larger --budget, or bisect that range.",
			last.K, commitCode(last.Head.SHA, st), commitCode(last.Base.SHA, st), bisectLead(last, st), left)
	}
	if last.Error == "" {
		return "**STOPPED:** " + left + "."
	}
	why := oneLine(last.Error)
	if st.mark {
		why = mdEsc(why)
	}
	return fmt.Sprintf("**STOPPED:** gate %d (%s against %s) ended without a decision (%s); %s.", last.K, commitCode(last.Head.SHA, st), commitCode(last.Base.SHA, st), why, left)
}

// bisectLead is the comparison that decided a gate: "api_read p95 +25.0% (+21.3% … +28.9%)".
func bisectLead(g bisect.Gate, st style) string {
	c := g.Lead
	if c == nil {
		return "no comparison"
	}
	a := answer{}
	s := a.what(*c, st) + " " + change(*c)
	if c.Interval != "" {
		s += " (" + interval(*c) + ")"
	}
	if c.Value != verdict.Pass && c.Value != verdict.Regression {
		s += " " + string(c.Value)
	}
	return s
}

// gateEnd is how a gate that stopped the bisection ended: unusable, or no verdict.
func gateEnd(g bisect.Gate) string {
	if g.Verdict == "" {
		return "no verdict"
	}
	return string(g.Verdict)
}

func callWord(c bisect.Call) string {
	switch c {
	case bisect.Regressed:
		return "regressed"
	case bisect.Within:
		return "within the tolerance"
	}
	return "undecided"
}

func againstWord(p bisect.Pair) string {
	if p.Cumulative() {
		return "good"
	}
	return "its parent"
}

func commitCode(sha string, st style) string {
	if st.mark {
		return mdCommit(sha)
	}
	return commitText(sha)
}

func quoted(s string, st style) string {
	s = oneLine(s)
	if st.mark {
		return "“" + mdEsc(s) + "”"
	}
	return "“" + s + "”"
}

// oneLine is a commit subject cut to one line of at most 72 characters.
func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > 72 {
		s = string(r[:71]) + "…"
	}
	return s
}
