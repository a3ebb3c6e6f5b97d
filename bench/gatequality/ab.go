package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

type abGate struct {
	dir               string
	name              string // the A/B's label
	workload          string // the workload the change slows
	change            string
	args              string
	scenario          string
	wall              time.Duration
	file              *report.GateVerdictFile
	started, finished time.Time
	machine           string
}

type abDone struct {
	Name     string `json:"name"`
	Workload string `json:"workload"`
	Change   string `json:"change"`
	Scenario string `json:"scenario"`
	Args     string `json:"args"`
	Exit     int    `json:"exit"`
	WallS    int    `json:"wall_s"`
}

func loadAB(dir string) ([]abGate, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*", "gate-*", "DONE"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []abGate
	for _, doneFile := range names {
		b, err := os.ReadFile(doneFile)
		if err != nil {
			return nil, err
		}
		var d abDone
		if err := json.Unmarshal(b, &d); err != nil {
			return nil, fmt.Errorf("%s: %w", doneFile, err)
		}
		g := abGate{dir: filepath.Dir(doneFile), name: d.Name, workload: d.Workload, change: d.Change, args: d.Args,
			scenario: d.Scenario, wall: time.Duration(d.WallS) * time.Second}
		f, err := os.Open(filepath.Join(g.dir, "verdict.json"))
		if err != nil {
			return nil, err
		}
		g.file, err = report.DecodeGateVerdict(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", g.dir, err)
		}
		if r, err := result.ReadFile(filepath.Join(g.dir, "base", "round-1", "result.json")); err == nil {
			g.started = r.StartedAt
			g.machine = r.Machine.CPUModel
		}
		for _, side := range g.file.Sides { // the later side's last round: in ABBA either ends the gate
			last := filepath.Join(g.dir, side.Name, fmt.Sprintf("round-%d", side.Rounds), "result.json")
			if r, err := result.ReadFile(last); err == nil && r.FinishedAt.After(g.finished) {
				g.finished = r.FinishedAt
			}
		}
		out = append(out, g)
	}
	return out, nil
}

// caught says the changed workload has a latency regression, and the comparison to show.
func (g abGate) caught() (bool, *verdict.Comparison) {
	var shown *verdict.Comparison
	for _, wv := range g.file.Workloads {
		if wv.Workload != g.workload {
			continue
		}
		for i := range wv.Comparisons {
			c := &wv.Comparisons[i]
			if c.Metric == "error_rate" {
				continue
			}
			if c.Value == verdict.Regression {
				return true, c
			}
			if shown == nil {
				shown = c
			}
		}
	}
	return false, shown
}

func writeAB(w io.Writer, gates []abGate) {
	if len(gates) == 0 {
		fmt.Fprintf(w, "\n## Real A/B gates\n\nNone kept yet (bench/gatequality/ab.sh).\n")
		return
	}
	fmt.Fprintf(w, "\n## Real A/B gates\n\n")
	fmt.Fprintf(w, "| A/B | gate | change | flags | verdict | %s | rounds | wall time |\n|---|---|---|---|---|---|---|---|\n", "changed workload's comparison")
	caught := map[string]int{}
	total := map[string]int{}
	walls := map[string][]time.Duration{}
	var order []string
	for _, g := range gates {
		ok, c := g.caught()
		if total[g.name] == 0 {
			order = append(order, g.name)
		}
		total[g.name]++
		if ok {
			caught[g.name]++
		}
		walls[g.name] = append(walls[g.name], g.wall)
		cmp := "–"
		if c != nil {
			cmp = fmt.Sprintf("%s/%s %s %s (%s) %s", c.Phase, c.Workload, c.Metric, report.SignedPercent(c.Ratio),
				report.CIText(*c), c.Value)
		}
		fmt.Fprintf(w, "| %s | %s | %s of %s | `%s` | %s | %s | %d | %s |\n", g.name, filepath.Base(g.dir), g.change, g.workload,
			g.args, g.file.Value, cmp, g.file.Rounds, g.wall.Round(time.Second))
	}
	fmt.Fprintln(w)
	for _, n := range order {
		fmt.Fprintf(w, "- %s: caught (the changed workload called a regression) in %d of %d gates; wall time median %s, longest %s.%s\n",
			n, caught[n], total[n], median(walls[n]).Round(time.Second), longest(walls[n]).Round(time.Second), provenance(gates, n))
	}
	untrusted, leftOut, leftRounds, rounds := 0, 0, 0, 0
	for _, g := range gates {
		if len(g.file.UntrustedRounds) > 0 {
			untrusted++
		}
		if len(g.file.LeftOutRounds) > 0 {
			leftOut++
		}
		leftRounds += len(g.file.LeftOutRounds)
		rounds += g.file.Rounds
	}
	if untrusted > 0 {
		fmt.Fprintf(w, "- %d of %d gates had rounds whose generator fell behind its schedule, kept and untrusted (no comparison is decided on them).\n", untrusted, len(gates))
	}
	if leftOut > 0 {
		fmt.Fprintf(w, "- %d of %d gates left out duet rounds behind their schedule for a cause both sides shared: %d of their %d rounds in all.\n", leftOut, len(gates), leftRounds, rounds)
	}
}

// provenance says when, on what processor and at which commits name's gates ran.
func provenance(gates []abGate, name string) string {
	var first, last time.Time
	machines, commits := map[string]bool{}, map[string]bool{}
	for _, g := range gates {
		if g.name != name {
			continue
		}
		if !g.started.IsZero() {
			if first.IsZero() || g.started.Before(first) {
				first = g.started
			}
		}
		if g.finished.After(last) {
			last = g.finished
		}
		if g.machine != "" {
			machines[g.machine] = true
		}
		if len(g.file.Sides) == 2 && g.file.Sides[0].Commit != "" && g.file.Sides[1].Commit != "" {
			commits[short(g.file.Sides[0].Commit)+" → "+short(g.file.Sides[1].Commit)] = true
		}
	}
	var parts []string
	if !first.IsZero() && !last.IsZero() {
		end := last.UTC().Format("15:04")
		if last.UTC().Format("2006-01-02") != first.UTC().Format("2006-01-02") {
			end = last.UTC().Format("2006-01-02 15:04")
		}
		parts = append(parts, "rounds run "+first.UTC().Format("2006-01-02 15:04")+"–"+end+" UTC")
	}
	if len(machines) > 0 {
		parts = append(parts, "on "+strings.Join(slices.Sorted(maps.Keys(machines)), ", "))
	}
	if len(commits) > 0 {
		parts = append(parts, "base → head "+strings.Join(slices.Sorted(maps.Keys(commits)), ", "))
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.ToUpper(parts[0][:1]) + parts[0][1:] + strings.Join(append([]string{""}, parts[1:]...), ", ") + "."
}

func short(commit string) string { return commit[:min(len(commit), 7)] }

func longest(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

func rewriteAB(out, dir string) error {
	gates, err := loadAB(dir)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return err
	}
	s := string(b)
	i := strings.Index(s, "\n## Real A/B gates\n")
	if i < 0 {
		return fmt.Errorf("%s: no \"## Real A/B gates\" section to rewrite (run without -ab-only first)", out)
	}
	rest := s[i+1:]
	end := len(s)
	if j := strings.Index(rest, "\n## "); j >= 0 {
		end = i + 1 + j
	}
	var sb strings.Builder
	writeAB(&sb, gates)
	return os.WriteFile(out, []byte(s[:i]+sb.String()+s[end:]), 0o644)
}
