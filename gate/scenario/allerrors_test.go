package scenario_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/scenario"
)

// Regression: a scenario's errors stopped at the first one, so a file with
// three mistakes took three runs to fix.
func TestParseReportsEveryIndependentError(t *testing.T) {
	src := `name: x
tmeout: 5s
phases:
  - {name: a, rate: 0, duration: 1s}
  - {name: b, rate: 5, duration: -1s}
workloads:
  - {name: ok, http: {path: /}}
  - {name: bad, share: 0, http: {path: /}}
  - {name: worse, http: {method: FETCH, path: /}}
`
	_, err := scenario.Parse([]byte(src), "s.yaml", scenario.Options{})
	var all scenario.Errors
	if !errors.As(err, &all) {
		t.Fatalf("want scenario.Errors, got %T: %v", err, err)
	}
	want := []string{"s.yaml:2: tmeout: unknown field", "s.yaml:4: phases[0]", "s.yaml:5: phases[1]", "s.yaml:8: workloads[1]", "s.yaml:9: workloads[2]"}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("want %d errors, got %d:\n%v", len(want), len(lines), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("error %d: want prefix %q, got %q", i, w, lines[i])
		}
	}
	var first *scenario.Error
	if !errors.As(err, &first) || first.Line != 2 {
		t.Errorf("errors.As finds the first *Error: %+v", first)
	}
}

// A misspelt required key is named once, as the typo, not again as missing.
func TestTypoOfRequiredKeyIsOneError(t *testing.T) {
	_, err := scenario.Parse([]byte("name: x\nphase:\n  - {name: a, rate: 1, duration: 1s}\nworkloads:\n  - {name: w, http: {path: /}}\n"), "s.yaml", scenario.Options{})
	if err == nil || strings.Count(err.Error(), "\n") != 0 || !strings.Contains(err.Error(), `did you mean "phases"`) {
		t.Errorf("want one error naming the typo, got:\n%v", err)
	}
}
