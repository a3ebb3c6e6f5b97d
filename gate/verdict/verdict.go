// Package verdict judges results: a scenario's absolute thresholds
// (Thresholds) and base/head regression with confidence (Compare, Gate;
// docs/gate.md). It owns the verdict values and their exit codes; a Verdict
// holds no reference into a Result.
package verdict

// Value is a verdict value, for a check, a workload or a whole run.
type Value string

// Verdict values.
const (
	Pass         Value = "pass"
	Fail         Value = "fail" // an absolute threshold is broken
	Regression   Value = "regression"
	Improvement  Value = "improvement"
	Inconclusive Value = "inconclusive"
	NotMeasured  Value = "not measured"
	Unusable     Value = "unusable"
)

// rank orders values from best to worst. Not measured ranks above fail: a
// workload the gate could not see has no trustworthy reading at all.
func rank(v Value) int {
	switch v {
	case Pass:
		return 0
	case Improvement:
		return 1
	case Inconclusive:
		return 2
	case Regression:
		return 3
	case Fail:
		return 4
	case NotMeasured:
		return 5
	case Unusable:
		return 6
	}
	return 5 // an unknown value is never better than not measured
}

// Worst returns the most severe of vs: unusable > not measured > fail >
// regression > inconclusive > improvement > pass; with none it returns
// NotMeasured: nothing judged is never a pass.
func Worst(vs ...Value) Value {
	if len(vs) == 0 {
		return NotMeasured
	}
	w := vs[0]
	for _, v := range vs[1:] {
		if rank(v) > rank(w) {
			w = v
		}
	}
	return w
}

// Check is one judged number of one workload in one phase.
type Check struct {
	Phase     string  `json:"phase"`
	Workload  string  `json:"workload"`
	Metric    string  `json:"metric"`   // "p50", "p90", "p95", "p99", "p99.9", "error_rate"
	Limit     float64 `json:"limit"`    // ms for latency, fraction for error_rate
	Observed  float64 `json:"observed"` // same unit as Limit; 0 when not measured
	Count     int64   `json:"count"`    // samples the observed number stands on
	Value     Value   `json:"value"`
	Reason    Reason  `json:"reason,omitempty"` // not measured, or the number leaves Abandoned out
	Abandoned int64   `json:"abandoned,omitempty"`
	Why       string  `json:"why,omitempty"` // Reason in words: filled by report, never by verdict
}

// WorkloadVerdict is the verdict of one workload in one judged phase.
type WorkloadVerdict struct {
	Phase       string       `json:"phase"`
	Workload    string       `json:"workload"`
	Value       Value        `json:"value"`
	Reason      Reason       `json:"reason,omitempty"` // not measured, or no thresholds
	Offered     int64        `json:"offered,omitempty"`
	Failed      int64        `json:"failed,omitempty"`
	Abandoned   int64        `json:"abandoned,omitempty"`
	Why         string       `json:"why,omitempty"` // Reason in words: filled by report, never by verdict
	Checks      []Check      `json:"checks"`
	Comparisons []Comparison `json:"comparisons,omitempty"` // a gate's
}

// Verdict is the verdict of a run or of a gate.
type Verdict struct {
	Value     Value             `json:"value"`
	Workloads []WorkloadVerdict `json:"workloads"`
	Notes     []Note            `json:"notes"`
	Recovery  []RecoveryVerdict `json:"recovery,omitempty"` // after each injected fault

	// A gate's settings (zero in a plain run).
	Rounds    int     `json:"rounds,omitempty"`
	Tolerance float64 `json:"tolerance,omitempty"`
	// ToleranceFloorMs: the tolerance's absolute floor, ms (0: none).
	ToleranceFloorMs float64 `json:"tolerance_floor_ms,omitempty"`
	Confidence       float64 `json:"confidence,omitempty"`
	Percentile       string  `json:"percentile,omitempty"`

	Untrusted []UntrustedRound `json:"untrusted_rounds,omitempty"` // nothing is decided on them
	LeftOut   []int            `json:"left_out_rounds,omitempty"`  // duet rounds left out as shared stalls

	// Noise: the bound used where rounds could not measure it, or a calibration rejected.
	Noise      *NoiseUse    `json:"noise,omitempty"`
	Family     *Family      `json:"family,omitempty"`
	Sequential *SeqDecision `json:"sequential,omitempty"`
}

// ExitCode maps the verdict to the exit code: 0 pass, improvement,
// inconclusive; 1 fail, regression, not measured or unknown; 3 unusable.
// Exit 2 (usage error) is never a verdict.
func (v Verdict) ExitCode() int {
	switch v.Value {
	case Pass, Improvement, Inconclusive:
		return 0
	case Unusable:
		return 3
	}
	return 1
}
