package rounds

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/verdict"
)

// Round shapes (Config.Shape, --round-shape).
const (
	// ShapeWindows: each stack instance runs the warm-up and the phases
	// before the judged one once, then judged windows of the judged phase
	// as rounds; the gate brings each side's stack up PlanInstances times.
	ShapeWindows = "windows"
	// ShapeScenario: every round runs the whole scenario, on one instance.
	ShapeScenario = "scenario"
)

// Window planning. A window must hold, for its workload of least share,
// z²·q/(1−q) samples of the judged quantile q at z of 99.8%: the fewest for
// a distribution-free bound of it at the level of a windows gate's early
// looks (99.7% at the first of the README's scenario's; a look at a higher
// level leaves such a comparison open, and a later one decides it): 182 at
// p95, 955 at p99. It lasts at least MinWindow; the judged phase is cut
// into the most equal windows that allow.
const (
	MinWindow     = 5 * time.Second
	windowSettle  = time.Second // each window's own warm-up at the phase's rate, excluded
	PlanInstances = 3           // bring-ups per side, where the budget leaves MinPlanRounds with them
	MinPlanRounds = 10          // rounds a plan of several instances keeps; fewer: one instance, every round to the windows
	downEstimate  = 5 * time.Second
	// upEstimate is a later instance's bring-up a side, before one is
	// measured: compose up of images already built, no stack.prepare (the
	// demo's measured 5–7 s at a load average of 20 on 2 cores).
	upEstimate     = 15 * time.Second
	windowSamplesK = 1.0
	windowLevel    = 0.998 // two-sided, of the bound the window's samples must allow
)

// windowPlan is how a windows gate cuts the judged phase and brings stacks
// up: every planned instance pair is brought up and primed before round 1,
// and the rounds are taken in turn on them (round 1 on pair 1, 2 on pair 2,
// …), all but the running pair paused, so every look sees every instance.
type windowPlan struct {
	phase     scenario.Phase
	k         int           // windows the judged phase is cut into
	w         time.Duration // one window
	window    *scenario.Scenario
	prime     *scenario.Scenario // warm-up and earlier phases, once per instance; nil: none
	instances int                // planned
	per       int                // windows per instance (some may have one fewer)
	upTook    time.Duration      // the first instance's bring-up (stack.prepare included), measured
	upLater   time.Duration      // a later instance's bring-up, measured (0: not yet)
	first     int                // this attempt's first instance (after a continued attempt's)
	instance  int                // the instance whose stacks run now (1-based; 0: none yet)
	up        int                // instances brought up in this attempt
	offset    int                // rounds of an earlier attempt this gate continues (continue.go)
}

// windowsWhyNot says why sc cannot run as windows ("" when it can).
func windowsWhyNot(sc *scenario.Scenario) string {
	at := -1
	for i, p := range sc.Phases {
		if p.Judged {
			at = i
		}
	}
	switch {
	case at < 0:
		return "the scenario has no judged phase"
	case sc.Phases[at].Pattern != scenario.Constant:
		return fmt.Sprintf("its judged phase %s is not constant (%s): its windows would not be the same load", sc.Phases[at].Name, sc.Phases[at].Pattern)
	case at != len(sc.Phases)-1:
		return fmt.Sprintf("phases follow its judged phase %s (%s): a window cannot run them", sc.Phases[at].Name, sc.Phases[at+1].Name)
	}
	return ""
}

// WindowLength is the window the judged phase p of sc is cut into, and how
// many: the shortest whole second ≥ MinWindow giving every workload
// windowSamplesK× the fewest samples for a bound of its judged quantile q
// at windowLevel, then p cut into that many equal windows (one when p is shorter).
func WindowLength(sc *scenario.Scenario, p scenario.Phase, percentile string) (time.Duration, int) {
	z := math.Sqrt2 * math.Erfinv(windowLevel)
	var total float64
	for _, w := range sc.Workloads {
		total += w.Share
	}
	need := MinWindow.Seconds()
	for _, w := range sc.Workloads {
		if w.Share <= 0 || total <= 0 || p.Rate <= 0 {
			continue
		}
		q := judgedQuantile(w.Thresholds, percentile)
		n := windowSamplesK * z * z * q / (1 - q)
		need = max(need, n/(p.Rate*w.Share/total))
	}
	wmin := time.Duration(math.Ceil(need)) * time.Second
	k := max(1, int(p.Duration/wmin))
	return (p.Duration / time.Duration(k)).Truncate(time.Millisecond), k
}

// judgedQuantile is the highest quantile judged for a workload: the gate's
// --percentile, else its threshold percentiles, else p95 (as gate/verdict).
func judgedQuantile(t scenario.Thresholds, percentile string) float64 {
	switch percentile {
	case verdict.MetricP50:
		return 0.5
	case verdict.MetricP90:
		return 0.9
	case verdict.MetricP95:
		return 0.95
	case verdict.MetricP99:
		return 0.99
	case verdict.MetricP999, "p999":
		return 0.999
	}
	q := 0.0
	for _, c := range []struct {
		d time.Duration
		q float64
	}{{t.P50, 0.5}, {t.P90, 0.9}, {t.P95, 0.95}, {t.P99, 0.99}, {t.P999, 0.999}} {
		if c.d > 0 {
			q = max(q, c.q)
		}
	}
	if q == 0 {
		return 0.95
	}
	return q
}

// newWindowPlan derives the window's and the instance's warm-up scenarios from sc.
func newWindowPlan(sc *scenario.Scenario, percentile string) *windowPlan {
	p, _ := sc.JudgedPhase()
	w, k := WindowLength(sc, p, percentile)
	wp := &windowPlan{phase: p, k: k, w: w}
	win := *sc
	wph := p
	wph.Duration = w
	win.Phases = []scenario.Phase{wph}
	win.Warmup = windowSettle
	win.Hash = win.ComputeHash()
	wp.window = &win
	var pre []scenario.Phase
	for _, ph := range sc.Phases {
		if ph.Judged {
			break
		}
		ph.Judged = false
		pre = append(pre, ph)
	}
	prime := *sc
	switch {
	case len(pre) > 0:
		prime.Phases = pre
	case sc.Warmup > 0: // no earlier phase: the warm-up at the judged phase's rate
		ph := p
		ph.Judged, ph.Duration = false, sc.Warmup
		prime.Phases, prime.Warmup = []scenario.Phase{ph}, 0
	default:
		return wp
	}
	prime.Hash = prime.ComputeHash()
	wp.prime = &prime
	return wp
}

// primeTime is one instance's warm-up run, scheduled, with margins.
func (wp *windowPlan) primeTime() time.Duration {
	if wp.prime == nil {
		return 0
	}
	return RoundEstimate(wp.prime, 1, true)
}

// firstLeft is left less the first instance's warm-up run, still to come when the plan is made.
func (wp *windowPlan) firstLeft(left time.Duration, sides int, duet bool) time.Duration {
	if duet {
		return left - wp.primeTime()
	}
	return left - time.Duration(sides)*wp.primeTime()
}

// instanceCost is what one more instance costs: both sides' stacks up (and,
// at the end, down beside the others), and its warm-up run (sides in
// sequence unless duet).
func (wp *windowPlan) instanceCost(sides int, duet bool) time.Duration {
	prime := wp.primeTime()
	if !duet {
		prime *= time.Duration(sides)
	}
	up := wp.upLater
	if up == 0 {
		up = min(wp.upTook, time.Duration(sides)*upEstimate)
	}
	return time.Duration(sides)*downEstimate + up + prime
}

// fit is the rounds and instances that fit in left with window rounds of
// length round, at most maxRounds (even): the most instances, up to
// PlanInstances, that leave at least MinPlanRounds (and 2 a instance), else one.
func (wp *windowPlan) fit(left, round time.Duration, sides int, duet bool, maxRounds int) (rounds, instances int) {
	if round <= 0 {
		return 0, 1
	}
	for inst := PlanInstances; inst >= 1; inst-- {
		rest := left - time.Duration(inst-1)*wp.instanceCost(sides, duet)
		if rest <= 0 {
			continue
		}
		r := min(maxRounds, int(rest/round))
		r -= r % 2
		if r >= max(min(MinPlanRounds, maxRounds), 2*inst) || inst == 1 {
			return r, inst
		}
	}
	return 0, 1
}

// setPlan fixes instances and windows per instance for rounds; once the
// instances are up, only the windows per instance follow rounds.
func (wp *windowPlan) setPlan(rounds, instances int) {
	if wp.up <= 1 {
		wp.instances = max(1, min(instances, rounds/2))
	}
	wp.per = max(1, int(math.Ceil(float64(rounds)/float64(wp.instances))))
}

// pairOf is the instance that runs round i (0-based, an earlier attempt's
// counted): this attempt's instances in turn.
func (wp *windowPlan) pairOf(i int) int {
	return wp.first + (i-wp.offset)%max(1, wp.instances)
}

// order is the ABBA index of round i (Order): i itself where the instances
// are odd in number (each instance's rounds then alternate too), else i's
// turn and pass, so that each instance's rounds still alternate which side
// goes first (with two instances: A B B A A B B A …, each pair A B A B).
func (wp *windowPlan) order(i int) int {
	m, n := i-wp.offset, max(1, wp.instances)
	return wp.offset + m/n + m%n
}

// firstLook is the first look's rounds: two rounds on every instance (one
// of each start order), so every look sees every instance and the spread
// within them has a degree of freedom an instance (even, at least
// DefaultSeqMinRounds).
func (wp *windowPlan) firstLook(maxRounds int) int {
	f := max(verdict.DefaultSeqMinRounds, 2*wp.instances)
	f += f % 2
	return min(f, maxRounds)
}

// record is round i's window: its index among its instance's rounds.
func (wp *windowPlan) record(i int) *result.Window {
	return &result.Window{Phase: wp.phase.Name, Index: (i-wp.offset)/max(1, wp.instances) + 1, Of: wp.per,
		DurationS: wp.w.Seconds(), PhaseS: wp.phase.Duration.Seconds(), SettleS: windowSettle.Seconds()}
}

// note is the plan for the report (verdict.NoteRoundWindows).
func (wp *windowPlan) note(firstLook int) *verdict.WindowPlan {
	n := &verdict.WindowPlan{Phase: wp.phase.Name, PhaseS: wp.phase.Duration.Seconds(), WindowS: wp.w.Seconds(), InPhase: wp.k,
		PerInstance: wp.per, Instances: wp.instances, FirstLook: firstLook}
	if wp.prime != nil {
		n.WarmupS = wp.prime.TotalDuration().Seconds()
	}
	return n
}

// describe is the plan in a log line.
func (wp *windowPlan) describe() string {
	pre := "no warm-up"
	if wp.prime != nil {
		pre = fmt.Sprintf("one warm-up run of %s", wp.prime.TotalDuration())
	}
	turn := ""
	if wp.instances > 1 {
		turn = ", all up from the start, the rounds in turn on them"
	}
	return fmt.Sprintf("%s %s cut into windows of %s (%d in the phase), %d per instance after %s; %d instance(s) per side%s",
		wp.phase.Name, wp.phase.Duration, wp.w, wp.k, wp.per, pre, wp.instances, turn)
}

// roundScenario is what a round runs: a window of the judged phase, or the scenario.
func (g *gate) roundScenario() *scenario.Scenario {
	if g.win != nil {
		return g.win.window
	}
	return g.sc
}

// roundRecord adds the instance and, for a windows gate, the window to rd.
func (g *gate) roundRecord(rd result.Round) result.Round {
	rd.Instance = max(1, g.instance0)
	if g.win == nil {
		return rd
	}
	rd.Instance = g.win.instance
	rd.Window = g.win.record(rd.Number - 1)
	return rd
}

// orderOf is round i's ABBA index (Order): i, or a windows gate's (windowPlan.order).
func (g *gate) orderOf(i int) int {
	if g.win == nil {
		return i
	}
	return g.win.order(i)
}

// upAll brings instance k of every side up; even instances start head first,
// so the start order alternates as the rounds' order does.
func (g *gate) upAll(ctx context.Context, sides []*Side, k int) error {
	order := sides
	if k%2 == 0 && len(sides) == 2 {
		order = []*Side{sides[1], sides[0]}
	}
	if g.win != nil {
		g.win.instance = k
		g.win.up++
	}
	for _, s := range order {
		if err := g.up(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// upRest brings up every planned instance pair after the first, each primed
// once, pausing the pair before it (a duet's; ABBA stacks are paused between
// loads already), so all but one pair sit paused, taking no CPU.
func (g *gate) upRest(ctx context.Context, sides []*Side) error {
	for g.win.up < g.win.instances {
		k := g.win.instance + 1
		fmt.Fprintf(g.d.Log, "loadgate: instance %d/%d: both sides' stacks up beside the paused ones\n", k, g.win.first-1+g.win.instances)
		if err := g.pausePair(ctx, sides); err != nil {
			return err
		}
		began := g.d.Now()
		if err := g.upAll(ctx, sides, k); err != nil {
			return err
		}
		g.win.upLater = max(g.win.upLater, g.d.Now().Sub(began)) // the budget's later checks
		if err := g.primeInstance(ctx, sides); err != nil {
			return err
		}
	}
	return nil
}

// pausePair pauses a duet's running pair (its stacks are never paused between rounds).
func (g *gate) pausePair(ctx context.Context, sides []*Side) error {
	if !g.cfg.Duet {
		return nil
	}
	for _, s := range sides {
		if err := s.stack.Pause(ctx); err != nil {
			return Unusablef("gate: %s side: pause: %w", s.Name, err)
		}
	}
	return nil
}

// switchTo makes instance k's stacks the sides' running ones: a duet's
// pair before it paused and k's unpaused; ABBA's are unpaused per load.
func (g *gate) switchTo(ctx context.Context, sides []*Side, k int) error {
	if g.win == nil || g.win.instance == k {
		return nil
	}
	if err := g.pausePair(ctx, sides); err != nil {
		return err
	}
	for _, s := range sides {
		s.stack = s.insts[k-g.win.first]
	}
	g.win.instance = k
	if !g.cfg.Duet {
		return nil
	}
	for _, s := range sides {
		if err := s.stack.Unpause(ctx); err != nil {
			return Unusablef("gate: %s side: unpause: %w", s.Name, err)
		}
	}
	return nil
}

// primeInstance runs the instance's warm-up and earlier phases once per
// side (at the same instants in a duet), in no number: under
// OUT/<side>/instance-<k>-warmup/, no result.json, nothing judged.
func (g *gate) primeInstance(ctx context.Context, sides []*Side) error {
	if g.win == nil || g.win.prime == nil {
		return nil
	}
	k := g.win.instance
	fmt.Fprintf(g.d.Log, "loadgate: instance %d: warm-up run of %s (not judged)\n", k, g.win.prime.TotalDuration())
	rd := result.Round{Number: 0, Instance: k}
	if g.cfg.Duet {
		rd.Mode = result.RoundDuet
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		var ps [2]*prepared
		for i, s := range sides {
			p, err := g.prepare(ctx, s, rd)
			if err != nil {
				if i == 1 {
					ps[0].abandon()
				}
				return fmt.Errorf("gate: instance %d warm-up: %s side: %w", k, s.Name, err)
			}
			ps[i] = p
		}
		_, errs, _, first := g.duetLoads(ctx, cancel, ps, g.d.Now().Add(duetLead))
		if first >= 0 {
			return fmt.Errorf("gate: instance %d warm-up: %s side: %w", k, sides[first].Name, errs[first])
		}
		return nil
	}
	for _, s := range sides {
		p, err := g.prepare(ctx, s, rd)
		if err != nil {
			return err
		}
		res, err := g.load(ctx, p, time.Time{}, false)
		if err != nil {
			return fmt.Errorf("gate: instance %d warm-up: %s side: %w", k, s.Name, err)
		}
		_ = g.complete(ctx, p, res)
		if err := s.stack.Pause(ctx); err != nil {
			return Unusablef("gate: %s side: pause: %w", s.Name, err)
		}
	}
	return nil
}

// PlanEstimate says how a default gate (duet, --rounds auto, windows where the
// scenario allows) would cut sc's judged phase and how many paired rounds would
// fit in budget after setup (the stacks' first bring-up, assumed): for
// `loadgate check`, before anything runs. The gate plans again from what it measures.
func PlanEstimate(sc *scenario.Scenario, budget, setup time.Duration) string {
	const sides, duet = 2, true
	left := budget - setup - sides*teardownMargin
	if why := windowsWhyNot(sc); why != "" {
		est := RoundEstimate(sc, sides, duet)
		r := min(DefaultMaxRounds, int(max(left, 0)/est))
		return fmt.Sprintf("whole-scenario rounds (%s): ≈%s a round, about %d in a %s budget after %s of set-up", why, est.Round(time.Second), r-r%2, budget, setup)
	}
	wp := newWindowPlan(sc, "")
	wp.upTook = setup
	r, inst := wp.fit(wp.firstLeft(left, sides, duet), RoundEstimate(wp.window, sides, duet), sides, duet, DefaultMaxRounds)
	wp.setPlan(r, inst)
	return fmt.Sprintf("%s; about %d rounds in a %s budget after %s of set-up", wp.describe(), r, budget, setup)
}
