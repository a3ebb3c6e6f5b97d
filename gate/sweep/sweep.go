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
	// Scenario is the named load as loaded (its hash is the file's, before
	// any step changed its rate); Thresholds are those each step was judged by.
	Scenario   result.Scenario `json:"scenario"`
	StartedAt  time.Time       `json:"started_at"`
	FinishedAt time.Time       `json:"finished_at"`
	Machine    result.Machine  `json:"machine"`
	Topology   result.Topology `json:"topology"`
	Target     string          `json:"target"`
	// Interrupted: the sweep was cut short (SIGINT, SIGTERM) before its
	// stairs ended; the steps that ran are kept, the last one marked.
	Interrupted bool `json:"interrupted,omitempty"`
	// Rates are the planned stairs (req/s, strictly increasing); the sweep
	// stops one step after the first step that does not hold, so Steps may
	// be fewer.
	Rates    []float64 `json:"rates"`
	StepS    float64   `json:"step_s"`   // each step's measured window
	WarmupS  float64   `json:"warmup_s"` // each step's warm-up, excluded from every number
	HoldRule HoldRule  `json:"hold_rule"`

	// SustainableRate is the highest step that held below DegradesAt (nil:
	// no step held). DegradesAt is the first step that did not hold (nil:
	// every step that ran held, so the capacity was not reached). Manner is
	// how it gave out ("" when nothing gave out, or the sweep was cut short
	// before).
	SustainableRate *float64 `json:"sustainable_rate"`
	DegradesAt      *float64 `json:"degrades_at"`
	Manner          Manner   `json:"manner"`
	// MannerStep is the number of the step whose classification Manner is
	// (0 when Manner is "").
	MannerStep int `json:"manner_step,omitempty"`

	Steps       []Step   `json:"steps"`
	NotMeasured []string `json:"not_measured"`
	Synthetic   []string `json:"synthetic,omitempty"`
}

// HoldRule is the rule each step was held to (the constants of this
// package, written down so a reader of sweep.json need not know them).
type HoldRule struct {
	// CompletionsShare: completions inside the window must be at least this
	// share of the requests offered in it (0.9: within 10%).
	CompletionsShare float64 `json:"completions_share"`
	// Thresholds: no latency or error threshold of the scenario fails
	// (verdict.Thresholds of the step passes).
	Thresholds bool `json:"thresholds"`
	// Schedule: the generator kept its schedule (result.GeneratorBehind is
	// nil: late share and lateness p99 within their limits).
	Schedule bool `json:"schedule"`
}

// Rule is the hold rule of this version.
var Rule = HoldRule{CompletionsShare: CompletionsShare, Thresholds: true, Schedule: true}

// Manner is how the stack gave out at the first step that did not hold.
type Manner string

// Manners.
const (
	// HonestRefusal: fast failures (503, 429, connection refused) while the
	// latency of the successes stayed flat.
	HonestRefusal Manner = "honest refusal"
	// Queueing: completions fell behind, or the latency grew (timeouts,
	// abandoned requests, a latency threshold broken).
	Queueing Manner = "queueing"
	// Errors: failures of other classes (500, resets, ...).
	Errors Manner = "errors"
	// Collapse: throughput of successes fell below an earlier step's.
	Collapse Manner = "collapse"
	// GeneratorLimit: the stack kept up but the generator did not keep its
	// own schedule: the limit found may be loadgate's, not the stack's.
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
	// GoodputPerS estimates the successes per second inside the window:
	// completed_per_s × succeeded / (succeeded + failed). Collapse is
	// judged on it.
	GoodputPerS float64          `json:"goodput_per_s"`
	Failures    map[string]int64 `json:"failures"`

	Workloads []Workload `json:"workloads"`
	// Generator is present when the generator fell behind its schedule.
	Generator *result.Generator `json:"generator,omitempty"`
	// Verdict is verdict.Thresholds of the step; Checks are its checks that
	// did not pass.
	Verdict verdict.Value   `json:"verdict"`
	Checks  []verdict.Check `json:"checks"`
	// Services are each stack service's CPU and memory over the step's
	// window, then the generator's own (when a stack ran).
	Services []result.Service `json:"services,omitempty"`
}

// Reason codes of a step that did not hold.
type Reason string

// Reasons.
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
	// AccountedMS counts every request that was not refused fast: the
	// successes and the unfinished ones (timeouts and abandoned), so a
	// step whose completions fell behind does not report the latency of
	// only those that completed.
	AccountedMS Accounted `json:"accounted_ms"`
}

// Accounted are nearest-rank percentiles (ms, from the due time) over the
// successes and the unfinished requests together. An unfinished request
// waited at least FloorMS (the shorter of the scenario's timeout and
// drain); a percentile whose rank falls among them is a lower bound: its
// ...Over flag is set and its value is FloorMS.
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
