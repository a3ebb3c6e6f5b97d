package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/loadgate/loadgate/gate/bisect"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/cliflag"
	"github.com/loadgate/loadgate/internal/outfile"
)

func bisectCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f gateFlags
	var good, bad string
	var workloads cliflag.Strings
	fs := flag.NewFlagSet("bisect", flag.ContinueOnError)
	f.addShared(fs, stderr)
	f.addRoundFlags(fs)
	fs.StringVar(&good, "good", "", "the `ref` whose load is good (the release tag the direct gate ran against)")
	fs.StringVar(&bad, "bad", "", "the `ref` the direct gate called a regression; good must be among its first parents")
	fs.Var(&workloads, "workload", "a `name` whose comparisons decide each gate's call (repeatable; default every workload)")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	f.settle(fs)
	if f.Scenario == "" {
		return usageErr("bisect: --scenario is required (see loadgate bisect -h)")
	}
	if err := validateGates(f); err != nil {
		return err
	}
	// A gate's generator pins this process to its cpus and keeps it there: planned
	// once, every gate runs on the first one's stack and generator cpus.
	plan, err := f.stack.PlanCPUs()
	if err != nil {
		return usageErr("bisect: %w", err)
	}
	f.stack.StackCPUs, f.stack.LoadCPUs = plan.Stack.String(), plan.Load.String()
	wd, err := os.Getwd()
	if err != nil {
		return usageErr("bisect: %w", err)
	}
	goodC, commits, err := bisect.Range(ctx, wd, good, bad)
	if err != nil {
		return err
	}
	if f.Out == "" {
		f.Out = filepath.Join("loadgate-out", "bisect-"+time.Now().Format("20060102-150405"))
	}
	out, err := filepath.Abs(f.Out)
	if err != nil {
		return usageErr("bisect: %w", err)
	}
	if err := outfile.Dir(out, f.force, "--force"); err != nil {
		return usageErr("bisect: --out %w", err)
	}
	fmt.Fprintln(stderr, report.BisectStart(goodC, commits))
	o, err := bisect.Run(ctx, bisect.Config{Good: goodC, Commits: commits, Out: out, Workloads: workloads,
		Progress: func(g bisect.Gate, est int, done bool) {
			fmt.Fprintln(stderr, report.BisectProgress(g, est, len(commits), done))
		}}, func(ctx context.Context, base, head, dir string) (verdict.Verdict, error) {
		gf := f
		gf.Base, gf.Head, gf.Out = base, head, dir
		gr, gout, err := runGate(ctx, gf, stderr)
		if err != nil {
			return gr.Verdict, err
		}
		if _, err := report.WriteGate(gout, gr, io.Discard, stderr); err != nil {
			return gr.Verdict, err
		}
		return gr.Verdict, nil
	})
	if werr := report.WriteBisect(out, o, stdout, stderr); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return orUnusable(err)
	}
	return bisectExit(o)
}

// validateGates checks the gates' flags before any git call, as a gate of two commits would.
func validateGates(f gateFlags) error {
	c := f.Config
	c.Base = "good"
	return c.Validate()
}
