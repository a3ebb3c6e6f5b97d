package main

import (
	"testing"

	"github.com/loadgate/loadgate/gate/action"
)

// The Action's inputs become the gate's flags (action.Inputs.Apply, tested
// there), and the Action's log has no progress line.
func TestActionInputsAreTheGateFlags(t *testing.T) {
	f := gateFlags{progress: "auto"}.withInputs(action.Inputs{Scenario: "load.yaml", Base: "abc123", Against: "base"})
	if f.Scenario != "load.yaml" || f.Base != "abc123" || f.progress != "never" {
		t.Errorf("scenario %q base %q progress %q", f.Scenario, f.Base, f.progress)
	}
}
