package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/session"
	"github.com/loadgate/loadgate/gate/soak"
	"github.com/loadgate/loadgate/internal/outfile"
)

func soakCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := loadFlags{LoadOptions: session.LoadOptions{Cmd: "soak"}}
	var duration time.Duration
	var leak string
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.DurationVar(&duration, "duration", 0, "how long to hold the load after the warm-up (hours are the point; at least 6m40s can conclude)")
	fs.StringVar(&leak, "leak-threshold", "32MiB", "growth `per hour` above which (by both estimates) a process leaks, e.g. 32MiB or 32MiB/h")
	addLoadFlags(fs, &f, stderr)
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	cfg, err := soak.NewConfig(soak.Options{Scenario: f.Scenario, Duration: duration, Leak: leak, Limits: f.Limits, Every: f.Stack.StatsEvery})
	if err != nil {
		return err
	}
	p, err := session.PlanLoad(ctx, cfg.Scenario, f.LoadOptions)
	if err != nil {
		return err
	}
	if err := dry("planned", fs); err != nil {
		return err
	}
	if duration < soak.MinWindow*4/3 {
		fmt.Fprintf(stderr, "loadgate: WARNING: %s\n", report.SoakTooShort(duration, cfg.Scenario.Warmup))
	}
	if err := outfile.Dir(p.Out, f.force, "--force"); err != nil {
		return usageErr("soak: --out %w", err)
	}
	col := soak.NewCollector()
	t, spec, err := p.Open(ctx, cfg.Scenario, f.LoadOptions, col)
	if err != nil {
		return err
	}
	pl := report.NewSoakProgressLine(stderr, string(f.progress), cfg.Scenario.TotalDuration())
	sres, res, err := soak.Run(ctx, cfg, soak.Deps{Sampler: &session.Sampled{Target: t, Dir: p.Out}, Collector: col, Progress: pl.Update, Warn: report.Warner(stderr),
		Runner: engine(f.insecure, "never", "", f.Stack.Priority, stderr), Spec: spec}) // soak.Run tears the target down
	pl.Finish()
	if err != nil {
		return orUnusable(err) // the soak's own: its stats file
	}
	if err := report.WriteSoak(p.Out, sres, res, sres.ExitCode(), stdout, stderr); err != nil {
		return err
	}
	return soakOutcome(sres, report.SoakSummary(sres), stderr)
}
