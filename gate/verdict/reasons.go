package verdict

// Reason codes of a WorkloadVerdict and of a Check, besides those shared
// with comparisons (ReasonNotOffered, ReasonNoSuccess). Package report
// words them.
const (
	// ReasonAbsent: the workload has thresholds but is absent from the phase.
	ReasonAbsent Reason = "absent"
	// ReasonNoThresholds: measured, but nothing to judge it by.
	ReasonNoThresholds Reason = "no_thresholds"
	// ReasonNoMessage: no session received a message (first_message_*).
	ReasonNoMessage Reason = "no_message"
	// ReasonNoHandshake: no session completed its handshake (connect_*).
	ReasonNoHandshake Reason = "no_handshake"
	// ReasonNoCompletion: no request completed (an error_rate Check).
	ReasonNoCompletion Reason = "no_completion"
	// ReasonAbandonedExcluded: the error rate leaves out Abandoned requests.
	ReasonAbandonedExcluded Reason = "abandoned_excluded"
)
