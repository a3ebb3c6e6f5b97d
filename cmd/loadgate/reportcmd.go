package main

import (
	"context"
	"flag"
	"io"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

func reportCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	format := fs.String("format", "text", "text, markdown or json (the verdict)")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErr("report: want exactly one result.json, got %d arguments", fs.NArg())
	}
	res, err := result.ReadFile(fs.Arg(0))
	if err != nil {
		return usageErr("report: %w", err)
	}
	render, ok := report.RunFormats[*format]
	if !ok {
		return usageErr("report: --format must be text, markdown or json, not %q", *format)
	}
	v := verdict.Thresholds(res)
	if err := render(stdout, res, v); err != nil {
		return err
	}
	return verdictExit(v)
}
