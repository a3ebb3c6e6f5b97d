package main

import (
	"context"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/scenario"
)

func upCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var sf stackFlags
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	scen := fs.String("scenario", "", "the scenario `file` (its stack: section)")
	target := fs.String("target", "", "service:port (default: the scenario's stack.target)")
	out := fs.String("out", "", "save the services' logs here at teardown (`dir`)")
	addStackFlags(fs, &sf, stderr)
	fs.Usage = func() { fmt.Fprint(stderr, helpText("up")); fs.PrintDefaults() }
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if *scen == "" {
		return usageErr("up: --scenario is required")
	}
	sc, err := scenario.Load(*scen, scenario.Options{})
	if err != nil {
		return usageErr("%w", err)
	}
	files := sf.Files(sc)
	if len(files) == 0 {
		return usageErr("up: the scenario has no stack: section and no --compose was given")
	}
	t := *target
	if t == "" && sc.Stack != nil {
		t = sc.Stack.Target
	}
	if t == "" {
		return usageErr("up: --target service:port is required (the scenario's stack: names none)")
	}
	sr, err := sf.Start(ctx, "up", sc, files, t, *out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "stack %s is up on cpus %s; target %s is at http://%s (%s)\n", sr.Run.Stack.Name(), sr.Run.Plan.Stack, t, sr.Addr(), sr.Run.Path)
	fmt.Fprintln(stdout, "press Ctrl-C to tear it down")
	<-ctx.Done()
	took, err := sr.Down()
	if err != nil {
		return unusable(fmt.Errorf("up: teardown: %w", err))
	}
	fmt.Fprintf(stdout, "stack %s torn down in %s\n", sr.Run.Stack.Name(), took.Round(1e6))
	return nil
}

func downCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("down", flag.ContinueOnError)
	all := fs.Bool("all", false, "remove the leftovers of every earlier run")
	fs.Usage = func() { fmt.Fprint(stderr, helpText("down")); fs.PrintDefaults() }
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if !*all {
		return usageErr("down: pass --all (stacks of a live run are torn down by that run)")
	}
	// Bounded even when nothing cancels it: a hung engine or git must not
	// hang the cleanup step of a CI job.
	ctx, cancel := context.WithTimeout(ctx, downAllTimeout)
	defer cancel()
	if err := rounds.DownAll(ctx, stdout); err != nil {
		return unusable(fmt.Errorf("down: not everything was removed:\n%w", err))
	}
	return nil
}

// downAllTimeout bounds `loadgate down --all`.
const downAllTimeout = 5 * time.Minute
