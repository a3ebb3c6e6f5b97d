package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/loadgate/loadgate/gate/bisect"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/soak"
	"github.com/loadgate/loadgate/gate/verdict"
)

// errHelp: -h printed the command's help (exit 0).
var errHelp = errors.New("help shown")

// shownError is an error whose message was already shown (flag's own).
type shownError struct{ err error }

func (e *shownError) Error() string { return e.err.Error() }
func (e *shownError) Unwrap() error { return e.err }

func shown(err error) error { return &shownError{err: err} }

// codedError is an outcome that is not a pass: its message and exit code.
type codedError struct {
	msg  string
	code int
}

func (e *codedError) Error() string { return e.msg }

// verdictExit is what a command returns after reporting v: nil, or a *codedError.
func verdictExit(v verdict.Verdict) error { return verdictCode(v, v.ExitCode(), "") }

// verdictCode is verdictExit with the code decided elsewhere (the Action's fail-on).
func verdictCode(v verdict.Verdict, code int, why string) error {
	if code == 0 {
		return nil
	}
	if why != "" {
		return &codedError{fmt.Sprintf("verdict: %s (%s)", v.Value, why), code}
	}
	return &codedError{fmt.Sprintf("verdict: %s", v.Value), code}
}

// exitCode maps a command's error to the exit code and prints it unless shown; an error
// of no kind exits 2, like usage: nothing was measured.
func exitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, errHelp) {
		return exitPass
	}
	var se *shownError
	if !errors.As(err, &se) {
		fmt.Fprintln(stderr, "loadgate:", report.ErrorText(err))
	}
	var ce *codedError
	if errors.As(err, &ce) {
		return ce.code
	}
	switch rounds.KindOf(err) {
	case rounds.ErrUnusable:
		return exitUnusable
	case rounds.ErrUsage:
		return exitUsage
	}
	return exitUsage
}

// bisectExit is a finished bisection's exit: 0 when it named the commit, else 1
// (not attributable, not reproduced, or a gate undecided), its answer the message.
func bisectExit(o bisect.Outcome) error {
	if o.Answer == bisect.Found {
		return nil
	}
	return &codedError{"bisect: " + report.BisectAnswer(o), exitFail}
}

// soakOutcome is soak's verdictExit; a pass's summary goes to stderr.
func soakOutcome(s *soak.Result, summary string, stderr io.Writer) error {
	if code := s.ExitCode(); code != exitPass {
		return &codedError{summary, code}
	}
	fmt.Fprintln(stderr, "loadgate:", summary)
	return nil
}
