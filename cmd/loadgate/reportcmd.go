package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

const reportHelp = `Usage: loadgate report [--format text|markdown|json] RESULT.json

Renders a result again (the verdict is recomputed from the thresholds the
result carries) and exits with the verdict's code.

Examples:
  loadgate report out/demo/result.json
  loadgate report --format markdown out/demo/result.json > report.md

Flags:
`

func reportCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	format := fs.String("format", "text", "text, markdown or json (the verdict)")
	fs.Usage = func() { fmt.Fprint(stderr, reportHelp); fs.PrintDefaults() }
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
