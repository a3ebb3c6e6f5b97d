package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/loadgate/loadgate/gate/rounds"
)

// Exit codes (design.md).
const (
	exitPass     = 0
	exitFail     = 1
	exitUsage    = 2
	exitUnusable = 3
)

// usageErr is a refusal or a usage error (exit 2).
func usageErr(format string, a ...any) error { return rounds.Usagef(format, a...) }

// orUnusable is err marked unusable (exit 3) unless it carries a kind
// already.
func orUnusable(err error) error {
	if err != nil && rounds.KindOf(err) == nil {
		return unusable(err)
	}
	return err
}

// unusable marks err as unusable (exit 3).
func unusable(err error) error { return rounds.Unusable(err) }

//go:embed help/loadgate.txt
var usage string

var version = "dev"

// run is the whole program but for the process: args without the program name.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return shown(rounds.Usagef("no command"))
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "run":
		return runCmd(ctx, rest, stdout, stderr)
	case "report":
		return reportCmd(ctx, rest, stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, "loadgate", version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	case "up":
		return upCmd(ctx, rest, stdout, stderr)
	case "down":
		return downCmd(ctx, rest, stdout, stderr)
	case "gate":
		return gateCmd(ctx, rest, stdout, stderr)
	case "compare":
		return compareCmd(ctx, rest, stdout, stderr)
	case "calibrate":
		return calibrateCmd(ctx, rest, stdout, stderr)
	case "baseline":
		return baselineCmd(ctx, rest, stdout, stderr)
	case "comment":
		return commentCmd(ctx, rest, stdout, stderr)
	case "sweep":
		return sweepCmd(ctx, rest, stdout, stderr)
	case "soak":
		return soakCmd(ctx, rest, stdout, stderr)
	case "stub":
		return stubCmd(ctx, rest, stdout, stderr)
	default:
		return usageErr("unknown command %q\n\n%s", cmd, strings.TrimRight(usage, "\n"))
	}
}

// parseFlags parses a command's flags; -h prints help and returns errHelp.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return shown(rounds.Usage(err))
	}
	if fs.NArg() > 0 && fs.Name() != "report" {
		return &unexpectedArgError{rounds.Usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))}
	}
	return nil
}

// unexpectedArgError: parseFlags found positional arguments (compare takes
// two).
type unexpectedArgError struct{ error }

func (e *unexpectedArgError) Unwrap() error { return e.error }

func isUnexpectedArg(err error) bool {
	var u *unexpectedArgError
	return errors.As(err, &u)
}
