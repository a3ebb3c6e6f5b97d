package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/loadgate/loadgate/compose"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/verdict"
)

const gateHelp = `Usage: loadgate gate --scenario FILE --base REF [--head REF] [flags]
       loadgate gate --scenario FILE --against baseline:NAME [flags]

Runs the same named load before (base) and after (head) a change on this
machine and judges the difference per workload with its confidence.

Each side is a checkout: base is materialized as a git worktree of REF, head
is the working tree (or a worktree of --head). Each side's stack is built from
its own checkout (running the scenario's stack.prepare there first) and comes
up as its own throwaway project on the same stack cpuset. Rounds alternate
sides ABBA (A B B A A B ...); the idle side's containers are paused. The
scenario comes from head (--scenario-from base to choose); both results carry
its hash.

Writes OUT/report.md (the verdict last), OUT/verdict.json, OUT/latency.svg,
OUT/<side>/round-<i>/{result.json,snapshots.jsonl,stats.jsonl} and
OUT/<side>/logs/. Exit codes: 0 pass (or improvement, or inconclusive with a
warning), 1 regression / threshold / not measured, 2 refused, 3 unusable.

Examples:
  loadgate gate --scenario examples/demo/scenario.yaml --base main --rounds 3
  loadgate gate --scenario load.yaml --base origin/main --head HEAD --tolerance 0.05
  loadgate gate --scenario load.yaml --against baseline:release-1.4

Flags:
`

type gateFlags struct {
	scenario, base, head, against, out, scenarioFrom string
	rounds                                           int
	tolerance, confidence, scale                     float64
	percentile, progress                             string
	github                                           bool
	stack                                            stackFlags
}

func gateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f gateFlags
	fs := flag.NewFlagSet("gate", flag.ContinueOnError)
	fs.StringVar(&f.scenario, "scenario", "", "the scenario `file`, relative to the repository (or absolute inside it)")
	fs.StringVar(&f.base, "base", "", "the base git `ref`")
	fs.StringVar(&f.head, "head", "", "the head git `ref` (default: the working tree)")
	fs.StringVar(&f.against, "against", "base", "compare head with a fresh base run (base) or a stored baseline (baseline:`name`)")
	fs.StringVar(&f.scenarioFrom, "scenario-from", "head", "which side's scenario file is used: head or base")
	fs.IntVar(&f.rounds, "rounds", 3, "paired rounds, ABBA order")
	fs.Float64Var(&f.tolerance, "tolerance", verdict.DefaultTolerance, "relative change below which latency is 'no change' (0.10 = 10%)")
	fs.Float64Var(&f.confidence, "confidence", verdict.DefaultConfidence, "confidence of every interval")
	fs.StringVar(&f.percentile, "percentile", "", "judged latency percentile for every workload (default: each workload's threshold percentiles, else p95)")
	fs.Float64Var(&f.scale, "scale", 1, "shorten every phase by this `factor` (both sides)")
	fs.StringVar(&f.out, "out", "", "results `dir` (default loadgate-out/gate-<time>)")
	fs.StringVar(&f.progress, "progress", "auto", "progress line: auto, always, never")
	fs.BoolVar(&f.github, "github", false, "run as the GitHub Action: inputs from INPUT_* variables, verdict to the step summary, outputs, annotations and the pull request comment")
	addStackFlags(fs, &f.stack)
	fs.Usage = func() { fmt.Fprint(stderr, gateHelp); fs.PrintDefaults() }
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if f.github {
		return gateGitHub(ctx, f, stdout, stderr)
	}
	gr, err := runGate(ctx, f, stderr)
	if err != nil {
		return err
	}
	return writeGateReports(gr.out, gr.GateReport, stdout, stderr)
}

// gateOutcome is a gate that reached a verdict, and where its files are.
type gateOutcome struct {
	report.GateReport
	out string
}

// runGate materializes the sides, runs the rounds and judges. An error is
// returned only when no verdict could be reached (exit 2 or 3).
func runGate(ctx context.Context, f gateFlags, stderr io.Writer) (gateOutcome, error) {
	g, err := newGate(ctx, f, stderr)
	if err != nil {
		return gateOutcome{}, err
	}
	defer g.cleanup()
	gr, err := g.run(ctx)
	return gateOutcome{GateReport: gr, out: g.out}, err
}

// side is one checkout of a gate.
type side struct {
	name, ref, commit, root string
	worktree                bool
	sr                      *stackRun
	results                 []*result.Result
}

type gate struct {
	f           gateFlags
	stderr      io.Writer
	repo        string
	rel         string // the scenario file relative to the repository root
	sc          *scenario.Scenario
	env         map[string]string
	base, head  *side
	baseline    *result.Result // --against baseline:NAME
	out         string
	runID       string
	notes       []string
	worktreeDir string
	plan        cpuPlan
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

func newGate(ctx context.Context, f gateFlags, stderr io.Writer) (*gate, error) {
	if f.scenario == "" {
		return nil, usageErr("gate: --scenario is required (see loadgate gate -h)")
	}
	if f.rounds < 1 {
		return nil, usageErr("gate: --rounds must be at least 1, not %d", f.rounds)
	}
	if f.scenarioFrom != "head" && f.scenarioFrom != "base" {
		return nil, usageErr("gate: --scenario-from must be head or base, not %q", f.scenarioFrom)
	}
	g := &gate{f: f, stderr: stderr, runID: compose.NewRunID()}
	against, baselineName, isBaseline := strings.Cut(f.against, ":")
	switch {
	case f.against == "base":
		if f.base == "" {
			return nil, usageErr("gate: --base REF is required (or --against baseline:NAME)")
		}
	case isBaseline && against == "baseline" && baselineName != "":
		if f.base != "" {
			return nil, usageErr("gate: --base and --against baseline:%s exclude each other", baselineName)
		}
	default:
		return nil, usageErr("gate: --against must be base or baseline:NAME, not %q", f.against)
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	if g.repo, err = git(ctx, wd, "rev-parse", "--show-toplevel"); err != nil {
		return nil, usageErr("gate: not inside a git repository: %w", err)
	}
	abs, err := filepath.Abs(f.scenario)
	if err != nil {
		return nil, usageErr("gate: %w", err)
	}
	if g.rel, err = filepath.Rel(g.repo, abs); err != nil || strings.HasPrefix(g.rel, "..") {
		return nil, usageErr("gate: --scenario %s is not inside the repository %s", f.scenario, g.repo)
	}
	g.out = f.out
	if g.out == "" {
		g.out = filepath.Join("loadgate-out", "gate-"+time.Now().Format("20060102-150405"))
	}
	if g.out, err = filepath.Abs(g.out); err != nil {
		return nil, usageErr("gate: %w", err)
	}
	if err := os.MkdirAll(g.out, 0o755); err != nil {
		return nil, usageErr("gate: results dir: %w", err)
	}
	if g.plan, err = planCPUs(f.stack); err != nil {
		return nil, usageErr("gate: %w", err)
	}
	g.worktreeDir, err = os.MkdirTemp("", "loadgate-worktrees-")
	if err != nil {
		return nil, err
	}
	if g.head, err = g.materialize(ctx, "head", f.head); err != nil {
		g.cleanup()
		return nil, err
	}
	if isBaseline {
		if g.baseline, err = loadBaseline(g.head.root, baselineName, g.rel); err != nil {
			g.cleanup()
			return nil, usageErr("gate: %w", err)
		}
	} else if g.base, err = g.materialize(ctx, "base", f.base); err != nil {
		g.cleanup()
		return nil, err
	}
	from := g.head
	if f.scenarioFrom == "base" {
		if g.base == nil {
			g.cleanup()
			return nil, usageErr("gate: --scenario-from base needs --base")
		}
		from = g.base
	}
	g.sc, err = scenario.Load(filepath.Join(from.root, g.rel), scenario.Options{Scale: f.scale})
	if err != nil {
		g.cleanup()
		return nil, usageErr("gate: %s side: %w", from.name, err)
	}
	if g.sc.Stack == nil && len(f.stack.compose) == 0 {
		g.cleanup()
		return nil, usageErr("gate: the scenario has no stack: section and no --compose was given: a gate runs each side's own stack")
	}
	if g.env, err = g.sc.ResolveEnv(os.LookupEnv); err != nil {
		g.cleanup()
		return nil, usageErr("%w", err)
	}
	if g.baseline != nil && g.baseline.Scenario.Hash != g.sc.Hash {
		g.cleanup()
		return nil, usageErr("gate: baseline %s was measured with scenario hash %s, head's is %s: same load or no comparison", baselineName, g.baseline.Scenario.Hash, g.sc.Hash)
	}
	return g, nil
}

// materialize resolves ref to a commit and checks it out as a worktree
// ("" for head: the working tree itself).
func (g *gate) materialize(ctx context.Context, name, ref string) (*side, error) {
	s := &side{name: name, ref: ref}
	if ref == "" {
		s.ref, s.root = "working tree", g.repo
		c, err := git(ctx, g.repo, "rev-parse", "HEAD")
		if err != nil {
			return nil, usageErr("gate: head: %w", err)
		}
		s.commit = c
		if st, _ := git(ctx, g.repo, "status", "--porcelain", "--untracked-files=no"); st != "" {
			s.commit += "+dirty"
			g.notes = append(g.notes, "head is the working tree with uncommitted changes")
		}
		return s, nil
	}
	c, err := git(ctx, g.repo, "rev-parse", "--verify", ref+"^{commit}")
	if err != nil {
		return nil, usageErr("gate: %s: %q is not a commit: %w", name, ref, err)
	}
	s.commit = c
	s.root = filepath.Join(g.worktreeDir, name)
	if _, err := git(ctx, g.repo, "worktree", "add", "--detach", s.root, c); err != nil {
		return nil, &exitError{code: exitUnusable, err: fmt.Errorf("gate: %s: %w", name, err)}
	}
	s.worktree = true
	return s, nil
}

// cleanup removes the worktrees (the stacks are torn down by run).
func (g *gate) cleanup() {
	for _, s := range []*side{g.base, g.head} {
		if s != nil && s.sr != nil {
			s.sr.down(g.stderr)
			s.sr = nil
		}
		if s != nil && s.worktree {
			if _, err := git(context.Background(), g.repo, "worktree", "remove", "--force", s.root); err != nil {
				fmt.Fprintf(g.stderr, "loadgate: warning: %v\n", err)
			}
		}
	}
	if g.worktreeDir != "" {
		os.RemoveAll(g.worktreeDir)
	}
}

// mapInto maps a path of the scenario's side into side s's checkout.
func (g *gate) mapInto(s *side, p string) string {
	from := g.head.root
	if g.f.scenarioFrom == "base" && g.base != nil {
		from = g.base.root
	}
	if rel, err := filepath.Rel(from, p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.Join(s.root, rel)
	}
	return p
}

// up prepares and brings up one side's stack, then pauses it.
func (g *gate) up(ctx context.Context, s *side) error {
	files := composeFiles(g.sc, g.f.stack)
	mapped := make([]string, len(files))
	for i, p := range files {
		if !filepath.IsAbs(p) {
			p = filepath.Join(g.repo, p)
		}
		mapped[i] = g.mapInto(s, p)
	}
	if g.sc.Stack != nil && len(g.sc.Stack.Prepare) > 0 {
		if err := prepare(ctx, g.sc.Stack.Prepare, g.mapInto(s, g.sc.Stack.Dir), g.stderr); err != nil {
			return &exitError{code: exitUnusable, err: fmt.Errorf("gate: %s side (%s): stack.prepare: %w", s.name, short(s.commit), err)}
		}
	}
	target := g.sc.Stack.Target
	sr, err := upStack(ctx, mapped, target, filepath.Join(g.out, s.name), g.runID, s.name, g.plan, g.f.stack, g.stderr)
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) && ee.code == exitUnusable {
			return &exitError{code: exitUnusable, err: fmt.Errorf("gate: %s side (%s) is unusable: %w", s.name, short(s.commit), ee.err)}
		}
		return err
	}
	s.sr = sr
	if err := sr.stack.Pause(ctx); err != nil {
		return &exitError{code: exitUnusable, err: fmt.Errorf("gate: %s side: pause: %w", s.name, err)}
	}
	return nil
}

func short(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// order returns the sides of round i: A B, then B A, then A B ... (ABBA).
func order(i int, a, b *side) [2]*side {
	if i%2 == 0 {
		return [2]*side{a, b}
	}
	return [2]*side{b, a}
}

func (g *gate) run(ctx context.Context) (report.GateReport, error) {
	sides := []*side{g.head}
	if g.base != nil {
		sides = []*side{g.base, g.head}
	}
	fmt.Fprintf(g.stderr, "loadgate: gate %s (%s): %s; %d round(s); results in %s\n", g.sc.Name, shortHash(g.sc.Hash), g.describeSides(), g.f.rounds, g.out)
	for _, s := range sides {
		if err := g.up(ctx, s); err != nil {
			return report.GateReport{}, err
		}
	}
	for i := 0; i < g.f.rounds; i++ {
		pair := [2]*side{g.head, nil}
		if g.base != nil {
			pair = order(i, g.base, g.head)
		}
		for _, s := range pair {
			if s == nil {
				continue
			}
			fmt.Fprintf(g.stderr, "loadgate: round %d/%d: %s (%s)\n", i+1, g.f.rounds, s.name, short(s.commit))
			res, err := g.runRound(ctx, s, i)
			if err != nil {
				return report.GateReport{}, err
			}
			s.results = append(s.results, res)
			if res.Interrupted {
				return g.finish(true)
			}
		}
	}
	return g.finish(false)
}

// runRound unpauses the side, runs the load once (warm-up and phases),
// pauses it again.
func (g *gate) runRound(ctx context.Context, s *side, i int) (*result.Result, error) {
	dir := filepath.Join(g.out, s.name, fmt.Sprintf("round-%d", i+1))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := s.sr.stack.Unpause(ctx); err != nil {
		return nil, &exitError{code: exitUnusable, err: fmt.Errorf("gate: %s side: unpause: %w", s.name, err)}
	}
	if err := s.sr.sample(ctx, dir, g.f.stack.statsEvery, g.sc.Warmup); err != nil {
		return nil, &exitError{code: exitUnusable, err: err}
	}
	rf := runFlags{progress: g.f.progress}
	res, err := runLoad(ctx, g.sc, g.env, &url.URL{Scheme: "http", Host: s.sr.addr}, dir, rf, g.stderr)
	if err != nil {
		return nil, err
	}
	fillMachine(res)
	res.Side, res.Commit = s.name, s.commit
	res.Target = g.sc.Stack.Target + " (" + s.sr.addr + ")"
	if err := s.sr.finish(res); err != nil {
		fmt.Fprintf(g.stderr, "loadgate: warning: %s stats: %v\n", s.name, err)
	}
	if err := res.WriteFile(filepath.Join(dir, "result.json")); err != nil {
		return nil, &exitError{code: exitUnusable, err: err}
	}
	if !res.Interrupted {
		if err := s.sr.stack.Pause(ctx); err != nil {
			return nil, &exitError{code: exitUnusable, err: fmt.Errorf("gate: %s side: pause: %w", s.name, err)}
		}
	}
	return res, nil
}

func (g *gate) describeSides() string {
	h := fmt.Sprintf("head %s (%s)", g.head.ref, short(g.head.commit))
	if g.base != nil {
		return fmt.Sprintf("base %s (%s) vs %s", g.base.ref, short(g.base.commit), h)
	}
	return fmt.Sprintf("baseline %s vs %s", g.f.against, h)
}

// finish tears the stacks down and judges.
func (g *gate) finish(interrupted bool) (report.GateReport, error) {
	for _, s := range []*side{g.base, g.head} {
		if s == nil || s.sr == nil {
			continue
		}
		took, err := s.sr.down(g.stderr)
		s.sr = nil
		if err != nil {
			g.notes = append(g.notes, fmt.Sprintf("%s stack was not torn down cleanly: %v", s.name, err))
		} else {
			fmt.Fprintf(g.stderr, "loadgate: %s stack torn down in %s\n", s.name, took.Round(time.Millisecond))
		}
	}
	gr := report.GateReport{
		Head:   report.GateSide{Name: "head", Ref: g.head.ref, Commit: g.head.commit, Results: g.head.results},
		Rounds: g.f.rounds, Order: "ABBA", Notes: g.notes,
	}
	base := []*result.Result{}
	if g.base != nil {
		gr.Base = report.GateSide{Name: "base", Ref: g.base.ref, Commit: g.base.commit, Results: g.base.results}
		base = g.base.results
	} else {
		for range g.head.results {
			base = append(base, g.baseline)
		}
		// The report shows the baseline once: its sample counts are its own,
		// not multiplied by the rounds it is paired with.
		gr.Base = report.GateSide{Name: "baseline", Ref: g.f.against, Commit: g.baseline.Commit, Results: []*result.Result{g.baseline}}
		gr.Order = "head rounds against a stored baseline"
		gr.Notes = append(gr.Notes, baselineNotes(g.baseline, g.head.results)...)
	}
	var v verdict.Verdict
	var err error
	switch {
	case interrupted:
		v = verdict.Verdict{Value: verdict.Unusable, Workloads: []verdict.WorkloadVerdict{}, Reasons: []string{"the gate was interrupted before its rounds ended"}}
	case len(base) != len(g.head.results) || len(base) == 0:
		v = verdict.Verdict{Value: verdict.Unusable, Workloads: []verdict.WorkloadVerdict{}, Reasons: []string{"the rounds did not complete on both sides"}}
	default:
		v, err = verdict.Gate(base, g.head.results, verdict.CompareOptions{Tolerance: g.f.tolerance, Confidence: g.f.confidence, Percentile: g.f.percentile})
		if err != nil { // a hash mismatch (same load or no comparison) or bad options
			return gr, usageErr("gate: %w", err)
		}
	}
	gr.Verdict = v
	return gr, nil
}

// writeGateReports writes report.md, verdict.json and latency.svg, prints
// the text report and returns the verdict's exit code.
func writeGateReports(out string, gr report.GateReport, stdout, stderr io.Writer) error {
	for name, render := range map[string]func(io.Writer) error{
		"report.md":    func(w io.Writer) error { return report.CompareMarkdown(w, gr) },
		"verdict.json": func(w io.Writer) error { return report.CompareJSON(w, gr) },
		"latency.svg":  func(w io.Writer) error { return report.ComparePlotSVG(w, gr) },
	} {
		if err := writeFile(filepath.Join(out, name), render); err != nil {
			return &exitError{code: exitUnusable, err: err}
		}
	}
	if err := report.CompareText(stdout, gr); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "loadgate: gate results in %s (report.md, verdict.json, latency.svg, per-side rounds)\n", out)
	if code := gr.Verdict.ExitCode(); code != 0 {
		return &exitError{code: code, err: fmt.Errorf("verdict: %s", gr.Verdict.Value)}
	}
	return nil
}

// prepare runs a stack's prepare command in dir.
func prepare(ctx context.Context, argv []string, dir string, stderr io.Writer) error {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	if strings.HasPrefix(argv[0], "./") {
		cmd.Path = filepath.Join(dir, argv[0])
	}
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s (in %s): %w", strings.Join(argv, " "), dir, err)
	}
	return nil
}
