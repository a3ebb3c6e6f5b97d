package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/rounds"
)

// gateGitHub is `loadgate gate --github`: action.Step running runGate with the inputs as flags.
func gateGitHub(ctx context.Context, f gateFlags, stdout, stderr io.Writer) error {
	res, err := action.Step{
		Gate: action.GateFunc(func(ctx context.Context, in action.Inputs) (rounds.Outcome, string, error) {
			return runGate(ctx, f.withInputs(in), stderr)
		}),
		Reports: func(out string, gr rounds.Outcome) ([]byte, error) {
			return report.WriteGate(out, gr, stdout, stderr)
		},
		Merge:     action.MergeGate(stderr), // the merge input: the shards judged as one gate
		Trend:     action.HistoryTrend(stderr),
		Getenv:    os.Getenv,
		LookupEnv: os.LookupEnv,
		Stdout:    stdout,
		Stderr:    stderr,
	}.Run(ctx)
	if err != nil {
		return err
	}
	return verdictCode(res.Verdict, res.ExitCode, fmt.Sprintf("fail-on %s", res.FailOn))
}

// withInputs is f with the Action's inputs as flags, and no progress line.
func (f gateFlags) withInputs(in action.Inputs) gateFlags {
	f.Config, f.stack = in.Apply(f.Config, f.stack)
	f.progress = "never"
	return f
}

func commentCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return action.CommentCommand(ctx, args, parser(stderr), stdout, stderr)
}

func acceptCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return action.AcceptCommand(ctx, args, parser(stderr), stdout)
}

func ondemandCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return action.OnDemandCmd(ctx, args, parser(stderr), stdout)
}

func historyCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	v, judged, err := action.HistoryCommand(ctx, args, parser(stderr), stdout, stderr)
	if err != nil || !judged {
		return err
	}
	return verdictExit(v)
}
