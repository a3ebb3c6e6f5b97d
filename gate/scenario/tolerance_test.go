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
