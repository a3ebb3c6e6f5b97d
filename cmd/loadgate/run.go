package main

import (
	"context"
	"flag"
	"io"
	"time"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/session"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/outfile"
)

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	began := time.Now()
	f := loadFlags{LoadOptions: session.LoadOptions{Cmd: "run"}}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	addLoadFlags(fs, &f, stderr)
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	sc, err := f.LoadScenario(true)
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
	if err := outfile.Dir(p.Out, f.force, "--force"); err != nil {
		return usageErr("run: --out %w", err)
	}
	t, spec, err := p.Open(ctx, sc, f.LoadOptions, nil)
	if err != nil {
		return err
	}
	spec.Scenario = sc
	m := session.Measure{Runner: engine(f.insecure, f.progress, f.cpuProfile, f.Stack.Priority, stderr), Target: t, Began: began, Warn: report.Warner(stderr)}
	res, err := m.Run(ctx, spec)
	if err != nil {
		return err
	}
	v := verdict.Thresholds(res)
	if err := report.WriteRun(p.Out, res, v, stdout, stderr); err != nil {
		return err
	}
	return verdictExit(v)
}
