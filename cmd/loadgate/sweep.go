package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/sweep"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/outfile"
)

//go:embed help/sweep.txt
var sweepHelp string

func sweepCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	started := time.Now()
	var f runFlags
	var rates string
	var step, warmup time.Duration
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.StringVar(&f.scenario, "scenario", "", "the scenario `file` (YAML)")
	fs.StringVar(&rates, "rates", "", "the stairs, req/s, comma-separated and increasing (default: the judged phase's rate × "+factorsText()+")")
	fs.DurationVar(&step, "step", 0, "each step's measured `duration` (default: the judged phase's, after --scale)")
	warmup = -1 // not given: the scenario's
	fs.Func("warmup", "each step's warm-up `duration` at its rate, excluded from every number (default: the scenario's, after --scale)", func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("%q is not a duration of 0 or more", v)
		}
		warmup = d
		return nil
	})
	fs.StringVar(&f.target, "target", "", "loopback base `URL`, or service:port of the stack (default: the scenario's stack.target)")
	fs.StringVar(&f.out, "out", "", "results `dir` (default loadgate-out/<scenario>-sweep-<time>); one that already holds a result is refused unless --force")
	fs.BoolVar(&f.force, "force", false, "replace the results already in --out")
	fs.Float64Var(&f.scale, "scale", 1, "shorten the judged phase and the warm-up by this `factor` in (0,1] (rates are --rates')")
	fs.BoolVar(&f.insecure, "insecure", false, "skip TLS certificate verification (self-signed loopback servers)")
	fs.StringVar(&f.progress, "progress", "auto", "progress line on stderr: auto (when a terminal), always, never")
	addStackFlags(fs, &f.stack)
	addPriorityFlag(fs, &f.stack)
	addLimitFlags(fs, &f.limits)
	fs.Usage = func() { fmt.Fprint(stderr, sweepHelp); fs.PrintDefaults() }
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if f.scenario == "" {
		return usageErr("sweep: --scenario is required (see loadgate sweep -h)")
	}
	if err := checkProgress("sweep", f.progress); err != nil {
		return err
	}
	sc, err := scenario.Load(f.scenario, scenario.Options{Scale: f.scale, ScaleSet: true})
	if err != nil {
		return usageErr("%w", err)
	}
	plan, err := sweepPlan(sc, rates, step, warmup, f.limits)
	if err != nil {
		return err
	}
	env, err := resolveEnv(sc, stderr)
	if err != nil {
		return err
	}
	files, plain, target, err := loadTarget("sweep", sc, f.target, f.stack)
	if err != nil {
		return err
	}
	var loadSet pin.Set
	var targetURL *url.URL
	if plain {
		if targetURL, loadSet, err = plainTarget(ctx, "sweep", target, f.stack); err != nil {
			return err
		}
	}
	out := f.out
	if out == "" {
		out = filepath.Join("loadgate-out", fmt.Sprintf("%s-sweep-%s", sc.Name, time.Now().Format("20060102-150405")))
	}
	if err := sweepOutDir(out, f.force); err != nil {
		return err
	}

	runner := &stepRunner{lr: loadRunner{f: f, stderr: stderr}, env: env, target: targetURL, about: func() about { return plainAbout(loadSet) }}
	deps := sweep.Deps{
		Runner: runner,
		Starting: func(k, n int, rate float64) {
			fmt.Fprintf(stderr, "loadgate: sweep step %d of %d: %s req/s for %s (warm-up %s)\n", k, n, report.Rate(rate), plan.Step, plan.Warmup)
		},
		Measured: func(dir string, st sweep.Step, res *result.Result, v verdict.Verdict) error {
			if err := writeStep(dir, res, v); err != nil {
				return err
			}
			fmt.Fprintf(stderr, "loadgate: sweep step %d of %d: %s\n", st.Number, len(plan.Rates), report.SweepStepLine(st))
			return nil
		},
		Warn: func(format string, a ...any) { fmt.Fprintf(stderr, "loadgate: warning: "+format+"\n", a...) },
	}
	if !plain {
		sr, err := startStack(ctx, "sweep", sc, files, target, out, f.stack, stderr)
		if err != nil {
			return err
		}
		deps.Stack = &composeStack{sr: sr, every: f.stack.statsEvery, stderr: stderr} // sweep.Run tears it down
		runner.target, runner.about = &url.URL{Scheme: "http", Host: sr.addr}, func() about { return sr.about(target) }
	}
	sw, err := sweep.Run(ctx, sc, plan, out, started, deps)
	if err != nil {
		if rounds.KindOf(err) == nil {
			err = unusable(err) // the sweep's own: a directory or a file
		}
		return err
	}
	if err := sw.WriteFile(filepath.Join(out, "sweep.json")); err != nil {
		return unusable(err)
	}
	if err := writeFile(filepath.Join(out, "sweep.svg"), func(w io.Writer) error { return report.SweepPlotSVG(w, sw) }); err != nil {
		return unusable(err)
	}
	if err := writeFile(filepath.Join(out, "sweep.md"), func(w io.Writer) error { return report.SweepMarkdown(w, sw, "sweep.svg") }); err != nil {
		return unusable(err)
	}
	if err := report.SweepText(stdout, sw); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "loadgate: sweep results in %s (sweep.json, sweep.md, sweep.svg, steps/)\n", out)
	if sw.Interrupted {
		return unusable(fmt.Errorf("sweep: interrupted after %d of %d step(s); what was measured is kept in %s", len(sw.Steps), len(sw.Rates), out))
	}
	for _, s := range sw.Steps {
		if !s.Usable {
			return unusable(fmt.Errorf("sweep: step %d (%s req/s) is unusable: %s", s.Number, report.Rate(s.Rate), strings.Join(s.Unusable, "; ")))
		}
	}
	return nil
}

// sweepPlan reads --rates (or the default stairs), the step and warm-up
// durations, and builds every step's scenario, refusing (exit 2) a rate
// above the scenario's ceilings or the operator's limits.
func sweepPlan(sc *scenario.Scenario, rates string, step, warmup time.Duration, limits scenario.OperatorLimits) (sweep.Plan, error) {
	var p sweep.Plan
	var err error
	if rates != "" {
		p.Rates, err = sweep.ParseRates(rates)
	} else {
		p.Rates, err = sweep.DefaultRates(sc)
	}
	if err != nil {
		return p, usageErr("sweep: --rates: %w", err)
	}
	jp, ok := sc.JudgedPhase()
	if !ok {
		return p, usageErr("sweep: %s: the scenario has no judged phase", sc.File)
	}
	p.Step, p.Warmup = step, warmup
	if step == 0 {
		p.Step = jp.Duration
	}
	if warmup < 0 {
		p.Warmup = sc.Warmup
	}
	if p.Step < 0 {
		return p, usageErr("sweep: --step %v: a step must last longer than 0", step)
	}
	for i, r := range p.Rates {
		ssc, err := sweep.StepScenario(sc, r, p.Step, p.Warmup, limits)
		if err != nil {
			return p, usageErr("sweep: step %d of --rates (%s req/s) is refused: %w", i+1, report.Rate(r), err)
		}
		p.Scenarios = append(p.Scenarios, ssc)
	}
	return p, nil
}

// sweepOutDir prepares the sweep's results directory: refused when it
// already holds a sweep or a run's result, unless --force.
func sweepOutDir(out string, force bool) error {
	if !force {
		if _, err := os.Lstat(filepath.Join(out, "sweep.json")); err == nil {
			return usageErr("sweep: --out %s already holds a sweep (sweep.json): give another --out, or --force to replace it", out)
		} else if !errors.Is(err, os.ErrNotExist) {
			return usageErr("sweep: --out %s: %w", out, err)
		}
	}
	if err := outfile.Dir(out, force, "--force"); err != nil {
		return usageErr("sweep: --out %w", err)
	}
	if force {
		if err := os.RemoveAll(filepath.Join(out, "steps")); err != nil {
			return usageErr("sweep: --out %s: %w", out, err)
		}
	}
	return nil
}

// writeStep writes a step's result.json and report.md.
func writeStep(dir string, res *result.Result, v verdict.Verdict) error {
	if err := res.WriteFile(filepath.Join(dir, "result.json")); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, "report.md"), func(w io.Writer) error { return report.Markdown(w, res, v) })
}

// stepRunner is sweep.Runner on the load engine (loadRunner): each step's
// result states what is known before its load (about, asked per step: the
// stack's pinning as verified then).
type stepRunner struct {
	lr     loadRunner
	env    map[string]string
	target *url.URL
	about  func() about
}

func (s *stepRunner) Run(ctx context.Context, sc *scenario.Scenario, dir string, started []func(time.Time)) (*result.Result, error) {
	a := s.about()
	return s.lr.Run(ctx, rounds.RunSpec{Scenario: sc, Env: s.env, Target: s.target, TargetLabel: a.targetLabel, Topology: a.topology, Dir: dir, Started: started})
}

func factorsText() string {
	parts := make([]string, len(sweep.DefaultFactors))
	for i, f := range sweep.DefaultFactors {
		parts[i] = strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strings.Join(parts, ", ")
}
