package main

import (
	"context"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/sethvargo/go-githubactions"

	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/rounds"
)

// gateGitHub is `loadgate gate --github`: the Action's step (gate/action's
// Step), its gate this command's (runGate) with the inputs applied to the
// flags, its report rendered by writeGateReports; the exit code follows
// fail-on.
func gateGitHub(ctx context.Context, f gateFlags, stdout, stderr io.Writer) error {
	res, err := action.Step{
		Gate: actionGate{f: f, stderr: stderr},
		Reports: func(out string, gr rounds.Outcome) ([]byte, error) {
			return report.WriteGate(out, gr, stdout, stderr)
		},
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

// actionGate is action.Gate on runGate: the Action's inputs are the gate's
// flags.
type actionGate struct {
	f      gateFlags
	stderr io.Writer
}

func (g actionGate) Run(ctx context.Context, in action.Inputs) (rounds.Outcome, string, error) {
	gr, err := runGate(ctx, g.f.withInputs(in), g.stderr)
	return gr.Outcome, gr.out, err
}

// withInputs is f with the Action's inputs as flags: an input left empty
// keeps the flag's default.
func (f gateFlags) withInputs(in action.Inputs) gateFlags {
	f.scenario, f.stack.Compose = in.Scenario, in.Compose
	f.stack.StackCPUs, f.stack.LoadCPUs, f.stack.Priority = in.StackCPUs, in.LoadCPUs, in.LoadPriority
	f.out = in.ResultsDir
	// Against a baseline too, the base (the pull request's base commit by
	// default) is the protected side: its scenario and baseline are read,
	// never head's.
	f.against, f.base = "base", in.Base
	if in.Baseline != "" {
		f.against = "baseline:" + in.Baseline
	}
	if in.Rounds > 0 { // a fixed number: not the default auto
		f.rounds, f.auto = in.Rounds, false
	}
	if in.AutoRounds {
		f.rounds, f.auto = 0, true
	}
	if in.Budget > 0 {
		f.budget = in.Budget
	}
	if in.Tolerance > 0 {
		f.tolerance = in.Tolerance
	}
	if in.Scale > 0 {
		f.scale = in.Scale
	}
	f.progress = "never"
	f.limits = in.Limits // the operator's ceilings, bounded by default
	f.guardWorkflows, f.allowWorkflowChanges = in.GuardWorkflows, in.AllowWorkflowChanges
	f.duet = in.Duet && in.Baseline == "" // the duet input (action.yml's default "true"); a baseline has no second side
	if in.ScenarioFrom != "" {
		f.scenarioFrom = in.ScenarioFrom // the unsafe opt-in: the report warns
	}
	return f
}

//go:embed help/comment.txt
var commentHelp string

func commentCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("comment", flag.ContinueOnError)
	from := fs.String("from", "", "the downloaded results `dir` (load-gate-results)")
	pr := fs.Int("pr", 0, "the pull request `number` (default: from the event or the results)")
	artifact := fs.String("artifact-url", "", "the results artifact's `URL` for the footer (default: the run's artifacts list)")
	fs.Usage = func() { fmt.Fprint(stderr, commentHelp); fs.PrintDefaults() }
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if *from == "" {
		return usageErr("comment: --from DIR is required")
	}
	a := githubactions.New(githubactions.WithWriter(stdout))
	env, err := action.FromEnv(os.Getenv)
	if err != nil {
		return usageErr("comment: %w", err)
	}
	ev, err := action.ReadEvent(env)
	if err != nil {
		return usageErr("comment: %w", err)
	}
	out, err := action.PublishFromDir(ctx, a, env, ev, *from, *pr, os.Getenv("GITHUB_TOKEN"), *artifact, nil)
	if err != nil {
		return usageErr("comment: %w", err)
	}
	for _, n := range out.Notices {
		fmt.Fprintln(stderr, "loadgate: notice:", n)
	}
	return nil
}
