package main

import (
	"context"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
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
	fs.Usage = func() { fmt.Fprint(stderr, helpText("soak")); fs.PrintDefaults() }
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	cfg, err := soakConfig(f, duration, leak)
	if err != nil {
		return err
	}
	p, err := session.PlanLoad(ctx, cfg.Scenario, f.LoadOptions)
	if err != nil {
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
	pl := report.NewSoakProgressLine(stderr, f.progress, cfg.Scenario.TotalDuration())
	sres, res, err := soak.Run(ctx, cfg, soak.Deps{Sampler: &session.Sampled{Target: t, Dir: p.Out}, Collector: col, Progress: pl.Update, Warn: report.Warner(stderr),
		Runner: engine(f.insecure, "never", "", f.Stack.Priority, stderr), Spec: spec}) // soak.Run tears the target down
	pl.Finish()
	if err != nil {
		return orUnusable(err) // the soak's own: its stats file
	}
	return soakFinish(p.Out, sres, res, stdout, stderr)
}

// soakConfig is soak.NewConfig of the flags, --progress checked
// between the required flags and the scenario, as the soak has always
// checked them.
func soakConfig(f loadFlags, duration time.Duration, leak string) (soak.Config, error) {
	if f.scenario != "" && duration > 0 {
		if err := checkProgress("soak", f.progress); err != nil {
			return soak.Config{}, err
		}
	}
	return soak.NewConfig(soak.Options{Scenario: f.scenario, Duration: duration, Leak: leak, Limits: f.limits, Every: f.Stack.StatsEvery})
}

// soakFinish writes the soak's files, prints its report and maps its
// outcome (exit.go).
func soakFinish(out string, sres *soak.Result, res *result.Result, stdout, stderr io.Writer) error {
	code := sres.ExitCode()
	if err := report.WriteSoak(out, sres, res, code, stdout, stderr); err != nil {
		return err
	}
	summary := report.SoakSummary(sres)
	if err := soakOutcome(sres, summary); err != nil {
		return err // exit.go maps it
	}
	fmt.Fprintln(stderr, "loadgate:", summary)
	return nil
}
