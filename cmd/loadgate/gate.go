package main

import (
	"context"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/session"
	"github.com/loadgate/loadgate/gate/verdict"
)

type gateFlags struct {
	rounds.Config        // Compose is the stack's
	progress      string // --progress
	github, force bool
	stack         stackFlags
}

func gateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f gateFlags
	fs := flag.NewFlagSet("gate", flag.ContinueOnError)
	fs.StringVar(&f.Scenario, "scenario", "", "the scenario `file`, relative to the repository (or absolute inside it)")
	fs.StringVar(&f.Base, "base", "", "the base git `ref` (against a baseline: the commit whose scenario and baseline are read, not run)")
	fs.StringVar(&f.Head, "head", "", "the head git `ref` (default: the working tree)")
	fs.StringVar(&f.Against, "against", "base", "compare head with a fresh base run (base) or a stored baseline (baseline:`name`)")
	fs.StringVar(&f.ScenarioFrom, "scenario-from", "", "whose scenario file (load, thresholds, ceilings) is used: base (the default with --base: the protected side sets the bar) or head (UNSAFE for a required check: the change judged sets its own bar)")
	f.Auto = true // the default, chosen from bench/gate-quality.md: 3 fixed rounds decided no gate there
	fs.Var(roundsValue{&f.Rounds, &f.Auto}, "rounds", "paired rounds (duet by default, ABBA with --duet=false): a number, or auto, the default (sequential: judge after every pair from the 4th round on, stop when decided, at --max-rounds or when --budget allows no further pair)")
	fs.IntVar(&f.MaxRounds, "max-rounds", rounds.DefaultMaxRounds, "with --rounds auto: the most paired rounds")
	fs.DurationVar(&f.Budget, "budget", rounds.DefaultBudget, "the gate's wall time, set-up included: with --rounds auto the rounds stop where the next pair would overrun it; with a fixed --rounds what an inconclusive comparison asks for is capped by the rounds it allows")
	fs.Var(tolerance(&f.Compare.Tolerance, verdict.DefaultTolerance), "tolerance", "relative change below which latency is 'no change' (10% or 0.10)")
	fs.Float64Var(&f.Compare.Confidence, "confidence", verdict.DefaultConfidence, "confidence of every interval")
	fs.StringVar(&f.Compare.Percentile, "percentile", "", "judged latency percentile for every workload (default: each workload's threshold percentiles, else p95)")
	fs.Float64Var(&f.Scale, "scale", 1, "shorten every phase by this `factor` (both sides)")
	fs.StringVar(&f.Out, "out", "", "results `dir` (default loadgate-out/gate-<time>); one that already holds a result is refused unless --force")
	fs.BoolVar(&f.force, "force", false, "replace the result already in --out")
	fs.StringVar(&f.progress, "progress", "auto", "progress line: auto, always, never")
	fs.BoolVar(&f.github, "github", false, "run as the GitHub Action: inputs from INPUT_* variables, verdict to the step summary, outputs, annotations and the pull request comment")
	fs.BoolVar(&f.Duet, "duet", true, "run base and head at the same instants in every round, both stacks up and neither paused, so both share the machine's noise (the default, chosen by make gate-quality; --duet=false for ABBA rounds with the idle side paused; off against a baseline, which has no second side)")
	fs.StringVar(&f.Target, "target", "", "the `service:port` that receives the load (default: the scenario's stack.target; needed with --compose when the scenario has no stack: section)")
	addStackFlags(fs, &f.stack, stderr)
	addPriorityFlag(fs, &f.stack)
	addLimitFlags(fs, &f.Limits)
	fs.Usage = func() { fmt.Fprint(stderr, helpText("gate")); fs.PrintDefaults() }
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	duetSet := false
	fs.Visit(func(fl *flag.Flag) { duetSet = duetSet || fl.Name == "duet" })
	if !duetSet && strings.HasPrefix(f.Against, "baseline:") {
		f.Duet = false // the default: a baseline has no second side to run beside (an explicit --duet is refused)
	}
	if f.github {
		return gateGitHub(ctx, f, stdout, stderr)
	}
	gr, err := runGate(ctx, f, stderr)
	if err != nil {
		return err
	}
	if _, err := report.WriteGate(gr.out, gr.Outcome, stdout, stderr); err != nil {
		return err
	}
	return verdictExit(gr.Verdict)
}

// roundsValue is --rounds: a whole number, or auto.
type roundsValue struct {
	n    *int
	auto *bool
}

func (r roundsValue) String() string {
	if r.auto != nil && *r.auto {
		return "auto"
	}
	if r.n == nil {
		return "auto"
	}
	return strconv.Itoa(*r.n)
}

func (r roundsValue) Set(s string) error {
	if s == "auto" {
		*r.auto, *r.n = true, 0
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("want a whole number of at least 1, or auto")
	}
	*r.auto, *r.n = false, n // below 1: refused by rounds.Config.Validate, with the others
	return nil
}

// gateOutcome is a gate's report (partial when it stopped before its
// verdict), and where its files are.
type gateOutcome struct {
	rounds.Outcome
	out string
}

// config is the gate's rounds.Config from the flags (Scenario and Out as
// given: rounds.Prepare makes them the repository-relative file and an
// absolute directory).
func (f gateFlags) config() rounds.Config {
	c := f.Config
	c.Compose = f.stack.Compose
	return c
}

// runGate wires the gate (gate/rounds) to git, Docker Compose and the load
// engine, and runs it. An error is returned only when no verdict could be
// reached (ErrUsage or ErrUnusable); the report is returned anyway, with
// what is known.
func runGate(ctx context.Context, f gateFlags, stderr io.Writer) (gateOutcome, error) {
	cfg, deps, err := prepareGate(ctx, f, "gate", stderr)
	if err != nil {
		return gateOutcome{}, err
	}
	gr, err := rounds.Run(ctx, cfg, deps)
	return gateOutcome{Outcome: gr, out: cfg.Out}, err
}

// prepareGate is rounds.Prepare with the flags (what runGate and
// calibrate share): the engine, the gate's words, and the runner's
// credentials kept from the stacks and the scenario's ${ENV}; name is the
// results directory's prefix.
func prepareGate(ctx context.Context, f gateFlags, name string, stderr io.Writer) (rounds.Config, rounds.Deps, error) {
	return rounds.Prepare(ctx, f.config(), rounds.Setup{
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
