// Package rounds runs a gate: the same load on base and head, each a
// checkout with its own stack, in ABBA rounds with the idle side paused (or
// both at once, Config.Duet); against a stored baseline its recorded commit
// is the base side where the clone has it, else head runs against its stored
// numbers. gate/verdict judges. Repo, Stacks and Runner are its ways to the
// world, faked in tests.
// Every error is ErrUsage (exit 2) or ErrUnusable (exit 3), never a verdict.
package rounds

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/session"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/outfile"
)

// ErrFaultsRefused: paused, alternating stacks cannot compare recovery
// honestly, so a scenario with inject: is refused before any stack comes up.
var ErrFaultsRefused = errors.New("gate: the scenario injects faults (phase inject:), which a gate does not do; " +
	"use `loadgate run --scenario FILE`, which injects them and judges recovery, or a scenario without inject:")

// Config is one gate: what to compare, how often, where the files go.
type Config struct {
	Scenario     string   // the scenario file, relative to the repository root
	Base, Head   string   // git refs; Head "" is the working tree. Against a baseline Base is the protected side's commit: the scenario and the baseline are read from it (not run)
	Against      string   // "base" (default: a fresh base run) or "baseline:NAME": its commit runs as base where the clone has it
	ScenarioFrom string   // whose scenario file is used: "base" (default with a Base) or "head" (unsafe for a required check; the default against a baseline without a Base)
	Rounds       int      // paired rounds (fixed); ignored when Auto
	Scale        float64  // --scale, both sides (0: 1)
	Compose      []string // compose files instead of the scenario's stack.compose (relative: to each side's root)
	Target       string   // service:port instead of the scenario's stack.target
	Out          string   // the results directory
	// RecordMissing: against a baseline the protected side does not have yet,
	// head runs alone, judged on its thresholds, so its results can be stored as it.
	RecordMissing bool
	// Compare: the operator's options. Tolerance 0 and ToleranceFloorSet
	// false leave them to the protected scenario (ResolveTolerance).
	Compare           verdict.CompareOptions
	ToleranceFloorSet bool
	Limits            scenario.OperatorLimits // the operator's ceilings: the lower of these and the scenario's wins
	Auto              bool                    // --rounds auto: sequential looks until decided, MaxRounds or Budget
	MaxRounds         int                     // Auto: the most paired rounds (0: DefaultMaxRounds)
	Budget            time.Duration           // wall time of the gate, from Run (0: DefaultBudget)
	// GuardWorkflows: head's changes to workflows or action.yml make the gate
	// unusable, unless AllowWorkflowChanges.
	GuardWorkflows, AllowWorkflowChanges bool

	// Continue is a directory of an earlier attempt's rounds (continue.go):
	// those of the same base, head, scenario and policy are this sequential
	// gate's first rounds, and this attempt's rounds are written back to it.
	Continue string
	// RunID, when set, is the CI run (GITHUB_RUN_ID) an attempt belongs to:
	// only a record of the same run is continued (docs/action.md, "Re-runs").
	RunID string

	Duet bool // both stacks stay up and both loads run on one schedule; needs a base side (off where a baseline's stored numbers stand alone)
	// Shape is how rounds are cut (windows.go): ShapeWindows, ShapeScenario,
	// or "" (windows for --rounds auto against a base side where the scenario
	// allows, else scenario).
	Shape       string
	Shard       Shard // this runner's share of the rounds, no verdict (shard.go)
	ToolVersion string
	shardSplit  bool // the rounds are already this shard's share (Validate runs twice)
}

// Validate applies defaults and refuses what cannot be a gate (ErrUsage),
// before any git call.
func (c *Config) Validate() error {
	if c.Against == "" {
		c.Against = "base"
	}
	if c.Scale == 0 {
		c.Scale = 1
	}
	if c.Budget == 0 {
		c.Budget = DefaultBudget
	}
	if c.MaxRounds == 0 {
		c.MaxRounds = DefaultMaxRounds
	}
	switch {
	case c.Scenario == "":
		return Usagef("gate: --scenario is required (see loadgate gate -h)")
	case !c.Auto && c.Rounds < 1:
		return Usagef("gate: --rounds must be at least 1 or auto, not %d", c.Rounds)
	case c.MaxRounds < 0 || c.MaxRounds == 1 || c.MaxRounds > verdict.MaxNeedRounds:
		return Usagef("gate: --max-rounds must be from 2 to %d, not %d", verdict.MaxNeedRounds, c.MaxRounds)
	case c.Budget < 0:
		return Usagef("gate: --budget must be positive, not %s", c.Budget)
	case c.Compare.ToleranceFloor < 0 || c.Compare.ToleranceFloor > verdict.MaxToleranceFloor:
		return Usagef("gate: --tolerance-floor %s: must be from 0 to %s", c.Compare.ToleranceFloor, verdict.MaxToleranceFloor)
	case c.ScenarioFrom != "" && c.ScenarioFrom != "head" && c.ScenarioFrom != "base":
		return Usagef("gate: --scenario-from must be head or base, not %q", c.ScenarioFrom)
	case c.Shape != "" && c.Shape != ShapeWindows && c.Shape != ShapeScenario:
		return Usagef("gate: --round-shape must be windows or scenario, not %q", c.Shape)
	}
	name, isBaseline := c.baseline()
	switch {
	case c.Against == "base":
		if c.Base == "" {
			return Usagef("gate: --base REF is required (or --against baseline:NAME)")
		}
	case isBaseline:
		if c.ScenarioFrom == "base" && c.Base == "" {
			return Usagef("gate: --scenario-from base needs --base (against baseline:%s, the commit whose scenario and baseline are read)", name)
		}
	default:
		return Usagef("gate: --against must be base or baseline:NAME, not %q", c.Against)
	}
	if c.RecordMissing && !isBaseline {
		return Usagef("gate: --baseline-missing record needs --against baseline:NAME, not --against %s", c.Against)
	}
	if err := c.validateShard(); err != nil {
		return err
	}
	if c.Shape == ShapeWindows && c.Shard.On() {
		return Usagef("gate: --round-shape windows brings both sides' stacks up again between windows: it needs a base side on one runner, not --shard; use --round-shape scenario")
	}
	if c.ScenarioFrom == "" { // the protected side's, where there is one
		c.ScenarioFrom = "base"
		if c.Base == "" {
			c.ScenarioFrom = "head"
		}
	}
	return nil
}

func (c *Config) baseline() (string, bool) {
	kind, name, ok := strings.Cut(c.Against, ":")
	return name, ok && kind == "baseline" && name != ""
}

// StackSpec is one side's stack, as the gate asks for it.
type StackSpec struct {
	Side       string   // "base" or "head": the project's suffix
	Commit     string   // for messages
	Files      []string // compose files, in the side's checkout
	Root       string   // the side's checkout: binds, build contexts and env files stay inside
	Target     string   // service:port that receives the load
	Prepare    []string // stack.prepare (argv), run in PrepareDir first; none when empty
	PrepareDir string   // in the side's checkout
	// PrepareHide is what prepare must not see: the other checkout, the
	// results, the git config (a checkout token), temp and Docker config.
	PrepareHide []string
	PrepareRoot string             // the side's checkout: prepare writes there and in its scratch only
	Out         string             // OUT/<side>: the services' logs go here at teardown
	Scenario    *scenario.Scenario // the protected side's; counters and stubs resolve once up
	Secrets     []string           // the scenario's ${ENV} values, scrubbed from saved logs
	// Instance is a windows gate's stack instance when > 1: its stacks are
	// up beside the first's, so they are a project of their own.
	Instance int
}

// Stacks brings a side's stack up, healthy, target resolved. Errors are
// ErrUsage for a disallowed target, count or compose file (or no prepare sandbox), else
// ErrUnusable.
type Stacks interface {
	Up(ctx context.Context, spec StackSpec) (Stack, error)
}

// Stack is one side's running stack; not safe for concurrent use (a duet
// uses each side's stack from its own goroutine).
type Stack interface {
	Addr() string              // the target's host:port
	Topology() result.Topology // cpus, verified pinning and target path
	Pause(ctx context.Context) error
	Unpause(ctx context.Context) error
	// Sample samples the stack and generator into dir after warmup; stop
	// fills the result's stack figures and topology.
	Sample(ctx context.Context, dir string, warmup time.Duration) (start func(t0 time.Time), stop func(*result.Result) error, err error)
	Down() (time.Duration, error) // on its own context; how long it took
	// Count prepares one round's reads of the services' counts and stubs;
	// ErrUsage for a disallowed service:port, else ErrUnusable.
	Count(ctx context.Context, sc *scenario.Scenario) (Counter, error)
}

type Counter = session.Counter
type RunSpec = session.Spec
type Runner = session.Runner

// Deps are the gate's ways to the world.
type Deps struct {
	Repo      Repo
	Stacks    Stacks
	Runner    Runner
	LookupEnv func(string) (string, bool) // for the scenario's ${ENV}; default os.LookupEnv
	Mask      func(map[string]string)     // called with the resolved ${ENV} values before anything is logged
	Log       io.Writer                   // progress lines; default io.Discard. Written from the goroutine that called Run only (a duet's sides' warnings too)
	Now       func() time.Time            // the clock of the budget; default time.Now
	Words     Words                       // the log's wording of plan and generator; default bare figures
}

type Side struct {
	Name, Ref, Commit, Root string
	Worktree                bool
	Results                 []*result.Result
	stack                   Stack   // the running instance's
	insts                   []Stack // this attempt's instances, in order (windows.go); every one is torn down
}

// Order returns the sides of round i: A B, then B A, then A B ... (ABBA).
func Order(i int, a, b *Side) [2]*Side {
	if i%2 == 0 {
		return [2]*Side{a, b}
	}
	return [2]*Side{b, a}
}

type gate struct {
	cfg        Config
	d          Deps
	sc         *scenario.Scenario
	env        map[string]string
	target     string
	from       *Side // whose scenario file
	base, head *Side
	prot       *Side // whose scenario and baselines bind head (nil: none)
	baseline   *result.Result
	first      string           // RecordMissing: the baseline none has yet; head runs alone
	notes      []verdict.Note   // the set-up's and plan's notes, worded by report
	start      time.Time        // Run's start: the budget counts from here
	seq        *verdict.Verdict // Auto: the look that stopped the gate
	maxRounds  int              // what the budget allows (CompareOptions.MaxRounds)
	stall      stallState       // stalled rounds flagged and replaced (stall.go)
	win        *windowPlan      // ShapeWindows: the judged windows and instances; nil: whole-scenario rounds
	instance0  int              // this attempt's first stack instance (after a continued attempt's)
	workflows  []WorkflowChange // head's changes to the gate's workflows (GuardWorkflows)
	adopting   bool             // base runs no gate: head's workflow adds it
	earlier    *Continued       // the earlier attempt's rounds this gate continues (continue.go)
}

// workflowBlocks: head's workflow changes make the gate unusable before any
// stack is built (a shard still runs its rounds: Merge decides).
func (g *gate) workflowBlocks() bool {
	return !g.adopting && !g.cfg.Shard.On() && WorkflowBlocks(g.workflows, g.cfg.AllowWorkflowChanges)
}

// Run checks out the sides, brings their stacks up, runs the rounds and
// judges; the report names what ran even on error. Every stack and checkout
// is removed before Run returns.
func Run(ctx context.Context, cfg Config, d Deps) (Outcome, error) {
	if err := cfg.Validate(); err != nil {
		return Outcome{Rounds: cfg.Rounds}, err
	}
	if d.Log == nil {
		d.Log = io.Discard
	}
	if d.LookupEnv == nil {
		d.LookupEnv = os.LookupEnv
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Words == nil {
		d.Words = bareWords{}
	}
	g := &gate{cfg: cfg, d: d, start: d.Now()}
	defer g.close()
	err := g.setup(ctx)
	var gr Outcome
	switch {
	case err == nil && g.workflowBlocks():
		gr = g.partialReport()
		GuardWorkflows(&gr, g.workflows, false) // unusable, no round run: seconds, not minutes
	case err == nil:
		gr, err = g.run(ctx)
	}
	if err != nil {
		gr = g.partialReport() // an unusable gate still names its scenario, sides and commits
	}
	if cfg.Shard.On() {
		err = g.writeShard(gr, err)
	}
	return gr, err
}

func (g *gate) setup(ctx context.Context) error {
	var err error
	if g.head, err = g.materialize(ctx, "head", g.cfg.Head); err != nil {
		return err
	}
	name, isBaseline := g.cfg.baseline()
	switch {
	case !isBaseline:
		if g.base, err = g.materialize(ctx, "base", g.cfg.Base); err != nil {
			return err
		}
		g.prot = g.base
	case g.cfg.Base != "":
		if g.prot, err = g.materialize(ctx, "base", g.cfg.Base); err != nil {
			return err
		}
	}
	if isBaseline {
		if err := g.loadBaseline(name); err != nil {
			return err
		}
		if err := g.baselineSides(ctx, name); err != nil {
			return err
		}
	}
	if g.sc, err = g.loadScenario(); err != nil {
		return err
	}
	var tolNotes []verdict.Note
	g.cfg.Compare.Tolerance, g.cfg.Compare.ToleranceFloor, tolNotes = ResolveTolerance(g.sc, g.cfg.Compare.Tolerance, g.cfg.Compare.ToleranceFloor, g.cfg.ToleranceFloorSet)
	g.notes = append(g.notes, tolNotes...)
	if err := g.loadNoise(); err != nil {
		return err
	}
	if err := g.sc.CheckOperatorLimits(g.cfg.Limits); err != nil {
		return Usagef("gate: %w", err)
	}
	if g.sc.HasFaults() {
		return Usagef("%w", ErrFaultsRefused)
	}
	if g.target, err = g.targetOf(); err != nil {
		return err
	}
	if g.env, err = g.sc.ResolveEnv(g.d.LookupEnv); err != nil {
		return Usagef("%w", err)
	}
	if g.d.Mask != nil {
		g.d.Mask(g.env)
	}
	if g.cfg.GuardWorkflows && g.prot != nil {
		g.workflows = WorkflowChanges(g.prot.Root, g.head.Root)
		g.adopting = len(g.workflows) > 0 && BaseRunsNoGate(g.prot.Root)
	}
	if g.baseline != nil && g.baseline.Scenario.Hash != g.sc.Hash {
		return Usagef("gate: baseline %s was measured with scenario hash %s, head's is %s: same load or no comparison", name, g.baseline.Scenario.Hash, g.sc.Hash)
	}
	if err := g.shape(); err != nil {
		return err
	}
	return g.loadEarlier(ctx) // after shape: a windows gate's rounds are of its window's load
}

// shape picks the round shape: windows where asked, or by default for
// sequential rounds against a base side on one runner when the scenario allows.
func (g *gate) shape() error {
	why := windowsWhyNot(g.sc)
	switch g.cfg.Shape {
	case ShapeScenario:
		return nil
	case ShapeWindows:
		if why != "" {
			return Usagef("gate: --round-shape windows: %s; use --round-shape scenario", why)
		}
	default:
		if !g.cfg.Auto || g.base == nil || g.cfg.Shard.On() {
			return nil
		}
		if why != "" {
			fmt.Fprintf(g.d.Log, "loadgate: rounds run the whole scenario: %s\n", why)
			return nil
		}
	}
	g.win = newWindowPlan(g.sc, g.cfg.Compare.Percentile)
	return nil
}

// loadNoise reads the protected side's calibration unless one was given: the
// change judged does not set its own noise floor. A duet gate notes it unused.
func (g *gate) loadNoise() error {
	if g.cfg.Compare.Noise != nil {
		return nil
	}
	n, p, err := LoadNoise(g.from.Root, g.sc.Name)
	if err != nil {
		return Usagef("gate: noise calibration: %w", err)
	}
	switch {
	case n != nil && g.cfg.Duet:
		rel, _ := filepath.Rel(g.from.Root, p)
		g.notes = append(g.notes, verdict.Note{Code: verdict.NoteDuetNoiseUnused, Path: filepath.ToSlash(rel)})
	case n != nil:
		g.cfg.Compare.Noise = n
		fmt.Fprintf(g.d.Log, "loadgate: noise calibration %s (%d pairs, %s)\n", p, n.Pairs, n.Date.Format(time.DateOnly))
	}
	return nil
}

func (g *gate) targetOf() (string, error) {
	switch {
	case g.sc.Stack == nil && len(g.cfg.Compose) == 0:
		return "", Usagef("gate: the scenario has no stack: section and no --compose was given: a gate runs each side's own stack")
	case g.cfg.Target != "":
		return g.cfg.Target, nil
	case g.sc.Stack != nil && g.sc.Stack.Target != "":
		return g.sc.Stack.Target, nil
	}
	return "", Usagef("gate: no target: the scenario has no stack.target and no --target was given; pass --target SERVICE:PORT, the service that receives the load")
}

// loadScenario reads the protected side's scenario, noting head's differences.
func (g *gate) loadScenario() (*scenario.Scenario, error) {
	opts := scenario.Options{Scale: g.cfg.Scale, ScaleSet: true}
	load := func(s *Side) (*scenario.Scenario, error) {
		sc, err := scenario.Load(filepath.Join(s.Root, g.cfg.Scenario), opts)
		if err != nil {
			return nil, Usagef("gate: %s side: %w", s.Name, err)
		}
		return sc, nil
	}
	g.from = g.head
	if g.prot == nil {
		return load(g.head)
	}
	if g.cfg.ScenarioFrom == "head" {
		sc, err := load(g.head)
		if err != nil {
			return nil, err
		}
		g.notes = append(g.notes, verdict.Note{Code: verdict.NoteScenarioFromHead})
		if bsc, err := load(g.prot); err == nil {
			for _, c := range PolicyChanges(bsc, sc) {
				g.notes = append(g.notes, verdict.Note{Code: verdict.NotePolicyApplied, Policy: &c})
			}
		}
		return sc, nil
	}
	bsc, err := load(g.prot)
	if errors.Is(err, fs.ErrNotExist) {
		sc, err := load(g.head)
		if err != nil {
			return nil, err
		}
		g.notes = append(g.notes, verdict.Note{Code: verdict.NoteScenarioNewInHead, Commit: g.prot.Commit, Path: g.cfg.Scenario})
		return sc, nil
	}
	if err != nil {
		return nil, err
	}
	g.from = g.prot
	hsc, err := load(g.head)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		g.notes = append(g.notes, verdict.Note{Code: verdict.NoteScenarioRemovedInHead, Path: g.cfg.Scenario})
	case err != nil:
		g.notes = append(g.notes, verdict.Note{Code: verdict.NoteScenarioUnreadInHead, Path: g.cfg.Scenario, Detail: err.Error()})
	default:
		for _, c := range PolicyChanges(bsc, hsc) {
			g.notes = append(g.notes, verdict.Note{Code: verdict.NotePolicyNotApplied, Policy: &c})
		}
	}
	return bsc, nil
}

// baselineSides makes a stored baseline's commit the base side where the
// clone has it (BaselineRun); else, or with no baseline yet, head runs alone.
func (g *gate) baselineSides(ctx context.Context, name string) error {
	if g.baseline == nil { // RecordMissing: whole-scenario rounds of head alone
		g.cfg.Duet, g.cfg.Shape = false, ShapeScenario
		if g.cfg.Auto {
			g.cfg.Auto, g.cfg.Rounds = false, 1
		}
		return nil
	}
	n := BaselineRun(ctx, g.d.Repo, name, g.baseline)
	g.notes = append(g.notes, n)
	if n.Code != verdict.NoteBaselineRerun {
		fmt.Fprintf(g.d.Log, "loadgate: %s\n", g.d.Words.Note(n))
		g.cfg.Duet = false // one side: rounds one at a time, whole scenario
		if g.cfg.Shape == ShapeWindows {
			g.cfg.Shape = ShapeScenario
		}
		return nil
	}
	var err error
	if g.prot != nil && g.prot.Commit == n.Commit { // one checkout: read, then run
		g.base = &Side{Name: "base", Ref: g.cfg.Against, Commit: n.Commit, Root: g.prot.Root, Worktree: true}
		return nil
	}
	g.base, err = g.materializeIn(ctx, "base", "baseline", n.Commit)
	if g.base != nil {
		g.base.Ref = g.cfg.Against
	}
	return err
}

func (g *gate) materialize(ctx context.Context, name, ref string) (*Side, error) {
	return g.materializeIn(ctx, name, name, ref)
}

// materializeIn is side name at ref, its worktree in directory dir.
func (g *gate) materializeIn(ctx context.Context, name, dir, ref string) (*Side, error) {
	s := &Side{Name: name, Ref: ref}
	if ref == "" {
		s.Ref, s.Root = "working tree", g.d.Repo.Root()
		c, err := g.d.Repo.Commit(ctx, "")
		if err != nil {
			return nil, Usagef("gate: head: %w", err)
		}
		s.Commit = c
		if g.d.Repo.Dirty(ctx) {
			s.Commit += "+dirty"
			g.notes = append(g.notes, verdict.Note{Code: verdict.NoteHeadDirty})
		}
		return s, nil
	}
	c, err := g.d.Repo.Commit(ctx, ref)
	if err != nil {
		return nil, Usagef("gate: %s: %q is not a commit: %w", name, ref, err)
	}
	s.Commit = c
	if s.Root, err = g.d.Repo.AddWorktree(ctx, dir, c); err != nil {
		return s, Unusablef("gate: %s: %w", name, err)
	}
	s.Worktree = true
	return s, nil
}

func inSide(s *Side, from, p string) string {
	if rel, err := filepath.Rel(from, p); err == nil && filepath.IsLocal(rel) {
		return filepath.Join(s.Root, rel)
	}
	return p
}

func (g *gate) spec(s *Side) StackSpec {
	sp := StackSpec{Side: s.Name, Commit: s.Commit, Root: s.Root, Target: g.target, Out: filepath.Join(g.cfg.Out, s.Name), Scenario: g.sc}
	// A later instance of this attempt: fresh containers of what its first built.
	// (A continued attempt's first instance is its first: a fresh checkout, prepared.)
	later := g.win != nil && g.win.instance > g.win.first
	if g.win != nil && g.win.instance > 1 { // each instance's services' logs apart, its own project
		sp.Out = filepath.Join(sp.Out, fmt.Sprintf("instance-%d", g.win.instance))
		sp.Instance = g.win.instance
	}
	for _, v := range g.env {
		sp.Secrets = append(sp.Secrets, v)
	}
	if len(g.cfg.Compose) > 0 {
		for _, p := range g.cfg.Compose {
			if filepath.IsAbs(p) {
				sp.Files = append(sp.Files, inSide(s, g.d.Repo.Root(), p))
			} else {
				sp.Files = append(sp.Files, filepath.Join(s.Root, p))
			}
		}
	} else {
		for _, p := range g.sc.Stack.Compose {
			sp.Files = append(sp.Files, inSide(s, g.from.Root, p))
		}
	}
	if g.sc.Stack != nil && len(g.sc.Stack.Prepare) > 0 && !later { // a later instance: fresh containers of what the first built
		sp.Prepare, sp.PrepareDir = g.sc.Stack.Prepare, inSide(s, g.from.Root, g.sc.Stack.Dir)
		sp.PrepareHide, sp.PrepareRoot = g.prepareHide(s), s.Root
	}
	return sp
}

func (g *gate) prepareHide(s *Side) []string {
	hide := []string{g.cfg.Out, filepath.Join(g.d.Repo.Root(), ".git", "config")}
	for _, o := range []*Side{g.base, g.head, g.prot} {
		if o != nil && o.Root != "" && o.Root != s.Root {
			hide = append(hide, o.Root)
		}
	}
	if t := os.Getenv("RUNNER_TEMP"); t != "" {
		hide = append(hide, t)
	}
	if h, err := os.UserHomeDir(); err == nil {
		hide = append(hide, filepath.Join(h, ".docker"))
	}
	return hide
}

func (g *gate) up(ctx context.Context, s *Side) error {
	st, err := g.d.Stacks.Up(ctx, g.spec(s))
	if err != nil {
		if KindOf(err) == ErrUsage {
			return err
		}
		return Unusablef("gate: %s side (%s) is unusable: %w", s.Name, result.ShortHash(s.Commit), err)
	}
	s.stack = st
	s.insts = append(s.insts, st)
	if g.cfg.Duet {
		return nil
	}
	if err := st.Pause(ctx); err != nil {
		return Unusablef("gate: %s side: pause: %w", s.Name, err)
	}
	return nil
}

// duetLead is the margin before a duet's common start for the runner's set-up.
const duetLead = 250 * time.Millisecond

func (g *gate) run(ctx context.Context) (Outcome, error) {
	sides := []*Side{g.head}
	if g.base != nil {
		sides = []*Side{g.base, g.head}
	}
	g.announce()
	began := g.d.Now()
	g.instance0 = 1 + lastInstance(g.head.Results, 0) // after a continued attempt's instances
	if g.win != nil {
		g.win.offset, g.win.first = len(g.head.Results), g.instance0
	}
	if err := g.upAll(ctx, sides, g.instance0); err != nil {
		return Outcome{}, err
	}
	if g.win != nil {
		g.win.upTook = g.d.Now().Sub(began)
	}
	// Planned once the stacks are up: start-up counts against the budget.
	planned, seq, err := g.plan(len(sides))
	if err != nil {
		return Outcome{}, err
	}
	if done, err := g.replay(seq); err != nil || done {
		if err != nil {
			return Outcome{}, err
		}
		return g.finish(false)
	}
	if err := g.primeInstance(ctx, sides); err != nil {
		return Outcome{}, err
	}
	if g.win != nil { // every instance up and primed before round 1: the rounds take them in turn
		if err := g.upRest(ctx, sides); err != nil {
			return Outcome{}, err
		}
	}
	g.stall.rerun = -1
	var longest time.Duration
	// n counts the planned rounds run (an earlier attempt's first); a stalled round is run again in its slot.
	for n, ran := len(g.head.Results), 0; n < planned || g.stall.rerun >= 0; ran++ {
		i := n
		if g.stall.rerun >= 0 {
			i, g.stall.rerun = g.stall.rerun, -1
		} else {
			n++
		}
		took, interrupted, err := g.timedRound(ctx, sides, i, planned)
		if err != nil {
			return Outcome{}, err
		}
		if interrupted {
			return g.finish(true)
		}
		if ran == 0 && g.earlier == nil { // a continued plan is fixed before its replayed looks
			if planned, err = g.replan(seq, len(sides), took, planned); err != nil {
				return Outcome{}, err
			}
		}
		longest = max(longest, took)
		if seq != nil {
			seq.roundTime = max(seq.roundTime, took)
		}
		if g.first == "" { // head alone has no pair to find a stall in
			if rerun, err := g.stalled(len(sides), planned, longest); err != nil {
				return Outcome{}, err
			} else if rerun {
				continue
			}
		}
		if seq != nil && !g.cfg.Shard.On() { // a shard takes no looks: the merge judges
			stop, err := g.look(seq)
			if err != nil {
				return Outcome{}, err
			}
			if stop {
				break
			}
		}
	}
	return g.finish(false)
}

// timedRound runs round i on its instance (switched to first, in the time).
func (g *gate) timedRound(ctx context.Context, sides []*Side, i, planned int) (time.Duration, bool, error) {
	began := g.d.Now()
	if g.win != nil {
		if err := g.switchTo(ctx, sides, g.win.pairOf(i)); err != nil {
			return 0, false, err
		}
	}
	var interrupted bool
	var err error
	if g.cfg.Duet {
		interrupted, err = g.duetRound(ctx, i, planned)
	} else {
		interrupted, err = g.pairRound(ctx, i, planned)
	}
	return g.d.Now().Sub(began), interrupted, err
}

func (g *gate) announce() {
	roundsWord := fmt.Sprintf("%d round(s)", g.cfg.Rounds)
	if g.cfg.Auto {
		roundsWord = fmt.Sprintf("sequential rounds, at most %d, budget %s", g.cfg.MaxRounds, g.cfg.Budget)
	}
	if g.cfg.Duet {
		roundsWord += ", duet (both sides at the same instants)"
	}
	fmt.Fprintf(g.d.Log, "loadgate: gate %s (%s): %s; %s; results in %s\n", g.sc.Name, result.ShortHash(strings.TrimPrefix(g.sc.Hash, "sha256:")), g.describeSides(), roundsWord, g.cfg.Out)
}

// plan is the rounds planned for n sides and an auto gate's loop; it sets g.maxRounds.
func (g *gate) plan(n int) (int, *seqLoop, error) {
	if !g.cfg.Auto {
		g.maxRounds = g.fixedMaxRounds(n, RoundEstimate(g.roundScenario(), n, g.cfg.Duet), 0)
		if g.win != nil {
			_, inst := g.win.fit(g.win.firstLeft(g.left(n), n, g.cfg.Duet), RoundEstimate(g.win.window, n, g.cfg.Duet), n, g.cfg.Duet, g.cfg.Rounds)
			g.win.setPlan(g.cfg.Rounds, inst)
			g.logWindows(0)
		}
		return g.cfg.Rounds, nil, nil
	}
	seq, err := g.planSequential(n)
	if err != nil {
		return 0, nil, err
	}
	g.maxRounds = seq.plan.MaxRounds
	return seq.plan.MaxRounds, seq, nil
}

func (g *gate) pairRound(ctx context.Context, i, planned int) (bool, error) {
	pair := [2]*Side{g.head, nil}
	if g.base != nil {
		pair = Order(g.orderOf(i), g.base, g.head)
	}
	first := true
	for _, s := range pair {
		if s == nil {
			continue
		}
		fmt.Fprintf(g.d.Log, "loadgate: round %d/%d: %s (%s)\n", i+1, planned, s.Name, result.ShortHash(s.Commit))
		res, err := g.round(ctx, s, g.roundRecord(result.Round{Number: i + 1, First: first, OtherPaused: g.base != nil}))
		first = false
		if err != nil {
			return false, err
		}
		s.Results = put(s.Results, i, res)
		g.logBehind(i, s.Name, res)
		if res.Interrupted {
			return true, nil
		}
	}
	return false, nil
}

// logBehind logs that a side's generator fell behind, so a CI log shows why
// looks stay undecided.
func (g *gate) logBehind(i int, side string, res *result.Result) {
	if gb := res.GeneratorBehind(); gb != nil {
		fmt.Fprintf(g.d.Log, "loadgate: round %d: %s: %s\n", i+1, side, g.d.Words.Generator(*gb))
	}
}

// duetRound runs round i's sides on one common start. Launch order alternates
// as ABBA does so its bias cancels; results are kept only as a pair.
func (g *gate) duetRound(ctx context.Context, i, planned int) (bool, error) {
	fmt.Fprintf(g.d.Log, "loadgate: round %d/%d: base (%s) and head (%s) at the same instants (duet)\n", i+1, planned, result.ShortHash(g.base.Commit), result.ShortHash(g.head.Commit))
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sides := Order(g.orderOf(i), g.base, g.head) // the launch order
	fail := func(k int, err error, other string) error {
		if KindOf(err) == nil {
			err = Unusable(err)
		}
		return fmt.Errorf("gate: duet round %d: %s side: %w (the %s side %s)", i+1, sides[k].Name, err, sides[1-k].Name, other)
	}
	var ps [2]*prepared
	for k, s := range sides {
		p, err := g.prepare(ctx, s, g.roundRecord(result.Round{Number: i + 1, Mode: result.RoundDuet}))
		if err != nil {
			if k == 1 {
				ps[0].abandon()
			}
			return false, fail(k, err, "was not started")
		}
		ps[k] = p
	}
	startAt := g.d.Now().Add(duetLead) // both sides are ready
	res, errs, warnings, first := g.duetLoads(ctx, cancel, ps, startAt)
	for k, w := range warnings {
		if w != nil {
			fmt.Fprintf(g.d.Log, "loadgate: warning: %s stats: %v\n", sides[k].Name, w)
		}
	}
	if first >= 0 {
		return false, fail(first, errs[first], "was stopped with it")
	}
	for k, p := range ps {
		if err := g.write(ctx, p, res[k]); err != nil {
			return false, err
		}
	}
	for k, p := range ps {
		p.s.Results = put(p.s.Results, i, res[k])
		g.logBehind(i, p.s.Name, res[k])
	}
	return res[0].Interrupted || res[1].Interrupted, nil
}

// duetLoads runs both prepared loads from startAt; the first to fail cancels
// the other with its cause (first: its side, -1: none).
func (g *gate) duetLoads(ctx context.Context, cancel context.CancelCauseFunc, ps [2]*prepared, startAt time.Time) (res [2]*result.Result, errs, warnings [2]error, first int) {
	first = -1
	var mu sync.Mutex
	var wg sync.WaitGroup
	for k, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := g.load(ctx, p, startAt, k == 0)
			if err == nil {
				warnings[k] = g.complete(ctx, p, r)
			}
			res[k], errs[k] = r, err
			if err != nil {
				mu.Lock()
				if first < 0 {
					first = k
					cancel(fmt.Errorf("the %s side failed: %w", p.s.Name, err))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return res, errs, warnings, first
}

// round runs s's load once, unpaused for it, into OUT/<side>/round-<i>/result.json.
func (g *gate) round(ctx context.Context, s *Side, rd result.Round) (*result.Result, error) {
	p, err := g.prepare(ctx, s, rd)
	if err != nil {
		return nil, err
	}
	res, err := g.load(ctx, p, time.Time{}, false)
	if err != nil {
		return nil, err
	}
	if err := g.complete(ctx, p, res); err != nil {
		fmt.Fprintf(g.d.Log, "loadgate: warning: %s stats: %v\n", s.Name, err)
	}
	if err := g.write(ctx, p, res); err != nil {
		return nil, err
	}
	return res, nil
}

// prepared is one side's round ready to run: stack unpaused and sampled, counts ready.
type prepared struct {
	s     *Side
	rd    result.Round
	dir   string // OUT/<side>/round-<i>
	start func(t0 time.Time)
	stop  func(*result.Result) error
	cnt   Counter
	sc    *scenario.Scenario // what this load runs: the scenario, a window of it, or an instance's warm-up
}

func (p *prepared) duet() bool { return p.rd.Mode == result.RoundDuet }

// prepare does everything before a round's load, so a duet can start both at once.
func (g *gate) prepare(ctx context.Context, s *Side, rd result.Round) (*prepared, error) {
	p := &prepared{s: s, rd: rd, dir: filepath.Join(g.cfg.Out, s.Name, fmt.Sprintf("round-%d", rd.Number)), sc: g.roundScenario()}
	if rd.Number == 0 { // an instance's warm-up run (windows.go): its own directory, not a round
		p.dir, p.sc = filepath.Join(g.cfg.Out, s.Name, fmt.Sprintf("instance-%d-warmup", rd.Instance)), g.win.prime
	}
	if err := outfile.MkdirAll(p.dir); err != nil { // no symlink below the results directory
		var se *outfile.SymlinkError
		if errors.As(err, &se) {
			return nil, Usage(err) // the change planted it: refused, exit 2
		}
		return nil, Unusable(err)
	}
	if !p.duet() {
		if err := s.stack.Unpause(ctx); err != nil {
			return nil, Unusablef("gate: %s side: unpause: %w", s.Name, err)
		}
	}
	var err error
	if p.start, p.stop, err = s.stack.Sample(ctx, p.dir, p.sc.Warmup); err != nil {
		return nil, Unusablef("gate: %s side: stats: %w", s.Name, err)
	}
	if p.cnt, err = s.stack.Count(ctx, g.sc); err != nil {
		p.abandon()
		if KindOf(err) == nil {
			err = Unusable(err)
		}
		return nil, fmt.Errorf("gate: %s side: counted by the service: %w", s.Name, err)
	}
	return p, nil
}

func (p *prepared) abandon() { _ = p.stop(&result.Result{}) }

func (g *gate) load(ctx context.Context, p *prepared, startAt time.Time, noProgress bool) (*result.Result, error) {
	s := p.s
	addr := s.stack.Addr()
	res, err := g.d.Runner.Run(ctx, RunSpec{
		Scenario: p.sc, Env: g.env, Target: &url.URL{Scheme: "http", Host: addr}, TargetLabel: g.target + " (" + addr + ")", Topology: s.stack.Topology(), Dir: p.dir,
		Side: s.Name, Commit: s.Commit, Round: &p.rd, Started: []func(time.Time){p.start, p.cnt.Started()},
		StartAt: startAt, NoProgress: noProgress,
	})
	if err != nil {
		p.abandon()
		if KindOf(err) == nil {
			err = Unusable(err)
		}
		return nil, err
	}
	return res, nil
}

// complete fills res with counts and stack figures; its error is only a warning.
func (g *gate) complete(ctx context.Context, p *prepared, res *result.Result) error {
	p.cnt.Finish(ctx, res) // what the side's services counted in this round
	err := p.stop(res)
	if p.duet() && res.Stack != nil && res.Stack.Generator != nil {
		res.NotMeasured = append(res.NotMeasured, result.DuetGeneratorNotMeasured)
	}
	return err
}

func (g *gate) write(ctx context.Context, p *prepared, res *result.Result) error {
	if err := res.WriteFile(filepath.Join(p.dir, "result.json")); err != nil {
		return Unusable(err)
	}
	if !res.Interrupted && !p.duet() {
		if err := p.s.stack.Pause(ctx); err != nil {
			return Unusablef("gate: %s side: pause: %w", p.s.Name, err)
		}
	}
	return nil
}

func (g *gate) describeSides() string {
	h := fmt.Sprintf("head %s (%s)", g.head.Ref, result.ShortHash(g.head.Commit))
	if g.base != nil {
		return fmt.Sprintf("base %s (%s) vs %s", g.base.Ref, result.ShortHash(g.base.Commit), h)
	}
	if g.first != "" {
		return fmt.Sprintf("%s alone (no baseline %s yet)", h, g.first)
	}
	if g.prot != nil {
		return fmt.Sprintf("baseline %s from base %s (%s) vs %s", g.cfg.Against, g.prot.Ref, result.ShortHash(g.prot.Commit), h)
	}
	return fmt.Sprintf("baseline %s vs %s", g.cfg.Against, h)
}

// down tears down every side's every instance (each Down on its own context).
func (g *gate) down() {
	for _, s := range []*Side{g.base, g.head} {
		if s == nil {
			continue
		}
		sts := s.insts
		if len(sts) == 0 && s.stack != nil {
			sts = []Stack{s.stack}
		}
		for k, st := range sts {
			which := ""
			if len(sts) > 1 {
				which = fmt.Sprintf(" (instance %d)", g.instance0+k)
			}
			took, err := st.Down()
			if err != nil {
				g.notes = append(g.notes, verdict.Note{Code: verdict.NoteTeardown, Side: s.Name, Detail: err.Error()})
			} else {
				fmt.Fprintf(g.d.Log, "loadgate: %s stack%s torn down in %s\n", s.Name, which, took.Round(time.Millisecond))
			}
		}
		s.stack, s.insts = nil, nil
	}
}

func (g *gate) close() {
	g.down()
	if err := g.d.Repo.Close(); err != nil {
		fmt.Fprintf(g.d.Log, "loadgate: warning: %v\n", err)
	}
}

func (g *gate) finish(interrupted bool) (Outcome, error) {
	g.down()
	gr := g.partialReport()
	base := g.baseResults()
	if g.baseline != nil && g.base == nil {
		gr.Notes = append(gr.Notes, BaselineNotes(g.baseline, g.head.Results)...)
	}
	switch {
	case g.first != "" && !interrupted && len(g.head.Results) > 0:
		gr.Verdict = g.firstVerdict()
	case interrupted:
		gr.Verdict = UnusableVerdict(verdict.Note{Code: verdict.NoteGateInterrupted})
	case len(base) != len(g.head.Results) || len(base) == 0:
		gr.Verdict = UnusableVerdict(verdict.Note{Code: verdict.NoteRoundsIncomplete})
	case g.cfg.Shard.On(): // no verdict of its own: Merge judges
	case g.seq != nil:
		gr.Verdict = *g.seq
	default:
		v, err := verdict.Gate(base, g.head.Results, g.compareOptions())
		if err != nil { // a hash mismatch (same load or no comparison) or bad options
			return gr, Usagef("gate: %w", err)
		}
		gr.Verdict = v
	}
	if e := g.earlier; e != nil {
		gr.Notes = append(gr.Notes, verdict.Note{Code: verdict.NoteContinued, Rounds: e.Rounds, HeadRounds: len(g.head.Results),
			Attempts: e.Attempts, Replayed: e.Replayed})
	}
	switch {
	case g.adopting:
		AdoptGate(&gr, g.workflows)
	case g.cfg.GuardWorkflows && g.prot != nil:
		GuardWorkflows(&gr, g.workflows, g.cfg.AllowWorkflowChanges)
	}
	if !interrupted && gr.Verdict.Value != verdict.Unusable {
		if err := g.saveAttempt(gr); err != nil {
			fmt.Fprintf(g.d.Log, "loadgate: warning: this attempt's rounds were not kept for a re-run: %v\n", err)
		}
	}
	return gr, nil
}

func (g *gate) baseResults() []*result.Result {
	if g.base != nil {
		return g.base.Results
	}
	var base []*result.Result
	if g.baseline == nil { // no baseline yet: head alone
		return nil
	}
	for range g.head.Results {
		base = append(base, g.baseline)
	}
	return base
}

// firstVerdict judges head's rounds, merged, on their thresholds alone: there
// is no baseline yet, and one that passes is to be stored as it.
func (g *gate) firstVerdict() verdict.Verdict {
	merged, err := result.MergeAll(g.head.Results)
	if err != nil {
		return UnusableVerdict(verdict.Note{Code: verdict.NoteMerge, Side: "head", Detail: err.Error()})
	}
	v := verdict.Thresholds(merged)
	code := verdict.NoteBaselineFirstFailed
	if v.Value == verdict.Pass {
		code = verdict.NoteBaselineFirst
	}
	v.Notes = append(v.Notes, verdict.Note{Code: code, Name: g.first})
	return v
}

// partialReport is what is known of a gate, even one stopped early.
func (g *gate) partialReport() Outcome {
	rounds := g.cfg.Rounds
	if g.cfg.Auto {
		rounds = 0
		if g.head != nil {
			rounds = len(g.head.Results) // the rounds that ran
		}
	}
	gr := Outcome{Rounds: rounds, Notes: append([]verdict.Note(nil), g.notes...)}
	if g.sc != nil {
		gr.Scenario = result.Scenario{Name: g.sc.Name, Hash: g.sc.Hash, File: filepath.ToSlash(g.cfg.Scenario)}
	}
	if g.head != nil {
		gr.Head = SideResults{Name: "head", Ref: g.head.Ref, Commit: g.head.Commit, Results: g.head.Results}
	}
	switch {
	case g.base != nil:
		gr.Base = SideResults{Name: "base", Ref: g.base.Ref, Commit: g.base.Commit, Results: g.base.Results}
	case g.baseline != nil:
		gr.Base = SideResults{Name: "baseline", Ref: g.cfg.Against, Commit: g.baseline.Commit, Results: []*result.Result{g.baseline}}
	case g.first != "":
		gr.Base = SideResults{Name: "baseline", Ref: g.cfg.Against}
	}
	if g.base != nil && g.baseline != nil {
		gr.Stored = g.baseline
	}
	return gr
}
