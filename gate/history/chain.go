package history

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/loadgate/loadgate/gate/verdict"
)

// DefaultTolerance is the cumulative tolerance: beyond it a change is a regression however small its steps.
const DefaultTolerance = 0.15

// Chain is a history, oldest first; entry i links to i−1 when its Base is i−1's commit.
type Chain struct {
	Entries []Entry
}

// NewChain orders entries by date, then commit: the order of pushes.
func NewChain(entries []Entry) Chain {
	es := slices.Clone(entries)
	slices.SortStableFunc(es, func(a, b Entry) int {
		if c := a.Date.Compare(b.Date); c != 0 {
			return c
		}
		return cmp.Compare(a.Commit, b.Commit)
	})
	return Chain{Entries: es}
}

func (c Chain) Keys() []Key {
	seen := map[Key]bool{}
	var ks []Key
	for _, e := range c.Entries {
		for _, s := range e.Steps {
			if k := s.Key(); !seen[k] {
				seen[k] = true
				ks = append(ks, k)
			}
		}
	}
	slices.SortFunc(ks, func(a, b Key) int {
		return cmp.Or(cmp.Compare(a.Phase, b.Phase), cmp.Compare(a.Workload, b.Workload), cmp.Compare(a.Metric, b.Metric))
	})
	return ks
}

// Index is the entry of commit (a prefix of ≥ 7 digits), −1 when none.
func (c Chain) Index(commit string) int {
	for i, e := range c.Entries {
		if sameCommit(e.Commit, commit) {
			return i
		}
	}
	return -1
}

// Link is entry i's step of k when it links to entry i−1.
func (c Chain) Link(i int, k Key) (Step, bool) {
	if i <= 0 || i >= len(c.Entries) || !sameCommit(c.Entries[i].Base, c.Entries[i-1].Commit) {
		return Step{}, false
	}
	return c.Entries[i].Step(k)
}

func sameCommit(a, b string) bool {
	a, b = strings.ToLower(a), strings.ToLower(b)
	if len(a) < 7 || len(b) < 7 {
		return false
	}
	return strings.HasPrefix(a, b) || strings.HasPrefix(b, a)
}

// Change is one series' cumulative change from entry From to To, with its interval.
type Change struct {
	Key        Key           `json:"key"`
	From       int           `json:"from"`
	To         int           `json:"to"`
	Links      int           `json:"links"` // steps chained (To − From when Known)
	Ratio      float64       `json:"ratio"` // 1 when From == To
	CILow      float64       `json:"ci_low"`
	CIHigh     float64       `json:"ci_high"`
	Confidence float64       `json:"confidence"`
	Known      bool          `json:"known"`         // every link was measured; else the numbers are 0
	Gap        int           `json:"gap,omitempty"` // the first entry whose link is missing
	Value      verdict.Value `json:"value"`         // against the cumulative tolerance (Judge)
}

// Cumulative chains k's links (independent gates) from entry from to to at conf (0: 95%) against tol.
func (c Chain) Cumulative(k Key, from, to int, conf, tol float64) Change {
	if conf == 0 {
		conf = verdict.DefaultConfidence
	}
	ch := Change{Key: k, From: from, To: to, Confidence: conf}
	if from < 0 || to >= len(c.Entries) || from > to {
		ch.Value = verdict.NotMeasured
		return ch
	}
	var sum, variance float64
	for i := from + 1; i <= to; i++ {
		s, ok := c.Link(i, k)
		if !ok {
			ch.Gap = i
			ch.Value = verdict.NotMeasured
			return ch
		}
		m, se := logRatio(s)
		sum += m
		variance += se * se
		ch.Links++
	}
	ch.Known = true
	ch.setInterval(sum, variance, tol)
	return ch
}

func logRatio(s Step) (m, se float64) {
	m = math.Log(s.Ratio)
	h := max(math.Log(s.CIHigh)-m, m-math.Log(s.CILow))
	return m, h / zOf(s.Confidence)
}

func (ch *Change) setInterval(sum, variance, tol float64) {
	hw := zOf(ch.Confidence) * math.Sqrt(variance)
	ch.Ratio, ch.CILow, ch.CIHigh = math.Exp(sum), math.Exp(sum-hw), math.Exp(sum+hw)
	ch.Value = Judge(*ch, tol)
}

// Judge calls ch against tol (0: DefaultTolerance); one with a missing link is not measured.
func Judge(ch Change, tol float64) verdict.Value {
	if tol == 0 {
		tol = DefaultTolerance
	}
	switch {
	case !ch.Known:
		return verdict.NotMeasured
	case ch.CILow > 1+tol:
		return verdict.Regression
	case ch.CIHigh < 1/(1+tol):
		return verdict.Improvement
	case ch.CIHigh <= 1+tol:
		return verdict.Pass
	}
	return verdict.Inconclusive
}

func zOf(conf float64) float64 { return math.Sqrt2 * math.Erfinv(conf) }
