package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sethvargo/go-githubactions"

	lggh "github.com/loadgate/loadgate/gate/github"
	"github.com/loadgate/loadgate/gate/verdict"
)

// gateGitHub is `loadgate gate --github`: the Action's step. Inputs come
// from INPUT_* variables (action.yml passes them through env), the verdict
// goes to the step summary, the outputs, annotations and the sticky pull
// request comment; the exit code follows fail-on.
func gateGitHub(ctx context.Context, f gateFlags, stdout, stderr io.Writer) error {
	a := githubactions.New(githubactions.WithWriter(stdout))
	env, err := lggh.FromEnv(os.Getenv)
	if err != nil {
		return usageErr("gate --github: %w", err)
	}
	ev, err := lggh.ReadEvent(env)
	if err != nil {
		return usageErr("gate --github: %w", err)
	}
	in, err := lggh.ReadInputs(a)
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
	if in.Baseline != "" {
		f.against, f.base = "baseline:"+in.Baseline, ""
	} else {
		f.against, f.base = "base", in.Base
	}
	if in.Rounds > 0 {
		f.rounds = in.Rounds
	}
	if in.Tolerance > 0 {
		f.tolerance = in.Tolerance
	}
	if in.Scale > 0 {
		f.scale = in.Scale
	}
	f.progress = "never"

	gr, err := runGate(ctx, f, stderr)
	if err != nil {
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitUnusable {
			a.Errorf("%v", err)
			return err
		}
		// An unusable gate is still published: the summary and the comment
		// say which side failed and why.
		gr.Verdict = verdict.Verdict{Value: verdict.Unusable, Workloads: []verdict.WorkloadVerdict{}, Reasons: []string{ee.err.Error()}}
		if gr.out == "" {
			gr.out = in.ResultsDir
		}
		_ = os.MkdirAll(gr.out, 0o755)
	}
	name := gr.Scenario.Name
	if name == "" && len(gr.Head.Results) > 0 {
		name = gr.Head.Results[0].Scenario.Name
	}
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(in.Scenario), filepath.Ext(in.Scenario))
	}
	if code := lggh.ExitCode(gr.Verdict, in.FailOn); code != gr.Verdict.ExitCode() {
		gr.Notes = append(gr.Notes, fmt.Sprintf("fail-on %s: this step exits %d, not the verdict's %d", in.FailOn, code, gr.Verdict.ExitCode()))
	}
	if gr.Verdict.Value == verdict.Inconclusive {
		a.Warningf("loadgate %s: inconclusive: the difference is within the noise; the report says what would decide it (more rounds, a longer sustain)", name)
	}
	if werr := writeGateReports(gr.out, gr.GateReport, stdout, stderr); werr != nil {
		var ee *exitError
		if !errors.As(werr, &ee) || ee.code == exitUnusable && gr.Verdict.Value != verdict.Unusable {
			return werr
		}
	}
	md, err := os.ReadFile(filepath.Join(gr.out, "report.md"))
	if err != nil {
		return &exitError{code: exitUnusable, err: err}
	}
	outcome, err := lggh.Publish(ctx, a, env, ev, in, lggh.Publication{
		Scenario: name, ScenarioFile: in.Scenario, Verdict: gr.Verdict, Markdown: string(md),
		ReportPath: filepath.Join(gr.out, "report.md"), ResultsDir: gr.out,
	}, nil)
	if err != nil {
		fmt.Fprintln(stderr, "loadgate:", err)
	}
	if outcome.ExitCode != 0 {
		return &exitError{code: outcome.ExitCode, err: fmt.Errorf("verdict: %s (fail-on %s)", gr.Verdict.Value, in.FailOn)}
	}
	return nil
}

const commentHelp = `Usage: loadgate comment --from DIR --pr N

Posts (or updates in place) the pull request comment from a gate's uploaded
results directory: the workflow_run half of the fork pattern, where the gate
ran without a token that can comment. Reads GITHUB_TOKEN and the workflow_run
event; comments only when the pull request's head is the commit the gate ran.

Examples:
  loadgate comment --from "$RUNNER_TEMP/load-gate-results" --pr 42

Flags:
`

func commentCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("comment", flag.ContinueOnError)
	from := fs.String("from", "", "the downloaded results `dir` (load-gate-results)")
	pr := fs.Int("pr", 0, "the pull request `number` (default: from the event or the results)")
	fs.Usage = func() { fmt.Fprint(stderr, commentHelp); fs.PrintDefaults() }
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if *from == "" {
		return usageErr("comment: --from DIR is required")
	}
	a := githubactions.New(githubactions.WithWriter(stdout))
	env, err := lggh.FromEnv(os.Getenv)
	if err != nil {
		return usageErr("comment: %w", err)
	}
	ev, err := lggh.ReadEvent(env)
	if err != nil {
		return usageErr("comment: %w", err)
	}
	out, err := lggh.PublishFromDir(ctx, a, env, ev, *from, *pr, os.Getenv("GITHUB_TOKEN"), nil)
	if err != nil {
		return usageErr("comment: %w", err)
	}
	for _, n := range out.Notices {
		fmt.Fprintln(stderr, "loadgate: notice:", n)
	}
	return nil
}
