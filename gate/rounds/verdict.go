package rounds

import "github.com/loadgate/loadgate/gate/verdict"

// UnusableVerdict is the verdict of a gate that could not judge: value
// unusable, no workloads, the notes why (codes; package report words them).
func UnusableVerdict(why ...verdict.Note) verdict.Verdict {
	return verdict.Verdict{Value: verdict.Unusable, Workloads: []verdict.WorkloadVerdict{}, Notes: why}
}

// ErrorVerdict is the unusable verdict of a gate stopped by an error: its
// message (one line) is the note.
func ErrorVerdict(msg string) verdict.Verdict {
	return UnusableVerdict(verdict.Note{Code: verdict.NoteError, Detail: msg})
}
