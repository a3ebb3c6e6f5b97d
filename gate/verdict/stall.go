package verdict

import (
	"math"
	"slices"

	"github.com/loadgate/loadgate/gate/result"
)

// The stalled-round rule (docs/gate.md): a round is stalled when every judged
// cell (≥ StallMinCells) moved the same way by StallFactor against the median
// of ≥ StallMinOthers other rounds (StallFactorBacked when the slow side's
// steal or stack CPU backs it), and its mean log ratio lies outside the
// others' 1 − StallAlpha prediction interval. A change shows in every round,
// a stall in one; StallCap bounds the re-runs so a slower head is still judged.
const (
	StallFactor         = 2.0
	StallFactorBacked   = 1.5
	StallAlpha          = 1e-4
	StallMinOthers      = 3
	StallMinCells       = 2
	StallStealJump      = 0.05
	StallCPUFactor      = 2.0
	StallMaxReplaced    = 2
	StallRoundsPerRerun = 10
)

// StallCap is how many stalled rounds a gate of maxRounds may replace: one
// per StallRoundsPerRerun, at least one, at most StallMaxReplaced.
func StallCap(maxRounds int) int {
	return min(StallMaxReplaced, max(1, maxRounds/StallRoundsPerRerun))
}

// Stall is a round the rule flags, with the numbers that flagged it.
type Stall struct {
	Round  int     `json:"round"`     // the round's number, 1-based
	Side   string  `json:"side"`      // the side slower on every cell at once: "base" or "head"
	Factor float64 `json:"factor"`    // the least of the cells' slowdowns
	Cells  int     `json:"workloads"` // phase × workload cells, every one of them slower
	T      float64 `json:"t"`         // distance from the others' mean in predictive sds (≤ 1e6)
	Others int     `json:"others"`    // the rounds it was set against
	// Steal (the higher of the slow side's generator and stack cores) and
	// StackCPU (% of a core): this round's and the others' median.
	Steal    *StallFigure `json:"steal,omitempty"`
	StackCPU *StallFigure `json:"stack_cpu_pct,omitempty"`
	Backed   bool         `json:"backed"` // Steal or StackCPU backs it (the lower factor applied)
	Index    int          `json:"-"`      // the round's place in the slices judged
}

// StallFigure is a side's figure in the flagged round and its other rounds' median.
type StallFigure struct {
	Round  float64 `json:"round"`
	Others float64 `json:"others"`
}

// FindStalls applies the rule to paired rounds base[i], head[i] at
// opt.Percentile and returns every stalled round, farthest apart first.
// Cells unmeasured in some round are left out (Compare says why).
func FindStalls(base, head []*result.Result, opt CompareOptions) []Stall {
	R := len(head)
	if R != len(base) || R < StallMinOthers+1 {
		return nil
	}
	metric := opt.Percentile
	switch metric {
	case "":
		metric = DefaultPercentile
	case "p999":
		metric = MetricP999
	}
	return stallsOf(stallCells(base, head, metric), base, head)
}

// stallsOf is FindStalls on cells[k][i], the log ratio of cell k in round i.
func stallsOf(cells [][]float64, base, head []*result.Result) []Stall {
	if len(cells) < StallMinCells || len(cells[0]) < StallMinOthers+1 {
		return nil
	}
	R := len(cells[0])
	means := roundMeans(cells)
	var out []Stall
	var dists []float64
	for i := range R {
		others := slices.Delete(slices.Clone(means), i, i+1)
		m := mean(others)
		dist := means[i] - m
		sd := stddev(others, m) * math.Sqrt(1+1/float64(len(others)))
		z := 1e6
		if sd > 0 {
			z = min(math.Abs(dist)/sd, z)
		}
		if dist == 0 || z < tQuantile(1-StallAlpha/2, float64(len(others)-1)) {
			continue
		}
		s := Stall{Round: i + 1, Side: "head", Cells: len(cells), T: round6(z), Others: R - 1, Index: i}
		slow := head
		if dist < 0 {
			s.Side, slow = "base", base
		}
		if slow != nil {
			s.Round = roundNo(base[i], i)
			s.Steal = stallFigure(slow, i, stealShare)
			s.StackCPU = stallFigure(slow, i, stackCPU)
		}
		s.Backed = s.backed()
		bar := math.Log(StallFactor)
		if s.Backed {
			bar = math.Log(StallFactorBacked)
		}
		least := leastMove(cells, i, dist < 0)
		if least < bar {
			continue
		}
		s.Factor = round6(math.Exp(least))
		k, _ := slices.BinarySearchFunc(dists, math.Abs(dist), func(a, b float64) int {
			if a > b {
				return -1
			}
			return 1
		})
		out, dists = slices.Insert(out, k, s), slices.Insert(dists, k, math.Abs(dist))
	}
	return out
}

func roundMeans(cells [][]float64) []float64 {
	means := make([]float64, len(cells[0]))
	for i := range means {
		for _, c := range cells {
			means[i] += c[i]
		}
		means[i] /= float64(len(cells))
	}
	return means
}

// backed: the slow side's steal is StallStealJump above its other rounds',
// or its stack CPU StallCPUFactor× off theirs.
func (s Stall) backed() bool {
	return (s.Steal != nil && s.Steal.Round-s.Steal.Others >= StallStealJump) ||
		(s.StackCPU != nil && s.StackCPU.Round > 0 && s.StackCPU.Others > 0 &&
			math.Abs(math.Log(s.StackCPU.Round/s.StackCPU.Others)) >= math.Log(StallCPUFactor))
}

// leastMove is round i's smallest move over the cells against each cell's
// median of the other rounds, in the slow side's direction (down: base).
func leastMove(cells [][]float64, i int, down bool) float64 {
	least := math.Inf(1)
	for _, c := range cells {
		d := c[i] - median(slices.Delete(slices.Clone(c), i, i+1))
		if down {
			d = -d
		}
		least = min(least, d)
	}
	return least
}

func FindStall(base, head []*result.Result, opt CompareOptions) *Stall {
	if ss := FindStalls(base, head, opt); len(ss) > 0 {
		return &ss[0]
	}
	return nil
}

// stallCells are the per-round log ratios of metric, one slice per judged
// cell measured on both sides in every round.
func stallCells(base, head []*result.Result, metric string) [][]float64 {
	q := quantileOf(metric)
	var cells [][]float64
	for _, p := range base[0].Phases {
		if !p.Judged {
			continue
		}
	workloads:
		for _, w := range p.Workloads {
			c := make([]float64, len(base))
			for i := range base {
				var v [2]int64
				for k, r := range []*result.Result{base[i], head[i]} {
					rw := r.PhaseNamed(p.Name).Workload(w.Name)
					if rw == nil {
						continue workloads
					}
					h, _, err := rw.MetricHistogram(metric)
					if err != nil || h.TotalCount() == 0 {
						continue workloads
					}
					v[k] = max(result.Quantile(h, q), 1)
				}
				c[i] = math.Log(float64(v[1]) / float64(v[0]))
			}
			cells = append(cells, c)
		}
	}
	return cells
}

// stallFigure is f of rs[i] and its median over ≥ StallMinOthers others, or nil.
func stallFigure(rs []*result.Result, i int, f func(*result.Result) (float64, bool)) *StallFigure {
	v, ok := f(rs[i])
	if !ok {
		return nil
	}
	var others []float64
	for j, r := range rs {
		if j == i || r == rs[i] {
			continue
		}
		if x, ok := f(r); ok {
			others = append(others, x)
		}
	}
	if len(others) < StallMinOthers {
		return nil
	}
	return &StallFigure{Round: round6(v), Others: round6(median(others))}
}

func stealShare(r *result.Result) (float64, bool) {
	if r.Steal == nil {
		return 0, false
	}
	s := r.Steal.Load.Share
	if r.Steal.Stack != nil {
		s = max(s, r.Steal.Stack.Share)
	}
	return s, true
}

// stackCPU is r's services' mean CPU summed, % of a core.
func stackCPU(r *result.Result) (float64, bool) {
	if r.Stack == nil || len(r.Stack.Services) == 0 {
		return 0, false
	}
	var s float64
	for _, sv := range r.Stack.Services {
		s += sv.CPUAvgPct
	}
	return s, true
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(xs))
	k := len(s)
	return (s[(k-1)/2] + s[k/2]) / 2
}
