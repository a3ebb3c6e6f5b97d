package verdict

import (
	"math"

	"github.com/loadgate/loadgate/gate/result"
)

// RecoveryVerdict is one workload's recovery after one fault: Pass after
// AfterS seconds, Fail within WithinS, or NotMeasured.
type RecoveryVerdict struct {
	Phase       string          `json:"phase"`
	Action      string          `json:"action"`
	Service     string          `json:"service"`
	Workload    string          `json:"workload"`
	Value       Value           `json:"value"`
	AfterS      int             `json:"after_s"`  // Pass: the first second after the fault's end from which every following second meets the targets
	WithinS     float64         `json:"within_s"` // the declared recovery.within
	Measured    int             `json:"measured_seconds"`
	NotObserved int             `json:"not_observed_seconds,omitempty"` // past the run's end
	Seconds     []SecondVerdict `json:"seconds"`
}

// SecondVerdict is one second of a recovery window for one workload.
type SecondVerdict struct {
	Observed  bool     `json:"observed"` // the second lay inside the run's schedule
	Measured  bool     `json:"measured"` // observed, and at least one success or failure was due in it
	Met       bool     `json:"met"`      // every target met (false when not measured)
	ErrorRate float64  `json:"error_rate"`
	Count     int64    `json:"count"`            // succeeded + failed
	Broken    []string `json:"broken,omitempty"` // the targets it broke: "error_rate", "p95", ...
}

// JudgeRecovery judges one workload's recovery seconds against t: recovery
// is at the first measured second after the last one that broke a target
// (failures without a success break every latency target); none is Fail. A
// second past the run's end makes it NotMeasured; one with no request due is no evidence.
func JudgeRecovery(seconds []result.Second, t result.RecoveryTargets) (value Value, afterS int, out []SecondVerdict) {
	out = make([]SecondVerdict, len(seconds))
	measured, unobserved := 0, 0
	for i, s := range seconds {
		out[i] = judgeSecond(s, t)
		if !s.Observed {
			unobserved++
		}
		if out[i].Measured {
			measured++
		}
	}
	if measured == 0 || unobserved > 0 {
		return NotMeasured, 0, out
	}
	k := 0 // one past the last measured second that broke a target
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Measured && !out[i].Met {
			k = i + 1
			break
		}
	}
	for i := k; i < len(out); i++ {
		if out[i].Measured {
			return Pass, i, out
		}
	}
	return Fail, 0, out
}

func judgeSecond(s result.Second, t result.RecoveryTargets) SecondVerdict {
	n := s.Succeeded + s.Failed
	v := SecondVerdict{Observed: s.Observed, Count: n, Measured: s.Observed && n > 0}
	if !v.Measured {
		return v
	}
	v.ErrorRate = float64(s.Failed) / float64(n)
	if t.ErrorRate != nil && v.ErrorRate > *t.ErrorRate {
		v.Broken = append(v.Broken, MetricErrorRate)
	}
	for _, l := range []struct {
		key string
		q   float64
		ms  float64
	}{{"p50", 0.50, t.P50MS}, {"p90", 0.90, t.P90MS}, {"p95", 0.95, t.P95MS}, {"p99", 0.99, t.P99MS}, {"p999", 0.999, t.P999MS}} {
		if l.ms <= 0 {
			continue
		}
		if s.Succeeded == 0 || s.Over[l.key] > s.Succeeded-nearestRank(l.q, s.Succeeded) {
			v.Broken = append(v.Broken, l.key)
		}
	}
	v.Met = len(v.Broken) == 0
	return v
}

func nearestRank(q float64, n int64) int64 {
	x := q * float64(n)
	if r := math.Round(x); math.Abs(x-r) <= 1e-9*math.Max(1, x) {
		x = r
	}
	return max(int64(math.Ceil(x)), 1)
}

// Recovery judges every workload's recovery after every fault of r that was
// injected and undone.
func Recovery(r *result.Result) []RecoveryVerdict {
	out := []RecoveryVerdict{}
	for _, f := range r.Faults {
		if f.Error != "" {
			continue
		}
		for _, w := range f.Workloads {
			value, after, secs := JudgeRecovery(w.Seconds, f.Recovery)
			rv := RecoveryVerdict{Phase: f.Phase, Action: f.Action, Service: f.Service, Workload: w.Name,
				Value: value, AfterS: after, WithinS: f.Recovery.WithinS, Seconds: secs}
			for _, s := range secs {
				if s.Measured {
					rv.Measured++
				}
				if !s.Observed {
					rv.NotObserved++
				}
			}
			out = append(out, rv)
		}
	}
	return out
}

func judgeRecovery(r *result.Result, v *Verdict) []Value {
	v.Recovery = Recovery(r)
	var values []Value
	for _, rv := range v.Recovery {
		values = append(values, rv.Value)
		n := Note{Phase: rv.Phase, Action: rv.Action, Service: rv.Service, Workload: rv.Workload}
		switch rv.Value {
		case Fail:
			n.Code, n.WithinS = NoteNotRecovered, rv.WithinS
			v.Notes = append(v.Notes, n)
		case NotMeasured:
			n.Code, n.NotObservedS, n.WindowS = NoteRecoveryNotMeasured, rv.NotObserved, len(rv.Seconds)
			v.Notes = append(v.Notes, n)
		}
	}
	return values
}

// RecoveringSeconds is how many of a window's seconds the recovery rule
// judges (those before recovery, else all); the phase's thresholds judge the rest.
func RecoveringSeconds(seconds []result.Second, t result.RecoveryTargets) int {
	if value, after, _ := JudgeRecovery(seconds, t); value == Pass {
		return after
	}
	return len(seconds)
}
