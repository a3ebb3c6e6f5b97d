package main

import (
	"flag"
	"io"
	"os"
	"time"

	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/session"
	"github.com/loadgate/loadgate/internal/cliflag"
)

// stackFlags are the flags of every command that brings a stack up.
type stackFlags = session.StackOptions

// addStackFlags adds the stack's flags to fs; its set-up runs without the runner's credentials.
func addStackFlags(fs *flag.FlagSet, f *stackFlags, stderr io.Writer) {
	fs.Var((*cliflag.Strings)(&f.Compose), "compose", "compose `file` (repeatable; default: the scenario's stack.compose)")
	fs.StringVar(&f.StackCPUs, "stack-cpus", "", "cpu `list` for every service of the stack (default: the first half of this machine's)")
	fs.StringVar(&f.LoadCPUs, "load-cpus", "", "cpu `list` the generator is pinned to (default with a stack: the other half); GOMAXPROCS follows")
	fs.BoolVar(&f.AllowOverlap, "allow-overlap", false, "allow the stack's and the generator's cpus to overlap (the report says so)")
	fs.DurationVar(&f.ReadyTimeout, "ready-timeout", 2*time.Minute, "how long the stack may take to be healthy")
	fs.DurationVar(&f.StatsEvery, "stats-interval", time.Second, "stack stats sampling `interval`")
	f.Environ = func() []string { return action.EnvWithoutRunnerSecrets(os.Environ()) }
	f.Log = stderr
}

// addPriorityFlag adds --load-priority, for the commands that send a load.
func addPriorityFlag(fs *flag.FlagSet, f *stackFlags) {
	f.Priority = pin.ModeAuto
	fs.TextVar(&f.Priority, "load-priority", pin.ModeAuto, "the generator's scheduling during a load: `auto` (SCHED_RR 1 when pinned apart from a stack and permitted), rt (SCHED_RR 1 or refuse) or normal (never raised)")
}
