package sweep

import (
	"fmt"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/loadgate/loadgate/gate/load"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

// CompletionsShare of a step's offered requests must complete inside the window for it to hold.
const CompletionsShare = 0.9

// StepInput is what one step ran and measured.
type StepInput struct {
	Number  int
	Rate    float64
	Result  string // path of its result.json, relative to the sweep's directory
	Res     *result.Result
	Verdict verdict.Verdict // verdict.Thresholds(Res)
	Floor   time.Duration   // the least an unfinished request waited: min(timeout, drain)
}

// NewStep makes a Step of a step's result and verdict and decides whether it held.
func NewStep(in StepInput) (Step, error) {
	r := in.Res
	if r == nil {
		return Step{}, fmt.Errorf("sweep: step %d: no result", in.Number)
	}
	s := Step{
		Number: in.Number, Rate: in.Rate, ScenarioHash: r.Scenario.Hash, Result: in.Result,
		Interrupted: r.Interrupted, Usable: r.Usable, Unusable: r.Unusable,
		Late: r.Late, StalledS: r.Stalled, Failures: map[string]int64{},
		Generator: r.GeneratorBehind(), Verdict: in.Verdict.Value, Checks: []verdict.Check{},
		NotHeld: []Reason{}, Workloads: []Workload{},
	}
	if r.Stack != nil {
		s.Services = append(s.Services, r.Stack.Services...)
		if g := r.Stack.Generator; g != nil {
			s.Services = append(s.Services, *g)
		}
	}
	for _, wv := range in.Verdict.Workloads {
		for _, c := range wv.Checks {
			if c.Value != verdict.Pass {
				s.Checks = append(s.Checks, c)
			}
		}
	}
	if p := r.JudgedPhase(); p != nil {
		s.DurationS = p.DurationS
		for _, w := range p.Workloads {
			sw, err := newWorkload(w, in.Floor)
			if err != nil {
				return Step{}, fmt.Errorf("sweep: step %d: %w", in.Number, err)
			}
			s.Workloads = append(s.Workloads, sw)
			s.Offered += w.Offered
			s.Completed += w.Completed
			s.Succeeded += w.Succeeded
			s.Failed += w.Failed
			s.Abandoned += w.Abandoned
			for class, n := range w.Failures {
				s.Failures[class] += n
			}
		}
	}
	if s.DurationS > 0 {
		s.OfferedPerS = float64(s.Offered) / s.DurationS
		s.CompletedPerS = float64(s.Completed) / s.DurationS
	}
	if n := s.Succeeded + s.Failed; n > 0 {
		s.GoodputPerS = s.CompletedPerS * float64(s.Succeeded) / float64(n)
	}
	if s.Generator != nil {
		s.Lateness = &Lateness{LatenessMS: r.LatenessMS, Explains: StepLateness(s, s.Checks, r.LatenessMS)}
	}
	s.NotHeld = notHeld(s, in.Verdict)
	s.Held = len(s.NotHeld) == 0
	return s, nil
}

func notHeld(s Step, v verdict.Verdict) []Reason {
	out := []Reason{}
	if s.Interrupted {
		out = append(out, ReasonInterrupted)
	}
	if !s.Usable {
		out = append(out, ReasonUnusable)
	}
	if s.Offered == 0 {
		return append(out, ReasonNothingOffered)
	}
	if float64(s.Completed) < CompletionsShare*float64(s.Offered) {
		out = append(out, ReasonCompletionsBehind)
	}
	if v.Value != verdict.Pass {
		out = append(out, ReasonThresholds)
	}
	if s.GeneratorExplains() {
		out = append(out, ReasonGenerator)
	}
	return out
}

func newWorkload(w result.Workload, floor time.Duration) (Workload, error) {
	out := Workload{
		Name: w.Name, Offered: w.Offered, Succeeded: w.Succeeded, Failed: w.Failed,
		Abandoned: w.Abandoned, Completed: w.Completed, Failures: map[string]int64{}, LatencyMS: w.LatencyMS,
	}
	for class, n := range w.Failures {
		out.Failures[class] = n
	}
	h, err := w.LatencyHistogram()
	if err != nil {
		return Workload{}, fmt.Errorf("workload %s: histogram: %w", w.Name, err)
	}
	out.AccountedMS = Accounting(h, w.Failures[load.ClassTimeout]+w.Abandoned, floor)
	return out, nil
}

// Accounting is nearest-rank p50/p95/p99 (ms) over h's successes and the unfinished requests
// (each ≥ floor; a rank among them reads floor, Over set).
func Accounting(h *hdrhistogram.Histogram, unfinished int64, floor time.Duration) Accounted {
	var n int64
	if h != nil {
		n = h.TotalCount()
	}
	unfinished = max(unfinished, 0)
	a := Accounted{Count: n + unfinished, Unfinished: unfinished, FloorMS: float64(floor) / float64(time.Millisecond)}
	if a.Count == 0 {
		return a
	}
	at := func(q float64) (float64, bool) {
		k := nearestRank(q, a.Count)
		if k > n {
			return a.FloorMS, true
		}
		return float64(result.Quantile(h, float64(k)/float64(n))) / 1000, false
	}
	a.P50, a.P50Over = at(0.50)
	a.P95, a.P95Over = at(0.95)
	a.P99, a.P99Over = at(0.99)
	return a
}

func nearestRank(q float64, n int64) int64 {
	pm := int64(q*1000 + 0.5)
	return max((n*pm+999)/1000, 1)
}

func failureKinds(failures map[string]int64) (refused, slow, other int64) {
	for c, n := range failures {
		switch c {
		case "status 503", "status 429", load.ClassRefused: // gate/load's status classes are "status <code>"
			refused += n
		case load.ClassTimeout:
			slow += n
		default:
			other += n
		}
	}
	return refused, slow, other
}
