package result

import (
	"fmt"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Fault is one failure injected during a run, as it happened; times are seconds
// from the schedule's start. Requests due during it, and after it until the
// workload recovered, are out of their phase: the recovery rule judges them.
type Fault struct {
	Phase        string   `json:"phase"`
	Action       string   `json:"action"` // stop, pause, kill, disconnect
	Service      string   `json:"service"`
	Containers   []string `json:"containers,omitempty"` // what the action reached
	PlannedAtS   float64  `json:"planned_at_s"`         // from the phase's start, as the scenario says (after --scale)
	PlannedForS  float64  `json:"planned_for_s"`
	PlannedS     float64  `json:"planned_s"`       // the planned start on the run's clock (phase start + at)
	StartedS     float64  `json:"started_s"`       // the action was issued
	AppliedS     float64  `json:"applied_s"`       // the engine reported it done (stopped, paused, killed, disconnected)
	UndoStartedS float64  `json:"undo_started_s"`  // undoing began (planned at + for, or later if the action took longer)
	EndedS       float64  `json:"ended_s"`         // undoing returned: started, unpaused, reconnected
	Undo         string   `json:"undo,omitempty"`  // how it was undone, in words ("started", "restarted by its restart policy", ...)
	Error        string   `json:"error,omitempty"` // why the fault could not be injected or undone: the run is unusable
	// ObservedUntilS is the schedule's end (s), or 0 when the run ended before
	// it; a recovery second past it is not observed.
	ObservedUntilS float64 `json:"observed_until_s"`

	Recovery  RecoveryTargets `json:"recovery"`
	Workloads []FaultWorkload `json:"workloads"`
}

type RecoveryTargets struct {
	WithinS   float64  `json:"within_s"`
	ErrorRate *float64 `json:"error_rate,omitempty"` // fraction; nil when none
	P50MS     float64  `json:"p50_ms,omitempty"`
	P90MS     float64  `json:"p90_ms,omitempty"`
	P95MS     float64  `json:"p95_ms,omitempty"`
	P99MS     float64  `json:"p99_ms,omitempty"`
	P999MS    float64  `json:"p999_ms,omitempty"`
}

type FaultWorkload struct {
	Name   string   `json:"name"`
	During Workload `json:"during"` // due while the fault was in effect
	// Recovering holds the requests due in the first RecoveringS of Seconds, until
	// the workload recovered (all of them when it did not).
	Recovering  Workload `json:"recovering"`
	RecoveringS int      `json:"recovering_s"`
	// Seconds: one per second of recovery.within after the fault's end, by due time.
	Seconds []Second `json:"seconds"`
}

// Second is one second of a recovery window for one workload. Over counts
// successes above each target: one is met when Over <= Succeeded - ceil(q × Succeeded).
type Second struct {
	Observed  bool             `json:"observed"` // the second lay inside the schedule after a clean fault
	Succeeded int64            `json:"succeeded"`
	Failed    int64            `json:"failed"`
	Failures  map[string]int64 `json:"failures,omitempty"`
	Over      map[string]int64 `json:"over,omitempty"`
	MaxMS     float64          `json:"max_ms,omitempty"` // slowest success
}

// Add adds o's counts to w; histograms and summaries are untouched.
func (w *Workload) Add(o Workload) {
	w.Offered += o.Offered
	w.Succeeded += o.Succeeded
	w.Failed += o.Failed
	w.Abandoned += o.Abandoned
	w.Late += o.Late
	w.Completed += o.Completed
	for class, n := range o.Failures {
		if w.Failures == nil {
			w.Failures = map[string]int64{}
		}
		w.Failures[class] += n
	}
}

// Sub takes o's counts out of w; a count above w's is an error, never clamped,
// and w is then unchanged.
func (w *Workload) Sub(o Workload) error {
	for _, c := range []struct {
		name       string
		have, take int64
	}{{"offered", w.Offered, o.Offered}, {"succeeded", w.Succeeded, o.Succeeded}, {"failed", w.Failed, o.Failed},
		{"abandoned", w.Abandoned, o.Abandoned}, {"late", w.Late, o.Late}, {"completed", w.Completed, o.Completed}} {
		if c.take < 0 || c.take > c.have {
			return fmt.Errorf("result: %s: cannot take %d %s out of %d", w.Name, c.take, c.name, c.have)
		}
	}
	for class, n := range o.Failures {
		if n < 0 || n > w.Failures[class] {
			return fmt.Errorf("result: %s: cannot take %d failures %q out of %d", w.Name, n, class, w.Failures[class])
		}
	}
	w.Offered -= o.Offered
	w.Succeeded -= o.Succeeded
	w.Failed -= o.Failed
	w.Abandoned -= o.Abandoned
	w.Late -= o.Late
	w.Completed -= o.Completed
	for class, n := range o.Failures {
		if w.Failures[class] -= n; w.Failures[class] == 0 {
			delete(w.Failures, class)
		}
	}
	return nil
}

func (r *Result) faultCounts() (offered, recorded int64, over string) {
	over = "phases"
	if len(r.Faults) > 0 {
		over = "phases and faults' during and recovering"
	}
	for _, f := range r.Faults {
		for _, w := range f.Workloads {
			for _, d := range []Workload{w.During, w.Recovering} {
				offered += d.Offered
				recorded += d.Succeeded + d.Failed + d.Abandoned
			}
		}
	}
	return offered, recorded, over
}

// checkFaults checks that every During and Recovering accounts for each request once.
func (r *Result) checkFaults(add func(string, ...any)) {
	for i, f := range r.Faults {
		for j, w := range f.Workloads {
			at := fmt.Sprintf("faults[%d].workloads[%d] (%s %s/%s)", i, j, f.Action, f.Service, w.Name)
			if w.RecoveringS < 0 || w.RecoveringS > len(w.Seconds) {
				add("%s: recovering_s %d is outside the window's %d seconds", at, w.RecoveringS, len(w.Seconds))
			}
			for _, part := range []struct {
				name string
				d    Workload
			}{{"during", w.During}, {"recovering", w.Recovering}} {
				d := part.d
				if rec := d.Succeeded + d.Failed + d.Abandoned; d.Offered != rec || d.Offered < 0 || d.Succeeded < 0 || d.Failed < 0 || d.Abandoned < 0 {
					add("%s: %s: offered %d != succeeded %d + failed %d + abandoned %d", at, part.name, d.Offered, d.Succeeded, d.Failed, d.Abandoned)
				}
				var n int64
				for _, c := range d.Failures {
					n += c
				}
				if n != d.Failed {
					add("%s: %s: failures by class sum to %d, failed is %d", at, part.name, n, d.Failed)
				}
			}
		}
	}
}

// SubtractHistogram returns a − b bucket by bucket; b must be contained in a.
func SubtractHistogram(a, b string) (string, Summary, error) {
	ha, err := DecodeHistogram(a)
	if err != nil {
		return "", Summary{}, err
	}
	hb, err := DecodeHistogram(b)
	if err != nil {
		return "", Summary{}, err
	}
	sa, sb := ha.Export(), hb.Export()
	if len(sa.Counts) != len(sb.Counts) {
		return "", Summary{}, fmt.Errorf("result: subtract histograms: %d and %d buckets", len(sa.Counts), len(sb.Counts))
	}
	for i, c := range sb.Counts {
		if c > sa.Counts[i] {
			return "", Summary{}, fmt.Errorf("result: subtract histograms: bucket %d holds %d, cannot take %d away", i, sa.Counts[i], c)
		}
		sa.Counts[i] -= c
	}
	h := hdrhistogram.Import(sa)
	enc, err := EncodeHistogram(h)
	if err != nil {
		return "", Summary{}, err
	}
	return enc, Summarize(h), nil
}
