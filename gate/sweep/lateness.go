package sweep

import (
	"fmt"
	"math"

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
	// ExplainRate: the largest lateness spans at least (1 − CompletionsShare)
	// of the window, so the rate asked for may not have been delivered.
	ExplainRate = "rate"
	// ExplainCompletions: completions fell behind by no more than the
	// requests due within the largest lateness of the window's end.
	ExplainCompletions = "completions"
	// ExplainBursts: failures where late sends went out together (at least
	// one request more at once: rate × max lateness ≥ 1), e.g. a rate limiter's 429s.
	ExplainBursts = "bursts"
)

// ExplainThreshold is the code of a latency threshold the lateness could
// account for: "threshold <workload> <metric>".
func ExplainThreshold(workload, metric string) string {
	return fmt.Sprintf("threshold %s %s", workload, metric)
}

// StepLateness says what a step's own lateness lat could account for, given
// what the step measured (Offered, Completed, Failed, DurationS, Rate) and its
// failed checks: pure, the rule of ReasonGenerator.
//   - the rate and the completions, from the largest lateness (ExplainRate,
//     ExplainCompletions);
//   - a latency threshold whose excess the lateness at its percentile could
//     make (the latency, taken from the due time, less that lateness is within
//     the limit);
//   - failures, from the bursts late sends make (ExplainBursts).
func StepLateness(s Step, checks []verdict.Check, lat result.Summary) []string {
	out := []string{}
	if lat.Count == 0 || s.DurationS <= 0 {
		return out
	}
	maxS := lat.Max / 1000
	if maxS >= (1-CompletionsShare)*s.DurationS {
		out = append(out, ExplainRate)
	}
	if float64(s.Completed) < CompletionsShare*float64(s.Offered) &&
		float64(s.Completed)+float64(s.Offered)*min(1, maxS/s.DurationS) >= CompletionsShare*float64(s.Offered) {
		out = append(out, ExplainCompletions)
	}
	for _, c := range checks {
		if c.Metric == verdict.MetricErrorRate || c.Value != verdict.Fail {
			continue
		}
		if q, ok := checkQuantile(c.Metric); ok && c.Observed-latenessQ(lat, q) <= c.Limit {
			out = append(out, ExplainThreshold(c.Workload, c.Metric))
		}
	}
	if s.Failed > 0 && s.Rate*maxS >= 1 {
		out = append(out, ExplainBursts)
	}
	return out
}

func checkQuantile(metric string) (float64, bool) {
	switch metric {
	case verdict.MetricP50:
		return 0.5, true
	case verdict.MetricP90:
		return 0.9, true
	case verdict.MetricP95:
		return 0.95, true
	case verdict.MetricP99:
		return 0.99, true
	case verdict.MetricP999:
		return 0.999, true
	}
	return math.NaN(), false
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
