package verdict

import "time"

// AcceptLabel is the pull request label with which someone with write access
// accepts a failing verdict of the head commit it was added on.
const AcceptLabel = "loadgate:accept"

// Acceptance is a failing verdict accepted on purpose: who added AcceptLabel,
// when, on which head commit. The verdict and its numbers stay as measured;
// only the step's exit code becomes 0 (ExitCode), from VerdictExitCode.
type Acceptance struct {
	By              string    `json:"by"`         // the labeler's login (a user with write access)
	Permission      string    `json:"permission"` // theirs, as the API said: admin, maintain or write
	Label           string    `json:"label"`
	HeadSHA         string    `json:"head_sha"`   // the judged head commit, the pull request's head when labelled
	LabeledAt       time.Time `json:"labeled_at"` // the label's event
	ExitCode        int       `json:"exit_code"`  // the step's: 0
	VerdictExitCode int       `json:"verdict_exit_code"`
}

// Acceptable reports whether a verdict v whose step would exit code may be
// accepted: a failing verdict (exit 1) that measured something. Unusable (3),
// refused (2) and not measured are never accepted (rule 6).
func Acceptable(v Verdict, code int) bool {
	return code == 1 && v.Value != NotMeasured && v.Value != Unusable
}
