package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/rounds"
)

func calibrateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f gateFlags
	var outFile string
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	f.addShared(fs, stderr)
	fs.StringVar(&f.Head, "head", "HEAD", "the checkout measured, on both sides (a git `ref`)")
	fs.IntVar(&f.Rounds, "pairs", rounds.DefaultCalibrationPairs, "A/A paired rounds (10 or more make a useful calibration)")
	fs.StringVar(&outFile, "out-file", "", "the calibration `file` (default: baselines/<scenario>/noise.json in the repository)")
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
