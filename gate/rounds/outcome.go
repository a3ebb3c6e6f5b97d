package rounds

import (
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

// SideResults is one side of a gate: a checkout and its rounds.
type SideResults struct {
	Name    string           // "base" or "head"
	Ref     string           // the git ref as given ("main", "HEAD", "pr-42")
	Commit  string           // the commit it resolved to
	Results []*result.Result // one per round, in round order; topology and stack are read from them
}

// Outcome is what a gate produced: both sides, the rounds, the
// scenario and the verdict (verdict.Gate).
//
// How the rounds ran (which side went first, whether the idle side was
// paused) is read from the results (result.Round, else their start
// times), never assumed: a compare of result files claims only what they
// record.
type Outcome struct {
	Scenario result.Scenario // zero: taken from the first result
	Base     SideResults
	Head     SideResults
	Rounds   int // paired rounds; 0: len(Head.Results)
	Verdict  verdict.Verdict
	Notes    []verdict.Note // the caller's notes (a gate's set-up and plan), worded by NoteText with the verdict's
}
