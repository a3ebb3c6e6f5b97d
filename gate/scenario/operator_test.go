package scenario_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/scenario"
)

// The operator's limits bound a scenario whose own ceilings are far higher:
// the lower wins, and the refusal names the flag and the line.
func TestOperatorLimits(t *testing.T) {
	sc, err := scenario.Parse([]byte(`name: big
max_in_flight: 2000
ceilings: {rate: 1000000, duration: 10h, in_flight: 10000}
phases:
  - {name: sustain, rate: 50000, duration: 2h}
workloads: [{name: a, http: {path: /}}]
`), "big.yaml", scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		l    scenario.OperatorLimits
		want string
	}{
		{scenario.OperatorLimits{Rate: 1000}, "big.yaml:5: phase sustain asks for 50000 req/s, above the operator's --max-rate 1000"},
		{scenario.OperatorLimits{Duration: time.Hour}, "above the operator's --max-duration 1h0m0s"},
		{scenario.OperatorLimits{InFlight: 512}, "big.yaml:2: max_in_flight 2000 is above the operator's --max-in-flight 512"},
	} {
		err := sc.CheckOperatorLimits(c.l)
		var se *scenario.Error
		if !errors.Is(err, scenario.ErrCeiling) || !errors.As(err, &se) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want a ceiling error saying %q", c.l, err, c.want)
		}
	}
	if err := sc.CheckOperatorLimits(scenario.OperatorLimits{Rate: 50000, Duration: 2 * time.Hour, InFlight: 2000}); err != nil {
		t.Errorf("at the limits: %v", err)
	}
	if err := sc.CheckOperatorLimits(scenario.OperatorLimits{}); err != nil {
		t.Errorf("no operator limits: %v", err)
	}
}
