package main

import (
	"context"
	"flag"
	"io"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/rounds"
)

// mergeCmd is `loadgate merge DIR...`: the shards' rounds judged as one gate.
func mergeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := rounds.MergeConfig{Log: stderr}
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	fs.StringVar(&cfg.Out, "out", "", "results `dir` (default loadgate-out/merge-<time>); one that already holds a result is refused unless --force")
	fs.BoolVar(&cfg.Replace, "force", false, "replace the result already in --out")
	fs.IntVar(&cfg.MinShards, "min-shards", 0, "the fewest shards with rounds the gate is judged on; fewer is unusable (default: half of N, rounded up)")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	cfg.Dirs = fs.Args()
	gr, out, err := rounds.Merge(ctx, cfg)
	if err != nil {
		return err
	}
	if _, err := report.WriteGate(out, gr, stdout, stderr); err != nil {
		return err
	}
	return verdictExit(gr.Verdict)
}
