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

// Outcome is what a gate produced: sides, rounds, scenario and verdict.
// Round order and pausing are read from the results, never assumed.
type Outcome struct {
	Scenario result.Scenario // zero: taken from the first result
	Base     SideResults
	Head     SideResults
	Rounds   int // paired rounds; 0: len(Head.Results)
	Verdict  verdict.Verdict
	Notes    []verdict.Note      // the caller's notes (a gate's set-up and plan), worded by NoteText with the verdict's
	Shards   []ShardInfo         // a merged gate's shards, by K (Merge); nil for one runner
	Accepted *verdict.Acceptance // a failing verdict accepted by label (the Action's accept step); nil when not
	// Stored is a re-measured baseline's numbers as recorded (on another
	// machine, perhaps): shown beside, never judged. Nil otherwise.
	Stored *result.Result
}
