package action_test

import (
	"testing"

	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/session"
	"github.com/loadgate/loadgate/gate/verdict"
)

// The Action's inputs become the gate's flags: against a baseline the base
// input stays the protected side; an input left empty keeps the flag's
// default; a fixed rounds input turns auto off, rounds: auto turns it on.
func TestInputsApply(t *testing.T) {
	def := rounds.Config{Auto: true, Compare: verdict.CompareOptions{Tolerance: 0.1}, Scale: 1, Budget: 600e9}
	f, st := action.Inputs{Scenario: "load.yaml", Base: "abc123", Against: "baseline:release-1.4", Baseline: "release-1.4", Rounds: 3, ResultsDir: "res", Compose: []string{"c.yaml"}, LoadCPUs: "1"}.Apply(def, session.StackOptions{})
	if f.Against != "baseline:release-1.4" || f.Base != "abc123" || f.Scenario != "load.yaml" || f.Out != "res" {
		t.Errorf("against %q base %q scenario %q out %q", f.Against, f.Base, f.Scenario, f.Out)
	}
	if f.Rounds != 3 || f.Auto || f.Compare.Tolerance != 0.1 || f.Scale != 1 || f.Budget != def.Budget {
		t.Errorf("rounds %d auto %v tolerance %v scale %v budget %v: want 3 fixed, the defaults kept",
			f.Rounds, f.Auto, f.Compare.Tolerance, f.Scale, f.Budget)
	}
	if len(f.Compose) != 1 || len(st.Compose) != 1 || st.LoadCPUs != "1" {
		t.Errorf("compose %v / %v, load-cpus %q: want the inputs'", f.Compose, st.Compose, st.LoadCPUs)
	}
	f, _ = action.Inputs{Base: "abc123", Against: "base", AutoRounds: true, Tolerance: 0.05, ScenarioFrom: "head"}.Apply(rounds.Config{Rounds: 5}, session.StackOptions{})
	if !f.Auto || f.Rounds != 0 || f.Against != "base" || f.Compare.Tolerance != 0.05 || f.ScenarioFrom != "head" {
		t.Errorf("auto %v rounds %d against %q tolerance %v scenario-from %q", f.Auto, f.Rounds, f.Against, f.Compare.Tolerance, f.ScenarioFrom)
	}
}

// The Action's duet input (action.yml's default "true") runs duet rounds
// against the base side, and against a baseline too, whose commit runs as
// the base side (the gate sets it aside where the stored numbers stand alone).
func TestInputsApplyDuet(t *testing.T) {
	duet := func(in action.Inputs) bool {
		f, _ := in.Apply(rounds.Config{}, session.StackOptions{})
		return f.Duet
	}
	if !duet(action.Inputs{Base: "abc123", Against: "base", Duet: true}) {
		t.Error("duet: true against the base side: not a duet gate")
	}
	if !duet(action.Inputs{Against: "baseline:r1", Baseline: "r1", Duet: true}) {
		t.Error("duet: true against a baseline: not a duet gate, though its commit runs as the base side")
	}
	if duet(action.Inputs{Base: "abc123", Against: "base"}) {
		t.Error(`duet: "false": a duet gate`)
	}
}
