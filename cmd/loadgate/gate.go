package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loadgate/loadgate/compose"
	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/counted"
	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/outfile"
)

const gateHelp = `Usage: loadgate gate --scenario FILE --base REF [--head REF] [flags]
       loadgate gate --scenario FILE --against baseline:NAME [--base REF] [flags]

Runs the same named load before (base) and after (head) a change on this
machine and judges the difference per workload with its confidence.

Each side is a checkout: base is materialized as a git worktree of REF, head
is the working tree (or a worktree of --head). Each side's stack is built from
its own checkout (running the scenario's stack.prepare there first) and comes
up as its own throwaway project on the same stack cpuset. By default
(--duet, chosen by make gate-quality: bench/gate-quality.md) both stacks stay
up and unpaused and every round runs both sides' load at the same instants
(one common schedule start), so both share the machine's noise; both stacks
then share the stack cpus, so absolute latencies are higher than a
paused-side gate's: the comparison is what is judged. --duet=false runs
rounds one side at a time, ABBA (A B B A A B ...), the idle side's
containers paused. Against a baseline (one side) rounds are one at a time.
--rounds auto runs sequential rounds: after the 4th round (the 2nd with a
matching calibration, baselines/<scenario>/noise.json) and every pair after,
every comparison is judged at its share of the error rate (alpha spending);
the gate stops when all are decided, at --max-rounds, or when the next pair
would overrun --budget. The report says how many rounds ran and why it
stopped.

The protected side sets the bar: the scenario (its load, thresholds and
ceilings) is base's file, and both sides run it; where head's file differs
the report shows each change ("head changes p95 threshold of search 200ms →
2s: not applied"). A scenario base does not have is judged by head's file,
and the report says so. --scenario-from head applies head's file instead:
unsafe for a required check, since the change being judged then sets its
own bar. Against a stored baseline (--against baseline:NAME) the
baseline, like the scenario, is read from --base's commit, which is
checked out and not run: a head that replaced the baseline is shown
("head changes baseline NAME: not applied"), and a baseline only head has
is refused. Without --base both are head's (a local gate). --max-rate,
--max-duration and --max-in-flight bound every scenario: a scenario's
ceilings cannot raise them. --compose files (relative to the repository root) replace the
scenario's stack.compose, each side's from its own checkout; a scenario
without a stack: section then needs --target SERVICE:PORT.

Each round reads the scenario's count: counters before and after each phase,
as loadgate run does; the report says per side what was sent and what the
service counted, summed over the rounds where every round measured it, else
"not measured" with the reason. A scenario that injects faults (phase
inject:) is refused (exit 2): the gate does not inject faults; loadgate run
does, and judges recovery.

Writes OUT/report.md (the verdict last), OUT/verdict.json, OUT/latency.svg,
OUT/<side>/round-<i>/{result.json,snapshots.jsonl,stats.jsonl} and
OUT/<side>/logs/. Exit codes: 0 pass (or improvement, or inconclusive with a
warning), 1 regression / threshold / not measured, 2 refused, 3 unusable.

Examples:
  loadgate gate --scenario examples/demo/gate.yaml --base main                  # rounds auto, budget 10m
  loadgate gate --scenario examples/demo/scenario.yaml --base main --rounds auto --budget 10m --max-rounds 20
  loadgate gate --scenario load.yaml --base origin/main --head HEAD --tolerance 0.05
  loadgate gate --scenario load.yaml --against baseline:release-1.4 --base origin/main
  loadgate gate --scenario load.yaml --base main --compose compose.yaml --target api:8080
  loadgate gate --scenario examples/demo/gate.yaml --base main --duet=false      # ABBA, the idle side paused

Flags:
`

type gateFlags struct {
	scenario, base, head, against, out, scenarioFrom string
	rounds, maxRounds                                int
	auto                                             bool // --rounds auto
	budget                                           time.Duration
	tolerance, confidence, scale                     float64
	percentile, progress, target                     string
	github, force                                    bool
	guardWorkflows, allowWorkflowChanges             bool // the Action on a pull_request event (github.go)
	duet                                             bool // --duet: both sides at the same instants each round
	stack                                            stackFlags
	limits                                           scenario.OperatorLimits
}

func gateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f gateFlags
	fs := flag.NewFlagSet("gate", flag.ContinueOnError)
	fs.StringVar(&f.scenario, "scenario", "", "the scenario `file`, relative to the repository (or absolute inside it)")
	fs.StringVar(&f.base, "base", "", "the base git `ref` (against a baseline: the commit whose scenario and baseline are read, not run)")
	fs.StringVar(&f.head, "head", "", "the head git `ref` (default: the working tree)")
	fs.StringVar(&f.against, "against", "base", "compare head with a fresh base run (base) or a stored baseline (baseline:`name`)")
	fs.StringVar(&f.scenarioFrom, "scenario-from", "", "whose scenario file (load, thresholds, ceilings) is used: base (the default with --base: the protected side sets the bar) or head (UNSAFE for a required check: the change judged sets its own bar)")
	f.auto = true // the default, chosen from bench/gate-quality.md: 3 fixed rounds decided no gate there
	fs.Var(roundsValue{&f.rounds, &f.auto}, "rounds", "paired rounds (duet by default, ABBA with --duet=false): a number, or auto, the default (sequential: judge after every pair from the 4th round on, stop when decided, at --max-rounds or when --budget allows no further pair)")
	fs.IntVar(&f.maxRounds, "max-rounds", rounds.DefaultMaxRounds, "with --rounds auto: the most paired rounds")
	fs.DurationVar(&f.budget, "budget", rounds.DefaultBudget, "the gate's wall time, set-up included: with --rounds auto the rounds stop where the next pair would overrun it; with a fixed --rounds what an inconclusive comparison asks for is capped by the rounds it allows")
	fs.Float64Var(&f.tolerance, "tolerance", verdict.DefaultTolerance, "relative change below which latency is 'no change' (0.10 = 10%)")
	fs.Float64Var(&f.confidence, "confidence", verdict.DefaultConfidence, "confidence of every interval")
	fs.StringVar(&f.percentile, "percentile", "", "judged latency percentile for every workload (default: each workload's threshold percentiles, else p95)")
	fs.Float64Var(&f.scale, "scale", 1, "shorten every phase by this `factor` (both sides)")
	fs.StringVar(&f.out, "out", "", "results `dir` (default loadgate-out/gate-<time>); one that already holds a result is refused unless --force")
	fs.BoolVar(&f.force, "force", false, "replace the result already in --out")
	fs.StringVar(&f.progress, "progress", "auto", "progress line: auto, always, never")
	fs.BoolVar(&f.github, "github", false, "run as the GitHub Action: inputs from INPUT_* variables, verdict to the step summary, outputs, annotations and the pull request comment")
	fs.BoolVar(&f.duet, "duet", true, "run base and head at the same instants in every round, both stacks up and neither paused, so both share the machine's noise (the default, chosen by make gate-quality; --duet=false for ABBA rounds with the idle side paused; off against a baseline, which has no second side)")
	fs.StringVar(&f.target, "target", "", "the `service:port` that receives the load (default: the scenario's stack.target; needed with --compose when the scenario has no stack: section)")
	addStackFlags(fs, &f.stack)
	addPriorityFlag(fs, &f.stack)
	addLimitFlags(fs, &f.limits)
	fs.Usage = func() { fmt.Fprint(stderr, gateHelp); fs.PrintDefaults() }
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	duetSet := false
	fs.Visit(func(fl *flag.Flag) { duetSet = duetSet || fl.Name == "duet" })
	if !duetSet && strings.HasPrefix(f.against, "baseline:") {
		f.duet = false // the default: a baseline has no second side to run beside (an explicit --duet is refused)
	}
	if f.github {
		return gateGitHub(ctx, f, stdout, stderr)
	}
	gr, err := runGate(ctx, f, stderr)
	if err != nil {
		return err
	}
	if _, err := writeGateReports(gr.out, gr.Outcome, stdout, stderr); err != nil {
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
// given: runGate makes them the repository-relative file and an absolute
// directory).
func (f gateFlags) config() rounds.Config {
	return rounds.Config{
		Scenario: f.scenario, Base: f.base, Head: f.head, Against: f.against, ScenarioFrom: f.scenarioFrom,
		Rounds: f.rounds, Auto: f.auto, MaxRounds: f.maxRounds, Budget: f.budget, Scale: f.scale, Compose: f.stack.compose, Target: f.target, Out: f.out,
		Compare:        verdict.CompareOptions{Tolerance: f.tolerance, Confidence: f.confidence, Percentile: f.percentile},
		Limits:         f.limits,
		GuardWorkflows: f.guardWorkflows, AllowWorkflowChanges: f.allowWorkflowChanges,
		Duet: f.duet,
	}
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

// prepareGate is the gate's rounds.Config and its ways to git, Docker
// Compose and the load engine (what runGate and calibrate share); name is
// the results directory's prefix.
func prepareGate(ctx context.Context, f gateFlags, name string, stderr io.Writer) (rounds.Config, rounds.Deps, error) {
	cfg := f.config()
	if err := cfg.Validate(); err != nil {
		return cfg, rounds.Deps{}, err
	}
	runID := compose.NewRunID()
	wd, err := os.Getwd()
	if err != nil {
		return cfg, rounds.Deps{}, usageErr("gate: %w", err)
	}
	repo, err := rounds.OpenGit(ctx, wd, runID, onEmergency)
	if err != nil {
		return cfg, rounds.Deps{}, usageErr("gate: not inside a git repository: %w", err)
	}
	abs, err := filepath.Abs(f.scenario)
	if err != nil {
		return cfg, rounds.Deps{}, usageErr("gate: %w", err)
	}
	if cfg.Scenario, err = filepath.Rel(repo.Root(), abs); err != nil || !filepath.IsLocal(cfg.Scenario) {
		return cfg, rounds.Deps{}, usageErr("gate: --scenario %s is not inside the repository %s", f.scenario, repo.Root())
	}
	if cfg.Out == "" {
		cfg.Out = filepath.Join("loadgate-out", name+"-"+time.Now().Format("20060102-150405"))
	}
	if cfg.Out, err = filepath.Abs(cfg.Out); err != nil {
		return cfg, rounds.Deps{}, usageErr("gate: %w", err)
	}
	// The Action's results-dir belongs to its workflow: replaced there.
	if err := outfile.Dir(cfg.Out, f.force || f.github, "--force"); err != nil {
		return cfg, rounds.Deps{}, usageErr("gate: --out %w", err)
	}
	plan, err := planCPUs(f.stack)
	if err != nil {
		return cfg, rounds.Deps{}, usageErr("gate: %w", err)
	}
	sweepWorktrees(ctx, stderr) // leftovers of killed gates
	// The sides' checkouts are not trusted with a GitHub credential: their
	// stack.prepare and their services (compose interpolates from this
	// process's environment) run without one. The Action's token is already
	// read (Inputs.Token).
	if names := action.UnsetRunnerSecrets(os.Environ(), os.Unsetenv); len(names) > 0 {
		fmt.Fprintf(stderr, "loadgate: %d runner credential variable(s) unset for the stacks (%s)\n", len(names), strings.Join(names, ", "))
	}
	return cfg, rounds.Deps{
		Repo:      repo,
		Stacks:    &composeStacks{runID: runID, plan: plan, f: f.stack, stderr: stderr},
		Runner:    &loadRunner{f: runFlags{progress: f.progress, stack: f.stack}, stderr: stderr},
		LookupEnv: action.WithoutRunnerSecrets(os.LookupEnv),
		Mask:      func(env map[string]string) { action.MaskEnv(os.Stdout, os.Getenv, env) }, // workflow commands go to stdout
		Log:       stderr,
		Words:     report.GateWords{},
	}, nil
}

// sweepWorktrees removes what killed gates left (as a gate starts).
func sweepWorktrees(ctx context.Context, stderr io.Writer) {
	removed, err := rounds.SweepWorktrees(ctx)
	for _, r := range removed {
		fmt.Fprintf(stderr, "loadgate: removed the worktrees of %s\n", r)
	}
	if err != nil {
		fmt.Fprintf(stderr, "loadgate: warning: sweeping worktrees of earlier gates: %v\n", err)
	}
}

// composeStacks is rounds.Stacks on Docker Compose (stack.go).
type composeStacks struct {
	runID  string
	plan   pin.Plan
	f      stackFlags
	stderr io.Writer
}

func (c *composeStacks) Up(ctx context.Context, sp rounds.StackSpec) (rounds.Stack, error) {
	sr, err := bringUp(ctx, stackSpec{files: sp.Files, target: sp.Target, prepare: sp.Prepare, prepareDir: sp.PrepareDir,
		out: sp.Out, runID: c.runID, side: sp.Side}, c.plan, c.f, c.stderr)
	if err != nil {
		return nil, err
	}
	cs := &composeStack{sr: sr, every: c.f.statsEvery, stderr: c.stderr, counts: &counted.Addrs{}}
	if sp.Scenario != nil {
		// Resolved now, while the stack is up and healthy (it is paused
		// between rounds): once per side.
		ca, err := resolveCounts(ctx, sp.Scenario, sr, true)
		if err != nil {
			sr.down(c.stderr)
			return nil, err
		}
		cs.counts, cs.stubs = &ca, stackStubs(ctx, sr, c.stderr)
	}
	return cs, nil
}

// composeStack is rounds.Stack on a stackRun.
type composeStack struct {
	sr     *stackRun
	every  time.Duration
	stderr io.Writer
	counts *counted.Addrs // resolved by Up
	stubs  []result.Stub  // stated by the stubs, read by Up
}

func (c *composeStack) Addr() string                      { return c.sr.addr }
func (c *composeStack) Topology() result.Topology         { return c.sr.about("").topology }
func (c *composeStack) Pause(ctx context.Context) error   { return c.sr.stack.Pause(ctx) }
func (c *composeStack) Unpause(ctx context.Context) error { return c.sr.stack.Unpause(ctx) }
func (c *composeStack) Down() (time.Duration, error)      { return c.sr.down(c.stderr) }
func (c *composeStack) Sample(ctx context.Context, dir string, warmup time.Duration) (func(time.Time), func(*result.Result) error, error) {
	if err := c.sr.sample(ctx, dir, c.every, warmup); err != nil {
		return nil, nil, err
	}
	return c.sr.started(), c.sr.finish, nil
}

// Count is one round's counted reads, as loadgate run makes them
// (gate/counted), with the counts' addresses and the stubs' configurations
// resolved by Up. A count whose port accepted no connection (a base that
// predates the counter) is not measured on this side, saying why, rather
// than making the gate unusable.
func (c *composeStack) Count(ctx context.Context, sc *scenario.Scenario) (rounds.Counter, error) {
	return &roundCounter{ctx: ctx, c: counted.New(sc, *c.counts, c.stubs)}, nil
}

// roundCounter is rounds.Counter on a run's counting.
type roundCounter struct {
	ctx context.Context
	c   *counted.Counting
}

func (r *roundCounter) Started() func(time.Time)                       { return r.c.Started(r.ctx) }
func (r *roundCounter) Finish(ctx context.Context, res *result.Result) { r.c.Finish(ctx, res) }

// loadRunner is rounds.Runner on the load engine (runLoad): what the
// round states of itself goes into load.Config, so the result is final.
type loadRunner struct {
	f      runFlags
	stderr io.Writer
}

func (l *loadRunner) Run(ctx context.Context, spec rounds.RunSpec) (*result.Result, error) {
	f := l.f
	f.started = startHooks(spec.Started...)
	f.about = about{topology: spec.Topology, targetLabel: spec.TargetLabel, side: spec.Side, commit: spec.Commit, round: spec.Round}
	f.startAt = spec.StartAt // a duet round's common schedule start
	if spec.NoProgress {
		f.progress = "never"
	}
	return runLoad(ctx, spec.Scenario, spec.Env, spec.Target, spec.Dir, f, l.stderr)
}

// writeGateReports renders the gate's report once: report.md (the full
// account) and comment.md (the answer first, the rest collapsed: its
// bytes are written to OUT/comment.md and returned, for the step summary
// and the pull request comment), verdict.json and latency.svg beside
// them, and the text report to stdout. An error is a file that could
// not be written (unusable); the verdict's exit code is the caller's
// (verdictExit).
func writeGateReports(out string, gr rounds.Outcome, stdout, stderr io.Writer) ([]byte, error) {
	var md, comment bytes.Buffer
	if err := report.CompareMarkdown(&md, gr); err != nil {
		return nil, err
	}
	if err := report.CompareSummary(&comment, gr); err != nil {
		return nil, err
	}
	for name, render := range map[string]func(io.Writer) error{
		"report.md":    func(w io.Writer) error { _, err := w.Write(md.Bytes()); return err },
		"comment.md":   func(w io.Writer) error { _, err := w.Write(comment.Bytes()); return err },
		"verdict.json": func(w io.Writer) error { return report.CompareJSON(w, gr) },
		"latency.svg":  func(w io.Writer) error { return report.ComparePlotSVG(w, gr) },
	} {
		if err := writeFile(filepath.Join(out, name), render); err != nil {
			return nil, unusable(err)
		}
	}
	if err := report.CompareText(stdout, gr); err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "loadgate: gate results in %s (report.md, verdict.json, latency.svg, per-side rounds)\n", out)
	return comment.Bytes(), nil
}
