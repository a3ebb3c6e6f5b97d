package rounds

import (
	"fmt"
	"time"

	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/verdict"
)

// Sequential rounds (--rounds auto): the gate runs ABBA pairs and, from
// the first look on (verdict.DefaultSeqMinRounds rounds; 2 when a matching
// calibration stands for the noise), judges after every pair with
// verdict.Sequential, which spends the error rate over the looks. The
// plan's MaxRounds is set before round 1 — the lower of --max-rounds and
// what the budget allows at the scheduled round length (RoundEstimate) —
// and re-planned once, after round 1, from that round's measured length
// (replan): before the first look, so the plan is fixed before any
// comparison is looked at, and never past the budget (a round 1 that used
// it up stops the gate). A look after which the next pair would overrun
// the budget (at the longest round measured so far) is the final one.

// Defaults of a gate of sequential rounds.
const (
	DefaultBudget    = 10 * time.Minute
	DefaultMaxRounds = verdict.DefaultSeqMaxRounds
)

// teardownMargin is kept free of rounds, per side, for the stacks' teardown.
const teardownMargin = 15 * time.Second

// The margins of RoundEstimate, per side of a round.
const (
	// drainMargin is what the drain adds to a round as it really runs:
	// the drain ends when the last response is in, tens of milliseconds
	// after the last due time on a healthy target, not at the scenario's
	// drain (the most it may take). A round that does take its whole
	// drain is measured (replan, and every look's budget check).
	drainMargin = 500 * time.Millisecond
	// sideOverhead is a side's round beyond its schedule: unpause, pause,
	// the samplers' start and stop, the result's files.
	sideOverhead = 500 * time.Millisecond
)

// seqLoop is a sequential gate's plan and what it measured.
type seqLoop struct {
	plan      verdict.SeqPlan
	roundTime time.Duration // the longest round so far (both sides), the estimate before round 1
	why       verdict.Note  // what set plan.MaxRounds (a NoteSequentialPlan without Rounds), for the note
	noteAt    int           // the plan's note in gate.notes (planSequential adds it, replan replaces it)
}

// RoundEstimate is one paired round's expected wall time from sc's
// schedule, before any round has run: per side warm-up and phases, the
// drain as the margin it costs (at most drainMargin: it ends when the last
// response is in) and sideOverhead. A round runs sides one after the
// other, so it is sides such lengths; a duet round runs both sides at the
// same instants: one length.
func RoundEstimate(sc *scenario.Scenario, sides int, duet bool) time.Duration {
	per := sc.Warmup + min(sc.Drain, drainMargin) + sideOverhead
	for _, p := range sc.Phases {
		per += p.Duration
	}
	if duet {
		return per
	}
	return time.Duration(sides) * per
}

// budgetRounds is how many paired rounds of length round still fit in the
// budget from now, keeping the teardown margin.
func (g *gate) budgetRounds(sides int, round time.Duration) int {
	left := g.cfg.Budget - g.d.Now().Sub(g.start) - time.Duration(sides)*teardownMargin
	if left <= 0 || round <= 0 {
		return 0
	}
	return int(left / round)
}

// fixedMaxRounds is, for fixed rounds, what the budget allows from now
// (done rounds already run) at round's length: at least the rounds asked
// for, at most verdict.MaxNeedRounds. An undecided comparison names it as
// its limit.
func (g *gate) fixedMaxRounds(sides int, round time.Duration, done int) int {
	return min(max(g.cfg.Rounds, done+g.budgetRounds(sides, round)), verdict.MaxNeedRounds)
}

// planSequential sets the plan before round 1 (the stacks are up: their
// build and start-up count against the budget).
func (g *gate) planSequential(sides int) (*seqLoop, error) {
	est := RoundEstimate(g.sc, sides, g.cfg.Duet)
	fit := g.budgetRounds(sides, est)
	maxR := min(g.cfg.MaxRounds, fit)
	maxR -= maxR % 2 // the looks are after whole ABBA pairs
	if maxR < 2 {
		return nil, Usagef("gate: --budget %s allows %d paired round(s) at ≈%s a round (as scheduled, after %s of set-up): sequential rounds need at least 2; raise --budget or use --rounds N",
			g.cfg.Budget, fit, est.Round(time.Second), g.d.Now().Sub(g.start).Round(time.Second))
	}
	s := &seqLoop{plan: verdict.SeqPlan{MaxRounds: maxR, MinRounds: min(verdict.DefaultSeqMinRounds, maxR)}, roundTime: est}
	s.why = verdict.Note{Code: verdict.NoteSequentialPlan, MaxRounds: g.cfg.MaxRounds, Budget: g.cfg.Budget, Fit: fit, RoundTime: est}
	// The plan is stated from now on: a gate that stops in round 1 (an
	// unusable side, an interrupt) still says what was planned.
	s.noteAt = len(g.notes)
	g.notes = append(g.notes, s.note())
	fmt.Fprintf(g.d.Log, "loadgate: sequential rounds: at most %d (%s); first look after %d (after 2 with a matching calibration)\n", maxR, g.d.Words.Plan(s.why), s.plan.MinRounds)
	return s, nil
}

// replan re-plans the gate's maximum of rounds once, after round 1, from
// that round's measured length took (the estimate before it is the
// schedule's, with margins) and returns the rounds planned now. The plan's
// note is replaced by the re-plan's.
//
// For sequential rounds this is what keeps the error control valid: it
// happens before the first look (which is after round 2 at the earliest),
// so the α-spending plan (MaxRounds and with it the looks) is fixed before
// any comparison is looked at. It depends on round 1's wall time: mostly
// its schedule and overheads, and its drain, which ends when the last
// response is in, so slower responses lengthen it a little. That is the
// data only weakly and before any look: the plan never depends on a
// comparison, and it is never changed after this.
//
// The plan never reaches past the budget: when round 1 has used so much of
// it that no second round fits, the gate stops after round 1, unusable
// (ErrUnusable), with the budget as its reason — a sequential gate's first
// look is after round 2 at the earliest.
//
// A clock that did not move (took ≤ 0: no measurement) keeps the estimate.
func (g *gate) replan(s *seqLoop, sides int, took time.Duration, planned int) (int, error) {
	if took <= 0 {
		return planned, nil
	}
	if s == nil {
		g.maxRounds = g.fixedMaxRounds(sides, took, 1)
		return planned, nil
	}
	fit := g.budgetRounds(sides, took) // after round 1
	maxR := min(g.cfg.MaxRounds, 1+fit)
	maxR -= maxR % 2
	if maxR != s.plan.MaxRounds {
		s.why = verdict.Note{Code: verdict.NoteSequentialPlan, MaxRounds: g.cfg.MaxRounds, Budget: g.cfg.Budget, Fit: 1 + fit, RoundTime: took, Measured: true}
	}
	if maxR < 2 {
		s.plan.MaxRounds = 1 // what ran: the note says at most 1, and why
		g.notes[s.noteAt] = s.note()
		return 1, Unusablef("gate: --budget %s is used up after round 1 (%s measured, %s since the gate's start): sequential rounds need a second round before their first look, and it does not fit; raise --budget or use --rounds N",
			g.cfg.Budget, took.Round(100*time.Millisecond), g.d.Now().Sub(g.start).Round(time.Second))
	}
	if maxR != s.plan.MaxRounds {
		fmt.Fprintf(g.d.Log, "loadgate: sequential rounds re-planned after round 1 (%s measured): at most %d\n", took.Round(100*time.Millisecond), maxR)
	}
	s.plan.MaxRounds = maxR
	s.plan.MinRounds = min(verdict.DefaultSeqMinRounds, maxR)
	s.roundTime = took // the estimate is replaced by the measurement
	g.maxRounds = maxR
	g.notes[s.noteAt] = s.note()
	return maxR, nil
}

// note is the plan's note: at most plan.MaxRounds paired rounds, and why.
func (s *seqLoop) note() verdict.Note {
	n := s.why
	n.Rounds = s.plan.MaxRounds
	return n
}

// calibrated: the calibration matches both sides' first results (then the
// first look may be after one ABBA pair).
func (g *gate) calibrated() bool {
	n := g.cfg.Compare.Noise
	if n == nil || len(g.head.Results) == 0 {
		return false
	}
	b := g.baseResults()
	return n.Match(g.head.Results[0]) == "" && len(b) > 0 && n.Match(b[0]) == ""
}

// look judges after a round when it is a look; true: the gate stops.
func (g *gate) look(s *seqLoop) (bool, error) {
	R := len(g.head.Results)
	if R == 2 && g.calibrated() {
		s.plan.MinRounds = 2
	}
	if R < s.plan.MinRounds || (R-s.plan.MinRounds)%2 != 0 {
		return false, nil
	}
	sides := 1
	if g.base != nil {
		sides = 2
	}
	plan := s.plan
	plan.Final = g.budgetRounds(sides, s.roundTime) < 2
	v, err := verdict.Sequential(g.baseResults(), g.head.Results, g.compareOptions(), plan)
	if err != nil {
		return false, Usagef("gate: %w", err)
	}
	d := v.Sequential
	fmt.Fprintf(g.d.Log, "loadgate: look %d/%d after %d rounds: %s, %d undecided", d.Look, d.Looks, R, v.Value, d.Open)
	if d.Decided() {
		fmt.Fprintf(g.d.Log, "; stop: %s\n", d.Stop)
		g.seq = &v
		return true, nil
	}
	fmt.Fprintln(g.d.Log)
	return false, nil
}

// compareOptions are the comparison's options: MaxRounds, where the
// caller left it 0, is what the budget allows (a sequential gate's plan;
// for fixed rounds the rounds that fit in the budget as scheduled, at
// least the rounds run), so an undecided comparison names the budget as
// its limit.
func (g *gate) compareOptions() verdict.CompareOptions {
	opt := g.cfg.Compare
	if opt.MaxRounds == 0 {
		opt.MaxRounds = g.maxRounds
	}
	return opt
}
