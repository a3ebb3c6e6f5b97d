package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/history"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/verdict"
)

// historyCmd is `loadgate history` (render), `history record` and
// `history previous`.
func historyCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "record":
			return historyRecordCmd(ctx, args[1:], stdout, stderr)
		case "previous":
			return historyPreviousCmd(ctx, args[1:], stdout, stderr)
		}
	}
	fs, s := historyFlags("history", stderr)
	scenario := fs.String("scenario", "", "the scenario's `name` (its name: key, the data branch's directory)")
	var opt history.Options
	fs.StringVar(&opt.Since, "since", "", "measure the cumulative change from this entry's `commit` (e.g. the last release tag's; default the first entry)")
	fs.TextVar((*verdict.Tolerance)(&opt.Tolerance), "tolerance", verdict.Tolerance(history.DefaultTolerance), "cumulative tolerance since --since (15% or 0.15)")
	out := fs.String("out", "loadgate-out/history", "write history.md, history.json and one SVG per series to this `dir`")
	format := fs.String("format", "markdown", "stdout: markdown or json")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if *scenario == "" {
		return usageErr("history: --scenario NAME is required")
	}
	if *format != "markdown" && *format != "json" {
		return usageErr("history: --format must be markdown or json, not %q", *format)
	}
	a, err := history.Read(ctx, s, *scenario, opt)
	if err != nil {
		return usageErr("%w", err)
	}
	if err := report.WriteHistory(*out, a, stderr); err != nil {
		return err
	}
	if *format == "json" {
		err = report.HistoryJSON(stdout, a)
	} else {
		err = report.HistoryMarkdown(stdout, a)
	}
	if err != nil {
		return err
	}
	return verdictExit(verdict.Verdict{Value: a.Value()})
}

// historyRecordCmd appends a push's gate to the data branch.
func historyRecordCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, s := historyFlags("history record", stderr)
	from := fs.String("from", "", "the gate's results `dir` (--out, or the Action's results-dir)")
	ref := fs.String("ref", os.Getenv("GITHUB_REF_NAME"), "the `branch` pushed (default $GITHUB_REF_NAME)")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if err := action.HistoryWritable(os.Getenv("GITHUB_EVENT_NAME")); err != nil {
		return usageErr("history record: %w", err)
	}
	if *from == "" || *ref == "" {
		return usageErr("history record: --from DIR and --ref BRANCH are required")
	}
	o, err := report.ReadGate(*from)
	if err != nil {
		return usageErr("history record: %w", err)
	}
	path, err := history.Record(ctx, s, o, *ref, time.Now())
	if err != nil {
		return usageErr("%w", err)
	}
	fmt.Fprintf(stdout, "recorded %s on %s\n", path, s.Branch)
	return nil
}

// historyPreviousCmd prints the newest entry's commit: the next push's
// gate base. Nothing on an empty history.
func historyPreviousCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, s := historyFlags("history previous", stderr)
	scenario := fs.String("scenario", "", "the scenario's `name`")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if *scenario == "" {
		return usageErr("history previous: --scenario NAME is required")
	}
	e, ok, err := history.Previous(ctx, s, *scenario)
	if err != nil {
		return usageErr("%w", err)
	}
	if ok {
		fmt.Fprintln(stdout, e.Commit)
	}
	return nil
}

// historyFlags is a history command's flag set with the data branch's
// flags, and the Store they set.
func historyFlags(name string, stderr io.Writer) (*flag.FlagSet, *history.Store) {
	s := &history.Store{}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.StringVar(&s.Dir, "dir", ".", "a clone of the repository (its data branch is fetched, never checked out)")
	fs.StringVar(&s.Remote, "remote", history.DefaultRemote, "the `remote` holding the data branch")
	fs.StringVar(&s.Branch, "branch", history.DefaultBranch, "the data `branch`")
	return fs, s
}
