package rounds

import "github.com/loadgate/loadgate/gate/verdict"

// UnusableVerdict is an unusable verdict with no workloads and the notes why.
func UnusableVerdict(why ...verdict.Note) verdict.Verdict {
	return verdict.Verdict{Value: verdict.Unusable, Workloads: []verdict.WorkloadVerdict{}, Notes: why}
}

// ErrorVerdict is the unusable verdict of a gate stopped by an error msg.
func ErrorVerdict(msg string) verdict.Verdict {
	return UnusableVerdict(verdict.Note{Code: verdict.NoteError, Detail: msg})
}
