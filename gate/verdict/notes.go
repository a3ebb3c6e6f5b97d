package verdict

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/loadgate/loadgate/gate/result"
)

// NoteCode says what a Note is about; package report words it.
type NoteCode string

// Note codes, each with the Note fields it sets. Side and Round (or Merged)
// name the result a note is about.
const (
	// Why a result is unusable.
	NoteNoResult       NoteCode = "no_result"       // no result at all
	NoteMarkedUnusable NoteCode = "marked_unusable" // the result is marked unusable and says not why
	NoteResult         NoteCode = "result"          // Detail: a reason the result gives itself
	NoteLatencyCount   NoteCode = "latency_count"   // Phase, Workload: the latency summary counts Samples for Successes
	NoteNoJudgedPhase  NoteCode = "no_judged_phase" // the result has no judged phase

	// Notes of a usable run (Thresholds).
	NoteInterrupted         NoteCode = "interrupted"           // the run stopped before its schedule ended
	NoteAbandoned           NoteCode = "abandoned"             // Phase, Workload: Abandoned requests excluded from error_rate
	NoteNoWorkload          NoteCode = "no_workload"           // Phase: no workload ran and none has thresholds
	NoteNotRecovered        NoteCode = "not_recovered"         // Phase, Action, Service, Workload: no recovery within WithinS
	NoteRecoveryNotMeasured NoteCode = "recovery_not_measured" // … no request in the window, or NotObservedS past the run's end

	// Why the sides of a comparison are unusable (Compare, Gate).
	NoteUnpairedRounds NoteCode = "unpaired_rounds" // BaseRounds and HeadRounds differ
	NotePhasesDiffer   NoteCode = "phases_differ"   // Side, Round: Phases differ from base round 1's
	NoteHistogram      NoteCode = "histogram"       // Side, Round, Phase, Workload: does not decode (Detail)
	NoteHistogramCount NoteCode = "histogram_count" // … the histogram holds Samples for Successes
	NoteMerge          NoteCode = "merge"           // Side, Round: does not merge with earlier rounds (Detail)

	// Notes of a comparison (Compare).
	NoteRoundInterrupted     NoteCode = "round_interrupted"       // Side, Round stopped before its schedule ended
	NoteFewRounds            NoteCode = "few_rounds"              // Rounds: fewer than 3 measure no noise between rounds
	NoteDuetRoundLeftOut     NoteCode = "duet_round_left_out"     // Round, Side ("": both), Rounds: a shared stall left out
	NoteNoWorkloadEitherSide NoteCode = "no_workload_either_side" // Phase: no workload ran on either side
	NoteDuetStackBusy        NoteCode = "duet_stack_busy"         // BusyPct, StackCPUs: over DuetBusyPct
	// NoteLatenessNoted: Side, Round, Behind: a round behind its schedule whose
	// lateness cannot explain the change it shows (LatenessExplains): judged.
	NoteLatenessNoted NoteCode = "lateness_noted"

	// Why a gate is unusable (package rounds, the command).
	NoteGateInterrupted  NoteCode = "gate_interrupted"  // interrupted before its rounds ended
	NoteRoundsIncomplete NoteCode = "rounds_incomplete" // the rounds did not complete on both sides
	NoteWorkflowChanged  NoteCode = "workflow_changed"  // head changes the gate's workflow files Paths; Was: what the verdict would have been
	NoteError            NoteCode = "error"             // Detail: an error's own words (one line)

	// Notes of a gate's set-up, plan and publishing. Path is relative to the checkout.
	NoteDuetNoiseUnused       NoteCode = "duet_noise_unused"        // Path: a paused-side calibration, not used by a duet gate
	NoteScenarioFromHead      NoteCode = "scenario_from_head"       // --scenario-from head: the judged change sets its own policy
	NotePolicyApplied         NoteCode = "policy_applied"           // Policy: one of head's policy changes (rounds.PolicyChanges), applied
	NotePolicyNotApplied      NoteCode = "policy_not_applied"       // Policy: one of head's policy changes, not applied
	NoteScenarioNewInHead     NoteCode = "scenario_new_in_head"     // Path, Commit: base's commit has no scenario file
	NoteScenarioRemovedInHead NoteCode = "scenario_removed_in_head" // Path: head removes the scenario file
	NoteScenarioUnreadInHead  NoteCode = "scenario_unread_in_head"  // Path, Detail: head's scenario does not load (the error)
	NoteHeadDirty             NoteCode = "head_dirty"               // head is the working tree with uncommitted changes
	NoteTeardown              NoteCode = "teardown"                 // Side, Detail: a stack not torn down cleanly (the error)
	NoteBaselineFromHead      NoteCode = "baseline_from_head"       // Name: read from head's checkout (no --base)
	NoteBaselineOfBase        NoteCode = "baseline_of_base"         // Name, Path, Commit: read from base's checkout
	NoteBaselineRemovedInHead NoteCode = "baseline_removed_in_head" // Name, Path
	NoteBaselineUnreadInHead  NoteCode = "baseline_unread_in_head"  // Name, Path, Detail: head's copy does not read (the error)
	NoteBaselineChangedInHead NoteCode = "baseline_changed_in_head" // Name, Path
	NoteBaselineFixed         NoteCode = "baseline_fixed"           // a stored baseline: the interval is head's noise only
	NoteBaselineMachine       NoteCode = "baseline_machine"         // BaseMachine, HeadMachine differ
	NoteBaselineTopology      NoteCode = "baseline_topology"        // BaseTopology, HeadTopology differ
	NoteBaselineRerun         NoteCode = "baseline_rerun"           // Name, Commit: the baseline's commit ran beside head as the base side
	NoteBaselineStoredOnly    NoteCode = "baseline_stored_only"     // Name, Commit, Unrun: the commit could not be run; its stored numbers stand alone
	NoteBaselineFirst         NoteCode = "baseline_first"           // Name: none yet; head ran alone and passed, its results are to be stored as it
	NoteBaselineFirstFailed   NoteCode = "baseline_first_failed"    // Name: none yet; head ran alone and did not pass: nothing to store
	NoteWorkflowChange        NoteCode = "workflow_change"          // Path, How (Detail: why it cannot be compared)
	NoteWorkflowAllowed       NoteCode = "workflow_allowed"         // --allow-workflow-changes: the verdict stands
	NoteGateAdopted           NoteCode = "gate_adopted"             // head adds the gate's workflow Paths to a base that runs none: not enforced yet
	NoteSequentialPlan        NoteCode = "sequential_plan"          // Rounds, MaxRounds, Budget, Fit (rounds at RoundTime), Measured
	// Stalled rounds (FindStall): Round, Side, Stall.
	NoteStallRerun    NoteCode = "stall_rerun"     // run again in its place; Path: where the stalled round is kept
	NoteStallCapped   NoteCode = "stall_capped"    // kept and judged: the cap of Rounds re-runs was spent
	NoteStallNoBudget NoteCode = "stall_no_budget" // kept and judged: no further round fits the budget
	NoteFailOn        NoteCode = "fail_on"         // FailOn, ExitCode (the step's), VerdictExitCode
	NoteRoundWindows  NoteCode = "round_windows"   // Windows: how the judged phase was cut and the stacks brought up
	// NoteOperatorLooser: Policy (Kind PolicyTolerance or PolicyToleranceFloor,
	// Base the protected scenario's value, Head the operator's): an operator's
	// flag or input asked for a looser bar than base's scenario; not applied.
	NoteOperatorLooser NoteCode = "operator_looser"
	// NoteContinued: a re-run continued an earlier attempt's Rounds paired
	// rounds (of Attempts attempts) as one sequential test, HeadRounds in all;
	// Replayed: a look at the earlier rounds decided it, no new round ran.
	NoteContinued NoteCode = "continued"
	// NoteNotContinued: an earlier attempt was found and not continued (Detail: why).
	NoteNotContinued NoteCode = "not_continued"
)

// WindowPlan is how a windows gate cut its judged phase into rounds
// (gate/rounds, --round-shape windows).
type WindowPlan struct {
	Phase       string  `json:"phase"`
	PhaseS      float64 `json:"phase_s"`
	WindowS     float64 `json:"window_s"`
	InPhase     int     `json:"in_phase"`     // windows the phase is cut into
	PerInstance int     `json:"per_instance"` // windows a stack instance runs
	Instances   int     `json:"instances"`    // bring-ups planned per side
	WarmupS     float64 `json:"warmup_s"`     // each instance's warm-up run, in no number (0: none)
	FirstLook   int     `json:"first_look"`
}

// Note is one thing a verdict says beside its workloads: a code and the
// names and numbers it needs (Detail: words from elsewhere). Package report
// words it.
type Note struct {
	Code     NoteCode `json:"code"`
	Side     string   `json:"side,omitempty"`
	Round    int      `json:"round,omitempty"`  // 1-based
	Merged   bool     `json:"merged,omitempty"` // head's rounds merged
	Phase    string   `json:"phase,omitempty"`
	Workload string   `json:"workload,omitempty"`
	Action   string   `json:"action,omitempty"` // an injected fault
	Service  string   `json:"service,omitempty"`

	Abandoned    int64   `json:"abandoned,omitempty"`
	Samples      int64   `json:"samples,omitempty"`
	Successes    int64   `json:"successes,omitempty"`
	Rounds       int     `json:"rounds,omitempty"`
	BaseRounds   int     `json:"base_rounds,omitempty"`
	HeadRounds   int     `json:"head_rounds,omitempty"`
	WithinS      float64 `json:"within_s,omitempty"`
	NotObservedS int     `json:"not_observed_s,omitempty"`
	WindowS      int     `json:"window_s,omitempty"`
	BusyPct      float64 `json:"busy_pct,omitempty"`   // NoteDuetStackBusy
	StackCPUs    string  `json:"stack_cpus,omitempty"` // NoteDuetStackBusy

	Phases    []string `json:"phases,omitempty"`
	RefPhases []string `json:"ref_phases,omitempty"`
	Paths     []string `json:"paths,omitempty"`
	Was       Value    `json:"was,omitempty"`
	Detail    string   `json:"detail,omitempty"`

	Policy *PolicyChange `json:"policy,omitempty"`
	How    WorkflowHow   `json:"how,omitempty"`

	Name            string           `json:"name,omitempty"`   // a stored baseline's name
	Path            string           `json:"path,omitempty"`   // a file, relative to its checkout
	Commit          string           `json:"commit,omitempty"` // a side's full commit
	BaseMachine     *result.Machine  `json:"base_machine,omitempty"`
	HeadMachine     *result.Machine  `json:"head_machine,omitempty"`
	BaseTopology    *result.Topology `json:"base_topology,omitempty"`
	HeadTopology    *result.Topology `json:"head_topology,omitempty"`
	MaxRounds       int              `json:"max_rounds,omitempty"`
	Fit             int              `json:"fit,omitempty"`
	Budget          time.Duration    `json:"budget_ns,omitempty"`
	RoundTime       time.Duration    `json:"round_time_ns,omitempty"`
	Measured        bool             `json:"measured,omitempty"`
	Stall           *Stall           `json:"stall,omitempty"`
	Behind          *UntrustedRound  `json:"behind,omitempty"` // NoteLatenessNoted: the round, its generator and its nearest check
	FailOn          string           `json:"fail_on,omitempty"`
	ExitCode        int              `json:"exit_code,omitempty"`
	VerdictExitCode int              `json:"verdict_exit_code,omitempty"`
	Shard           string           `json:"shard,omitempty"`
	Shards          int              `json:"shards,omitempty"`
	MinShards       int              `json:"min_shards,omitempty"`
	Windows         *WindowPlan      `json:"windows,omitempty"`
	Attempts        int              `json:"attempts,omitempty"`
	Replayed        bool             `json:"replayed,omitempty"`
	Unrun           BaselineUnrun    `json:"unrun,omitempty"` // NoteBaselineStoredOnly
}

// BaselineUnrun is why a stored baseline's commit could not be run beside head.
type BaselineUnrun string

// Why a baseline's commit is not run.
const (
	BaselineNoCommit   BaselineUnrun = "no_commit"    // the baseline records no commit
	BaselineDirty      BaselineUnrun = "dirty"        // measured on a working tree with uncommitted changes
	BaselineNotInClone BaselineUnrun = "not_in_clone" // the commit is not in this clone (shallow, or another repository's)
)

// PolicyKind says which bar head's scenario sets otherwise than base's;
// Base and Head hold the PolicyValue field named with each kind (None: no bar).
type PolicyKind string

// Policy kinds.
const (
	PolicyWorkloadAdded   PolicyKind = "workload_added"   // Workload: head adds it
	PolicyWorkloadRemoved PolicyKind = "workload_removed" // Workload: head removes it
	PolicyLatency         PolicyKind = "latency"          // Workload, Field (p95, …): Duration
	PolicySession         PolicyKind = "session"          // Workload, Field (connect_p99, …): Duration
	PolicyErrorRate       PolicyKind = "error_rate"       // Workload: Fraction
	PolicyCount           PolicyKind = "count"            // Workload ("": the scenario's): Count
	PolicyInject          PolicyKind = "inject"           // Phase: Faults in order
	PolicyRecovery        PolicyKind = "recovery"         // Phase: Recovery, where one side has none
	// PolicyRecoveryTarget: Phase, Field: within or a percentile (Duration), error_rate (Fraction).
	PolicyRecoveryTarget PolicyKind = "recovery_target"
	// PolicyCeiling: Field: rate (ReqPerS), duration, timeout, drain (Duration), in_flight (N), max_body (Bytes).
	PolicyCeiling PolicyKind = "ceiling"
	PolicyLoad    PolicyKind = "load" // the load itself: its scenario Hash
	// PolicyTolerance: the scenario's tolerance (Fraction; None: not given).
	PolicyTolerance PolicyKind = "tolerance"
	// PolicyToleranceFloor: the scenario's tolerance_floor (Duration; None: not given).
	PolicyToleranceFloor PolicyKind = "tolerance_floor"
)

// PolicyChange is one bar head's scenario sets otherwise than base's, with both values.
type PolicyChange struct {
	Kind     PolicyKind  `json:"kind"`
	Workload string      `json:"workload,omitempty"`
	Phase    string      `json:"phase,omitempty"`
	Field    string      `json:"field,omitempty"`
	Base     PolicyValue `json:"base"`
	Head     PolicyValue `json:"head"`
}

// PolicyValue is one side's value of a bar; None when it sets none.
type PolicyValue struct {
	None     bool           `json:"none,omitempty"`
	Duration time.Duration  `json:"duration_ns,omitempty"` // a latency limit or target, recovery within, ceilings.duration, .timeout, .drain
	Fraction float64        `json:"fraction,omitempty"`    // an error rate, as a fraction
	ReqPerS  float64        `json:"req_per_s,omitempty"`   // ceilings.rate
	N        int64          `json:"n,omitempty"`           // ceilings.in_flight
	Bytes    int64          `json:"bytes,omitempty"`       // ceilings.max_body
	Hash     string         `json:"hash,omitempty"`        // the scenario's hash
	Count    *PolicyCounter `json:"count,omitempty"`
	Faults   []PolicyFault  `json:"faults,omitempty"`
	Recovery *PolicyTargets `json:"recovery,omitempty"`
}

// PolicyCounter is a scenario's count: its counter and where it is read.
type PolicyCounter struct {
	Metric  string `json:"metric"`
	Service string `json:"service"`
	Port    int    `json:"port"`
	Path    string `json:"path"`
}

// PolicyFault is one injected fault of a phase.
type PolicyFault struct {
	Action  string        `json:"action"`
	Service string        `json:"service"`
	At      time.Duration `json:"at_ns"`
	For     time.Duration `json:"for_ns"`
}

// PolicyTargets is a phase's recovery targets (error rate < 0, percentile 0: none).
type PolicyTargets struct {
	Within    time.Duration `json:"within_ns"`
	ErrorRate float64       `json:"error_rate"`
	P50       time.Duration `json:"p50_ns,omitempty"`
	P90       time.Duration `json:"p90_ns,omitempty"`
	P95       time.Duration `json:"p95_ns,omitempty"`
	P99       time.Duration `json:"p99_ns,omitempty"`
	P999      time.Duration `json:"p999_ns,omitempty"`
}

// WorkflowHow says how head changes a workflow file.
type WorkflowHow string

// Workflow changes.
const (
	WorkflowChanges    WorkflowHow = "changes"
	WorkflowAdds       WorkflowHow = "adds"
	WorkflowRemoves    WorkflowHow = "removes"
	WorkflowUnreadable WorkflowHow = "unreadable" // it cannot be compared (the error says why): it may change
	// WorkflowOutsideGate: head changes the file but not the gate's job up to
	// its step, the jobs it needs, the trigger, env or permissions.
	WorkflowOutsideGate WorkflowHow = "outside_gate"
)

// addNote appends n to ns unless ns already says it.
func addNote(ns []Note, n Note) []Note {
	if slices.ContainsFunc(ns, func(m Note) bool { return reflect.DeepEqual(m, n) }) {
		return ns
	}
	return append(ns, n)
}

// at returns ns, each naming side and round (0: the side as a whole).
func at(side string, round int, ns []Note) []Note {
	out := make([]Note, len(ns))
	for i, n := range ns {
		n.Side, n.Round = side, round
		out[i] = n
	}
	return out
}

// histogramError: a round's histogram does not decode (Err) or hold the successes.
type histogramError struct {
	Side               string
	Round              int
	Phase, Workload    string
	Samples, Successes int64
	Err                error
}

func (e *histogramError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s round %d: %s/%s: latency histogram: %v", e.Side, e.Round, e.Phase, e.Workload, e.Err)
	}
	return fmt.Sprintf("%s round %d: %s/%s: the latency histogram holds %d samples for %d successes", e.Side, e.Round, e.Phase, e.Workload, e.Samples, e.Successes)
}

func (e *histogramError) Unwrap() error { return e.Err }

func histogramNote(phase, workload string, err error) Note {
	if he, ok := errors.AsType[*histogramError](err); ok {
		n := Note{Code: NoteHistogramCount, Side: he.Side, Round: he.Round, Phase: he.Phase, Workload: he.Workload,
			Samples: he.Samples, Successes: he.Successes}
		if he.Err != nil {
			n.Code, n.Samples, n.Successes, n.Detail = NoteHistogram, 0, 0, he.Err.Error()
		}
		return n
	}
	return Note{Code: NoteHistogram, Phase: phase, Workload: workload, Detail: err.Error()}
}

// UnusableError stops a computation that returns no Verdict (Calibrate).
type UnusableError struct {
	Op    string
	Notes []Note
}

func (e *UnusableError) Error() string {
	codes := make([]string, len(e.Notes))
	for i, n := range e.Notes {
		codes[i] = string(n.Code)
	}
	return fmt.Sprintf("%s: unusable results (%s)", e.Op, strings.Join(codes, ", "))
}
