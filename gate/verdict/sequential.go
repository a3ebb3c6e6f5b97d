package verdict

import (
	"fmt"
	"math"

	"github.com/loadgate/loadgate/gate/result"
)

// Sequential rounds look after every ABBA pair and stop once every judged
// comparison is decided. Repeated looks inflate false decisions, so the gate
// spends α = 1 − confidence over them at the exact group-sequential boundary.

// Spending functions of a SeqPlan.
const (
	SpendOBF    = "obf"    // 2 − 2Φ(z_{α/2}/√t): O'Brien–Fleming-type, spends late (the default)
	SpendPocock = "pocock" // α·ln(1 + (e−1)t): Pocock-type, spends early
)

// SeqPlan is how a gate of sequential rounds looks at its rounds.
type SeqPlan struct {
	MaxRounds int    // the most paired rounds; ≥ MinRounds
	MinRounds int    // the first look's rounds (0: DefaultSeqMinRounds)
	Step      int    // rounds between looks (0: 2, one ABBA pair)
	Final     bool   // the budget affords no further look: spend all α left
	Spending  string // SpendOBF ("") or SpendPocock
}

// DefaultSeqMinRounds is the first look's rounds: two ABBA pairs (at two
// rounds a t interval decides almost nothing).
const DefaultSeqMinRounds = 4

// DefaultSeqMaxRounds is a sequential gate's default most rounds (bench/gate-quality.md).
const DefaultSeqMaxRounds = 20

// Why a sequential gate stopped (SeqDecision.Stop); "" when it goes on.
const (
	StopDecided    = "decided"    // every judged comparison is decided
	StopRegression = "regression" // a trusted regression fails the gate whatever the open ones become
	StopMaxRounds  = "max_rounds" // the plan's maximum of rounds is reached
	StopBudget     = "budget"     // the caller can afford no further look
	StopUntrusted  = "untrusted"  // a round whose generator fell behind: more rounds do not make the comparison trustworthy
	StopUnusable   = "unusable"   // the verdict is unusable
)

// SeqDecision is a look of a sequential gate.
type SeqDecision struct {
	Look      int    `json:"look"`  // 1-based
	Looks     int    `json:"looks"` // the plan's most looks
	Rounds    int    `json:"rounds"`
	MaxRounds int    `json:"max_rounds"`
	Spending  string `json:"spending"`
	// Nominal: the gate's confidence; Level: this look's two-sided boundary
	// level (Verdict.Confidence is 1 − Level); Spent: α spent so far.
	Nominal float64 `json:"nominal"`
	Level   float64 `json:"level"`
	Spent   float64 `json:"spent"`
	Open    int     `json:"open"`           // judged comparisons still inconclusive
	Stop    string  `json:"stop,omitempty"` // "": run Step more rounds and look again
}

// Decided: the gate stops at this look.
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

// Sequential is one look after len(base) paired rounds: Gate's verdict at
// this look's share of α, and whether to stop (Verdict.Sequential). Call it
// only at a look (MinRounds, then every Step, up to MaxRounds); off a look it
// is an error.
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

// seqStop is how many judged comparisons are open and why the gate stops
// at this look ("" to go on).
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
	// More rounds can decide when every stall is a shared duet stall (left out).
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
