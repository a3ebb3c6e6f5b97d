package rounds

import (
	"fmt"
	"time"

	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/verdict"
)

// Sequential rounds (--rounds auto) judge after every ABBA pair from the
// first look. MaxRounds is fixed before any look, so the α spending stays
// valid, and never exceeds the budget.

// Defaults of a gate of sequential rounds.
const (
	DefaultBudget    = 10 * time.Minute
	DefaultMaxRounds = verdict.DefaultSeqMaxRounds
)

// teardownMargin is kept free of rounds, per side, for the stacks' teardown.
const teardownMargin = 15 * time.Second

// The margins of RoundEstimate, per side of a round. A healthy drain ends
// soon after the last due time; replan measures longer ones.
const (
	drainMargin  = 500 * time.Millisecond
	sideOverhead = 500 * time.Millisecond // unpause, pause, samplers and result files
)

type seqLoop struct {
	plan      verdict.SeqPlan
	roundTime time.Duration // the longest round so far (both sides), the estimate before round 1
	why       verdict.Note  // what set plan.MaxRounds (a NoteSequentialPlan without Rounds), for the note
	noteAt    int           // the plan's note in gate.notes (planSequential adds it, replan replaces it)
}

// RoundEstimate is one paired round's expected wall time from sc's schedule plus margins:
// sides in sequence, or one for a duet.
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

// left is the budget's time still free for rounds: the teardown kept, a
// windows gate's later instances' too (instanceCost counted it).
func (g *gate) left(sides int) time.Duration {
	left := g.cfg.Budget - g.d.Now().Sub(g.start) - time.Duration(sides)*teardownMargin
	if g.win != nil && g.win.up > 1 {
		left -= time.Duration((g.win.up-1)*sides) * downEstimate
	}
	return left
}

// budgetRounds is how many paired rounds of length round still fit in the
// budget; a windows gate's instances not yet up are paid for first.
func (g *gate) budgetRounds(sides int, round time.Duration) int {
	left := g.left(sides)
	if w := g.win; w != nil && w.instances > w.up {
		left -= time.Duration(w.instances-w.up) * w.instanceCost(sides, g.cfg.Duet)
	}
	if left <= 0 || round <= 0 {
		return 0
	}
	return int(left / round)
}

// fixedMaxRounds is what the budget allows for fixed rounds, at least those asked for,
// at most verdict.MaxNeedRounds.
func (g *gate) fixedMaxRounds(sides int, round time.Duration, done int) int {
	return min(max(g.cfg.Rounds, done+g.budgetRounds(sides, round)), verdict.MaxNeedRounds)
}

func (g *gate) planSequential(sides int) (*seqLoop, error) {
	est := RoundEstimate(g.roundScenario(), sides, g.cfg.Duet)
	fit := g.budgetRounds(sides, est)
	if g.win != nil {
		var inst int
		fit, inst = g.win.fit(g.win.firstLeft(g.left(sides), sides, g.cfg.Duet), est, sides, g.cfg.Duet, g.cfg.MaxRounds)
		g.win.setPlan(fit, inst)
	}
	maxR := min(g.cfg.MaxRounds, fit)
	if g.earlier != nil { // one test over the earlier rounds and this attempt's
		maxR = min(g.earlier.Rounds+maxR, verdict.MaxNeedRounds)
	}
	maxR -= maxR % 2 // the looks are after whole ABBA pairs
	if maxR < 2 {
		return nil, Usagef("gate: --budget %s allows %d paired round(s) at ≈%s a round (as scheduled, after %s of set-up): sequential rounds need at least 2; raise --budget or use --rounds N",
			g.cfg.Budget, fit, est.Round(time.Second), g.d.Now().Sub(g.start).Round(time.Second))
	}
	s := &seqLoop{plan: verdict.SeqPlan{MaxRounds: maxR, MinRounds: g.firstLook(maxR)}, roundTime: est}
	s.why = verdict.Note{Code: verdict.NoteSequentialPlan, MaxRounds: g.cfg.MaxRounds, Budget: g.cfg.Budget, Fit: fit, RoundTime: est}
	s.noteAt = len(g.notes) // noted now, so a gate stopped in round 1 says what was planned
	g.notes = append(g.notes, s.note())
	fmt.Fprintf(g.d.Log, "loadgate: sequential rounds: at most %d (%s); first look after %d (after 2 with a matching calibration)\n", maxR, g.d.Words.Plan(s.why), s.plan.MinRounds)
	g.logWindows(s.plan.MinRounds)
	return s, nil
}

// firstLook is the first look's rounds: DefaultSeqMinRounds, or for a windows
// gate of several instances two rounds on each.
func (g *gate) firstLook(maxR int) int {
	if g.win != nil {
		return g.win.firstLook(maxR)
	}
	return min(verdict.DefaultSeqMinRounds, maxR)
}

// logWindows logs the windows plan and notes it (replacing an earlier note of it).
func (g *gate) logWindows(firstLook int) {
	if g.win == nil {
		return
	}
	fmt.Fprintf(g.d.Log, "loadgate: rounds are judged windows: %s\n", g.win.describe())
	n := verdict.Note{Code: verdict.NoteRoundWindows, Windows: g.win.note(firstLook)}
	for i := range g.notes {
		if g.notes[i].Code == verdict.NoteRoundWindows {
			g.notes[i] = n
			return
		}
	}
	g.notes = append(g.notes, n)
}

// replan re-plans MaxRounds once from round 1's length took (≤ 0: keep the
// estimate), before the first look so the plan never depends on a comparison.
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
	if g.win != nil { // the instances stay; their windows follow the measured length
		g.win.setPlan(maxR, g.win.instances)
	}
	if maxR != s.plan.MaxRounds {
		s.why = verdict.Note{Code: verdict.NoteSequentialPlan, MaxRounds: g.cfg.MaxRounds, Budget: g.cfg.Budget, Fit: 1 + fit, RoundTime: took, Measured: true}
	}
	if maxR < 2 {
		s.plan.MaxRounds = 1 // what ran: the note says at most 1, and why
		g.notes[s.noteAt] = s.note()
		return 1, Unusablef("gate: --budget %s is used up after round 1 (%s measured, %s since the gate's start), and the first look needs a second round; raise --budget or use --rounds N",
			g.cfg.Budget, took.Round(100*time.Millisecond), g.d.Now().Sub(g.start).Round(time.Second))
	}
	if maxR != s.plan.MaxRounds {
		fmt.Fprintf(g.d.Log, "loadgate: sequential rounds re-planned after round 1 (%s measured): at most %d\n", took.Round(100*time.Millisecond), maxR)
	}
	changed := maxR != s.plan.MaxRounds
	s.plan.MaxRounds = maxR
	s.plan.MinRounds = g.firstLook(maxR)
	if g.win != nil && changed {
		g.logWindows(s.plan.MinRounds)
	}
	s.roundTime = took // the estimate is replaced by the measurement
	g.maxRounds = maxR
	g.notes[s.noteAt] = s.note()
	return maxR, nil
}

func (s *seqLoop) note() verdict.Note {
	n := s.why
	n.Rounds = s.plan.MaxRounds
	return n
}

// calibrated: the calibration matches both sides' first results (a first look after one pair).
func (g *gate) calibrated() bool {
	n := g.cfg.Compare.Noise
	if n == nil || len(g.head.Results) == 0 {
		return false
	}
	b := g.baseResults()
	return n.Match(g.head.Results[0]) == "" && len(b) > 0 && n.Match(b[0]) == ""
}

func (g *gate) look(s *seqLoop) (bool, error) {
	R := len(g.head.Results)
	if R == 2 && g.calibrated() && g.win == nil {
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

// compareOptions fill a zero MaxRounds with what the budget allows, so an
// undecided comparison names the budget.
func (g *gate) compareOptions() verdict.CompareOptions {
	opt := g.cfg.Compare
	if opt.MaxRounds == 0 {
		opt.MaxRounds = g.maxRounds
	}
	return opt
}
