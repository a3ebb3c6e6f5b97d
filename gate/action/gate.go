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
	OutBaseline    = "baseline"    // against a baseline: BaselineUse
)

// OutputNames are exactly action.yml's outputs (a test checks it).
var OutputNames = []string{OutVerdict, OutRegressions, OutReport, OutResultsDir, OutBaseline}

// BaselineUse is how a gate against a stored baseline used it, for the
// baseline output: "re-measured" (its commit ran beside head), "stored" (its
// stored numbers alone), "record" (none yet, head passed: store its results as
// it), "not recorded" (none yet, head did not pass), "" (no baseline).
func BaselineUse(notes ...[]verdict.Note) string {
	for _, ns := range notes {
		for _, n := range ns {
			switch n.Code {
			case verdict.NoteBaselineRerun:
				return "re-measured"
			case verdict.NoteBaselineStoredOnly:
				return "stored"
			case verdict.NoteBaselineFirst:
				return "record"
			case verdict.NoteBaselineFirstFailed:
				return "not recorded"
			}
		}
	}
	return ""
}

// ExitCode is the exit code for v under fail-on: regression is v.ExitCode(), inconclusive
// fails an inconclusive verdict too, threshold lets a regression exit 0, never is 0. Unusable
// exits 3 whatever fail-on; an unknown value fails.
func ExitCode(v verdict.Verdict, failOn FailOn) int {
	if v.Value == verdict.Unusable {
		return 3
	}
	switch failOn {
	case FailOnNever:
		return 0
	case FailOnInconclusive:
		if v.Value == verdict.Inconclusive {
			return 1
		}
	case FailOnThreshold:
		switch v.Value {
		case verdict.Pass, verdict.Improvement, verdict.Inconclusive, verdict.Regression:
			return 0
		}
		return 1
	}
	return v.ExitCode()
}

func failsGate(val verdict.Value, failOn FailOn) bool {
	return ExitCode(verdict.Verdict{Value: val}, failOn) != 0
}

// Regressions are the workloads with a regression or fail verdict in any phase, once each.
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

// annotations groups the bad workload verdicts by workload, with the worst value.
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
