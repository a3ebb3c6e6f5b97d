package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/loadgate/loadgate/gate/history"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/session"
	"github.com/loadgate/loadgate/gate/verdict"
)

// HistoryJSON writes a history's analysis as indented JSON.
func HistoryJSON(w io.Writer, a history.Analysis) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(a)
}

// HistorySVGName is series k's SVG file: history-<phase>-<workload>-<metric>.svg.
func HistorySVGName(k history.Key) string {
	return "history-" + unsafeName.ReplaceAllString(k.Phase+"-"+k.Workload+"-"+k.Metric, "_") + ".svg"
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// WriteHistory writes history.md, history.json and one SVG per series to out.
func WriteHistory(out string, a history.Analysis, log io.Writer) error {
	files := []namedRender{
		{"history.md", func(w io.Writer) error { return HistoryMarkdown(w, a) }},
		{"history.json", func(w io.Writer) error { return HistoryJSON(w, a) }},
	}
	for _, s := range a.Series {
		files = append(files, namedRender{HistorySVGName(s.Key), func(w io.Writer) error { return HistorySVG(w, a, s.Key) }})
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return session.Unusable(err)
	}
	if err := writeFiles(out, files); err != nil {
		return err
	}
	fmt.Fprintf(log, "loadgate: history in %s (history.md, history.json, %d SVG)\n", out, len(a.Series))
	return nil
}

// ReadGate reads what history.FromGate needs of a WriteGate directory.
func ReadGate(dir string) (rounds.Outcome, error) {
	var o rounds.Outcome
	f, err := os.Open(filepath.Join(dir, "verdict.json"))
	if err != nil {
		return o, fmt.Errorf("report: gate results %s: %w", dir, err)
	}
	defer f.Close()
	v, err := DecodeGateVerdict(f)
	if err != nil {
		return o, fmt.Errorf("report: %s: %w", filepath.Join(dir, "verdict.json"), err)
	}
	o.Scenario = result.Scenario{Name: v.Scenario.Name, Hash: v.Scenario.Hash}
	o.Rounds = v.Rounds
	o.Verdict = verdict.Verdict{Value: v.Value, Workloads: v.Workloads, Tolerance: v.Tolerance, Confidence: v.Confidence, Percentile: v.Percentile}
	for _, s := range v.Sides {
		side := rounds.SideResults{Name: s.Name, Ref: s.Ref, Commit: s.Commit}
		switch s.Name {
		case "base":
			o.Base = side
		case "head":
			o.Head = side
		}
	}
	if o.Head.Name == "" {
		return o, fmt.Errorf("report: %s: no head side", filepath.Join(dir, "verdict.json"))
	}
	if o.Head.Results, err = readRounds(filepath.Join(dir, "head")); err != nil {
		return o, err
	}
	return o, nil
}

func readRounds(dir string) ([]*result.Result, error) {
	ds, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("report: gate rounds: %w", err)
	}
	var ns []int
	for _, d := range ds {
		if n, err := strconv.Atoi(strings.TrimPrefix(d.Name(), "round-")); d.IsDir() && err == nil && strings.HasPrefix(d.Name(), "round-") {
			ns = append(ns, n)
		}
	}
	slices.Sort(ns)
	var rs []*result.Result
	for _, n := range ns {
		p := filepath.Join(dir, fmt.Sprintf("round-%d", n), "result.json")
		r, err := result.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue // a round that wrote nothing (interrupted): verdict.json says what it counted
		}
		if err != nil {
			return nil, fmt.Errorf("report: %s: %w", p, err)
		}
		rs = append(rs, r)
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("report: %s: no round-<i>/result.json", dir)
	}
	return rs, nil
}
