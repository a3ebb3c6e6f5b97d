package main

import (
	"flag"
	"io"

	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/session"
	"github.com/loadgate/loadgate/internal/cliflag"
)

// loadFlags are the flags run, sweep and soak share.
type loadFlags struct {
	session.LoadOptions
	insecure, force bool
	progress        report.ProgressMode
	cpuProfile      string
}

// addLoadFlags adds the shared flags of f.Cmd to fs, in that command's words.
func addLoadFlags(fs *flag.FlagSet, f *loadFlags, stderr io.Writer) {
	scen, results, scale := "the scenario `file` (YAML)", "result", "shorten every phase and the warm-up by this `factor` in (0,1]; nothing else changes"
	switch f.Cmd {
	case "sweep":
		results, scale = "results", "shorten the judged phase and the warm-up by this `factor` in (0,1] (rates are --rates')"
	case "soak":
		scen = "the scenario `file` (YAML); its judged phase's constant rate is held"
	}
	fs.StringVar(&f.Scenario, "scenario", "", scen)
	fs.StringVar(&f.Target, "target", "", "loopback base `URL`, or service:port of the stack (default: the scenario's stack.target)")
	fs.StringVar(&f.Out, "out", "", "results `dir` (default loadgate-out/<scenario>-"+session.OutInfix(f.Cmd)+"<time>); one that already holds a result is refused unless --force")
	fs.BoolVar(&f.force, "force", false, "replace the "+results+" already in --out")
	if f.Cmd != "soak" {
		fs.Float64Var(&f.Scale, "scale", 1, scale)
	}
	if f.Cmd != "sweep" {
		fs.Var((*cliflag.PIDs)(&f.Watch), "watch-pid", "sample the CPU (deltas of cumulative CPU time) and RSS of this host process `PID` from /proc, like a stack service (repeatable; plain mode only)")
	}
	if f.Cmd == "run" {
		fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write the generator's CPU profile to `file` (for make bench)")
	}
	fs.BoolVar(&f.insecure, "insecure", false, "skip TLS certificate verification (self-signed loopback servers)")
	fs.TextVar(&f.progress, "progress", report.ProgressMode("auto"), "progress line on stderr: auto (when a terminal), always, never")
	addStackFlags(fs, &f.Stack, stderr)
	addPriorityFlag(fs, &f.Stack)
	addLimitFlags(fs, &f.Limits)
	f.ResolveEnv = action.ResolveEnv(stderr)
}

// addLimitFlags adds the operator's ceilings, which a scenario's cannot raise.
func addLimitFlags(fs *flag.FlagSet, l *scenario.OperatorLimits) {
	fs.Float64Var(&l.Rate, "max-rate", 0, "operator ceiling: refuse a scenario whose peak rate is above this many req/s, whatever its ceilings say (0: none)")
	fs.DurationVar(&l.Duration, "max-duration", 0, "operator ceiling: refuse a scenario whose warm-up and phases last longer (0: none)")
	fs.IntVar(&l.InFlight, "max-in-flight", 0, "operator ceiling: refuse a scenario whose max_in_flight is higher (0: none)")
}

func engine(insecure bool, progress report.ProgressMode, cpuProfile string, priority pin.Mode, stderr io.Writer) *session.Engine {
	return report.Engine(session.Engine{Insecure: insecure, Priority: priority, CPUProfile: cpuProfile}, stderr, string(progress))
}
