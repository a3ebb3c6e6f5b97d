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
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/session"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/outfile"
)

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	began := time.Now()
	f := loadFlags{LoadOptions: session.LoadOptions{Cmd: "run"}}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	addLoadFlags(fs, &f, stderr)
	fs.Usage = func() { fmt.Fprint(stderr, helpText("run")); fs.PrintDefaults() }
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	sc, err := loadScenario(f, true)
	if err != nil {
		return err
	}
	p, err := session.PlanLoad(ctx, sc, f.LoadOptions)
	if err != nil {
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
	if st := res.Stack; st != nil && !p.Plain {
		fmt.Fprintf(stderr, "loadgate: start to first request %s; last request to clean teardown %s\n",
			seconds(st.UpS).Round(time.Millisecond), seconds(st.TeardownS).Round(time.Millisecond))
	}
	return finish(p.Out, res, stdout, stderr)
}

// loadScenario is run's and sweep's scenario: --scenario loaded at
// --scale, within the operator's ceilings when limits (a sweep checks
// each step's rate instead).
func loadScenario(f loadFlags, limits bool) (*scenario.Scenario, error) {
	if f.scenario == "" {
		return nil, usageErr("%s: --scenario is required (see loadgate %s -h)", f.Cmd, f.Cmd)
	}
	if err := checkProgress(f.Cmd, f.progress); err != nil {
		return nil, err
	}
	sc, err := scenario.Load(f.scenario, scenario.Options{Scale: f.scale, ScaleSet: true})
	if err == nil && limits {
		err = sc.CheckOperatorLimits(f.limits)
	}
	if err != nil {
		return nil, usageErr("%w", err)
	}
	return sc, nil
}

// seconds is s seconds as a duration.
func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// finish writes the result files, prints the report and maps the verdict to
// the exit code.
func finish(out string, res *result.Result, stdout, stderr io.Writer) error {
	v := verdict.Thresholds(res)
	if err := report.WriteRun(out, res, v, stdout, stderr); err != nil {
		return err
	}
	return verdictExit(v)
}
