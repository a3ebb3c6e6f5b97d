package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/loadgate/loadgate/compose"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/internal/cliflag"
)

// checkCmd is `loadgate check`: every problem of a scenario and its stack's
// compose files, by file and line, before anything is built or sent.
func checkCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	path := fs.String("scenario", "", "the scenario `file` (YAML)")
	scale := fs.Float64("scale", 1, "check the scenario shortened by this `factor` in (0,1], as run --scale would run it")
	var files cliflag.Strings
	fs.Var(&files, "compose", "a compose `file` instead of the scenario's stack.compose (repeatable, in override order)")
	budget := fs.Duration("budget", rounds.DefaultBudget, "the gate's wall-time `budget` the plan is estimated for")
	setup := fs.Duration("setup", time.Minute, "the stacks' first build and bring-up `time` assumed for the plan")
	var limits scenario.OperatorLimits
	addLimitFlags(fs, &limits)
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if *path == "" {
		return usageErr("check: --scenario is required (see loadgate check -h)")
	}
	var problems []string
	sc, err := scenario.Load(*path, scenario.Options{Scale: *scale, ScaleSet: true})
	if err != nil {
		problems = append(problems, errorLines(err)...)
		return checkResult(problems, stdout, stderr)
	}
	if err := sc.CheckOperatorLimits(limits); err != nil {
		problems = append(problems, errorLines(err)...)
	}
	for _, old := range sc.OldSpellings {
		fmt.Fprintf(stderr, "loadgate: check: warning: %v\n", old)
	}
	if _, err := sc.ResolveEnv(os.LookupEnv); err != nil {
		fmt.Fprintf(stderr, "loadgate: check: warning: %v (a run needs it; CI may set it)\n", err)
	}
	fmt.Fprintf(stdout, "%s: scenario %s (hash %s): %d phase(s), %d workload(s), judged phase %s\n",
		sc.File, sc.Name, sc.Hash, len(sc.Phases), len(sc.Workloads), judgedName(sc))
	fmt.Fprintf(stdout, "gate plan: %s\n", rounds.PlanEstimate(sc, *budget, *setup))
	if len(files) == 0 && sc.Stack != nil {
		files = sc.Stack.Compose
	}
	if len(files) > 0 {
		var allow []string
		if sc.Stack != nil {
			allow = sc.Stack.Allow
		}
		overrides, err := compose.Check(ctx, compose.Options{Files: files, Side: "check", Allow: allow})
		var re *compose.RefusedError
		switch {
		case errors.As(err, &re) && len(re.Reasons) > 0:
			problems = append(problems, re.Reasons...)
		case err != nil:
			problems = append(problems, errorLines(err)...)
		default:
			fmt.Fprintf(stdout, "compose: %s: accepted\n", strings.Join(files, ", "))
			for _, o := range overrides {
				fmt.Fprintf(stdout, "  loadgate overrides: %s\n", o)
			}
		}
	}
	return checkResult(problems, stdout, stderr)
}

// checkResult prints the problems, one a line, and is exit 2 when there are any.
func checkResult(problems []string, stdout, stderr io.Writer) error {
	for _, p := range problems {
		fmt.Fprintln(stderr, p)
	}
	if len(problems) > 0 {
		return usageErr("check: %d problem(s): nothing was built or sent", len(problems))
	}
	fmt.Fprintln(stdout, "ok: nothing the gate would refuse")
	return nil
}

// errorLines is err's message, a line per problem (scenario.Errors has several).
func errorLines(err error) []string {
	return strings.Split(strings.TrimSpace(err.Error()), "\n")
}

func judgedName(sc *scenario.Scenario) string {
	for _, p := range sc.Phases {
		if p.Judged {
			return p.Name
		}
	}
	return "(none)"
}
