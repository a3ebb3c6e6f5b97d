package rounds

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/outfile"
)

// Stalled rounds (verdict.FindStall, after every round): a flagged round is
// moved aside (round-N.replaced-K), noted and run again in its place, up to
// verdict.StallCap and while the budget fits; past that it is kept and
// judged. Re-runs come on top, so a look is always over the planned count.

type stallState struct {
	rerun    int          // the slot to run again next, -1 none
	replaced int          // rounds replaced so far
	flagged  map[int]bool // rounds flagged and kept (noted once)
}

func put(rs []*result.Result, i int, res *result.Result) []*result.Result {
	if i < len(rs) {
		rs[i] = res
		return rs
	}
	return append(rs, res)
}

// stalled applies the rule after a round; true: slot g.stall.rerun is to run again.
func (g *gate) stalled(sides, planned int, roundTime time.Duration) (bool, error) {
	if g.stall.flagged == nil {
		g.stall.flagged = map[int]bool{}
	}
	var s *verdict.Stall
	for _, st := range verdict.FindStalls(g.baseResults(), g.head.Results, g.compareOptions()) {
		if !g.stall.flagged[st.Round] {
			s = &st
			break
		}
	}
	if s == nil {
		return false, nil
	}
	n := verdict.Note{Round: s.Round, Side: s.Side, Stall: s}
	switch limit := verdict.StallCap(planned); {
	case g.stall.replaced >= limit:
		n.Code, n.Rounds = verdict.NoteStallCapped, limit
	case g.budgetRounds(sides, roundTime) < 1:
		n.Code = verdict.NoteStallNoBudget
	default:
		g.stall.replaced++
		n.Code, n.Path = verdict.NoteStallRerun, fmt.Sprintf("round-%d.replaced-%d", s.Round, g.stall.replaced)
		if err := g.moveAside(s, n.Path); err != nil {
			return false, err
		}
		g.stall.rerun = s.Index
	}
	if n.Code != verdict.NoteStallRerun {
		g.stall.flagged[s.Round] = true
	}
	g.notes = append(g.notes, n)
	fmt.Fprintf(g.d.Log, "loadgate: %s\n", g.d.Words.Note(n))
	return n.Code == verdict.NoteStallRerun, nil
}

// moveAside renames each side's round directory to name, with replaced.json.
func (g *gate) moveAside(s *verdict.Stall, name string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return Unusable(err)
	}
	for _, side := range []*Side{g.base, g.head} {
		if side == nil {
			continue
		}
		from := filepath.Join(g.cfg.Out, side.Name, fmt.Sprintf("round-%d", s.Round))
		to := filepath.Join(g.cfg.Out, side.Name, name)
		if err := os.Rename(from, to); err != nil {
			return Unusablef("gate: round %d stalled: keep it as %s: %w", s.Round, name, err)
		}
		if err := outfile.WriteFile(filepath.Join(to, "replaced.json"), append(b, '\n')); err != nil {
			return Unusable(err)
		}
	}
	return nil
}
