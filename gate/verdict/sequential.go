package verdict

import (
	"fmt"
	"math"

	"github.com/loadgate/loadgate/gate/result"
)

// Sequential rounds: a gate looks after every ABBA pair and stops once
// every judged comparison is decided. Repeated looks would inflate false
// decisions (optional stopping), so the gate spends α = 1 − confidence over
// its looks with a Lan–DeMets spending function (O'Brien–Fleming-type by
// default, or Pocock) at the exact group-sequential boundary (boundary.go):
// any false decision at any look stays within α.

// Spending functions of a SeqPlan.
const (
	SpendOBF    = "obf"    // 2 − 2Φ(z_{α/2}/√t): O'Brien–Fleming-type, spends late (the default)
	SpendPocock = "pocock" // α·ln(1 + (e−1)t): Pocock-type, spends early
)

// SeqPlan is how a gate of sequential rounds looks at its rounds.
type SeqPlan struct {
	// MaxRounds: the most paired rounds the gate runs; ≥ MinRounds.
	MaxRounds int
	// MinRounds: the first look's rounds (0: DefaultSeqMinRounds); at two
	// rounds a t interval has one degree of freedom and decides almost nothing.
	MinRounds int
	// Step: rounds between looks (0: 2, one ABBA pair).
	Step int
	// Final: the budget affords no further look, so this one spends all the
	// error rate left and the gate stops.
	Final bool
	// Spending: SpendOBF (""), or SpendPocock.
	Spending string
}

// DefaultSeqMinRounds is the first look's rounds: two ABBA pairs.
const DefaultSeqMinRounds = 4

// DefaultSeqMaxRounds is a sequential gate's most rounds unless told
// otherwise, chosen from bench/gate-quality.md.
const DefaultSeqMaxRounds = 20

// Why a sequential gate stopped (SeqDecision.Stop); "" when it goes on.
const (
	StopDecided = "decided" // every judged comparison is decided
	// StopRegression: a trusted regression at this look fails the gate
	// whatever the open comparisons become.
	StopRegression = "regression"
	StopMaxRounds  = "max_rounds" // the plan's maximum of rounds is reached
	StopBudget     = "budget"     // the caller can afford no further look
	StopUntrusted  = "untrusted"  // a round whose generator fell behind: more rounds do not make the comparison trustworthy
	StopUnusable   = "unusable"   // the verdict is unusable
)

// SeqDecision is a look of a sequential gate.
type SeqDecision struct {
	Look  int `json:"look"`  // 1-based
	Looks int `json:"looks"` // the plan's most looks
	// Rounds: paired rounds so far; MaxRounds the plan's maximum.
	Rounds    int    `json:"rounds"`
	MaxRounds int    `json:"max_rounds"`
	Spending  string `json:"spending"`
	// Nominal: the gate's confidence. Level: this look's nominal two-sided
	// boundary level (the Verdict's Confidence is 1 − Level). Spent: the error
	// rate spent so far, ≤ 1 − Nominal.
	Nominal float64 `json:"nominal"`
	Level   float64 `json:"level"`
	Spent   float64 `json:"spent"`
	// Open: the judged comparisons still inconclusive.
	Open int `json:"open"`
	// Stop: why the gate stops here; "" to run Step more rounds and look again.
	Stop string `json:"stop,omitempty"`
}

// Decided: the gate stops at this look (whatever the reason).
func (d SeqDecision) Decided() bool { return d.Stop != "" }

// spend is the cumulative error rate α(t) spent by information fraction t.
func spend(kind string, alpha, t float64) float64 {
	if t <= 0 {
		return 0
	}
	if t >= 1 {
		return alpha
	}
	if kind == SpendOBF {
		return 2 - 2*(0.5*math.Erfc(-normQuantile(1-alpha/2)/math.Sqrt(t)/math.Sqrt2))
	}
	return alpha * math.Log(1+(math.E-1)*t)
}

// Sequential is one look of a sequential gate after len(base) paired
// rounds: Gate's verdict at this look's share of the error rate, and
// whether to stop (Verdict.Sequential). The round loop calls it after every
// ABBA pair from MinRounds on; off a look it returns a usage error.
func Sequential(base, head []*result.Result, opt CompareOptions, plan SeqPlan) (Verdict, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return Verdict{}, err
	}
	if plan, err = plan.withDefaults(); err != nil {
		return Verdict{}, err
	}
	R := len(head)
	if R < plan.MinRounds || (R-plan.MinRounds)%plan.Step != 0 || R > plan.MaxRounds {
		return Verdict{}, fmt.Errorf("verdict: sequential: %d rounds is not a look (looks at %d, then every %d, up to %d)", R, plan.MinRounds, plan.Step, plan.MaxRounds)
	}
	looks := (plan.MaxRounds-plan.MinRounds)/plan.Step + 1
	look := (R-plan.MinRounds)/plan.Step + 1
	alpha := 1 - opt.Confidence
	final := plan.Final || look >= looks
	spent := spend(plan.Spending, alpha, float64(R)/float64(plan.MaxRounds))
	if final {
		spent = alpha
	}
	// The look's nominal level, from the boundary of the looks so far.
	levelAt := func(a float64) float64 {
		return seqLevel(plan.Spending, a, plan.MinRounds, plan.Step, R, plan.MaxRounds, final)
	}
	level := levelAt(alpha)
	d := SeqDecision{Look: look, Looks: looks, Rounds: R, MaxRounds: plan.MaxRounds, Spending: plan.Spending,
		Nominal: opt.Confidence, Level: level, Spent: spent}
	at := opt
	if at.MaxRounds == MaxNeedRounds {
		at.MaxRounds = plan.MaxRounds // what an undecided comparison asks for is within the plan, or says it is not
	}
	at.Confidence = 1 - level
	if at.Confidence >= 1 {
		at.Confidence = math.Nextafter(1, 0)
	}
	// Holm's j-th smallest of k p-values: this look's level at α/(k − j + 1).
	at.holmLevel = func(a float64) float64 { return levelAt(2*a) / 2 }
	v, err := Gate(base, head, at)
	if err != nil {
		return v, err
	}
	d.Open, d.Stop = seqStop(v, base, head, look >= looks, plan.Final)
	v.Sequential = &d
	return v, nil
}

// withDefaults fills the plan's zero fields and checks the rest.
func (plan SeqPlan) withDefaults() (SeqPlan, error) {
	if plan.MinRounds <= 0 {
		plan.MinRounds = DefaultSeqMinRounds
	}
	if plan.Step <= 0 {
		plan.Step = 2
	}
	if plan.Spending == "" {
		plan.Spending = SpendOBF
	}
	if plan.Spending != SpendPocock && plan.Spending != SpendOBF {
		return plan, fmt.Errorf("verdict: spending %q: want %q or %q", plan.Spending, SpendPocock, SpendOBF)
	}
	if plan.MaxRounds < plan.MinRounds {
		return plan, fmt.Errorf("verdict: sequential: at most %d rounds, fewer than the first look's %d", plan.MaxRounds, plan.MinRounds)
	}
	return plan, nil
}

// seqStop is how many judged comparisons of v are still open and why the
// gate stops at this look ("" to go on): lastLook, the plan's last look;
// final, the budget's.
func seqStop(v Verdict, base, head []*result.Result, lastLook, final bool) (int, string) {
	open := 0
	untrusted, regression := false, false
	for _, wv := range v.Workloads {
		for _, c := range wv.Comparisons {
			regression = regression || c.Value == Regression
			if c.Value == Inconclusive {
				open++
				untrusted = untrusted || c.Undecided != ""
			}
		}
	}
	// Shared duet stalls are left out once enough rounds are on schedule, so
	// more rounds can decide.
	if untrusted && onlySharedStalls(base, head) {
		untrusted = false
	}
	switch {
	case v.Value == Unusable:
		return open, StopUnusable
	case open == 0:
		return open, StopDecided
	case regression:
		return open, StopRegression
	case untrusted:
		return open, StopUntrusted
	case lastLook:
		return open, StopMaxRounds
	case final:
		return open, StopBudget
	}
	return open, ""
}
