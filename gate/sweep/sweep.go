package sweep

import (
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

// Schema is the version of sweep.json written by this package.
const Schema = "loadgate/sweep/v1"

// Sweep is sweep.json: the staircase as run, and what it concluded.
type Sweep struct {
	Schema string `json:"schema"`
	// Scenario's hash is the file's, before any step changed its rate.
	Scenario   result.Scenario `json:"scenario"`
	StartedAt  time.Time       `json:"started_at"`
	FinishedAt time.Time       `json:"finished_at"`
	Machine    result.Machine  `json:"machine"`
	Topology   result.Topology `json:"topology"`
	Target     string          `json:"target"`
	// Interrupted: cut short by a signal; the last step kept is marked.
	Interrupted bool `json:"interrupted,omitempty"`
	// Rates are the planned stairs (req/s, increasing); Steps may be fewer.
	Rates    []float64 `json:"rates"`
	StepS    float64   `json:"step_s"`   // each step's measured window
	WarmupS  float64   `json:"warmup_s"` // each step's warm-up, excluded from every number
	HoldRule HoldRule  `json:"hold_rule"`

	// SustainableRate: the highest step that held below DegradesAt, the first
	// that did not (nil: none). Manner is how it gave out ("" if nothing did).
	SustainableRate *float64 `json:"sustainable_rate"`
	DegradesAt      *float64 `json:"degrades_at"`
	Manner          Manner   `json:"manner"`
	// MannerStep is the step Manner classifies (0 when Manner is "").
	MannerStep int `json:"manner_step,omitempty"`

	Steps       []Step   `json:"steps"`
	NotMeasured []string `json:"not_measured"`
	Synthetic   []string `json:"synthetic,omitempty"`
}

// HoldRule is the rule each step was held to, written into sweep.json.
type HoldRule struct {
	// CompletionsShare: completions in the window / offered, at least.
	CompletionsShare float64 `json:"completions_share"`
	// Thresholds: no scenario threshold fails.
	Thresholds bool `json:"thresholds"`
	// Schedule: the generator kept its schedule.
	Schedule bool `json:"schedule"`
}

// Rule is the hold rule of this version.
var Rule = HoldRule{CompletionsShare: CompletionsShare, Thresholds: true, Schedule: true}

// Manner is how the stack gave out at the first step that did not hold.
type Manner string

const (
	// HonestRefusal: fast refusals while success latency stayed flat.
	HonestRefusal Manner = "honest refusal"
	// Queueing: completions fell behind or latency grew.
	Queueing Manner = "queueing"
	// Errors: failures of other classes (500, resets, ...).
	Errors Manner = "errors"
	// Collapse: throughput of successes fell below an earlier step's.
	Collapse Manner = "collapse"
	// GeneratorLimit: the generator, not the stack, fell behind: the limit
	// found may be loadgate's.
	GeneratorLimit Manner = "generator behind schedule"
)

// Step is one stair: the scenario's judged phase at one rate.
type Step struct {
	Number       int     `json:"number"` // 1-based
	Rate         float64 `json:"rate"`   // asked for, req/s
	ScenarioHash string  `json:"scenario_hash"`
	// Result is the step's result.json, relative to the sweep's directory.
	Result      string   `json:"result"`
	DurationS   float64  `json:"duration_s"`
	Interrupted bool     `json:"interrupted,omitempty"`
	Usable      bool     `json:"usable"`
	Unusable    []string `json:"unusable,omitempty"`

	Held bool `json:"held"`
	// NotHeld are the reasons it did not hold (codes: Reason*).
	NotHeld []Reason `json:"not_held"`
	// Manner is this step's classification when it did not hold.
	Manner Manner `json:"manner,omitempty"`

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
	// GoodputPerS is completed_per_s × succeeded / (succeeded + failed);
	// collapse is judged on it.
	GoodputPerS float64          `json:"goodput_per_s"`
	Failures    map[string]int64 `json:"failures"`

	Workloads []Workload `json:"workloads"`
	// Generator is present when the generator fell behind its schedule.
	Generator *result.Generator `json:"generator,omitempty"`
	// Checks are the step's threshold checks that did not pass.
	Verdict verdict.Value   `json:"verdict"`
	Checks  []verdict.Check `json:"checks"`
	// Services are each service's CPU and memory over the window, then the
	// generator's.
	Services []result.Service `json:"services,omitempty"`
}

// Reason codes of a step that did not hold.
type Reason string

const (
	ReasonCompletionsBehind Reason = "completions_behind" // completed < CompletionsShare × offered
	ReasonThresholds        Reason = "threshold_failed"   // verdict.Thresholds did not pass
	ReasonGenerator         Reason = "generator_behind"   // result.GeneratorBehind
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
	// LatencyMS is the result's: from the due time, successes only.
	LatencyMS result.Summary `json:"latency_ms"`
	// AccountedMS includes unfinished requests, so a lagging step does not
	// report only the latency of those that completed.
	AccountedMS Accounted `json:"accounted_ms"`
}

// Accounted are nearest-rank percentiles (ms from due time) over successes
// and unfinished requests; a rank among the unfinished is a lower bound,
// FloorMS, with its Over flag set.
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
