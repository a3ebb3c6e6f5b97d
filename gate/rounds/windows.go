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

// windowPlan is how a windows gate cuts the judged phase and brings stacks up.
type windowPlan struct {
	phase     scenario.Phase
	k         int           // windows the judged phase is cut into
	w         time.Duration // one window
	window    *scenario.Scenario
	prime     *scenario.Scenario // warm-up and earlier phases, once per instance; nil: none
	instances int                // planned
	per       int                // windows per instance (the last may have fewer)
	upTook    time.Duration      // the first instance's bring-up (stack.prepare included), measured
	upLater   time.Duration      // a later instance's bring-up, measured (0: not yet)
	instance  int                // the instance running now (1-based)
	index     int                // windows run on it
	cur       *result.Window     // the round running now
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

// instanceCost is what bringing up one more instance costs: both sides' stacks
// down and up again, and its warm-up run (sides in sequence unless duet).
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

// setPlan fixes instances and windows per instance for rounds.
func (wp *windowPlan) setPlan(rounds, instances int) {
	wp.instances = max(1, min(instances, rounds/2))
	wp.per = max(1, int(math.Ceil(float64(rounds)/float64(wp.instances))))
}

// boundary: planned round n (0-based, an earlier attempt's counted) starts a new instance.
func (wp *windowPlan) boundary(n int) bool {
	m := n - wp.offset
	return m > 0 && m%wp.per == 0
}

// firstLook is the first look's rounds: two rounds into the second instance,
// so no look sees one instance alone (even, at least DefaultSeqMinRounds).
func (wp *windowPlan) firstLook(maxRounds int) int {
	if wp.instances < 2 {
		return min(verdict.DefaultSeqMinRounds, maxRounds)
	}
	f := max(verdict.DefaultSeqMinRounds, wp.per+2)
	f += f % 2
	return min(f, maxRounds)
}

// round is the next window's record on the current instance.
func (wp *windowPlan) round() *result.Window {
	wp.index++
	return &result.Window{Phase: wp.phase.Name, Index: wp.index, Of: wp.per,
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
	return fmt.Sprintf("%s %s cut into windows of %s (%d in the phase), %d per instance after %s; %d instance(s) per side",
		wp.phase.Name, wp.phase.Duration, wp.w, wp.k, wp.per, pre, wp.instances)
}

// roundScenario is what a round runs: a window of the judged phase, or the scenario.
func (g *gate) roundScenario() *scenario.Scenario {
	if g.win != nil {
		return g.win.window
	}
	return g.sc
}

// roundRecord adds the instance and, for a windows gate, the window to rd;
// the window is counted once per round (on its first side).
func (g *gate) roundRecord(rd result.Round, first bool) result.Round {
	rd.Instance = max(1, g.instance0)
	if g.win == nil {
		return rd
	}
	rd.Instance = g.win.instance
	if first {
		g.win.cur = g.win.round()
	}
	w := *g.win.cur
	rd.Window = &w
	return rd
}

// upAll brings instance k of every side up; even instances start head first,
// so the start order alternates as the rounds' order does.
func (g *gate) upAll(ctx context.Context, sides []*Side, k int) error {
	order := sides
	if k%2 == 0 && len(sides) == 2 {
		order = []*Side{sides[1], sides[0]}
	}
	if g.win != nil {
		g.win.instance, g.win.index = k, 0
	}
	for _, s := range order {
		if err := g.up(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// nextInstance tears both sides' stacks down and brings fresh ones up, warmed up.
func (g *gate) nextInstance(ctx context.Context, sides []*Side) error {
	k := g.win.instance + 1
	fmt.Fprintf(g.d.Log, "loadgate: instance %d/%d: both sides' stacks down, fresh ones up\n", k, g.instance0-1+g.win.instances)
	g.down()
	began := g.d.Now()
	if err := g.upAll(ctx, sides, k); err != nil {
		return err
	}
	g.win.upLater = max(g.win.upLater, g.d.Now().Sub(began)) // the budget's later checks
	return g.primeInstance(ctx, sides)
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
