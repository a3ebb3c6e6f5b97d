package sweep

import (
	"fmt"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

// Lateness is the generator's own lateness in a step behind its schedule
// (result.GeneratorBehind) and what of the step it could account for. A step
// is set aside for it (ReasonGenerator) only when Explains is not empty: four
// of 125 sends 1.8 ms late cannot make a 10 ms server miss a 150 ms p95
// (issue 45).
type Lateness struct {
	LatenessMS result.Summary `json:"lateness_ms"` // the step's, measured window only
	// Explains names what the lateness could account for, each one of the
	// Explain* codes, those of a threshold with its workload and metric.
	Explains []string `json:"explains"`
}

// What a generator's lateness can account for in a step.
const (
	// ExplainRate: the lateness averages at least (1 − CompletionsShare)/2 of
	// the window, as when the generator sends no more than CompletionsShare of
	// the rate (its lateness grows to 10% of the window): the rate asked for
	// may not have gone out.
	ExplainRate = "rate"
	// ExplainCompletions: completions fell behind by no more than the
	// requests the lateness could have pushed past the window's end (offered
	// × mean lateness / window).
	ExplainCompletions = "completions"
	// ExplainBursts: fast refusals or failures of other classes where late
	// sends went out together (rate × largest lateness ≥ 1: a request more at
	// once), as a rate limiter's 429s. Timeouts are the stack's queue.
	ExplainBursts = "bursts"
)

// ExplainThreshold is the code of a latency threshold the lateness could
// account for: "threshold <workload> <metric>".
func ExplainThreshold(workload, metric string) string {
	return fmt.Sprintf("threshold %s %s", workload, metric)
}

// StepLateness says what a step's own lateness lat could account for, given
// what the step measured (Offered, Completed, Failures, DurationS, Rate) and
// its failed checks: pure, the rule of ReasonGenerator.
//   - the rate and the completions, from the mean lateness (bounded from
//     above by lat's percentiles: ExplainRate, ExplainCompletions);
//   - a latency threshold whose excess the lateness at its percentile could
//     make (the latency, taken from the due time, less that lateness is within
//     the limit);
//   - refusals and other failures, from the bursts late sends make (ExplainBursts).
func StepLateness(s Step, checks []verdict.Check, lat result.Summary) []string {
	out := []string{}
	if lat.Count == 0 || s.DurationS <= 0 {
		return out
	}
	meanS := MeanBoundMS(lat) / 1000
	if meanS >= (1-CompletionsShare)/2*s.DurationS {
		out = append(out, ExplainRate)
	}
	if float64(s.Completed) < CompletionsShare*float64(s.Offered) &&
		float64(s.Completed)+float64(s.Offered)*min(1, meanS/s.DurationS) >= CompletionsShare*float64(s.Offered) {
		out = append(out, ExplainCompletions)
	}
	for _, c := range checks {
		if c.Metric == verdict.MetricErrorRate || c.Value != verdict.Fail {
			continue
		}
		if q, ok := verdict.Quantile(c.Metric); ok && c.Observed-latenessQ(lat, q) <= c.Limit {
			out = append(out, ExplainThreshold(c.Workload, c.Metric))
		}
	}
	if refused, _, other := failureKinds(s.Failures); refused+other > 0 && s.Rate*lat.Max/1000 >= 1 {
		out = append(out, ExplainBursts)
	}
	return out
}

// MeanBoundMS bounds the mean of s's distribution from above by its
// percentiles: each band of ranks at its upper end (p50 for the lower half,
// p90 to the 90th, …, the max for the top 0.1%).
func MeanBoundMS(s result.Summary) float64 {
	return 0.5*s.P50 + 0.4*s.P90 + 0.05*s.P95 + 0.04*s.P99 + 0.009*s.P999 + 0.001*s.Max
}

func latenessQ(s result.Summary, q float64) float64 {
	switch q {
	case 0.5:
		return s.P50
	case 0.9:
		return s.P90
	case 0.95:
		return s.P95
	case 0.99:
		return s.P99
	}
	return s.P999
}

// GeneratorExplains: the step's generator fell behind by enough to account for
// something it measured (Lateness; a step without it, from an older sweep.json: yes).
func (s Step) GeneratorExplains() bool {
	return s.Generator != nil && (s.Lateness == nil || len(s.Lateness.Explains) > 0)
}
