package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
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
	case "history":
		return historyCmd(ctx, rest, stdout, stderr)
	default:
		return usageErr("unknown command %q\n\n%s", cmd, strings.TrimRight(usage, "\n"))
	}
}

// printHelp writes a command's help as a user reads it first: the usage
// and the examples, the flags, then the prose.
func printHelp(w io.Writer, text string, fs *flag.FlagSet) {
	var head, examples, prose []string
	for i, p := range strings.Split(strings.TrimSpace(text), "\n\n") {
		switch {
		case i == 0:
			head = append(head, p)
		case strings.HasPrefix(p, "Examples:"):
			examples = append(examples, p)
		case strings.TrimSpace(p) == "Flags:":
		default:
			prose = append(prose, strings.TrimSuffix(p, "\nFlags:"))
		}
	}
	fmt.Fprintln(w, strings.Join(append(head, examples...), "\n\n"))
	fmt.Fprintln(w, "\nFlags:")
	fs.PrintDefaults()
	if len(prose) > 0 {
		fmt.Fprintln(w, "\n"+strings.Join(prose, "\n\n"))
	}
}

// parseFlags parses a command's flags; -h prints help and returns errHelp.
// Flags may come before or after positional arguments ("--" ends the
// flags); fs.Args() holds the positional ones.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	fs.SetOutput(stderr)
	if b, err := helpFiles.ReadFile("help/" + strings.Fields(fs.Name())[0] + ".txt"); err == nil {
		fs.Usage = func() { printHelp(stderr, string(b), fs) }
	}
	if err := parseInterleaved(fs, args); err != nil {
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

// parseInterleaved parses flags wherever they stand among args, leaving
// the positional arguments, in order, as fs.Args().
func parseInterleaved(fs *flag.FlagSet, args []string) error {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			pos = append(pos, rest...) // after "--": all positional
			break
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
	return fs.Parse(append([]string{"--"}, pos...))
}

// unexpectedArgError: parseFlags found positional arguments (compare takes
// two).
type unexpectedArgError struct{ error }

func (e *unexpectedArgError) Unwrap() error { return e.error }

func isUnexpectedArg(err error) bool {
	var u *unexpectedArgError
	return errors.As(err, &u)
}

// toleranceFlag is a tolerance flag read by verdict.ParseTolerance: "10%"
// or 0.10, as the Action's input takes it.
type toleranceFlag struct{ v *float64 }

func tolerance(v *float64, def float64) toleranceFlag { *v = def; return toleranceFlag{v} }

func (f toleranceFlag) String() string {
	if f.v == nil {
		return ""
	}
	return strconv.FormatFloat(*f.v*100, 'f', -1, 64) + "%"
}

func (f toleranceFlag) Set(s string) error {
	t, err := verdict.ParseTolerance(s)
	if err != nil {
		return err
	}
	*f.v = t
	return nil
}
