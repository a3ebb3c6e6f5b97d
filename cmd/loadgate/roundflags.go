package main

import (
	"flag"

	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/cliflag"
)

// addRoundFlags adds how a gate runs its rounds, shared by gate and bisect.
func (f *gateFlags) addRoundFlags(fs *flag.FlagSet) {
	f.Auto = true // the default (bench/gate-quality.md)
	fs.Var(rounds.CountFlag{N: &f.Rounds, Auto: &f.Auto}, "rounds", "paired rounds: a number, or auto (the default: sequential, judged after every pair from the 4th round, stopping when decided, at --max-rounds or at --budget)")
	fs.IntVar(&f.MaxRounds, "max-rounds", rounds.DefaultMaxRounds, "with --rounds auto: the most paired rounds")
	fs.StringVar(&f.Shape, "round-shape", "", "how a round is cut: windows (each stack instance runs the warm-up and earlier phases once, then judged windows of the judged phase; each side's stack brought up 3 times) or scenario (every round the whole scenario, one instance); default: windows for --rounds auto against a base where the scenario allows, else scenario")
	fs.DurationVar(&f.Budget, "budget", rounds.DefaultBudget, "the gate's wall time, set-up included: --rounds auto stops before a pair would overrun it; with a fixed --rounds it caps what an inconclusive comparison asks for")
	fs.StringVar(&f.Compare.Percentile, "percentile", "", "judged latency percentile for every workload (default: each workload's threshold percentiles, else p95)")
	fs.BoolVar(&f.Duet, "duet", true, "run base and head at the same instants every round, both stacks up, so both share the machine's noise (--duet=false: ABBA rounds, the idle side paused; off where a baseline's stored numbers stand alone)")
	fs.DurationVar(&f.Compare.ToleranceFloor, "tolerance-floor", verdict.DefaultToleranceFloor, "absolute floor of the tolerance: a latency change within ±max(tolerance × base, floor) is no change (default: base's scenario's tolerance_floor, else 50µs; can only lower it)")
}

// settle applies what the parsed flags mean beyond their values.
func (f *gateFlags) settle(fs *flag.FlagSet) {
	f.ToolVersion = rounds.ToolVersion(version)
	// Unset, both are base's scenario's (else the defaults); set, they can only tighten it.
	if !cliflag.IsSet(fs, "tolerance") {
		f.Compare.Tolerance = 0
	}
	f.ToleranceFloorSet = cliflag.IsSet(fs, "tolerance-floor")
}
