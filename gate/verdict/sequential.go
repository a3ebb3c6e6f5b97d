package verdict

import (
	"fmt"
	"math"

	"github.com/loadgate/loadgate/gate/result"
)

// Sequential rounds: a gate that looks after every ABBA pair and stops as
// soon as every judged comparison is decided.
//
// Looking again and again at a growing sample and stopping at the first
// interval that clears the tolerance would call false regressions far
// more often than each look's 2.5% (optional stopping). The gate instead
// spends its error rate α = 1 − confidence over its looks with a
// Lan–DeMets alpha-spending function (K. K. G. Lan and D. L. DeMets,
// "Discrete sequential boundaries for clinical trials", Biometrika
// 70:659–663, 1983): by the look after R of at most MaxRounds rounds it
// has spent α(R/MaxRounds), by default with the O'Brien–Fleming-type
// function α(t) = 2 − 2Φ(z_{α/2}/√t) (it keeps most of α for the later
// looks, where the t intervals have the degrees of freedom to use it;
// SpendPocock, α(t) = α·ln(1 + (e − 1)·t), spends early: it stops a large
// change sooner and decides fewer small ones — the simulations in
// sequential_test.go compare both). A look whose caller can afford no
// further one (the budget) spends all that is left. Each look's intervals
// are at the nominal level of the exact group-sequential boundary for that
// spending (boundary.go): the looks' statistics are correlated, and the
// boundary uses it, so the chance of any false decision at any look —
// regression, improvement or pass — is within α whenever the gate stops,
// and Holm's procedure within each look, on each comparison's own boundary
// at its Holm share of α, keeps it so over the gate's comparisons. (Until
// December 2026 each look spent only its increment α_k = α(t_k) −
// α(t_{k−1}), the union bound over the looks: valid, but at the last of
// the default's nine looks its intervals were at 98.9% where the boundary
// allows 96.6%.)

// Spending functions of a SeqPlan.
const (
	SpendOBF    = "obf"    // 2 − 2Φ(z_{α/2}/√t): O'Brien–Fleming-type, spends late (the default)
	SpendPocock = "pocock" // α·ln(1 + (e−1)t): Pocock-type, spends early
)

// SeqPlan is how a gate of sequential rounds looks at its rounds.
type SeqPlan struct {
	// MaxRounds: the most paired rounds the gate runs (its maximum, or what
	// its budget allows at the expected round length). ≥ MinRounds.
	MaxRounds int
	// MinRounds: the first look's rounds (0: DefaultSeqMinRounds). With two
	// rounds a t interval has one degree of freedom (t = 12.7): a first
	// look there spends error rate on almost nothing, unless a matching
	// calibration stands for the noise.
	MinRounds int
	// Step: rounds between looks (0: 2, one ABBA pair).
	Step int
	// Final: the caller can afford no further look (its budget will be
	// spent before another Step rounds end): this look spends all the
	// error rate that is left, and the gate stops here whatever it finds.
	Final bool
	// Spending: SpendOBF (""), or SpendPocock.
	Spending string
}

// DefaultSeqMinRounds is the first look's rounds: two ABBA pairs.
const DefaultSeqMinRounds = 4

// DefaultSeqMaxRounds is a sequential gate's most rounds unless told
// otherwise (gate/rounds, --max-rounds, the Action): chosen from make
// gate-quality's table (bench/gate-quality.md) — on the demo's duet
// rounds, at most 20 decided 61% of A/A gates where at most 10 decided 18%,
// in a mean 5m47s, within the 10-minute budget that still bounds it.
const DefaultSeqMaxRounds = 20

// Why a sequential gate stopped (SeqDecision.Stop); "" when it goes on.
const (
	StopDecided = "decided" // every judged comparison is decided
	// StopRegression: a comparison is called a regression at this look (its
	// rounds all trusted): the gate fails whatever the open ones become, so
	// it stops — the group-sequential stop for rejection — and a later
	// round's trouble cannot take back what this look established.
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
	// Nominal: the gate's confidence (its two-sided error rate 1 − Nominal
	// is what is spent over the looks). Level: the nominal two-sided level
	// of this look's group-sequential boundary (its intervals are at
	// confidence 1 − Level, which is the Verdict's Confidence). Spent: the
	// error rate spent through this look, α(R/MaxRounds), ≤ 1 − Nominal.
	Nominal float64 `json:"nominal"`
	Level   float64 `json:"level"`
	Spent   float64 `json:"spent"`
	// Open: the judged comparisons still inconclusive.
	Open int `json:"open"`
	// Stop: why the gate stops here (StopDecided, …); "" to run another
	// Step rounds and call Sequential again.
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

// Sequential is one look of a gate of sequential rounds, after the rounds
// so far (paired as for Compare; len(base) rounds, a whole number of Steps
// past MinRounds): it judges every comparison at this look's share of the
// error rate (Gate's thresholds and comparisons, Holm within the look) and
// says whether the gate stops. The round loop calls it after every ABBA
// pair from MinRounds on, and stops when the decision's Stop is set; the
// returned Verdict is then the gate's verdict, with Sequential filled in.
// Before MinRounds, or off a look, it returns an error (a usage error of
// the caller, not a verdict). It is a pure function of its inputs.
func Sequential(base, head []*result.Result, opt CompareOptions, plan SeqPlan) (Verdict, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return Verdict{}, err
	}
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
		return Verdict{}, fmt.Errorf("verdict: spending %q: want %q or %q", plan.Spending, SpendPocock, SpendOBF)
	}
	if plan.MaxRounds < plan.MinRounds {
		return Verdict{}, fmt.Errorf("verdict: sequential: at most %d rounds, fewer than the first look's %d", plan.MaxRounds, plan.MinRounds)
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
	// The look's nominal level, from the boundary of the gate's spending
	// at its looks so far (a Final look's is the budget's last).
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
	// Holm's j-th smallest of k p-values: the look's level of the same
	// design at α/(k − j + 1) (one-sided here, as holm tests).
	at.holmLevel = func(a float64) float64 { return levelAt(2*a) / 2 }
	v, err := Gate(base, head, at)
	if err != nil {
		return v, err
	}
	untrusted, regression := false, false
	for _, wv := range v.Workloads {
		for _, c := range wv.Comparisons {
			regression = regression || c.Value == Regression
			if c.Value == Inconclusive {
				d.Open++
				untrusted = untrusted || c.Undecided != ""
			}
		}
	}
	// Rounds behind only for causes both duet sides share are left out
	// once enough others are on schedule: more rounds can decide, so
	// the gate goes on rather than stop untrusted.
	if untrusted && onlySharedStalls(base, head) {
		untrusted = false
	}
	switch {
	case v.Value == Unusable:
		d.Stop = StopUnusable
	case d.Open == 0:
		d.Stop = StopDecided
	case regression:
		d.Stop = StopRegression
	case untrusted:
		d.Stop = StopUntrusted
	case look >= looks:
		d.Stop = StopMaxRounds
	case plan.Final:
		d.Stop = StopBudget
	}
	v.Sequential = &d
	return v, nil
}
