package sweep

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/session"
)

// StepRefusedError is a step (from 1) whose scenario the ceilings refuse.
type StepRefusedError struct {
	Step int
	Rate float64
	Err  error
}

func (e *StepRefusedError) Error() string {
	return fmt.Sprintf("step %d of --rates (%s req/s) is refused: %v", e.Step, strconv.FormatFloat(e.Rate, 'f', -1, 64), e.Err)
}

func (e *StepRefusedError) Unwrap() error { return e.Err }

// NewPlan builds every step's scenario (rates "": DefaultRates; step 0, warmup < 0: the
// scenario's). Errors are ErrUsage; a refused step's wraps a *StepRefusedError.
func NewPlan(sc *scenario.Scenario, rates string, step, warmup time.Duration, limits scenario.OperatorLimits) (Plan, error) {
	var p Plan
	var err error
	if rates != "" {
		p.Rates, err = ParseRates(rates)
	} else {
		p.Rates, err = DefaultRates(sc)
	}
	if err != nil {
		return p, session.Usagef("sweep: --rates: %w", err)
	}
	jp, ok := sc.JudgedPhase()
	if !ok {
		return p, session.Usagef("sweep: %s: the scenario has no judged phase", sc.File)
	}
	p.Step, p.Warmup = step, warmup
	if step == 0 {
		p.Step = jp.Duration
	}
	if warmup < 0 {
		p.Warmup = sc.Warmup
	}
	if p.Step < 0 {
		return p, session.Usagef("sweep: --step %v: a step must last longer than 0", step)
	}
	for i, r := range p.Rates {
		ssc, err := StepScenario(sc, r, p.Step, p.Warmup, limits)
		if err != nil {
			return p, session.Usage(fmt.Errorf("sweep: %w", &StepRefusedError{Step: i + 1, Rate: r, Err: err}))
		}
		p.Scenarios = append(p.Scenarios, ssc)
	}
	return p, nil
}

// FactorsText is DefaultFactors for a flag's help: "0.25, 0.5, 1, ...".
func FactorsText() string {
	parts := make([]string, len(DefaultFactors))
	for i, f := range DefaultFactors {
		parts[i] = strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strings.Join(parts, ", ")
}
