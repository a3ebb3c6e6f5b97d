package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/verdict"
)

// gateGitHub is `loadgate gate --github`: the Action's step. Inputs come
// from INPUT_* variables (action.yml passes them through env), the verdict
// goes to the step summary, the outputs, annotations and the sticky pull
// request comment; the exit code follows fail-on.
func gateGitHub(ctx context.Context, f gateFlags, stdout, stderr io.Writer) error {
	a := githubactions.New(githubactions.WithWriter(stdout))
	env, err := action.FromEnv(os.Getenv)
	if err != nil {
		return usageErr("gate --github: %w", err)
	}
	ev, err := action.ReadEvent(env)
	if err != nil {
		return usageErr("gate --github: %w", err)
	}
	in, err := action.ReadInputs(a)
	if err == nil {
		err = in.Resolve(ev)
	}
	if err != nil {
		a.Errorf("%v", err)
		return usageErr("gate --github: %w", err)
	}
	f.scenario, f.stack.compose = in.Scenario, in.Compose
	f.stack.stackCPUs, f.stack.loadCPUs = in.StackCPUs, in.LoadCPUs
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
	if in.ScenarioFrom != "" {
		f.scenarioFrom = in.ScenarioFrom // the unsafe opt-in: the report warns
	}

	// The scenario file as the workspace has it: the name of last resort
	// (gateScenarioName), and the ${ENV} values it resolves, masked before
	// the gate logs anything. (The gate masks the scenario it runs too.)
	sc, _ := scenario.Load(in.Scenario, scenario.Options{})
	if sc != nil {
		if vals, err := sc.ResolveEnv(os.LookupEnv); err == nil {
			action.MaskEnv(stdout, os.Getenv, vals)
		}
	}

	gr, err := runGate(ctx, f, stderr)
	if err != nil {
		if rounds.KindOf(err) != rounds.ErrUnusable {
			a.Errorf("%v", err)
			return err
		}
		// An unusable gate is still published: the summary and the comment
		// name the scenario, both commits and the reason.
		gr.Verdict = rounds.UnusableVerdict(oneLineReason(err))
		completeUnusable(ctx, &gr.GateReport, sc, in, env)
		if gr.out == "" {
			gr.out = in.ResultsDir
		}
		_ = os.MkdirAll(gr.out, 0o755)
	}
	name := gateScenarioName(gr.GateReport, sc)
	if code := action.ExitCode(gr.Verdict, in.FailOn); code != gr.Verdict.ExitCode() {
		gr.Notes = append(gr.Notes, fmt.Sprintf("fail-on %s: this step exits %d, not the verdict's %d", in.FailOn, code, gr.Verdict.ExitCode()))
	}
	if gr.Verdict.Value == verdict.Inconclusive {
		a.Warningf("loadgate %s: inconclusive: the difference is within the noise; the report says what would decide it (more rounds, a longer sustain)", name)
	}
	md, err := writeGateReports(gr.out, gr.GateReport, stdout, stderr)
	if err != nil {
		return err
	}
	outcome, err := action.Publish(ctx, a, env, ev, in, action.Publication{
		Scenario: name, ScenarioFile: in.Scenario, Verdict: gr.Verdict, Markdown: string(md),
		ReportPath: filepath.Join(gr.out, "report.md"), ResultsDir: gr.out,
	}, nil)
	if err != nil {
		fmt.Fprintln(stderr, "loadgate:", err)
	}
	return verdictCode(gr.Verdict, outcome.ExitCode, fmt.Sprintf("fail-on %s", in.FailOn))
}

// gateScenarioName is the scenario's name for the marker of its comment,
// derived the same way whatever the outcome: the name the gate judged (its
// report's scenario, else its results'), else the name: field of the
// scenario file (a gate that stopped before it loaded the scenario). Never
// the file's name: that would be another marker, so another comment. ""
// when none is known (Publish then does not comment).
func gateScenarioName(gr report.GateReport, sc *scenario.Scenario) string {
	if gr.Scenario.Name != "" {
		return gr.Scenario.Name
	}
	for _, side := range []report.GateSide{gr.Head, gr.Base} {
		for _, r := range side.Results {
			if r != nil && r.Scenario.Name != "" {
				return r.Scenario.Name
			}
		}
	}
	if sc != nil {
		return sc.Name
	}
	return ""
}

// completeUnusable fills in what the report of a gate that stopped before
// its verdict lacks and is known anyway: the scenario (name, hash, file)
// and both sides' refs and commits (head: the workspace's HEAD, which is
// what head measures; base: the base input, resolved).
func completeUnusable(ctx context.Context, gr *report.GateReport, sc *scenario.Scenario, in action.Inputs, env *action.Env) {
	if gr.Scenario.Name == "" && sc != nil {
		gr.Scenario = result.Scenario{Name: sc.Name, Hash: sc.Hash, File: filepath.ToSlash(in.Scenario)}
	}
	if gr.Head.Commit == "" && len(gr.Head.Results) == 0 {
		gr.Head.Name, gr.Head.Ref = "head", "working tree"
		if c, err := rounds.Git(ctx, ".", "rev-parse", "HEAD"); err == nil {
			gr.Head.Commit = c
		} else if env != nil {
			gr.Head.Commit = env.SHA
		}
	}
	if gr.Base.Commit == "" && len(gr.Base.Results) == 0 {
		switch {
		case in.Baseline != "":
			gr.Base.Name, gr.Base.Ref = "baseline", "baseline:"+in.Baseline
		case in.Base != "":
			gr.Base.Name, gr.Base.Ref, gr.Base.Commit = "base", in.Base, in.Base
			if c, err := rounds.Git(ctx, ".", "rev-parse", "--verify", "--end-of-options", in.Base+"^{commit}"); err == nil {
				gr.Base.Commit = c
			}
		}
	}
}

// oneLineReason is err's message on one line, without a final period (the
// report adds its own): a reason must not end the banner line it is on.
func oneLineReason(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	return strings.TrimRight(s, ". ")
}

const commentHelp = `Usage: loadgate comment --from DIR --pr N [--artifact-url URL]

Posts (or updates in place) the pull request comment from a gate's uploaded
results directory: the workflow_run half of the fork pattern, where the gate
ran without a token that can comment. Reads GITHUB_TOKEN and the workflow_run
event; comments only when the pull request's head is the commit the gate ran.

The footer links the gate's workflow run and its results artifact: the URL
given with --artifact-url, else the run's artifacts list.

Examples:
  loadgate comment --from "$RUNNER_TEMP/load-gate-results" --pr 42
  loadgate comment --from results --artifact-url "https://github.com/o/r/actions/runs/1/artifacts/2"

Flags:
`

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
