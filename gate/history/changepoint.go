package history

import (
	"gonum.org/v1/gonum/stat"

	"math"
	"math/rand/v2"
	"slices"
)

// Defaults of DetectOptions (a zero field takes its default).
const (
	DefaultSignificance = 0.01
	DefaultPermutations = 499
	DefaultMinSize      = 3
)

// DetectOptions set the change-point detector.
type DetectOptions struct {
	// Significance α: a split is kept when at most α of permuted series split as well.
	Significance float64
	Permutations int    // per test; the smallest p-value is 1/(R+1)
	MinSize      int    // the fewest entries on either side of a change point (≥ 2)
	Seed         uint64 // the same series and seed give the same change points
}

func (o DetectOptions) withDefaults() DetectOptions {
	if !(o.Significance > 0 && o.Significance < 1) {
		o.Significance = DefaultSignificance
	}
	if o.Permutations <= 0 {
		o.Permutations = DefaultPermutations
	}
	if o.MinSize < 2 {
		o.MinSize = DefaultMinSize
	}
	return o
}

// ChangePoint is where a series' level shifted: xs[Index] begins the new level.
type ChangePoint struct {
	Index int     `json:"index"`
	P     float64 `json:"p"`     // the permutation test's p-value
	Q     float64 `json:"q"`     // the divergence statistic Q̂ of the split
	Shift float64 `json:"shift"` // mean of the segment after − mean of the one before, in xs's unit
}

// Detect finds change points in xs by E-divisive with means (Matteson & James). It assumes
// a segment's values exchangeable: give it a series' values, not their running sums.
func Detect(xs []float64, opt DetectOptions) []ChangePoint {
	opt = opt.withDefaults()
	rng := rand.New(rand.NewPCG(opt.Seed, 0x6c6f616467617465)) // "loadgate"
	bounds := []int{0, len(xs)}                                // segment edges
	var cps []ChangePoint
	work := make([]float64, len(xs))
	for {
		at, q := bestOver(xs, bounds, opt.MinSize)
		if at < 0 {
			break
		}
		over, limit := 0, opt.Significance*float64(opt.Permutations+1)-1
		for r := 0; r < opt.Permutations && float64(over) <= limit; r++ {
			copy(work, xs)
			for i := 0; i+1 < len(bounds); i++ {
				seg := work[bounds[i]:bounds[i+1]]
				rng.Shuffle(len(seg), func(a, b int) { seg[a], seg[b] = seg[b], seg[a] })
			}
			if _, qp := bestOver(work, bounds, opt.MinSize); qp >= q {
				over++
			}
		}
		p := float64(over+1) / float64(opt.Permutations+1)
		if p > opt.Significance {
			break
		}
		cps = append(cps, ChangePoint{Index: at, P: p, Q: q})
		bounds = append(bounds, at)
		slices.Sort(bounds)
	}
	slices.SortFunc(cps, func(a, b ChangePoint) int { return a.Index - b.Index })
	for i := range cps {
		j := slices.Index(bounds, cps[i].Index)
		cps[i].Shift = mean(xs[cps[i].Index:bounds[j+1]]) - mean(xs[bounds[j-1]:cps[i].Index])
	}
	return cps
}

func bestOver(xs []float64, bounds []int, minSize int) (at int, q float64) {
	at, q = -1, math.Inf(-1)
	for i := 0; i+1 < len(bounds); i++ {
		if t, qt := bestSplit(xs[bounds[i]:bounds[i+1]], minSize); t >= 0 && qt > q {
			at, q = bounds[i]+t, qt
		}
	}
	return at, q
}

func bestSplit(xs []float64, minSize int) (int, float64) {
	n := len(xs)
	if n < 2*minSize {
		return -1, 0
	}
	var within, between float64 // Σ over pairs within X, within Y, across
	var withinX, withinY float64
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			within += math.Abs(xs[i] - xs[j])
		}
	}
	withinY = within // τ = 0: every value in Y
	best, bestQ := -1, math.Inf(-1)
	for t := 0; t < n-minSize; t++ {
		var toX, toY float64
		for i := 0; i < t; i++ {
			toX += math.Abs(xs[t] - xs[i])
		}
		for j := t + 1; j < n; j++ {
			toY += math.Abs(xs[t] - xs[j])
		}
		withinX += toX
		withinY -= toY
		between += toY - toX
		nx, ny := float64(t+1), float64(n-t-1)
		if t+1 < minSize {
			continue
		}
		e := 2*between/(nx*ny) - withinX/(nx*(nx-1)/2) - withinY/(ny*(ny-1)/2)
		if q := nx * ny / (nx + ny) * e; q > bestQ {
			best, bestQ = t+1, q
		}
	}
	return best, bestQ
}

func mean(xs []float64) float64 { return stat.Mean(xs, nil) }
