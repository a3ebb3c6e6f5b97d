package rounds

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/loadgate/loadgate/compose"
	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/session"
	"github.com/loadgate/loadgate/internal/outfile"
)

// Setup is what Prepare needs besides the Config.
type Setup struct {
	Name        string // the default results directory's prefix: gate, calibrate
	Replace     bool   // an Out that holds a result is replaced (--force, the Action's results-dir)
	Stack       session.StackOptions
	Deps        Deps                                     // without Repo and Stacks: Prepare adds them
	OnEmergency func(func(context.Context) error) func() // see OpenGit
	// UnsetSecrets removes the runner's credentials from the environment and
	// returns their names, so the sides' checkouts get none.
	UnsetSecrets func() []string
}

// Prepare checks cfg and wires the gate to git, Docker Compose and s's
// engine: cfg.Scenario becomes repository-relative, cfg.Out absolute
// (loadgate-out/<name>-<time> by default); killed gates' worktrees are swept.
// Refusals are ErrUsage.
func Prepare(ctx context.Context, cfg Config, s Setup) (Config, Deps, error) {
	if err := cfg.Validate(); err != nil {
		return cfg, Deps{}, err
	}
	runID := compose.NewRunID()
	wd, err := os.Getwd()
	if err != nil {
		return cfg, Deps{}, Usagef("gate: %w", err)
	}
	repo, err := OpenGit(ctx, wd, runID, s.OnEmergency)
	if err != nil {
		return cfg, Deps{}, Usagef("gate: not inside a git repository: %w", err)
	}
	given := cfg.Scenario
	abs, err := filepath.Abs(given)
	if err != nil {
		return cfg, Deps{}, Usagef("gate: %w", err)
	}
	if cfg.Scenario, err = filepath.Rel(repo.Root(), abs); err != nil || !filepath.IsLocal(cfg.Scenario) {
		return cfg, Deps{}, Usagef("gate: --scenario %s is not inside the repository %s", given, repo.Root())
	}
	if cfg.Out == "" {
		cfg.Out = filepath.Join("loadgate-out", s.Name+"-"+time.Now().Format("20060102-150405"))
	}
	if cfg.Out, err = filepath.Abs(cfg.Out); err != nil {
		return cfg, Deps{}, Usagef("gate: %w", err)
	}
	if err := outfile.Dir(cfg.Out, s.Replace, "--force"); err != nil {
		return cfg, Deps{}, Usagef("gate: --out %w", err)
	}
	plan, err := s.Stack.PlanCPUs()
	if err != nil {
		return cfg, Deps{}, Usagef("gate: %w", err)
	}
	d := s.Deps
	log := d.Log
	if log == nil {
		log = io.Discard
	}
	sweepWorktrees(ctx, log) // leftovers of killed gates
	if s.UnsetSecrets != nil {
		if names := s.UnsetSecrets(); len(names) > 0 {
			fmt.Fprintf(log, "loadgate: %d runner credential variable(s) unset for the stacks (%s)\n", len(names), strings.Join(names, ", "))
		}
	}
	d.Repo, d.Stacks = repo, &composeStacks{runID: runID, plan: plan, o: s.Stack}
	return cfg, d, nil
}

func sweepWorktrees(ctx context.Context, log io.Writer) {
	removed, err := SweepWorktrees(ctx)
	for _, r := range removed {
		fmt.Fprintf(log, "loadgate: removed the worktrees of %s\n", r)
	}
	if err != nil {
		fmt.Fprintf(log, "loadgate: warning: sweeping worktrees of earlier gates: %v\n", err)
	}
}

// composeStacks is Stacks on gate/session; counts resolve once per side,
// while the stack is up and healthy.
type composeStacks struct {
	runID string
	plan  pin.Plan
	o     session.StackOptions
}

func (c *composeStacks) Up(ctx context.Context, sp StackSpec) (Stack, error) {
	cs, err := c.o.Up(ctx, compose.Spec{Files: sp.Files, Root: sp.Root, Target: sp.Target, Prepare: sp.Prepare, PrepareDir: sp.PrepareDir,
		PrepareBoxed: true, PrepareHide: sp.PrepareHide, PrepareRoot: sp.PrepareRoot,
		OutDir: sp.Out, RunID: c.runID, Side: projectSide(sp), Allow: allowOf(sp.Scenario), Secrets: sp.Secrets}, c.plan)
	if errors.Is(err, compose.ErrNoBox) {
		return nil, Usage(err) // the system's setting, not the change: exit 2
	}
	if err != nil {
		return nil, err
	}
	if sp.Scenario != nil {
		// A port that accepts no connection (a base older than the counter) is not measured.
		if err := cs.ResolveCounts(ctx, sp.Scenario, true); err != nil {
			cs.Down()
			return nil, err
		}
	}
	return cs, nil
}

// projectSide is the compose project's suffix: the side, and a later
// instance's number (its stacks are up beside the first's): base, base-2, …
func projectSide(sp StackSpec) string {
	if sp.Instance > 1 {
		return fmt.Sprintf("%s-%d", sp.Side, sp.Instance)
	}
	return sp.Side
}

func allowOf(sc *scenario.Scenario) []string {
	if sc == nil || sc.Stack == nil {
		return nil
	}
	return sc.Stack.Allow
}
