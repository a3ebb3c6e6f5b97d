package main

import (
	"context"
	"flag"
	"io"
	"os"

	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/session"
	"github.com/loadgate/loadgate/gate/verdict"
)

type gateFlags struct {
	rounds.Config // Compose is the stack's
	progress      report.ProgressMode
	github, force bool
	stack         stackFlags
	failOn        string // "" or regression: the verdict's exit code; inconclusive, threshold, never: action.ExitCode
	// baselineMissing: refuse or record (Config.RecordMissing).
	baselineMissing string
}

func gateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f gateFlags
	fs := flag.NewFlagSet("gate", flag.ContinueOnError)
	f.addShared(fs, stderr)
	fs.StringVar(&f.Base, "base", "", "the base git `ref` (against a baseline: the commit whose scenario and baseline are read, not run)")
	fs.StringVar(&f.Head, "head", "", "the head git `ref` (default: the working tree)")
	fs.StringVar(&f.Against, "against", "base", "compare head with a fresh base run (base) or a stored baseline (baseline:`name`: its commit runs beside head where the clone has it, else its stored numbers)")
	fs.StringVar(&f.baselineMissing, "baseline-missing", "refuse", "against a baseline the protected side lacks: refuse (exit 2) or record (head alone, judged on its thresholds, to be stored as the baseline)")
	fs.StringVar(&f.ScenarioFrom, "scenario-from", "", "whose scenario file (load, thresholds, ceilings) is used: base (the default with --base) or head (UNSAFE for a required check: the change judged sets its own bar)")
	f.addRoundFlags(fs)
	fs.BoolVar(&f.github, "github", false, "run as the GitHub Action: inputs from INPUT_* variables, verdict to the step summary, outputs, annotations and the pull request comment")
	fs.StringVar(&f.failOn, "fail-on", "regression", "which verdicts exit 1: regression (and fail, not measured), inconclusive (those and inconclusive too), threshold (absolute thresholds only) or never")
	fs.StringVar(&f.Continue, "continue", "", "with --rounds auto: a `dir` of an earlier attempt's rounds; those of the same base, head, scenario and policy are this gate's first looks of one sequential test, and this attempt's rounds are written back to it")
	fs.Var(&f.Shard, "shard", "run shard `K/N` of the rounds on this runner and write them with no verdict (shard.json); `loadgate merge` judges the shards together")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	f.settle(fs)
	failOn, err := action.ParseFailOn(f.failOn)
	if err != nil {
		return usageErr("gate: --fail-on %q: %v", f.failOn, err)
	}
	switch f.baselineMissing {
	case "refuse":
	case "record":
		f.RecordMissing = true
	default:
		return usageErr("gate: --baseline-missing must be refuse or record, not %q", f.baselineMissing)
	}
	if f.github {
		return gateGitHub(ctx, f, stdout, stderr)
	}
	gr, out, err := runGate(ctx, f, stderr)
	if f.Shard.On() && out != "" {
		report.ShardText(stdout, gr, out, f.Shard)
	}
	if err != nil || f.Shard.On() {
		return err
	}
	code := action.ExitCode(gr.Verdict, failOn)
	if code != gr.Verdict.ExitCode() {
		gr.Notes = append(gr.Notes, verdict.Note{Code: verdict.NoteFailOn, FailOn: string(failOn), ExitCode: code, VerdictExitCode: gr.Verdict.ExitCode()})
	}
	if _, err := report.WriteGate(out, gr, stdout, stderr); err != nil {
		return err
	}
	return verdictCode(gr.Verdict, code, "fail-on "+string(failOn))
}

// runGate runs the gate; the error is for no verdict, the outcome holds what is known anyway.
func runGate(ctx context.Context, f gateFlags, stderr io.Writer) (gr rounds.Outcome, out string, err error) {
	cfg, deps, err := prepareGate(ctx, f, "gate", stderr)
	if err != nil {
		return gr, "", err
	}
	gr, err = rounds.Run(ctx, cfg, deps)
	return gr, cfg.Out, err
}

// prepareGate is rounds.Prepare with the flags, the runner's credentials kept from the stacks
// and ${ENV}; name prefixes --out.
func prepareGate(ctx context.Context, f gateFlags, name string, stderr io.Writer) (rounds.Config, rounds.Deps, error) {
	cfg := f.Config // Scenario and Out as given: Prepare resolves them
	cfg.Compose = f.stack.Compose
	return rounds.Prepare(ctx, cfg, rounds.Setup{
		Name: name, Replace: f.force || f.github, Stack: f.stack, OnEmergency: session.OnEmergency, // the Action's results-dir belongs to its workflow
		UnsetSecrets: func() []string { return action.UnsetRunnerSecrets(os.Environ(), os.Unsetenv) },
		Deps: rounds.Deps{
			Runner:    engine(false, f.progress, "", f.stack.Priority, stderr),
			LookupEnv: action.WithoutRunnerSecrets(os.LookupEnv),
			Mask:      func(env map[string]string) { action.MaskEnv(os.Stdout, os.Getenv, env) }, // workflow commands go to stdout
			Log:       stderr,
			Words:     report.GateWords{},
		},
	})
}

// addShared adds the flags gate and calibrate share to fs.
func (f *gateFlags) addShared(fs *flag.FlagSet, stderr io.Writer) {
	fs.StringVar(&f.Scenario, "scenario", "", "the scenario `file`, relative to the repository (or absolute inside it)")
	fs.StringVar(&f.Out, "out", "", "results `dir` (default loadgate-out/"+fs.Name()+"-<time>); one that already holds a result is refused unless --force")
	fs.BoolVar(&f.force, "force", false, "replace the result already in --out")
	fs.TextVar((*verdict.Tolerance)(&f.Compare.Tolerance), "tolerance", verdict.Tolerance(verdict.DefaultTolerance), "relative change below which latency is 'no change' (10% or 0.10)")
	fs.Float64Var(&f.Compare.Confidence, "confidence", verdict.DefaultConfidence, "confidence of every interval")
	fs.Float64Var(&f.Scale, "scale", 1, "shorten every phase by this `factor` (both sides; a calibration's must match the gate's)")
	fs.TextVar(&f.progress, "progress", report.ProgressMode("auto"), "progress line: auto, always, never")
	fs.StringVar(&f.Target, "target", "", "the `service:port` that receives the load (default: the scenario's stack.target; needed with --compose when the scenario has no stack: section)")
	addStackFlags(fs, &f.stack, stderr)
	addPriorityFlag(fs, &f.stack)
	addLimitFlags(fs, &f.Limits)
}
