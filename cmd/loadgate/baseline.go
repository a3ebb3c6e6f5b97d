package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/verdict"
)

const baselineHelp = `Usage: loadgate baseline save --result RESULT.json --name NAME [--dir DIR]

Stores a result as baselines/<scenario>/<name>.json (with its machine,
topology, scenario hash and commit), for 'loadgate gate --against
baseline:NAME'. Several rounds' results are merged exactly first.

Examples:
  loadgate baseline save --result out/demo/result.json --name main
  loadgate baseline save --result out/gate/head/round-1/result.json --result out/gate/head/round-2/result.json --name release-1.4

Flags:
`

func baselineCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprint(stderr, baselineHelp)
		return errHelp
	}
	if len(args) == 0 || args[0] != "save" {
		fmt.Fprint(stderr, baselineHelp)
		return usageErr("baseline: the only subcommand is save")
	}
	fs := flag.NewFlagSet("baseline save", flag.ContinueOnError)
	var results multiFlag
	fs.Var(&results, "result", "a result.json `file` (repeatable: rounds are merged)")
	name := fs.String("name", "", "the baseline's `name`")
	dir := fs.String("dir", ".", "the repository `root` that holds baselines/")
	commit := fs.String("commit", "", "the commit the result measured (default: the result's, else git HEAD)")
	fs.Usage = func() { fmt.Fprint(stderr, baselineHelp); fs.PrintDefaults() }
	if err := parseFlags(fs, args[1:], stderr); err != nil {
		return err
	}
	if len(results) == 0 || *name == "" {
		return usageErr("baseline save: --result and --name are required")
	}
	if !scenario.ValidName(*name) {
		return usageErr("baseline save: --name %q: use %s", clipName(*name), scenario.NameRule)
	}
	var merged *result.Result
	for _, p := range results {
		r, err := result.ReadFile(p)
		if err != nil {
			return usageErr("baseline save: %w", err)
		}
		// Checked exactly as compare checks it: a broken result is unusable
		// there (exit 3), so it is never stored as a baseline.
		if why := rounds.BrokenResult(r); why != "" {
			return unusable(fmt.Errorf("baseline save: %s cannot be a baseline: %s", p, why))
		}
		if !scenario.ValidName(r.Scenario.Name) {
			return usageErr("baseline save: %s: scenario name %q is not a valid scenario name (%s): refused", p, clipName(r.Scenario.Name), scenario.NameRule)
		}
		if merged == nil {
			merged = r
		} else if merged, err = result.Merge(merged, r); err != nil {
			return usageErr("baseline save: %w", err)
		}
	}
	if why := rounds.BrokenResult(merged); why != "" {
		return unusable(fmt.Errorf("baseline save: the merged rounds cannot be a baseline: %s", why))
	}
	if *commit != "" {
		merged.Commit = *commit
	} else if merged.Commit == "" {
		if c, err := rounds.Git(ctx, *dir, "rev-parse", "HEAD"); err == nil {
			merged.Commit = c
		}
	}
	path, err := rounds.BaselinePath(*dir, merged.Scenario.Name, *name)
	if err != nil {
		return usageErr("baseline save: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return usageErr("baseline save: %w", err)
	}
	if err := rounds.InsideDir(rounds.BaselinesDir(*dir), path); err != nil { // now that the directories exist
		return usageErr("baseline save: %w", err)
	}
	if err := merged.WriteFile(path); err != nil {
		return usageErr("baseline save: %w", err)
	}
	fmt.Fprintf(stdout, "saved baseline %s (scenario %s %s, commit %s, %s) to %s\n", *name, merged.Scenario.Name,
		report.ShortHash(merged.Scenario.Hash), report.ShortHash(merged.Commit), merged.Machine.Host, path)
	return nil
}

const compareHelp = `Usage: loadgate compare [flags] BASE.json HEAD.json
       loadgate compare [flags] --base B1.json --base B2.json --head H1.json --head H2.json

Compares result files (paired rounds, in order) per workload with the gate's
statistics. Results of different scenario hashes are never compared (exit 2).
One round per side is always inconclusive for latency: the rounds are what
estimate the noise.

Examples:
  loadgate compare base/result.json head/result.json
  loadgate compare --tolerance 0.05 --base b1.json --base b2.json --base b3.json --head h1.json --head h2.json --head h3.json

Flags:
`

func compareCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	var bases, heads multiFlag
	fs.Var(&bases, "base", "a base round's result.json `file` (repeatable)")
	fs.Var(&heads, "head", "a head round's result.json `file` (repeatable)")
	tol := fs.Float64("tolerance", verdict.DefaultTolerance, "relative change below which latency is 'no change'")
	conf := fs.Float64("confidence", verdict.DefaultConfidence, "confidence of every interval")
	pct := fs.String("percentile", "", "judged latency percentile (default: the threshold percentiles, else p95)")
	out := fs.String("out", "", "also write report.md, verdict.json and latency.svg to this `dir`")
	format := fs.String("format", "text", "stdout: text, markdown or json")
	fs.Usage = func() { fmt.Fprint(stderr, compareHelp); fs.PrintDefaults() }
	if err := parseFlags(fs, args, stderr); err != nil && !isUnexpectedArg(err) {
		return err
	}
	if fs.NArg() == 2 && len(bases) == 0 && len(heads) == 0 {
		bases, heads = multiFlag{fs.Arg(0)}, multiFlag{fs.Arg(1)}
	} else if fs.NArg() != 0 || len(bases) == 0 || len(heads) == 0 {
		return usageErr("compare: give BASE.json HEAD.json, or --base and --head files")
	}
	read := func(paths []string) ([]*result.Result, error) {
		var rs []*result.Result
		for _, p := range paths {
			r, err := result.ReadFile(p)
			if err != nil {
				return nil, err
			}
			rs = append(rs, r)
		}
		return rs, nil
	}
	b, err := read(bases)
	if err != nil {
		return usageErr("compare: %w", err)
	}
	h, err := read(heads)
	if err != nil {
		return usageErr("compare: %w", err)
	}
	noise, err := noiseFor(ctx, b[0].Scenario.Name, stderr)
	if err != nil {
		return usageErr("compare: %w", err)
	}
	v, err := verdict.Gate(b, h, verdict.CompareOptions{Tolerance: *tol, Confidence: *conf, Percentile: *pct, Noise: noise})
	if err != nil {
		return usageErr("compare: %w", err)
	}
	gr := report.GateReport{
		Base:    report.GateSide{Name: "base", Ref: strings.Join(bases, ", "), Commit: b[0].Commit, Results: b},
		Head:    report.GateSide{Name: "head", Ref: strings.Join(heads, ", "), Commit: h[0].Commit, Results: h},
		Verdict: v, // the order of rounds is read from the results (report.GateReport.order)
	}
	if *out != "" {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return usageErr("compare: %w", err)
		}
		if _, err := writeGateReports(*out, gr, stdout, stderr); err != nil {
			return err
		}
		return verdictExit(v)
	}
	switch *format {
	case "text":
		err = report.CompareText(stdout, gr)
	case "markdown", "md":
		err = report.CompareMarkdown(stdout, gr)
	case "json":
		err = report.CompareJSON(stdout, gr)
	default:
		return usageErr("compare: --format must be text, markdown or json")
	}
	if err != nil {
		return err
	}
	return verdictExit(v)
}

// clipName shortens a hostile name for an error message.
func clipName(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// noiseFor reads the calibration baselines/<scenario>/noise.json of the
// repository the command runs in (the current directory outside one), nil
// when there is none; a file that does not decode is an error naming it.
func noiseFor(ctx context.Context, scenarioName string, stderr io.Writer) (*verdict.Noise, error) {
	root := "."
	if top, err := rounds.Git(ctx, ".", "rev-parse", "--show-toplevel"); err == nil && strings.TrimSpace(top) != "" {
		root = strings.TrimSpace(top)
	}
	if !scenario.ValidName(scenarioName) {
		return nil, nil // no directory of it under baselines/
	}
	n, p, err := rounds.LoadNoise(root, scenarioName)
	if err != nil {
		return nil, fmt.Errorf("noise calibration: %w", err)
	}
	if n != nil {
		fmt.Fprintf(stderr, "loadgate: noise calibration %s (%d pairs)\n", p, n.Pairs)
	}
	return n, nil
}
