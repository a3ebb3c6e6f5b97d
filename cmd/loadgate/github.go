package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/rounds"
)

// gateGitHub is `loadgate gate --github`: the Action's step (gate/action's
// Step), its gate this command's (runGate) with the inputs applied to the
// flags, its report rendered by report.WriteGate; the exit code follows
// fail-on.
func gateGitHub(ctx context.Context, f gateFlags, stdout, stderr io.Writer) error {
	res, err := action.Step{
		Gate: action.GateFunc(func(ctx context.Context, in action.Inputs) (rounds.Outcome, string, error) {
			return runGate(ctx, f.withInputs(in), stderr)
		}),
		Reports: func(out string, gr rounds.Outcome) ([]byte, error) {
			return report.WriteGate(out, gr, stdout, stderr)
		},
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

// withInputs is f with the Action's inputs as flags (action.Inputs.Apply),
// and no progress line.
func (f gateFlags) withInputs(in action.Inputs) gateFlags {
	f.Config, f.stack = in.Apply(f.Config, f.stack)
	f.progress = "never"
	return f
}

func commentCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("comment", flag.ContinueOnError)
	from := fs.String("from", "", "the downloaded results `dir` (load-gate-results)")
	pr := fs.Int("pr", 0, "the pull request `number` (default: from the event or the results)")
	artifact := fs.String("artifact-url", "", "the results artifact's `URL` for the footer (default: the run's artifacts list)")
	step := fs.Bool("github", false, "the Action's comment step: this run's results (--from, \"\" when the gate wrote none), the inputs from INPUT_*")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	var out *action.Outcome
	var err error
	switch {
	case *step:
		out, err = action.CommentStep(ctx, stdout, os.Getenv, *from)
	case *from == "":
		return usageErr("comment: --from DIR is required")
	default:
		out, err = action.Comment(ctx, stdout, os.Getenv, *from, *pr, *artifact)
	}
	if err != nil {
		return usageErr("comment: %w", err)
	}
	for _, n := range out.Notices {
		fmt.Fprintln(stderr, "loadgate: notice:", n)
	}
	return nil
}
