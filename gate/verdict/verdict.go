// Package verdict compares results: absolute thresholds from the scenario
// (Thresholds) and relative base/head regression with confidence (Compare,
// Gate; the method is in the README, "How a gate decides"). It owns the verdict values and the exit
// code a verdict maps to.
//
// A Verdict is a plain value; it holds no reference into the Result it was
// computed from.
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

// rank orders values from best to worst; Worst keeps the highest.
//
// Not measured ranks above fail: a workload the gate could not see has no
// trustworthy reading at all (rule 6), and a check that failed alongside it
// is still listed in its checks. Both exit 1.
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

// Worst returns the most severe of vs, in the order
// unusable > not measured > fail > regression > inconclusive > improvement > pass.
// With no values it returns NotMeasured: nothing judged is never a pass.
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
	Phase    string  `json:"phase"`
	Workload string  `json:"workload"`
	Metric   string  `json:"metric"`   // "p50", "p90", "p95", "p99", "p99.9", "error_rate"
	Limit    float64 `json:"limit"`    // ms for latency, fraction for error_rate
	Observed float64 `json:"observed"` // same unit as Limit; 0 when not measured
	Count    int64   `json:"count"`    // samples the observed number stands on
	Value    Value   `json:"value"`
	// Reason is a code (reasons.go) when the check is not measured or its
	// number leaves something out; Abandoned is the count it left out.
	Reason    Reason `json:"reason,omitempty"`
	Abandoned int64  `json:"abandoned,omitempty"`
	Why       string `json:"why,omitempty"` // Reason in words: filled by report, never by verdict
}

// WorkloadVerdict is the verdict of one workload in one judged phase.
type WorkloadVerdict struct {
	Phase    string `json:"phase"`
	Workload string `json:"workload"`
	Value    Value  `json:"value"`
	// Reason is a code (reasons.go): why not measured, or no thresholds.
	// Offered, Failed and Abandoned are the phase's counts, stated with
	// ReasonNoSuccess.
	Reason    Reason  `json:"reason,omitempty"`
	Offered   int64   `json:"offered,omitempty"`
	Failed    int64   `json:"failed,omitempty"`
	Abandoned int64   `json:"abandoned,omitempty"`
	Why       string  `json:"why,omitempty"` // Reason in words: filled by report, never by verdict
	Checks    []Check `json:"checks"`
	// Comparisons are the base/head comparisons of this workload in this
	// phase (a gate: Compare, Gate); none in a plain run.
	Comparisons []Comparison `json:"comparisons,omitempty"`
}

// Verdict is the verdict of a run (or, later, of a base/head comparison).
type Verdict struct {
	Value     Value             `json:"value"`
	Workloads []WorkloadVerdict `json:"workloads"`
	Notes     []Note            `json:"notes"` // why unusable, else notes (abandoned requests, interruption): codes, worded by report (notes.go)
	// Recovery judges each workload's recovery after each injected fault
	// (recovery.go); none without faults.
	Recovery []RecoveryVerdict `json:"recovery,omitempty"`

	// A gate's comparison settings (zero in a plain run): the paired rounds
	// compared, the tolerance and confidence used, and the judged
	// percentile option ("" = each workload's threshold percentiles, else p95).
	Rounds     int     `json:"rounds,omitempty"`
	Tolerance  float64 `json:"tolerance,omitempty"`
	Confidence float64 `json:"confidence,omitempty"`
	Percentile string  `json:"percentile,omitempty"`

	// Untrusted lists a comparison's rounds whose generator fell behind its
	// own schedule (Compare): no comparison is decided on them.
	Untrusted []UntrustedRound `json:"untrusted_rounds,omitempty"`
	// LeftOut: the duet rounds (1-based) left out of the comparisons and
	// of the thresholds' merge, each behind its schedule on both sides, or
	// on one side with neither engine stalled at max_in_flight (the
	// generator's own lateness); NoteDuetRoundLeftOut words each.
	LeftOut []int `json:"left_out_rounds,omitempty"`

	// Noise: where the noise between runs came from where the rounds could
	// not measure it (the default bound or a calibration), and a
	// calibration given but not used, with why; nil when neither arose.
	Noise *NoiseUse `json:"noise,omitempty"`
	// Family: how the comparisons were tested together (Holm); nil when
	// none was tested.
	Family *Family `json:"family,omitempty"`
	// Sequential: a gate of sequential rounds (Sequential): the look, the
	// error rate spent so far and why it stopped or goes on.
	Sequential *SeqDecision `json:"sequential,omitempty"`
}

// ExitCode maps the verdict to the process exit code of the design:
//
//	0  pass, improvement, inconclusive (inconclusive alone is reported as a
//	   warning, as benchstat does; it cannot arise from thresholds alone)
//	1  fail, regression, not measured, or an unknown/empty value
//	3  unusable (offered != recorded, result marked unusable)
//
// Exit code 2 (usage error, refused) is never a verdict; the command decides it.
func (v Verdict) ExitCode() int {
	switch v.Value {
	case Pass, Improvement, Inconclusive:
		return 0
	case Unusable:
		return 3
	}
	return 1
}
