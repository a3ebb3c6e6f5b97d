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

// version is set by the release build (-ldflags -X main.version=...), which
// sets only a string variable without an initializer that calls a function;
// toolVersion falls back on the module version.
var version string

// toolVersion is the release's version, else a `go install ...@vX.Y.Z`
// build's module version, else "dev".
func toolVersion() string {
	if version != "" {
		return version
	}
	return moduleVersion("dev")
}

// moduleVersion is the main module's version from the build info, or def.
func moduleVersion(def string) string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return def
}

var commands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) error{
	"run": runCmd, "report": reportCmd, "up": upCmd, "down": downCmd, "gate": gateCmd, "compare": compareCmd,
	"calibrate": calibrateCmd, "baseline": baselineCmd, "comment": commentCmd, "sweep": sweepCmd, "soak": soakCmd, "stub": stubCmd, "history": historyCmd, "merge": mergeCmd, "check": checkCmd,
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
		fmt.Fprintln(stdout, "loadgate", toolVersion())
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
	return nil
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
