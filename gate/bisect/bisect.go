// Package bisect finds the commit that made a regression between a good and
// a bad commit in about log2(N) gates, each an ordinary paired gate
// (gate/rounds) run by the caller. Next, a pure function of the calls so
// far, says which gate comes next and when to stop (docs/bisect.md).
//
// Each step gates a commit against the good one: the cumulative change is
// what splits the range, measured as the direct gate measured it. The first
// commit whose cumulative change is a regression is then gated against its
// parent: a regression there names it; a change within the tolerance there
// means the regression is spread over several commits (creep), not
// attributable to one.
package bisect

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/loadgate/loadgate/gate/verdict"
)

// Call is what one gate says for a bisection.
type Call string

const (
	Regressed Call = "regressed" // a comparison is a regression
	Within    Call = "within"    // every comparison decided, none a regression
	Undecided Call = "undecided" // inconclusive, not measured or unusable: nothing to bisect on
)

// Answer is how a bisection ended.
type Answer string

const (
	Found           Answer = "found"            // the commit regressed against its parent
	NotAttributable Answer = "not attributable" // the cumulative change crossed at a commit that did not regress against its parent
	Stopped         Answer = "undecided"        // a gate did not decide: the range left is Lo..Hi
	NotReproduced   Answer = "not reproduced"   // one commit, and its gate against good is no regression
)

// Pair is one gate: Base and Head index the range, 0 the good commit, n the bad.
type Pair struct {
	Base int `json:"base"`
	Head int `json:"head"`
}

// Cumulative reports whether p gates a commit against the good one.
func (p Pair) Cumulative() bool { return p.Base == 0 }

// Decision is what Next says: the gate to run, or the answer.
type Decision struct {
	Next   *Pair  // the gate to run next; nil when done
	Answer Answer // when done
	Commit int    // Found, NotAttributable: the first commit whose cumulative change is a regression
	At     *Pair  // Stopped: the gate that did not decide
	Lo, Hi int    // the first regressed commit is in (Lo, Hi]: Lo's cumulative change is not a regression, Hi's is (Hi = n as given)
}

// Next is the next gate of a bisection of n commits after good (the bad one
// the nth), given the calls of the gates it asked for so far, in order. The
// bad commit is taken as regressed against good (the direct gate's call);
// an error is a caller's mistake (n < 1, more calls than gates asked).
func Next(n int, calls []Call) (Decision, error) {
	if n < 1 {
		return Decision{}, fmt.Errorf("bisect: %d commits between good and bad: want at least 1", n)
	}
	lo, hi := 0, n
	done := map[Pair]Call{}
	for i := 0; ; {
		d := Decision{Lo: lo, Hi: hi}
		p := Pair{Base: 0, Head: (lo + hi) / 2}
		confirm := hi-lo == 1
		if confirm {
			p = Pair{Base: hi - 1, Head: hi}
		}
		c, ran := done[p] // the confirming gate of commit 1 is its cumulative gate
		if !ran {
			if i == len(calls) {
				d.Next = &p
				return d, nil
			}
			c, i = calls[i], i+1
			done[p] = c
		}
		switch {
		case c == Undecided:
			d.Answer, d.At = Stopped, &p
		case confirm && c == Regressed:
			d.Answer, d.Commit = Found, hi
		case confirm && p.Base == 0: // n is 1: the gate was the direct gate again
			d.Answer = NotReproduced
		case confirm:
			d.Answer, d.Commit = NotAttributable, hi
		case c == Regressed:
			hi = p.Head
			continue
		default:
			lo = p.Head
			continue
		}
		if i < len(calls) {
			return d, fmt.Errorf("bisect: %d calls given, the bisection ended after %d", len(calls), i)
		}
		return d, nil
	}
}

// Estimate is the most gates a bisection of n commits runs: ⌈log2 n⌉
// cumulative gates and one against the parent.
func Estimate(n int) int {
	if n <= 1 {
		return 1
	}
	return bits.Len(uint(n-1)) + 1
}

// Classify is a gate's call over the comparisons of workloads (all when
// empty): Regressed when one is a regression, Within when all are decided
// (pass or improvement), else Undecided. Absolute thresholds do not count: a
// bisection looks for a change, not for a bar both sides may break. The
// lead is the comparison that decided it: the largest regression, else the
// largest change; nil without comparisons.
func Classify(v verdict.Verdict, workloads []string) (Call, *verdict.Comparison) {
	var lead *verdict.Comparison
	call, n := Within, 0
	for _, wv := range v.Workloads {
		if len(workloads) > 0 && !slices.Contains(workloads, wv.Workload) {
			continue
		}
		for _, c := range wv.Comparisons {
			n++
			switch c.Value {
			case verdict.Regression:
				if call != Regressed || size(c) > size(*lead) {
					lead = &c
				}
				call = Regressed
				continue
			case verdict.Pass, verdict.Improvement:
			default:
				if call == Within {
					call = Undecided
				}
			}
			if call != Regressed && (lead == nil || size(c) > size(*lead)) {
				lead = &c
			}
		}
	}
	if n == 0 || v.Value == verdict.Unusable {
		return Undecided, lead
	}
	return call, lead
}

// size orders comparisons by how much they moved: latency ratios above
// error-rate differences, as the gate's headline does.
func size(c verdict.Comparison) float64 {
	if c.Metric == verdict.MetricErrorRate {
		if c.Diff < 0 {
			return -c.Diff
		}
		return c.Diff
	}
	if c.Ratio <= 0 {
		return 0
	}
	r := c.Ratio
	if r < 1 {
		r = 1 / r
	}
	return 10 + r
}
