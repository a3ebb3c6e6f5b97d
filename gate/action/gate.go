package action

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/verdict"
)

// Output names, as in action.yml.
const (
	OutVerdict     = "verdict"     // the verdict value: pass, fail, regression, …
	OutRegressions = "regressions" // JSON array of workload names, see Regressions
	OutReport      = "report"      // path of the Markdown report
	OutResultsDir  = "results-dir" // path of the results directory
)

// OutputNames are exactly action.yml's outputs (a test checks it).
var OutputNames = []string{OutVerdict, OutRegressions, OutReport, OutResultsDir}

// ExitCode is the step's exit code for v under fail-on:
//
//	regression (default)  v.ExitCode(): 1 for fail, regression, not measured
//	threshold             1 for fail and not measured; a regression exits 0
//	never                 0 whatever the verdict
//
// An unusable run exits 3 under every fail-on; an unknown value never passes.
func ExitCode(v verdict.Verdict, failOn FailOn) int {
	if v.Value == verdict.Unusable {
		return 3
	}
	switch failOn {
	case FailOnNever:
		return 0
	case FailOnThreshold:
		switch v.Value {
		case verdict.Pass, verdict.Improvement, verdict.Inconclusive, verdict.Regression:
			return 0
		}
		return 1
	}
	return v.ExitCode()
}

// failsGate reports whether a workload value fails the step under failOn.
func failsGate(val verdict.Value, failOn FailOn) bool {
	return ExitCode(verdict.Verdict{Value: val}, failOn) != 0
}

// Regressions are the workloads with a regression or fail verdict in any
// judged phase, once each, in verdict order. The list is the same under
// every fail-on. Not measured workloads are not regressions.
func Regressions(v verdict.Verdict) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, wv := range v.Workloads {
		if (wv.Value == verdict.Regression || wv.Value == verdict.Fail) && !seen[wv.Workload] {
			seen[wv.Workload] = true
			out = append(out, wv.Workload)
		}
	}
	return out
}

// regressionsJSON is the regressions output, a JSON array for fromJSON.
func regressionsJSON(names []string) string {
	if names == nil {
		names = []string{}
	}
	b, _ := json.Marshal(names)
	return string(b)
}

// annotation is one workload's phases and checks that made it worse.
type annotation struct {
	workload string
	value    verdict.Value
	lines    []string
}

// annotations groups the bad workload verdicts by workload, keeping the
// worst value.
func annotations(v verdict.Verdict) []annotation {
	var out []annotation
	idx := map[string]int{}
	for _, wv := range v.Workloads {
		switch wv.Value {
		case verdict.Regression, verdict.Fail, verdict.NotMeasured:
		default:
			continue
		}
		i, ok := idx[wv.Workload]
		if !ok {
			i = len(out)
			idx[wv.Workload] = i
			out = append(out, annotation{workload: wv.Workload, value: wv.Value})
		}
		a := &out[i]
		a.value = verdict.Worst(a.value, wv.Value)
		a.lines = append(a.lines, phaseLine(wv))
	}
	return out
}

// phaseLine says why one workload verdict is bad, in one line.
func phaseLine(wv verdict.WorkloadVerdict) string {
	var parts []string
	for _, c := range wv.Checks {
		if c.Value == verdict.Pass || c.Value == verdict.Improvement {
			continue
		}
		parts = append(parts, report.CheckText(c)) // as the report writes it
	}
	if why := report.WorkloadWhy(wv); len(parts) == 0 && why != "" {
		parts = append(parts, why)
	}
	s := fmt.Sprintf("%s: %s", wv.Phase, wv.Value)
	if len(parts) > 0 {
		s += " — " + strings.Join(parts, "; ")
	}
	return s
}
