package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

var baselineName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// baselinePath is baselines/<scenario>/<name>.json under root.
func baselinePath(root, scenarioName, name string) string {
	return filepath.Join(root, "baselines", scenarioName, name+".json")
}

// loadBaseline reads baseline NAME of the scenario at rel (relative to
// root); the scenario's name is read from the baseline directory listing.
func loadBaseline(root, name, _ string) (*result.Result, error) {
	if !baselineName.MatchString(name) {
		return nil, fmt.Errorf("baseline name %q: use letters, digits, '.', '_' and '-'", name)
	}
	matches, _ := filepath.Glob(filepath.Join(root, "baselines", "*", name+".json"))
	switch len(matches) {
	case 0:
		return nil, fmt.Errorf("no baseline %q under %s (save one with: loadgate baseline save --result RESULT.json --name %s)", name, filepath.Join(root, "baselines"), name)
	case 1:
	default:
		return nil, fmt.Errorf("baseline %q exists for several scenarios: %s", name, strings.Join(matches, ", "))
	}
	return result.ReadFile(matches[0])
}

// baselineNotes warns where the baseline was measured elsewhere.
func baselineNotes(b *result.Result, head []*result.Result) []string {
	notes := []string{"a stored baseline is a fixed reference: the interval reflects head's round-to-round noise only, not base's"}
	if len(head) == 0 {
		return notes
	}
	h := head[0]
	if b.Machine.Host != h.Machine.Host || b.Machine.CPUs != h.Machine.CPUs || b.Machine.Kernel != h.Machine.Kernel {
		notes = append(notes, fmt.Sprintf("WARNING: the baseline was measured on another machine (%s, %d cpus, kernel %s) than head (%s, %d cpus, kernel %s)",
			b.Machine.Host, b.Machine.CPUs, b.Machine.Kernel, h.Machine.Host, h.Machine.CPUs, h.Machine.Kernel))
	}
	if b.Topology.StackCPUs != h.Topology.StackCPUs || b.Topology.LoadCPUs != h.Topology.LoadCPUs || b.Topology.Pinned != h.Topology.Pinned {
		notes = append(notes, fmt.Sprintf("WARNING: the baseline's topology differs (stack cpus %q, load cpus %q, pinned %v) from head's (%q, %q, %v)",
			b.Topology.StackCPUs, b.Topology.LoadCPUs, b.Topology.Pinned, h.Topology.StackCPUs, h.Topology.LoadCPUs, h.Topology.Pinned))
	}
	return notes
}

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
	if !baselineName.MatchString(*name) {
		return usageErr("baseline save: --name %q: use letters, digits, '.', '_' and '-'", *name)
	}
	var merged *result.Result
	for _, p := range results {
		r, err := result.ReadFile(p)
		if err != nil {
			return usageErr("baseline save: %w", err)
		}
		if !r.Usable {
			return usageErr("baseline save: %s is unusable (%s): it cannot be a baseline", p, strings.Join(r.Unusable, "; "))
		}
		if merged == nil {
			merged = r
		} else if merged, err = result.Merge(merged, r); err != nil {
			return usageErr("baseline save: %w", err)
		}
	}
	if *commit != "" {
		merged.Commit = *commit
	} else if merged.Commit == "" {
		if c, err := git(ctx, *dir, "rev-parse", "HEAD"); err == nil {
			merged.Commit = c
		}
	}
	path := baselinePath(*dir, merged.Scenario.Name, *name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return usageErr("baseline save: %w", err)
	}
	if err := merged.WriteFile(path); err != nil {
		return usageErr("baseline save: %w", err)
	}
	fmt.Fprintf(stdout, "saved baseline %s (scenario %s %s, commit %s, %s) to %s\n", *name, merged.Scenario.Name,
		shortHash(merged.Scenario.Hash), short(merged.Commit), merged.Machine.Host, path)
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

func compareCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
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
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return &exitError{code: exitUsage, err: err, quiet: true}
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
	v, err := verdict.Gate(b, h, verdict.CompareOptions{Tolerance: *tol, Confidence: *conf, Percentile: *pct})
	if err != nil {
		return usageErr("compare: %w", err)
	}
	gr := report.GateReport{
		Base:  report.GateSide{Name: "base", Ref: strings.Join(bases, ", "), Commit: b[0].Commit, Results: b},
		Head:  report.GateSide{Name: "head", Ref: strings.Join(heads, ", "), Commit: h[0].Commit, Results: h},
		Order: "as given", Verdict: v,
	}
	if *out != "" {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return usageErr("compare: %w", err)
		}
		return writeGateReports(*out, gr, stdout, stderr)
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
	if code := v.ExitCode(); code != 0 {
		return &exitError{code: code, err: fmt.Errorf("verdict: %s", v.Value)}
	}
	return nil
}
