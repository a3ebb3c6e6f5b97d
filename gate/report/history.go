package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/loadgate/loadgate/gate/history"
	"github.com/loadgate/loadgate/gate/verdict"
)

// HistoryMarkdown writes a history: per series its cumulative change, change points and entries.
func HistoryMarkdown(w io.Writer, a history.Analysis) error {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	es := a.Chain.Entries
	line("## History · %s", mdEsc(a.Scenario))
	line("")
	if len(es) == 0 {
		line("No entry yet: the history is written on each push to a protected branch.")
		_, err := io.WriteString(w, b.String())
		return err
	}
	since := es[a.Since]
	line("%s, %s to %s. Cumulative change since %s (%s), chained from each push's paired gate against the previous entry: "+
		"a regression when its %s interval lies above +%s. Change points: e-divisive means over each entry's own percentile, "+
		"significance %s (%s permutations, seed %d).",
		plural(len(es), "entry", "entries"), es[0].Date.Format("2006-01-02"), es[len(es)-1].Date.Format("2006-01-02"),
		mdCommit(since.Commit), since.Date.Format("2006-01-02"), Confidence(a.Confidence), Percent(a.Tolerance),
		Percent(a.Detect.Significance), Count(int64(a.Detect.Permutations)), a.Detect.Seed)
	if d := a.Direct; d != nil {
		line("")
		line("The cumulative rule is decided by a direct paired gate of %s against %s (at the gate's tolerance, %s, from %s's scenario), "+
			"not by the chain, whose interval widens with every link: the chain stays as the per-push trend.",
			mdCommit(d.Head), mdCommit(d.Base), tolerancePM(d.Tolerance), mdCommit(d.Base))
	}
	for _, s := range a.Series {
		line("")
		line("### %s · %s %s", mdEsc(s.Key.Phase), mdEsc(s.Key.Workload), mdEsc(s.Key.Metric))
		line("")
		if d := s.Direct; d != nil {
			line("**%s** since %s, measured directly: %s. Chained: %s, %s against +%s (the trend).", strings.ToUpper(string(s.Rule)), mdCommit(since.Commit),
				directText(*d), changeText(s.Total, es), s.Total.Value, Percent(a.Tolerance))
		} else {
			line("**%s** since %s: %s", strings.ToUpper(string(s.Rule)), mdCommit(since.Commit), changeText(s.Total, es))
		}
		for _, cp := range s.ChangePoints {
			line("")
			line("- change point at entry %d, %s: %s", cp.Index+1, commitRange(es, cp.Index), changePointText(cp))
		}
		line("")
		line("| # | commit | date | machine | %s ms (n) | step | since %s | change point |", mdEsc(s.Key.Metric), mdCommit(since.Commit))
		line("| ---: | --- | --- | --- | ---: | --- | --- | --- |")
		for _, p := range s.Points {
			abs := dash
			if p.Count > 0 {
				abs = MS(p.AbsoluteMS) + " (" + Count(p.Count) + ")"
			}
			step := dash
			if p.Step != nil {
				step = intervalText(p.Step.Ratio, p.Step.CILow, p.Step.CIHigh) + " " + string(p.Step.Value)
			}
			cum := dash
			if p.Entry == a.Since {
				cum = "from here"
			} else if p.Cumulative.Known && p.Entry > a.Since {
				cum = intervalText(p.Cumulative.Ratio, p.Cumulative.CILow, p.Cumulative.CIHigh) + " " + string(p.Cumulative.Value)
			} else if p.Entry > a.Since {
				cum = "not measured: no link at entry " + fmt.Sprint(p.Cumulative.Gap+1)
			}
			mark := ""
			if p.ChangePoint != nil {
				mark = changePointText(*p.ChangePoint)
			}
			line("| %d | %s | %s | %s | %s | %s | %s | %s |", p.Entry+1, mdCommit(p.Commit), p.Date.Format("2006-01-02"),
				mdEsc(orUnknown(p.Machine)), abs, step, cum, mark)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// directText is a direct gate's comparison: "+22.0% (+17.1% … +27.2%) in 12 paired rounds, regression".
func directText(d history.Step) string {
	if d.Ratio == 0 {
		return fmt.Sprintf("%s, %s", dash, d.Value)
	}
	return fmt.Sprintf("%s in %s, %s", intervalText(d.Ratio, d.CILow, d.CIHigh), plural(d.Rounds, "paired round", "paired rounds"), d.Value)
}

// tolerancePM is a gate's tolerance, "±10%"; the default when unset.
func tolerancePM(t float64) string {
	if t == 0 {
		t = verdict.DefaultTolerance
	}
	return "±" + Percent(t)
}

func mdCommit(c string) string { return "`" + commitText(c) + "`" }

// intervalText is a ratio and interval as changes: "+5.0% (+1.9% … +8.2%)".
func intervalText(ratio, lo, hi float64) string {
	return SignedPercent(ratio) + " (" + SignedPercent(lo) + " … " + boundPercent(hi) + ")"
}

func changeText(ch history.Change, es []history.Entry) string {
	if !ch.Known {
		return fmt.Sprintf("not measured: entry %d (%s) has no paired gate against the entry before it", ch.Gap+1, mdCommit(es[ch.Gap].Commit))
	}
	if ch.Links == 0 {
		return "nothing to chain yet: no entry after it"
	}
	return fmt.Sprintf("%s, %s interval %s … %s, over %s", SignedPercent(ch.Ratio), Confidence(ch.Confidence),
		SignedPercent(ch.CILow), boundPercent(ch.CIHigh), plural(ch.Links, "link", "links"))
}

// changePointText is a change point: "▲ level +30.0%, p = 0.002".
func changePointText(cp history.ChangePoint) string {
	mark := "▲"
	if cp.Shift < 0 {
		mark = "▼"
	}
	return fmt.Sprintf("%s level %s, p = %s", mark, SignedPercent(math.Exp(cp.Shift)), trimZeros(fmt.Sprintf("%.3f", cp.P)))
}

func commitRange(es []history.Entry, i int) string {
	if i == 0 {
		return mdCommit(es[0].Commit)
	}
	return mdCommit(es[i-1].Commit) + ".." + mdCommit(es[i].Commit)
}

func historyColor(v verdict.Value) string {
	if v == verdict.NotMeasured {
		return "#cf222e"
	}
	return verdictColor(v)
}

// HistoryTrendLine is the comment's line for a head's change against its branch's history.
func HistoryTrendLine(t history.Trend, a history.Analysis) string {
	es := a.Chain.Entries
	c := t.Change
	ref := es[t.Base].Ref
	if ref == "" {
		ref = "the branch"
	} else {
		ref = "`" + mdEsc(ref) + "`"
	}
	judged := map[verdict.Value]string{
		verdict.Regression:   "a regression beyond",
		verdict.Improvement:  "an improvement beyond",
		verdict.Pass:         "within",
		verdict.Inconclusive: "not decided against",
	}[c.Value]
	if judged == "" {
		judged = string(c.Value) + " against"
	}
	return fmt.Sprintf("**Against %s's history:** with this head, %s · %s %s is %s since %s (%s, entry %d of %d; %d gate(s) chained, this one's %s included): %s the +%s cumulative tolerance.",
		ref, mdEsc(t.Key.Phase), mdEsc(t.Key.Workload), mdEsc(t.Key.Metric), intervalText(c.Ratio, c.CILow, c.CIHigh),
		mdCommit(es[c.From].Commit), es[c.From].Date.Format("2006-01-02"), c.From+1, len(es), c.Links, SignedPercent(t.Head.Ratio),
		judged, Percent(a.Tolerance))
}
