package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/loadgate/loadgate/gate/baseline"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/cliflag"
)

func baselineCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "save" {
		fmt.Fprint(stderr, helpText("baseline"))
		if len(args) > 0 && slices.Contains([]string{"-h", "-help", "--help", "help"}, args[0]) {
			return errHelp
		}
		return usageErr("baseline: the only subcommand is save")
	}
	fs := flag.NewFlagSet("baseline save", flag.ContinueOnError)
	var results cliflag.Strings
	fs.Var(&results, "result", "a result.json `file` (repeatable: rounds are merged)")
	name := fs.String("name", "", "the baseline's `name`")
	dir := fs.String("dir", ".", "the repository `root` that holds baselines/")
	commit := fs.String("commit", "", "the commit the result measured (default: the result's, else git HEAD)")
	if err := parseFlags(fs, args[1:], stderr); err != nil {
		return err
	}
	path, merged, err := baseline.Save(ctx, baseline.SaveOptions{Root: *dir, Name: *name, Results: results, Commit: *commit})
	if err != nil {
		return fmt.Errorf("baseline save: %w", err)
	}
	fmt.Fprintf(stdout, "saved baseline %s (scenario %s %s, commit %s, %s) to %s\n", *name, merged.Scenario.Name,
		result.ShortHash(merged.Scenario.Hash), result.ShortHash(merged.Commit), merged.Machine.Host, path)
	return nil
}

func compareCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	var bases, heads cliflag.Strings
	fs.Var(&bases, "base", "a base round's result.json `file` (repeatable)")
	fs.Var(&heads, "head", "a head round's result.json `file` (repeatable)")
	tol := new(float64)
	fs.TextVar((*verdict.Tolerance)(tol), "tolerance", verdict.Tolerance(verdict.DefaultTolerance), "relative change below which latency is 'no change' (10% or 0.10)")
	conf := fs.Float64("confidence", verdict.DefaultConfidence, "confidence of every interval")
	pct := fs.String("percentile", "", "judged latency percentile (default: the threshold percentiles, else p95)")
	out := fs.String("out", "", "also write report.md, verdict.json and latency.svg to this `dir`")
	format := fs.String("format", "text", "stdout: text, markdown or json")
	if err := parseFlags(fs, args, stderr); err != nil && !isUnexpectedArg(err) {
		return err
	} else if err != nil {
		if err := dry("flags", fs); err != nil { // BASE.json HEAD.json: parseFlags stopped short of it
			return err
		}
	}
	if fs.NArg() == 2 && len(bases) == 0 && len(heads) == 0 {
		bases, heads = cliflag.Strings{fs.Arg(0)}, cliflag.Strings{fs.Arg(1)}
	} else if fs.NArg() != 0 || len(bases) == 0 || len(heads) == 0 {
		return usageErr("compare: give BASE.json HEAD.json, or --base and --head files")
	}
	render, ok := report.CompareFormats[*format]
	if !ok {
		return usageErr("compare: --format must be text, markdown or json, not %q", *format)
	}
	gr, err := baseline.Compare(ctx, baseline.CompareOptions{Bases: bases, Heads: heads,
		Compare: verdict.CompareOptions{Tolerance: *tol, Confidence: *conf, Percentile: *pct}, Log: stderr})
	if err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	if *out == "" {
		err = render(stdout, gr)
	} else if err = os.MkdirAll(*out, 0o755); err != nil {
		return usageErr("compare: %w", err)
	} else {
		_, err = report.WriteGate(*out, gr, stdout, stderr)
	}
	if err != nil {
		return err
	}
	return verdictExit(gr.Verdict)
}
