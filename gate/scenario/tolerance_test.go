package scenario_test

import (
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/scenario"
)

const tolBody = `
phases: [{name: only, rate: 10, duration: 10s}]
workloads: [{name: read, http: {path: /}}]
`

func TestToleranceKeys(t *testing.T) {
	s := mustParse(t, "name: api\ntolerance: 5%\ntolerance_floor: 200us\n"+tolBody, scenario.Options{})
	if s.Tolerance != 0.05 || s.ToleranceFloor != 200*time.Microsecond || !s.ToleranceFloorSet {
		t.Errorf("tolerance %v floor %v set %t; want 0.05, 200µs, set", s.Tolerance, s.ToleranceFloor, s.ToleranceFloorSet)
	}
	plain := mustParse(t, "name: api\n"+tolBody, scenario.Options{})
	if plain.Tolerance != 0 || plain.ToleranceFloorSet {
		t.Errorf("no keys: tolerance %v floor set %t; want not given", plain.Tolerance, plain.ToleranceFloorSet)
	}
	if s.Hash != plain.Hash {
		t.Error("the tolerance changed the load's hash: it is a bar, not the load")
	}
	if f := mustParse(t, "name: api\ntolerance: 0.2\ntolerance_floor: 0s\n"+tolBody, scenario.Options{}); f.Tolerance != 0.2 || !f.ToleranceFloorSet || f.ToleranceFloor != 0 {
		t.Errorf("0.2 and floor 0: %v %v %t", f.Tolerance, f.ToleranceFloor, f.ToleranceFloorSet)
	}
	for _, bad := range []string{"tolerance: 150%", "tolerance: 0", "tolerance: ten", "tolerance: 1.5", "tolerance_floor: -1ms", "tolerance_floor: 2s"} {
		_, err := scenario.Parse([]byte("name: api\n"+bad+"\n"+tolBody), "scenario.yaml", scenario.Options{})
		if err == nil || !strings.Contains(err.Error(), "scenario.yaml:2: tolerance") {
			t.Errorf("%s: %v; want refused at line 2, naming the field", bad, err)
		}
	}
}

// The documented form is a gate: block; the top-level keys still load, each
// noted as a deprecated spelling by its line.
func TestGateBlock(t *testing.T) {
	s := mustParse(t, "name: api\ngate: {tolerance: 5%, tolerance_floor: 200us}\n"+tolBody, scenario.Options{})
	if s.Tolerance != 0.05 || s.ToleranceFloor != 200*time.Microsecond || !s.ToleranceFloorSet || len(s.OldSpellings) != 0 {
		t.Errorf("gate block: tolerance %v floor %v set %t, old spellings %v; want 0.05, 200µs, set, none", s.Tolerance, s.ToleranceFloor, s.ToleranceFloorSet, s.OldSpellings)
	}
	old := mustParse(t, "name: api\ntolerance: 5%\ntolerance_floor: 200us\n"+tolBody, scenario.Options{})
	if old.Tolerance != s.Tolerance || old.ToleranceFloor != s.ToleranceFloor || old.Hash != s.Hash {
		t.Errorf("top-level keys load otherwise than the gate block: %v %v", old.Tolerance, old.ToleranceFloor)
	}
	if len(old.OldSpellings) != 2 || !strings.Contains(old.OldSpellings[0].Error(), "scenario.yaml:2: tolerance: a top-level key is deprecated: write it as gate: {tolerance: …}") ||
		!strings.Contains(old.OldSpellings[1].Error(), "scenario.yaml:3: tolerance_floor:") {
		t.Errorf("old spellings %v; want tolerance at line 2 and tolerance_floor at line 3", old.OldSpellings)
	}
	for _, c := range []struct{ yaml, want string }{
		{"gate:\n  tolerance: 150%", "scenario.yaml:3: gate.tolerance: want a percentage"},
		{"gate:\n  tolerance_floor: 2s", "scenario.yaml:3: gate.tolerance_floor: must be from 0 to 1s"},
		{"gate:\n  tolerence: 5%", "scenario.yaml:3: gate.tolerence: unknown field"},
		{"gate: 5%", "scenario.yaml:2: gate: must be a mapping"},
		// Both at once: the top-level key's line, naming the block's.
		{"gate: {tolerance: 5%}\ntolerance: 20%", "scenario.yaml:3: tolerance: given twice, here and as gate.tolerance (line 2)"},
		{"tolerance_floor: 1ms\ngate: {tolerance: 5%}", "scenario.yaml:2: tolerance_floor: a deprecated top-level key beside a gate: block"},
	} {
		_, err := scenario.Parse([]byte("name: api\n"+c.yaml+"\n"+tolBody), "scenario.yaml", scenario.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v; want %q", c.yaml, err, c.want)
		}
	}
}
