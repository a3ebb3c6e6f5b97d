package main

import (
	"testing"

	"github.com/loadgate/loadgate/gate/action"
)

// The Action's inputs become the gate's flags: against a baseline the base
// input stays the protected side; an input left empty keeps the flag's
// default; a fixed rounds input turns auto off, rounds: auto turns it on.
func TestActionInputsAreTheGateFlags(t *testing.T) {
	def := gateFlags{auto: true, tolerance: 0.1, scale: 1, budget: 600e9, progress: "auto"}
	f := def.withInputs(action.Inputs{Scenario: "load.yaml", Base: "abc123", Against: "baseline:release-1.4", Baseline: "release-1.4", Rounds: 3, ResultsDir: "res"})
	if f.against != "baseline:release-1.4" || f.base != "abc123" || f.scenario != "load.yaml" || f.out != "res" {
		t.Errorf("against %q base %q scenario %q out %q", f.against, f.base, f.scenario, f.out)
	}
	if f.rounds != 3 || f.auto || f.tolerance != 0.1 || f.scale != 1 || f.budget != def.budget || f.progress != "never" {
		t.Errorf("rounds %d auto %v tolerance %v scale %v budget %v progress %q: want 3 fixed, the defaults kept, no progress line",
			f.rounds, f.auto, f.tolerance, f.scale, f.budget, f.progress)
	}
	f = gateFlags{rounds: 5}.withInputs(action.Inputs{Base: "abc123", Against: "base", AutoRounds: true, Tolerance: 0.05, ScenarioFrom: "head"})
	if !f.auto || f.rounds != 0 || f.against != "base" || f.tolerance != 0.05 || f.scenarioFrom != "head" {
		t.Errorf("auto %v rounds %d against %q tolerance %v scenario-from %q", f.auto, f.rounds, f.against, f.tolerance, f.scenarioFrom)
	}
}

// The Action's duet input (action.yml's default "true") runs duet rounds
// against the base side, and is off against a baseline, which has no second
// side to run beside.
func TestActionDuetInputNeedsABaseSide(t *testing.T) {
	if f := (gateFlags{}).withInputs(action.Inputs{Base: "abc123", Against: "base", Duet: true}); !f.duet {
		t.Error("duet: true against the base side: not a duet gate")
	}
	if f := (gateFlags{}).withInputs(action.Inputs{Against: "baseline:r1", Baseline: "r1", Duet: true}); f.duet {
		t.Error("duet: true against a baseline: a duet gate, which a baseline cannot be")
	}
	if f := (gateFlags{}).withInputs(action.Inputs{Base: "abc123", Against: "base"}); f.duet {
		t.Error(`duet: "false": a duet gate`)
	}
}
