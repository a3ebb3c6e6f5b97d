package verdict

// Reason codes of a WorkloadVerdict (why it is not measured, or has no
// checks) and of a Check (why it is not measured, or what its number
// leaves out), besides the comparisons' (compare.go) that they share:
// ReasonNotOffered (no request of the workload offered in the phase) and
// ReasonNoSuccess (none succeeded: a WorkloadVerdict states Offered,
// Failed and Abandoned; a latency Check). Verdict returns these codes and
// the numbers they need; package report words them (report.WorkloadWhy,
// report.CheckWhy) and fills the Why fields of what it writes
// (report.Explain).
const (
	// ReasonAbsent: the workload has thresholds but is absent from the
	// phase (WorkloadVerdict and each of its checks).
	ReasonAbsent Reason = "absent"
	// ReasonNoThresholds: measured, but nothing to judge it by
	// (WorkloadVerdict).
	ReasonNoThresholds Reason = "no_thresholds"
	// ReasonNoMessage: no session received a message (a first_message_*
	// Check).
	ReasonNoMessage Reason = "no_message"
	// ReasonNoHandshake: no session completed its handshake (a connect_*
	// Check).
	ReasonNoHandshake Reason = "no_handshake"
	// ReasonNoCompletion: no request completed (an error_rate Check).
	ReasonNoCompletion Reason = "no_completion"
	// ReasonAbandonedExcluded: the error rate leaves out Abandoned requests
	// (an error_rate Check that was measured).
	ReasonAbandonedExcluded Reason = "abandoned_excluded"
)
