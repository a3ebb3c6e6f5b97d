package verdict

// Reason codes of a WorkloadVerdict and of a Check, besides those shared
// with comparisons; package report words them.
const (
	ReasonAbsent            Reason = "absent"             // has thresholds, absent from the phase
	ReasonNoThresholds      Reason = "no_thresholds"      // measured, nothing to judge it by
	ReasonNoMessage         Reason = "no_message"         // no session received a message
	ReasonNoHandshake       Reason = "no_handshake"       // no session completed its handshake
	ReasonNoCompletion      Reason = "no_completion"      // no request completed
	ReasonAbandonedExcluded Reason = "abandoned_excluded" // the error rate leaves out Abandoned requests
)
