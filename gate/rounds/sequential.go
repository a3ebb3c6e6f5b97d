package rounds

import (
	"fmt"
	"time"

	"github.com/loadgate/loadgate/gate/verdict"
)

// Sequential rounds (--rounds auto): the gate runs ABBA pairs and, from
// the first look on (verdict.DefaultSeqMinRounds rounds; 2 when a matching
// calibration stands for the noise), judges after every pair with
// verdict.Sequential, which spends the error rate over the looks. The
// plan's MaxRounds is fixed before round 1: the lower of --max-rounds and
// what the budget allows at the scheduled round length (RoundEstimate).
// A look after which the next pair would overrun the budget (at the
// longest round measured so far) is the final one.

// Defaults of a gate of sequential rounds.
const (
	DefaultBudget    = 10 * time.Minute
	DefaultMaxRounds = 10
)

// teardownMargin is kept free of rounds, per side, for the stacks' teardown.
const teardownMargin = 15 * time.Second

// seqLoop is a sequential gate's plan and what it measured.
type seqLoop struct {
	plan      verdict.SeqPlan
	roundTime time.Duration // the longest round so far (both sides), the estimate before round 1
}

// RoundEstimate is one paired round's expected wall time from the
// scenario's schedule: per side warm-up, phases and drain, plus a margin
// (10% and 3 s: unpause, pause, samples, files).
func (g *gate) RoundEstimate(sides int) time.Duration {
	per := g.sc.Warmup + g.sc.Drain
	for _, p := range g.sc.Phases {
		per += p.Duration
	}
	per += per/10 + 3*time.Second
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

// planSequential fixes the plan before round 1 (the stacks are up: their
// build and start-up count against the budget).
func (g *gate) planSequential(sides int) (*seqLoop, error) {
	est := g.RoundEstimate(sides)
	fit := g.budgetRounds(sides, est)
	maxR := min(g.cfg.MaxRounds, fit)
	maxR -= maxR % 2 // the looks are after whole ABBA pairs
	if maxR < 2 {
		return nil, Usagef("gate: --budget %s allows %d paired round(s) at ≈%s a round (as scheduled, after %s of set-up): sequential rounds need at least 2; raise --budget or use --rounds N",
			g.cfg.Budget, fit, est.Round(time.Second), g.d.Now().Sub(g.start).Round(time.Second))
	}
	s := &seqLoop{plan: verdict.SeqPlan{MaxRounds: maxR, MinRounds: min(verdict.DefaultSeqMinRounds, maxR)}, roundTime: est}
	why := fmt.Sprintf("--max-rounds %d", g.cfg.MaxRounds)
	if fit < g.cfg.MaxRounds {
		why = fmt.Sprintf("the budget %s allows %d at ≈%s a round as scheduled; --max-rounds %d", g.cfg.Budget, fit, est.Round(time.Second), g.cfg.MaxRounds)
	}
	g.notes = append(g.notes, fmt.Sprintf("sequential rounds (--rounds auto): at most %d paired rounds (%s), budget %s", maxR, why, g.cfg.Budget))
	fmt.Fprintf(g.d.Log, "loadgate: sequential rounds: at most %d (%s); first look after %d (after 2 with a matching calibration)\n", maxR, why, s.plan.MinRounds)
	return s, nil
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
