package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/loadgate/loadgate/gate/rounds"
)

func upCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var sf stackFlags
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	scen := fs.String("scenario", "", "the scenario `file` (its stack: section)")
	target := fs.String("target", "", "service:port (default: the scenario's stack.target)")
	out := fs.String("out", "", "save the services' logs here at teardown (`dir`)")
	addStackFlags(fs, &sf, stderr)
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	sr, t, err := sf.StartFile(ctx, *scen, *target, *out)
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
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if !*all {
		return usageErr("down: pass --all (stacks of a live run are torn down by that run)")
	}
	if err := rounds.DownAll(ctx, stdout); err != nil {
		return unusable(fmt.Errorf("down: not everything was removed:\n%w", err))
	}
	return nil
}
