package report

import (
	"fmt"

	"github.com/loadgate/loadgate/gate/verdict"
)

// Words for the reason codes of workload verdicts and threshold checks
// (package verdict returns the codes and their numbers).

// WorkloadWhy words why a workload verdict is not measured or has no
// checks, "" when there is nothing to say. A verdict without a reason code
// (a verdict file written by a version that wrote words) keeps its Why.
func WorkloadWhy(wv verdict.WorkloadVerdict) string {
	switch wv.Reason {
	case "":
		return wv.Why
	case verdict.ReasonAbsent:
		return "absent from phase " + wv.Phase
	case verdict.ReasonNotOffered:
		return "no request offered in phase " + wv.Phase
	case verdict.ReasonNoSuccess:
		return fmt.Sprintf("no successful request: 0 of %s offered succeeded (%s failed, %s abandoned)",
			Count(wv.Offered), Count(wv.Failed), Count(wv.Abandoned))
	case verdict.ReasonNoThresholds:
		return "no thresholds"
	}
	return string(wv.Reason)
}

// CheckWhy words why a threshold check is not measured, or what its number
// leaves out, "" when there is nothing to say (a check without a reason
// code keeps its Why).
func CheckWhy(c verdict.Check) string {
	switch c.Reason {
	case "":
		return c.Why
	case verdict.ReasonAbsent:
		return "absent from phase " + c.Phase
	case verdict.ReasonNoSuccess:
		return "no successful request"
	case verdict.ReasonNoMessage:
		return "no session received a message"
	case verdict.ReasonNoHandshake:
		return "no session completed its handshake"
	case verdict.ReasonNoCompletion:
		return "no request completed"
	case verdict.ReasonAbandonedExcluded:
		return Count(c.Abandoned) + " abandoned excluded"
	}
	return string(c.Reason)
}

// CheckText renders one threshold check in the words and number formats of
// every report, "p95 312 ms > 300 ms (n=2 811)", for the surfaces outside
// this package (the Action's annotations), so that an annotation and the
// report it annotates say the same thing.
func CheckText(c verdict.Check) string { return checkText(c) }
