package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/internal/cliflag"
)

// Exit codes (design.md).
const (
	exitPass     = 0
	exitFail     = 1
	exitUsage    = 2
	exitUnusable = 3
)

func usageErr(format string, a ...any) error { return rounds.Usagef(format, a...) }

// orUnusable is err marked unusable (exit 3) unless it has a kind already.
func orUnusable(err error) error {
	if err != nil && rounds.KindOf(err) == nil {
		return unusable(err)
	}
	return err
}

func unusable(err error) error { return rounds.Unusable(err) }

// stamped is set by the release build (scripts/release.sh: -ldflags -X
// main.stamped=vX.Y.Z). The linker sets only a variable that no function
// call initializes, so the build info's version is read apart, in version.
var stamped string

// version is the release's stamp, else (`go install ...@vX.Y.Z`) the main
// module's version from the build info, else "dev".
var version = moduleVersion(stamped, "dev")

// moduleVersion is stamp when set, else the main module's version, else def.
func moduleVersion(stamp, def string) string {
	if stamp != "" {
		return stamp
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return def
}

var commands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) error{
	"run": runCmd, "report": reportCmd, "up": upCmd, "down": downCmd, "gate": gateCmd, "compare": compareCmd,
	"calibrate": calibrateCmd, "baseline": baselineCmd, "comment": commentCmd, "sweep": sweepCmd, "soak": soakCmd, "stub": stubCmd, "history": historyCmd, "merge": mergeCmd, "check": checkCmd,
	"accept": acceptCmd, "ondemand": ondemandCmd, "bisect": bisectCmd,
}

// run is the whole program but for the process: args without the program name.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	usage := helpText("loadgate")
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return shown(rounds.Usagef("no command"))
	}
	switch cmd := args[0]; cmd {
	case "version", "--version":
		fmt.Fprintln(stdout, "loadgate", version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		if c, ok := commands[cmd]; ok {
			return c(ctx, args[1:], stdout, stderr)
		}
		return usageErr("unknown command %q\n\n%s", cmd, strings.TrimRight(usage, "\n"))
	}
}

// parseFlags parses flags before or after positional arguments; -h prints help (errHelp).
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	fs.SetOutput(stderr)
	help := func() { fs.PrintDefaults() }
	if b, err := helpFiles.ReadFile("help/" + strings.Fields(fs.Name())[0] + ".txt"); err == nil {
		help = func() { cliflag.PrintHelp(stderr, string(b), fs) }
	}
	// flag prints its error and calls Usage on every failure: one line of ours instead, help only for -h.
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err := cliflag.Parse(fs, args)
	fs.SetOutput(stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			help()
			return errHelp
		}
		return rounds.Usagef("%s: %s (see loadgate %s -h)", fs.Name(), cliflag.Dashes(err), fs.Name())
	}
	if fs.NArg() > 0 && fs.Name() != "report" && fs.Name() != "merge" {
		return &unexpectedArgError{rounds.Usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))}
	}
	return dry("flags", fs)
}

// dryRun is set only by the test of the documented command lines
// (docs_test.go): a command ends with its error before it builds, starts or
// sends anything, at "flags" (parsed) or, for run, sweep and soak, at
// "planned" (scenario, ceilings and target checked).
var dryRun func(point string, fs *flag.FlagSet) error

func dry(point string, fs *flag.FlagSet) error {
	if dryRun == nil {
		return nil
	}
	return dryRun(point, fs)
}

// parser is parseFlags for the commands whose flags live in gate/action.
func parser(stderr io.Writer) action.ParseFunc {
	return func(fs *flag.FlagSet, args []string) error { return parseFlags(fs, args, stderr) }
}

// unexpectedArgError: parseFlags found positional arguments (compare takes two).
type unexpectedArgError struct{ error }

func (e *unexpectedArgError) Unwrap() error { return e.error }

func isUnexpectedArg(err error) bool {
	var u *unexpectedArgError
	return errors.As(err, &u)
}
