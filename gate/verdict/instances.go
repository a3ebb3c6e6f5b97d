package verdict

import (
	"gonum.org/v1/gonum/stat"

	"math"

	"github.com/loadgate/loadgate/gate/result"
)

// The two-level model (Kalibera & Jones, "Rigorous benchmarking in
// reasonable time", 2013): a gate's rounds are nested in instances, each a
// bring-up of both sides' stacks, and a pair of instances can sit apart for
// all its rounds (bench/gate-quality-campaigns.md: one A/A gate's head
// faster on every workload in every round, −16…−45%). Rounds of one instance
// measure only the noise within it, so the interval carries the variance
// between instances as well. A gate has few instances (1–3), too few to
// estimate that variance alone, so the stored default (DefaultInstanceSD on
// DefaultInstanceDF degrees of freedom) is pooled with what the gate's own
// instances show, weighted by their df (an empirical-Bayes moderated
// variance, as in Smyth 2004): one instance pair far apart widens the
// interval, and the mean of instance means dilutes it.

// DefaultInstanceSD is the sd of one instance pair's offset, ln(head/base),
// on this kind of machine: the quiet A/A gates of
// bench/gate-quality-campaigns.md (measurements 4–7) had offsets per
// workload within about ±6% (≈ 2 sd, the rounds' own noise included).
const DefaultInstanceSD = 0.03

// DefaultInstanceDF is the weight of DefaultInstanceSD: the 21 gates it
// stands on, less one (of the campaigns' 24 A/A gates with the sides'
// change stated, the one under heavy steal and two with an offset of
// 5–12% are not in it; a gate's own instances count beside it).
const DefaultInstanceDF = 20

// IntervalInstances: the interval carries the variance between instances
// (the two-level model), wider than the rounds' spread alone.
const IntervalInstances = "instances"

// instanceOf is the instance pair of each round, or nil when some result does
// not record one (an older loadgate, compare of loose files, a stored baseline).
func instanceOf(base, head []*result.Result) []int {
	ids := make([]int, len(head))
	for i := range head {
		b, h := base[i], head[i]
		if b == nil || h == nil || b.Round == nil || h.Round == nil || b.Round.Instance <= 0 || h.Round.Instance <= 0 {
			return nil
		}
		ids[i] = h.Round.Instance*1000 + b.Round.Instance // a pair of instances
	}
	return ids
}

// instanceFit is the two-level fit of the rounds' log ratios.
type instanceFit struct {
	I        int     // instances
	mean     float64 // the mean of the instances' means (each instance weighs alike)
	sW2      float64 // pooled within-instance variance (df R − I); the rounds' variance when R == I
	dfW      float64
	sB2      float64 // between-instance variance used: the stored one pooled with the estimate
	est      float64 // the gate's own estimate (≥ 0), on I − 1 df
	dfB      float64 // sB2's df: DefaultInstanceDF + I − 1
	invN     float64 // Σ 1/n_k over the instances
	floorSD2 float64
}

// fitInstances fits logs grouped by ids with floor sd as the least between-instance sd.
func fitInstances(logs []float64, ids []int, floor float64) instanceFit {
	groups := map[int][]float64{}
	var order []int
	for i, x := range logs {
		if _, ok := groups[ids[i]]; !ok {
			order = append(order, ids[i])
		}
		groups[ids[i]] = append(groups[ids[i]], x)
	}
	R, I := len(logs), len(order)
	f := instanceFit{I: I, floorSD2: floor * floor}
	means := make([]float64, I)
	var ssw float64
	for k, id := range order {
		g := groups[id]
		means[k] = mean(g)
		f.invN += 1 / float64(len(g))
		for _, x := range g {
			ssw += (x - means[k]) * (x - means[k])
		}
	}
	f.mean = mean(means)
	if R > I {
		f.sW2, f.dfW = ssw/float64(R-I), float64(R-I)
	} else if R >= 2 { // one round per instance: the rounds' spread holds both levels
		f.sW2, f.dfW = variance(logs), float64(R-1)
	}
	if I >= 2 {
		// Moment estimate: the instance means' variance less what the
		// within-instance noise puts in it.
		f.est = max(0, variance(means)-f.sW2*f.invN/float64(I))
	}
	f.pool()
	return f
}

// pool is the moderated between-instance variance: the stored one on
// DefaultInstanceDF df and the gate's own on I − 1, weighted by df.
func (f *instanceFit) pool() {
	d0, d := float64(DefaultInstanceDF), float64(f.I-1)
	f.sB2, f.dfB = (d0*f.floorSD2+d*f.est)/(d0+d), d0+d
}

// part is the interval of the mean of instance means: Var = σ_B²/I + σ_W²·Σ(1/n_k)/I²,
// with Satterthwaite's df (Welch 1947) for the two estimated parts.
func (f instanceFit) part() *part {
	I := float64(f.I)
	a := f.sB2 / I
	b := f.sW2 * f.invN / (I * I)
	if a+b <= 0 {
		return nil
	}
	df := satterthwaite(a, f.dfB, b, f.dfW)
	return &part{se: math.Sqrt(a + b), df: df, what: IntervalInstances}
}

// future is the fit after r rounds on the same instances, spreads unchanged:
// a windows gate takes its instances in turn, so more rounds shrink only the
// within part, and σ_B²/I stays (gate/rounds, windows.go).
func (f instanceFit) future(r int) *part {
	g := f
	I := float64(f.I)
	g.invN = I * I / float64(r) // r/I rounds on each
	g.dfW = math.Max(f.dfW, float64(r-f.I))
	return g.part()
}

func satterthwaite(a, dfa, b, dfb float64) float64 {
	den := 0.0
	if a > 0 {
		den += a * a / dfa // dfa +Inf: a known part adds nothing
	}
	if b > 0 && dfb > 0 {
		den += b * b / dfb
	}
	if den <= 0 {
		return math.Inf(1)
	}
	return max(1, (a+b)*(a+b)/den)
}

func variance(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	return stat.Variance(xs, nil)
}
