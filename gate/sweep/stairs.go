package sweep

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/verdict"
)

// MaxSteps bounds the stairs a sweep may plan.
const MaxSteps = 64

// DefaultFactors are the default stairs, multiples of the judged peak rate.
var DefaultFactors = []float64{0.25, 0.5, 1, 2, 4, 8}

// ErrRates is wrapped by every error about the stairs asked for.
var ErrRates = errors.New("bad rates")

// ParseRates reads --rates: req/s, comma-separated, increasing, at most MaxSteps.
func ParseRates(s string) ([]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%w: no rate given", ErrRates)
	}
	parts := strings.Split(s, ",")
	if len(parts) > MaxSteps {
		return nil, fmt.Errorf("%w: %d rates, at most %d", ErrRates, len(parts), MaxSteps)
	}
	out := make([]float64, 0, len(parts))
	for i, p := range parts {
		p = strings.TrimSpace(p)
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
			return nil, fmt.Errorf("%w: rate %d %q is not a positive number of requests per second", ErrRates, i+1, p)
		}
		if i > 0 && v <= out[i-1] {
			return nil, fmt.Errorf("%w: rate %d (%s) is not above the one before it (%s): the stairs go up", ErrRates, i+1, p, strconv.FormatFloat(out[i-1], 'f', -1, 64))
		}
		out = append(out, v)
	}
	return out, nil
}

// DefaultRates are DefaultFactors times the judged phase's peak rate.
func DefaultRates(sc *scenario.Scenario) ([]float64, error) {
	jp, ok := sc.JudgedPhase()
	if !ok || jp.PeakRate() <= 0 {
		return nil, fmt.Errorf("%w: the scenario's judged phase has no rate to start the stairs from: give --rates", ErrRates)
	}
	out := make([]float64, len(DefaultFactors))
	for i, f := range DefaultFactors {
		out[i] = jp.PeakRate() * f
	}
	return out, nil
}

// StepScenario is sc's judged phase at rate after a warm-up at it, sc unmodified; over the
// ceilings is refused, not clamped.
func StepScenario(sc *scenario.Scenario, rate float64, dur, warmup time.Duration, limits scenario.OperatorLimits) (*scenario.Scenario, error) {
	jp, ok := sc.JudgedPhase()
	if !ok {
		return nil, errors.New("the scenario has no judged phase")
	}
	if dur <= 0 {
		return nil, fmt.Errorf("a step must last longer than 0 (got %v)", dur)
	}
	if warmup < 0 {
		return nil, fmt.Errorf("a warm-up cannot be negative (got %v)", warmup)
	}
	c := *sc
	c.Phases = []scenario.Phase{{Name: jp.Name, Pattern: scenario.Constant, Rate: rate, Duration: dur, Judged: true, Line: jp.Line}}
	c.Warmup = warmup
	if err := c.CheckCeilings(); err != nil {
		return nil, err
	}
	if err := c.CheckOperatorLimits(limits); err != nil {
		return nil, err
	}
	c.Hash = c.ComputeHash()
	return &c, nil
}

// Next says whether to go on: not after an interrupted or unusable step, nor one past the first not held.
func Next(steps []Step) bool {
	for i, s := range steps {
		if s.Interrupted || !s.Usable {
			return false
		}
		if !s.Held {
			return len(steps) < i+2
		}
	}
	return true
}

// Conclude sets failing steps' Manner, SustainableRate, DegradesAt and the sweep's Manner.
// Interrupted and unusable steps are never a degradation.
func Conclude(sw *Sweep) {
	sw.SustainableRate, sw.DegradesAt, sw.Manner, sw.MannerStep = nil, nil, "", 0
	for i := range sw.Steps {
		s := &sw.Steps[i]
		s.Manner = ""
		if !s.Held && s.Usable && !s.Interrupted {
			s.Manner = Classify(sw.Steps[:i], *s)
		}
	}
	first := -1
	for i, s := range sw.Steps {
		if s.Interrupted || !s.Usable {
			break
		}
		if !s.Held {
			first = i
			break
		}
		r := s.Rate
		sw.SustainableRate = &r
	}
	if first < 0 {
		return
	}
	d := sw.Steps[first]
	r := d.Rate
	sw.DegradesAt = &r
	sw.Manner, sw.MannerStep = d.Manner, d.Number
	if first+1 < len(sw.Steps) {
		if n := sw.Steps[first+1]; n.Manner == Collapse && d.Manner != Collapse && d.Manner != GeneratorLimit {
			sw.Manner, sw.MannerStep = Collapse, n.Number
		}
	}
}

const (
	// CollapseShare of an earlier step's best goodput; 10% for the window edges' noise.
	CollapseShare = 0.9
	// LatencyGrowth × the reference step's p95 + LatencySlackMS.
	LatencyGrowth  = 2.0
	LatencySlackMS = 1.0
	// OwnLatenessStall: stalled for at most this share, the generator lagged on its own.
	OwnLatenessStall = 0.01
)

// Classify names how s, a step that did not hold, gave out; "" when no manner matches.
func Classify(prev []Step, s Step) Manner {
	if s.Held {
		return ""
	}
	if s.GeneratorExplains() && s.StalledS <= OwnLatenessStall*s.DurationS {
		return GeneratorLimit
	}
	for _, p := range prev {
		if p.Usable && !p.Interrupted && p.GoodputPerS > 0 && s.GoodputPerS < CollapseShare*p.GoodputPerS {
			return Collapse
		}
	}
	refused, slow, other := failureKinds(s.Failures)
	slow += s.Abandoned
	if other > 0 && other > refused && other > slow {
		return Errors
	}
	behind := float64(s.Completed) < CompletionsShare*float64(s.Offered)
	if slow > 0 || behind || latencyCheckFailed(s) || latencyGrew(reference(prev), s) {
		return Queueing
	}
	if refused > 0 {
		return HonestRefusal
	}
	if other > 0 {
		return Errors
	}
	if s.GeneratorExplains() {
		return GeneratorLimit
	}
	return ""
}

func reference(prev []Step) *Step {
	for i := len(prev) - 1; i >= 0; i-- {
		if prev[i].Held {
			return &prev[i]
		}
	}
	for i := range prev {
		if prev[i].Usable && !prev[i].Interrupted {
			return &prev[i]
		}
	}
	return nil
}

func latencyCheckFailed(s Step) bool {
	for _, c := range s.Checks {
		if c.Metric != verdict.MetricErrorRate && c.Value != verdict.Pass && c.Count > 0 {
			return true
		}
	}
	return false
}

func latencyGrew(ref *Step, s Step) bool {
	if ref == nil {
		return false
	}
	for _, w := range s.Workloads {
		for _, rw := range ref.Workloads {
			if rw.Name == w.Name && rw.LatencyMS.Count > 0 && w.LatencyMS.Count > 0 &&
				w.LatencyMS.P95 > LatencyGrowth*rw.LatencyMS.P95+LatencySlackMS {
				return true
			}
		}
	}
	return false
}
