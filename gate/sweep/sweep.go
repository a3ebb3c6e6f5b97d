package sweep

import (
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

const Schema = "loadgate/sweep/v1"

// Sweep is sweep.json: the staircase as run, and what it concluded.
type Sweep struct {
	Schema      string          `json:"schema"`
	Scenario    result.Scenario `json:"scenario"` // hash of the file, before any step changed its rate
	StartedAt   time.Time       `json:"started_at"`
	FinishedAt  time.Time       `json:"finished_at"`
	Machine     result.Machine  `json:"machine"`
	Topology    result.Topology `json:"topology"`
	Target      string          `json:"target"`
	Interrupted bool            `json:"interrupted,omitempty"` // by a signal; the last step kept is marked
	Rates       []float64       `json:"rates"`                 // planned, increasing; Steps may be fewer
	StepS       float64         `json:"step_s"`                // each step's measured window
	WarmupS     float64         `json:"warmup_s"`              // each step's warm-up, excluded from every number
	HoldRule    HoldRule        `json:"hold_rule"`

	// SustainableRate held below DegradesAt, the first step that did not (nil: none).
	SustainableRate *float64 `json:"sustainable_rate"`
	DegradesAt      *float64 `json:"degrades_at"`
	Manner          Manner   `json:"manner"`
	MannerStep      int      `json:"manner_step,omitempty"` // the step Manner classifies

	Steps       []Step   `json:"steps"`
	NotMeasured []string `json:"not_measured"`
	Synthetic   []string `json:"synthetic,omitempty"`
}

// HoldRule is the rule each step was held to, written into sweep.json.
type HoldRule struct {
	CompletionsShare float64 `json:"completions_share"` // completed in the window / offered, at least
	Thresholds       bool    `json:"thresholds"`        // no scenario threshold fails
	Schedule         bool    `json:"schedule"`          // the generator kept its schedule
}

var Rule = HoldRule{CompletionsShare: CompletionsShare, Thresholds: true, Schedule: true}

// Manner is how the stack gave out at the first step that did not hold.
type Manner string

const (
	HonestRefusal  Manner = "honest refusal"            // fast refusals, flat success latency
	Queueing       Manner = "queueing"                  // completions fell behind or latency grew
	Errors         Manner = "errors"                    // failures of other classes (500, resets, ...)
	Collapse       Manner = "collapse"                  // goodput fell below an earlier step's
	GeneratorLimit Manner = "generator behind schedule" // the limit found may be loadgate's
)

// Step is one stair: the scenario's judged phase at one rate.
type Step struct {
	Number       int      `json:"number"` // 1-based
	Rate         float64  `json:"rate"`   // asked for, req/s
	ScenarioHash string   `json:"scenario_hash"`
	Result       string   `json:"result"` // relative to the sweep's directory
	DurationS    float64  `json:"duration_s"`
	Interrupted  bool     `json:"interrupted,omitempty"`
	Usable       bool     `json:"usable"`
	Unusable     []string `json:"unusable,omitempty"`

	Held    bool     `json:"held"`
	NotHeld []Reason `json:"not_held"` // Reason* codes
	Manner  Manner   `json:"manner,omitempty"`

	// Totals over the step's workloads (measured window; warm-up excluded).
	Offered       int64   `json:"offered"`
	Completed     int64   `json:"completed"` // completions of any outcome that landed inside the window
	Succeeded     int64   `json:"succeeded"`
	Failed        int64   `json:"failed"`
	Abandoned     int64   `json:"abandoned"`
	Late          int64   `json:"late"`
	StalledS      float64 `json:"stalled_seconds"`
	OfferedPerS   float64 `json:"offered_per_s"`
	CompletedPerS float64 `json:"completed_per_s"`
	// GoodputPerS is completed_per_s × succeeded / (succeeded + failed): collapse is judged on it.
	GoodputPerS float64          `json:"goodput_per_s"`
	Failures    map[string]int64 `json:"failures"`

	Workloads []Workload        `json:"workloads"`
	Generator *result.Generator `json:"generator,omitempty"` // when it fell behind its schedule
	Lateness  *Lateness         `json:"lateness,omitempty"`  // with Generator: what the lateness could account for
	Verdict   verdict.Value     `json:"verdict"`
	Checks    []verdict.Check   `json:"checks"`             // those that did not pass
	Services  []result.Service  `json:"services,omitempty"` // each service's, then the generator's
}

// Reason codes of a step that did not hold.
type Reason string

const (
	ReasonCompletionsBehind Reason = "completions_behind" // completed < CompletionsShare × offered
	ReasonThresholds        Reason = "threshold_failed"   // verdict.Thresholds did not pass
	ReasonGenerator         Reason = "generator_behind"   // result.GeneratorBehind, by enough to explain something (Lateness)
	ReasonUnusable          Reason = "unusable"           // offered != recorded, a stuck stage, ...
	ReasonInterrupted       Reason = "interrupted"        // cut short
	ReasonNothingOffered    Reason = "nothing_offered"
)

// Workload is what one workload measured in one step.
type Workload struct {
	Name      string           `json:"name"`
	Offered   int64            `json:"offered"`
	Succeeded int64            `json:"succeeded"`
	Failed    int64            `json:"failed"`
	Abandoned int64            `json:"abandoned"`
	Completed int64            `json:"completed"`
	Failures  map[string]int64 `json:"failures"`
	LatencyMS result.Summary   `json:"latency_ms"` // from the due time, successes only
	// AccountedMS includes unfinished requests, lest a lagging step report only its completions.
	AccountedMS Accounted `json:"accounted_ms"`
}

// Accounted are nearest-rank percentiles (ms from due time) over successes and
// unfinished requests; a rank among the unfinished is FloorMS, Over set.
type Accounted struct {
	Count      int64   `json:"count"`      // successes + unfinished
	Unfinished int64   `json:"unfinished"` // timeouts + abandoned
	FloorMS    float64 `json:"floor_ms"`
	P50        float64 `json:"p50"`
	P95        float64 `json:"p95"`
	P99        float64 `json:"p99"`
	P50Over    bool    `json:"p50_over,omitempty"`
	P95Over    bool    `json:"p95_over,omitempty"`
	P99Over    bool    `json:"p99_over,omitempty"`
}
