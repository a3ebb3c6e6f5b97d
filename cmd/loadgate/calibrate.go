package main

import (
	"context"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

func calibrateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f gateFlags
	var outFile string
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	fs.StringVar(&f.Scenario, "scenario", "", "the scenario `file`, relative to the repository (or absolute inside it)")
	fs.StringVar(&f.Head, "head", "HEAD", "the checkout measured, on both sides (a git `ref`)")
	fs.IntVar(&f.Rounds, "pairs", rounds.DefaultCalibrationPairs, "A/A paired rounds (10 or more make a useful calibration)")
	fs.StringVar(&outFile, "out-file", "", "the calibration `file` (default: baselines/<scenario>/noise.json in the repository)")
	fs.StringVar(&f.Out, "out", "", "the rounds' results `dir` (default loadgate-out/calibrate-<time>)")
	fs.BoolVar(&f.force, "force", false, "replace the result already in --out")
	fs.Var(tolerance(&f.Compare.Tolerance, verdict.DefaultTolerance), "tolerance", "tolerance of the detectable changes printed (10% or 0.10)")
	fs.Float64Var(&f.Compare.Confidence, "confidence", verdict.DefaultConfidence, "confidence of the detectable changes printed")
	fs.Float64Var(&f.Scale, "scale", 1, "shorten every phase by this `factor` (a calibration is of one load: its hash must match the gate's)")
	fs.StringVar(&f.progress, "progress", "auto", "progress line: auto, always, never")
	fs.StringVar(&f.Target, "target", "", "the `service:port` that receives the load (default: the scenario's stack.target)")
	addStackFlags(fs, &f.stack, stderr)
	addPriorityFlag(fs, &f.stack)
	addLimitFlags(fs, &f.Limits)
	fs.Usage = func() { fmt.Fprint(stderr, helpText("calibrate")); fs.PrintDefaults() }
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if f.Rounds < 2 {
		return usageErr("calibrate: --pairs must be at least 2 (10 or more make a useful calibration), not %d", f.Rounds)
	}
	f.Base, f.Against, f.MaxRounds = f.Head, "base", rounds.DefaultMaxRounds
	cfg, deps, err := prepareGate(ctx, f, "calibrate", stderr)
	if err != nil {
		return err
	}
	root := deps.Repo.Root()
	n, _, err := rounds.Calibrate(ctx, cfg, deps, time.Now)
	if err != nil {
		return err
	}
	if outFile, err = rounds.SaveNoise(root, outFile, n); err != nil {
		return err
	}
	if err := report.Calibration(stdout, n, f.Compare.Tolerance, f.Compare.Confidence); err != nil {
		return unusable(err)
	}
	fmt.Fprintf(stderr, "loadgate: calibration written to %s (rounds in %s)\n", outFile, cfg.Out)
	return nil
}
