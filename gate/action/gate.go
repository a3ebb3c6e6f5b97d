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

// OutputNames are the outputs Publish writes: exactly action.yml's outputs
// (a test checks it).
var OutputNames = []string{OutVerdict, OutRegressions, OutReport, OutResultsDir}

// ExitCode is the step's exit code for v under fail-on:
//
//	regression (default)  v.ExitCode(): 1 for fail, regression, not measured
//	threshold             1 for fail (an absolute threshold) and not measured;
//	                      a regression alone exits 0 (annotated as a warning)
//	never                 0 whatever the verdict
//
// Under every fail-on an unusable run exits 3: fail-on chooses which
// verdicts gate, and an unusable run has no verdict to choose from (its
// stack failed, or offered != recorded). An unknown value is never a pass.
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

// Regressions are the workloads that got worse: those with a workload
// verdict of regression (relative to the base) or fail (an absolute
// threshold broken) in any judged phase, each named once, in the verdict's
// order. It is the same list under every fail-on, so that a later step can
// rely on it; fail-on only decides whether they fail the step (and whether
// their annotations are errors or warnings). Not measured workloads are not
// regressions: they are annotated, and they fail the gate.
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

// regressionsJSON is the regressions output: a JSON array, for
// fromJSON(steps.<id>.outputs.regressions) in a workflow.
func regressionsJSON(names []string) string {
	if names == nil {
		names = []string{}
	}
	b, _ := json.Marshal(names)
	return string(b)
}

// annotation is one workload's annotation: the phases and checks that made
// it worse or not measured.
type annotation struct {
	workload string
	value    verdict.Value
	lines    []string
}

// annotations groups the verdict's bad workload verdicts by workload, in
// order, the worst value of each workload kept.
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
