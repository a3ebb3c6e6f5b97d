package action

import (
	"fmt"
	"strings"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/mdtext"
)

// forkRows bounds the fork comment's table: an artifact cannot make it long.
const forkRows = 100

// ForkComment is the fork comment's Markdown, built from the artifact's verdict.json, never
// its Markdown: every artifact string is escaped, the provenance line first so nothing hides
// it. head is the commit the triggering run measured, runURL and artifactURL its links.
// f.Accepted is shown: set it from the API (PublishFromDir confirms it), never the artifact.
func ForkComment(f *report.GateVerdictFile, head, runURL, artifactURL string) string {
	var b strings.Builder
	b.WriteString(forkProvenance(head, runURL, artifactURL))
	b.WriteString("\n\n")
	forkHeadline(&b, f)
	if f.Accepted != nil {
		b.WriteString("\n> **" + inert(report.AcceptedText(*f.Accepted)) + "**\n")
	}
	forkTable(&b, f)
	for i, list := range [][]string{f.Reasons, f.Notes} {
		if len(list) == 0 {
			continue
		}
		b.WriteString([]string{"\nWhy:\n\n", "\nNotes:\n\n"}[i])
		for j, s := range list {
			if j == 20 {
				fmt.Fprintf(&b, "- and %d more: see the results artifact\n", len(list)-20)
				break
			}
			b.WriteString("- " + inert(clip(s, 500)) + "\n")
		}
	}
	return b.String()
}

// forkHeadline writes the title and the verdict's line: rounds, shards and sides.
func forkHeadline(b *strings.Builder, f *report.GateVerdictFile) {
	name := inert(f.Scenario.Name)
	if name == "" {
		name = "(unnamed scenario)"
	}
	fmt.Fprintf(b, "# loadgate gate: %s — %s\n\n", name, VerdictWord(f.Value))
	fmt.Fprintf(b, "**%s** (exit %d)", VerdictWord(f.Value), f.ExitCode)
	if f.Rounds > 0 {
		fmt.Fprintf(b, " over %d round(s)", f.Rounds)
	}
	if len(f.Shards) > 0 { // a merged gate (numbers only: the artifact is untrusted)
		given := 0
		for _, sh := range f.Shards {
			if sh.Status == rounds.ShardOK && sh.Rounds > 0 {
				given++
			}
		}
		fmt.Fprintf(b, " from %d of %d runners", given, len(f.Shards))
	}
	var sides []string
	for _, s := range f.Sides {
		if c := result.ShortHash(s.Commit); shaRE.MatchString(c) {
			sides = append(sides, inert(s.Name)+" `"+c+"`")
		} else {
			sides = append(sides, inert(s.Name))
		}
	}
	if len(sides) > 0 {
		b.WriteString(": " + strings.Join(sides, " against "))
	}
	b.WriteString(".\n")
}

// forkTable writes the workloads' table, what got worse first, at most forkRows rows.
func forkTable(b *strings.Builder, f *report.GateVerdictFile) {
	var rows []string
	for _, good := range []bool{false, true} {
		for _, wv := range f.Workloads {
			if (wv.Value == verdict.Pass || wv.Value == verdict.Improvement) != good {
				continue
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s |", inert(wv.Workload), inert(wv.Phase),
				inert(string(wv.Value)), inert(forkWhy(wv))))
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("\n| workload | phase | verdict | why |\n| --- | --- | --- | --- |\n")
	for i, r := range rows {
		if i == forkRows {
			fmt.Fprintf(b, "\n%d more rows: see the results artifact.\n", len(rows)-forkRows)
			break
		}
		b.WriteString(r + "\n")
	}
}

// bareLinks are what GitHub turns into a link without any markup.
var bareLinks = strings.NewReplacer("://", "\\://", "www.", "www\\.", "WWW.", "WWW\\.")

// inert is s from the artifact as plain text, with no bare URL for GitHub to link.
func inert(s string) string { return bareLinks.Replace(mdtext.Escape(s)) }

// forkProvenance is the fork comment's first line: where its numbers come from.
func forkProvenance(head, runURL, artifactURL string) string {
	return linksLine("⚠️ From the pull request's own results artifact: the verdict.json its workflow run uploaded, rendered again by loadgate; the required check's status is what counts",
		head, runURL, artifactURL, "")
}

// forkWhy is why a workload verdict is what it is: failed checks and comparisons, else its reason.
func forkWhy(wv verdict.WorkloadVerdict) string {
	var parts []string
	for _, c := range wv.Checks {
		if c.Value != verdict.Pass && c.Value != verdict.Improvement {
			parts = append(parts, report.CheckText(c))
		}
	}
	for _, c := range wv.Comparisons {
		if c.Value == verdict.Pass {
			continue
		}
		unit := func(x float64) string { return report.MS(x) + " ms" }
		if c.Metric == verdict.MetricErrorRate {
			unit = report.Percent
		}
		parts = append(parts, fmt.Sprintf("%s %s → %s: %s", c.Metric, unit(c.Base), unit(c.Head), c.Value))
	}
	if len(parts) == 0 {
		if why := report.WorkloadWhy(wv); why != "" {
			parts = append(parts, why)
		}
	}
	return clip(strings.Join(parts, "; "), 500)
}

// clip cuts s to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
