package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/session"
	"github.com/loadgate/loadgate/gate/sweep"
)

func sweepCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	began := time.Now()
	f := loadFlags{LoadOptions: session.LoadOptions{Cmd: "sweep"}}
	var rates string
	var step time.Duration
	warmup := time.Duration(-1) // not given: the scenario's
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.StringVar(&rates, "rates", "", "the stairs, req/s, comma-separated and increasing (default: the judged phase's rate × "+sweep.FactorsText()+")")
	fs.DurationVar(&step, "step", 0, "each step's measured `duration` (default: the judged phase's, after --scale)")
	fs.Func("warmup", "each step's warm-up `duration` at its rate, excluded from every number (default: the scenario's, after --scale)", func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("%q is not a duration of 0 or more", v)
		}
		warmup = d
		return nil
	})
	addLoadFlags(fs, &f, stderr)
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	sc, err := f.LoadScenario(false)
	if err != nil {
		return err
	}
	plan, err := sweep.NewPlan(sc, rates, step, warmup, f.Limits)
	if err != nil {
		return err
	}
	p, err := session.PlanLoad(ctx, sc, f.LoadOptions)
	if err != nil {
		return err
	}
	if err := dry("planned", fs); err != nil {
		return err
	}
	if err := sweep.PrepareOut(p.Out, f.force); err != nil {
		return err
	}
	t, spec, err := p.Open(ctx, sc, f.LoadOptions, nil)
	if err != nil {
		return err
	}
	deps := report.SweepDeps(plan, stderr)
	deps.Runner, deps.Spec = engine(f.insecure, f.progress, "", f.Stack.Priority, stderr), spec
	if !p.Plain {
		deps.Stack = t.(sweep.Stack) // sweep.Run tears it down
	}
	sw, err := sweep.Run(ctx, sc, plan, p.Out, began, deps)
	if err != nil {
		return orUnusable(err) // the sweep's own: a directory or a file
	}
	if err := report.WriteSweep(p.Out, sw, stdout, stderr); err != nil {
		return err
	}
	return report.SweepOutcome(p.Out, sw)
}
