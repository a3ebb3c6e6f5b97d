package main

import (
	"context"
	_ "embed"
	"flag"
	"fmt"
	"io"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

func reportCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	format := fs.String("format", "text", "text, markdown or json (the verdict)")
	fs.Usage = func() { fmt.Fprint(stderr, helpText("report")); fs.PrintDefaults() }
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
	v := verdict.Thresholds(res)
	switch *format {
	case "text":
		err = report.Text(stdout, res, v)
	case "markdown", "md":
		err = report.Markdown(stdout, res, v)
	case "json":
		err = report.JSON(stdout, v)
	default:
		return usageErr("report: --format must be text, markdown or json, not %q", *format)
	}
	if err != nil {
		return err
	}
	return verdictExit(v)
}
