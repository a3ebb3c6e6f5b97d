package bisect_test

import (
	"reflect"
	"testing"

	"github.com/loadgate/loadgate/gate/bisect"
	"github.com/loadgate/loadgate/gate/verdict"
)

const (
	R = bisect.Regressed
	W = bisect.Within
	U = bisect.Undecided
)

func pair(base, head int) *bisect.Pair { return &bisect.Pair{Base: base, Head: head} }

// Next, row by row: the range is good = 0, commits 1..n, bad = n.
func TestNext(t *testing.T) {
	for _, c := range []struct {
		name  string
		n     int
		calls []bisect.Call
		want  bisect.Decision
	}{
		// One commit: its gate against good is also its gate against its parent.
		{"one commit asks for the direct gate", 1, nil,
			bisect.Decision{Next: pair(0, 1), Lo: 0, Hi: 1}},
		// ...which names it when it regressed.
		{"one commit that regressed is found", 1, []bisect.Call{R},
			bisect.Decision{Answer: bisect.Found, Commit: 1, Lo: 0, Hi: 1}},
		// ...and refutes the premise when it did not: no creep over one commit.
		{"one commit within is not reproduced", 1, []bisect.Call{W},
			bisect.Decision{Answer: bisect.NotReproduced, Lo: 0, Hi: 1}},
		// Two commits: the middle is commit 1, gated against good.
		{"two commits start at the first", 2, nil,
			bisect.Decision{Next: pair(0, 1), Lo: 0, Hi: 2}},
		// Commit 1 regressed against good, which is its parent: found without another gate.
		{"the first commit's cumulative gate confirms it", 2, []bisect.Call{R},
			bisect.Decision{Answer: bisect.Found, Commit: 1, Lo: 0, Hi: 1}},
		// Commit 1 within: bad (commit 2) is the first regressed; gate it against its parent.
		{"bad is gated against its parent", 2, []bisect.Call{W},
			bisect.Decision{Next: pair(1, 2), Lo: 1, Hi: 2}},
		// ...a regression there names bad.
		{"bad regressed against its parent", 2, []bisect.Call{W, R},
			bisect.Decision{Answer: bisect.Found, Commit: 2, Lo: 1, Hi: 2}},
		// ...within there: good..1 and 1..bad each within, good..bad a regression (the direct gate's).
		{"two small steps are not attributable", 2, []bisect.Call{W, W},
			bisect.Decision{Answer: bisect.NotAttributable, Commit: 2, Lo: 1, Hi: 2}},
		// Seven commits: the first gate is commit 3 against good.
		{"seven commits start in the middle", 7, nil,
			bisect.Decision{Next: pair(0, 3), Lo: 0, Hi: 7}},
		// Commit 3 regressed against good: the first regressed is in 1..3; try 1.
		{"a regression halves the range downwards", 7, []bisect.Call{R},
			bisect.Decision{Next: pair(0, 1), Lo: 0, Hi: 3}},
		// Commit 1 within: the first regressed is 2 or 3; try 2.
		{"a pass halves it upwards", 7, []bisect.Call{R, W},
			bisect.Decision{Next: pair(0, 2), Lo: 1, Hi: 3}},
		// Commit 2 regressed, 1 did not: 2 is where the cumulative change crossed; gate 2 against 1.
		{"the crossing commit is gated against its parent", 7, []bisect.Call{R, W, R},
			bisect.Decision{Next: pair(1, 2), Lo: 1, Hi: 2}},
		// ...and it regressed against its parent: found in 4 gates, Estimate(7).
		{"found in the estimated gates", 7, []bisect.Call{R, W, R, R},
			bisect.Decision{Answer: bisect.Found, Commit: 2, Lo: 1, Hi: 2}},
		// Creep: five +4% steps, 10% tolerance. Commit 2 (+8%) within, commit 3 (+12%) regressed,
		// commit 3 against 2 (+4%) within: spread over commits, named as where it crossed.
		{"creep is not attributable", 5, []bisect.Call{W, R, W},
			bisect.Decision{Answer: bisect.NotAttributable, Commit: 3, Lo: 2, Hi: 3}},
		// Every cumulative gate within: bad (as the direct gate said) crossed; gated against its parent.
		{"all within ends at bad", 5, []bisect.Call{W, W, W},
			bisect.Decision{Next: pair(4, 5), Lo: 4, Hi: 5}},
		// An inconclusive first gate stops with the whole range left.
		{"an undecided gate stops", 7, []bisect.Call{U},
			bisect.Decision{Answer: bisect.Stopped, At: pair(0, 3), Lo: 0, Hi: 7}},
		// An inconclusive confirming gate stops with the crossing commit bounded.
		{"an undecided confirmation stops", 7, []bisect.Call{R, W, R, U},
			bisect.Decision{Answer: bisect.Stopped, At: pair(1, 2), Lo: 1, Hi: 2}},
		// A thousand commits take ⌈log2 1000⌉ = 10 cumulative gates at most.
		{"a long range narrows to one commit", 1000, []bisect.Call{W, W, W, W, W, W, W, W, W, W},
			bisect.Decision{Next: pair(999, 1000), Lo: 999, Hi: 1000}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := bisect.Next(c.n, c.calls)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("Next(%d, %v) = %+v (next %v, at %v), want %+v (next %v, at %v)", c.n, c.calls, got, got.Next, got.At, c.want, c.want.Next, c.want.At)
			}
		})
	}
}

// A caller's mistakes are errors, never a panic or a silent answer.
func TestNextRefuses(t *testing.T) {
	for _, c := range []struct {
		name  string
		n     int
		calls []bisect.Call
	}{
		{"no commit", 0, nil},                                       // good == bad: nothing to bisect
		{"more calls than gates", 1, []bisect.Call{R, R}},           // the bisection ended after one
		{"a call after an undecided gate", 7, []bisect.Call{U, R}},  // it stopped at the first
		{"calls after the answer", 2, []bisect.Call{W, R, R, W, W}}, // found after two
	} {
		if d, err := bisect.Next(c.n, c.calls); err == nil {
			t.Errorf("%s: Next(%d, %v) = %+v, want an error", c.name, c.n, c.calls, d)
		}
	}
}

// Whatever the history, with truthful gates (commit k and later regressed
// against good; commit k alone against its parent when step) the bisection
// names k within Estimate(n) gates, or says not attributable when the
// change at k was a step of a creep.
func TestNextFindsTheCommit(t *testing.T) {
	for n := 1; n <= 70; n++ {
		for k := 1; k <= n; k++ {
			for _, step := range []bool{true, false} {
				var calls []bisect.Call
				for {
					d, err := bisect.Next(n, calls)
					if err != nil {
						t.Fatalf("n %d k %d: %v", n, k, err)
					}
					if d.Next == nil {
						want := bisect.Found
						if !step && k > 1 {
							want = bisect.NotAttributable
						}
						if d.Commit != k || d.Answer != want {
							t.Fatalf("n %d k %d step %v: answer %s at %d, want %s at %d", n, k, step, d.Answer, d.Commit, want, k)
						}
						if len(calls) > bisect.Estimate(n) {
							t.Fatalf("n %d: %d gates, more than Estimate %d", n, len(calls), bisect.Estimate(n))
						}
						break
					}
					p := *d.Next
					call := W
					if p.Base == 0 && p.Head >= k || p.Base > 0 && p.Head == k && step {
						call = R
					}
					calls = append(calls, call)
				}
			}
		}
	}
}

func TestEstimate(t *testing.T) {
	for n, want := range map[int]int{1: 1, 2: 2, 3: 3, 4: 3, 5: 4, 7: 4, 8: 4, 9: 5, 1000: 11} {
		if got := bisect.Estimate(n); got != want {
			t.Errorf("Estimate(%d) = %d, want %d", n, got, want)
		}
	}
}

func cmp(workload string, v verdict.Value, ratio float64) verdict.Comparison {
	return verdict.Comparison{Phase: "sustain", Workload: workload, Metric: "p95", Ratio: ratio, Value: v}
}

func gateVerdict(v verdict.Value, cs ...verdict.Comparison) verdict.Verdict {
	out := verdict.Verdict{Value: v}
	for _, c := range cs {
		out.Workloads = append(out.Workloads, verdict.WorkloadVerdict{Phase: c.Phase, Workload: c.Workload, Value: c.Value, Comparisons: []verdict.Comparison{c}})
	}
	return out
}

// A gate's call: comparisons decide, thresholds do not.
func TestClassify(t *testing.T) {
	for _, c := range []struct {
		name      string
		v         verdict.Verdict
		workloads []string
		want      bisect.Call
		lead      string // the lead comparison's workload
	}{
		// One regression among passes: regressed, led by it.
		{"a regression", gateVerdict(verdict.Regression, cmp("a", verdict.Pass, 1.02), cmp("b", verdict.Regression, 1.3)), nil, R, "b"},
		// The largest of two regressions leads.
		{"the largest regression leads", gateVerdict(verdict.Regression, cmp("a", verdict.Regression, 1.2), cmp("b", verdict.Regression, 1.5)), nil, R, "b"},
		// A regression decides even beside an inconclusive one (a sequential gate stops on it).
		{"a regression beside an open one", gateVerdict(verdict.Regression, cmp("a", verdict.Inconclusive, 1.09), cmp("b", verdict.Regression, 1.3)), nil, R, "b"},
		// Passes and improvements: within, led by the largest change.
		{"within", gateVerdict(verdict.Improvement, cmp("a", verdict.Pass, 1.03), cmp("b", verdict.Improvement, 0.7)), nil, W, "b"},
		// A threshold broken on both sides (fail) with no regression is within: a bisection looks for a change.
		{"a broken threshold is not a change", gateVerdict(verdict.Fail, cmp("a", verdict.Pass, 1.01)), nil, W, "a"},
		// One inconclusive comparison leaves the gate undecided.
		{"inconclusive", gateVerdict(verdict.Inconclusive, cmp("a", verdict.Pass, 1.0), cmp("b", verdict.Inconclusive, 1.09)), nil, U, "b"},
		// Not measured is undecided, never within.
		{"not measured", gateVerdict(verdict.NotMeasured, cmp("a", verdict.NotMeasured, 0)), nil, U, "a"},
		// No comparison at all is undecided.
		{"no comparison", gateVerdict(verdict.Pass), nil, U, ""},
		// An unusable verdict is undecided whatever its rows say.
		{"unusable", gateVerdict(verdict.Unusable, cmp("a", verdict.Pass, 1.0)), nil, U, "a"},
		// --workload a: b's regression is not looked at.
		{"another workload's regression is ignored", gateVerdict(verdict.Regression, cmp("a", verdict.Pass, 1.02), cmp("b", verdict.Regression, 1.3)), []string{"a"}, W, "a"},
		// --workload b: its regression decides.
		{"the focused workload regressed", gateVerdict(verdict.Regression, cmp("a", verdict.Inconclusive, 1.02), cmp("b", verdict.Regression, 1.3)), []string{"b"}, R, "b"},
		// --workload c, absent: nothing compared is undecided.
		{"a workload the gate has not", gateVerdict(verdict.Regression, cmp("b", verdict.Regression, 1.3)), []string{"c"}, U, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, lead := bisect.Classify(c.v, c.workloads)
			lw := ""
			if lead != nil {
				lw = lead.Workload
			}
			if got != c.want || lw != c.lead {
				t.Errorf("Classify = %s led by %q, want %s led by %q", got, lw, c.want, c.lead)
			}
		})
	}
}
