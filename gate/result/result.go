// Package result owns what a run measured: the results contract
// ("loadgate/result/v1"), its JSON encoding, percentiles over HdrHistogram
// values, and exact merging. A *Result is a plain value: concurrent reads only.
package result

import (
	"fmt"
	"time"
)

const Schema = "loadgate/result/v1"

// Result is result.json.
type Result struct {
	Schema      string    `json:"schema"`
	Scenario    Scenario  `json:"scenario"`
	StartedAt   time.Time `json:"started_at"`
	FinishedAt  time.Time `json:"finished_at"`
	Machine     Machine   `json:"machine"`
	Topology    Topology  `json:"topology"`
	Target      string    `json:"target"`                // URL or service:port the load went to (no secrets)
	Commit      string    `json:"commit,omitempty"`      // git commit of the side, when known
	Side        string    `json:"side,omitempty"`        // "base" / "head" in a gate
	Round       *Round    `json:"round,omitempty"`       // in a gate: the round and the order it ran in
	Interrupted bool      `json:"interrupted,omitempty"` // stopped before the schedule ended
	Offered     int64     `json:"offered"`               // measured phases (warm-up excluded)
	Recorded    int64     `json:"recorded"`              // succeeded + failed + abandoned over measured phases
	Usable      bool      `json:"usable"`
	Unusable    []string  `json:"unusable,omitempty"` // why not usable, in words
	Late        int64     `json:"late"`               // requests sent more than late_after after their due time
	LateAfterMS float64   `json:"late_after_ms"`
	Stalled     float64   `json:"stalled_seconds"` // dispatcher time spent waiting for an in-flight permit
	// WallBoundS: the engine ends a run that would outlive warm-up + phases + drain + slack.
	WallBoundS float64    `json:"wall_bound_s,omitempty"`
	LatenessMS Summary    `json:"lateness_ms"`         // send time minus due time, every measured request that was sent
	Generator  *Generator `json:"generator,omitempty"` // when the generator fell behind (GeneratorBehind)
	Steal      *Steal     `json:"steal,omitempty"`     // absent when not read
	Wait       *Wait      `json:"wait,omitempty"`      // the dispatcher's early wake and its CPU (wait.go)
	Precision  string     `json:"precision"`           // e.g. "HdrHistogram, 3 significant digits, values in µs"
	Warmup     Warmup     `json:"warmup"`
	Phases     []Phase    `json:"phases"`
	Stack      *Stack     `json:"stack,omitempty"`
	// Faults: their requests are out of the phases' numbers but in offered and recorded.
	Faults       []Fault   `json:"faults,omitempty"`
	Counting     *Counting `json:"counting,omitempty"` // counted by the service, stubs (counted.go)
	NotMeasured  []string  `json:"not_measured"`
	Synthetic    []string  `json:"synthetic,omitempty"` // what in this run is synthetic (e.g. the demo stack)
	LatenessHist string    `json:"lateness_histogram,omitempty"`
}

// Scenario identifies the named load.
type Scenario struct {
	Name        string         `json:"name"`
	Hash        string         `json:"hash"`
	File        string         `json:"file,omitempty"`
	Scale       float64        `json:"scale"`
	MaxInFlight int            `json:"max_in_flight"`
	TimeoutMS   float64        `json:"timeout_ms"`
	Thresholds  map[string]Thr `json:"thresholds,omitempty"` // per workload, as judged
}

// Thr is one workload's thresholds as the scenario writes them (ms and fraction).
type Thr struct {
	P50MS            float64  `json:"p50_ms,omitempty"`
	P90MS            float64  `json:"p90_ms,omitempty"`
	P95MS            float64  `json:"p95_ms,omitempty"`
	P99MS            float64  `json:"p99_ms,omitempty"`
	P999MS           float64  `json:"p999_ms,omitempty"`
	ErrorRate        *float64 `json:"error_rate,omitempty"`
	ErrorRateDefault bool     `json:"error_rate_default,omitempty"`
	FirstMessage     *PctThr  `json:"first_message,omitempty"`
	Connect          *PctThr  `json:"connect,omitempty"`
}

type PctThr struct {
	P50MS  float64 `json:"p50_ms,omitempty"`
	P90MS  float64 `json:"p90_ms,omitempty"`
	P95MS  float64 `json:"p95_ms,omitempty"`
	P99MS  float64 `json:"p99_ms,omitempty"`
	P999MS float64 `json:"p999_ms,omitempty"`
}

// Machine is where the generator ran.
type Machine struct {
	Host string `json:"host"`
	// CPUModel: VMs of one size can run on processors of different noise.
	CPUModel string `json:"cpu_model,omitempty"`
	CPUs     int    `json:"cpus"`
	Kernel   string `json:"kernel"`
	Go       string `json:"go"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
}

// Topology says which cores the stack and the generator had.
type Topology struct {
	StackCPUs        string     `json:"stack_cpus"` // cpuset list, "" when no stack
	LoadCPUs         string     `json:"load_cpus"`  // the generator's affinity as read back
	GOMAXPROCS       int        `json:"gomaxprocs"`
	Pinned           bool       `json:"pinned"`
	PinnedReason     string     `json:"pinned_reason,omitempty"` // why not pinned (a result of an older loadgate: or what was overridden)
	TargetPath       string     `json:"target_path"`             // "loopback", "container-network", "published-port"
	CPUsetOverridden bool       `json:"cpuset_overridden,omitempty"`
	Overrides        []Override `json:"overrides,omitempty"` // in the stack's compose model: resources always, cpuset and ports when pinned
	// LoadScheduling is the generator threads' ("SCHED_RR 1"), LoadSchedulingWhy why not raised.
	LoadScheduling    string `json:"load_scheduling,omitempty"`
	LoadSchedulingWhy string `json:"load_scheduling_reason,omitempty"`
}

func (t Topology) Scheduling() string {
	if t.LoadScheduling == "" {
		return "SCHED_OTHER"
	}
	return t.LoadScheduling
}

type OverrideKind string

const (
	OverrideCPUSet   OverrideKind = "cpuset"    // the service's cpuset From replaced by the stack's To
	OverrideHostPort OverrideKind = "host_port" // the published host port From of Target/Protocol made ephemeral
	OverrideResource OverrideKind = "resource"  // From ("cpu_shares=262144") removed: loadgate sets resources alike for both sides
)

// Override is one change loadgate made to a compose service.
type Override struct {
	Service  string       `json:"service"`
	Kind     OverrideKind `json:"kind"`
	From     string       `json:"from"`               // the compose file's value: a cpuset, a published port, key=value of a resource
	To       string       `json:"to,omitempty"`       // the stack's cpuset; "" for a port made ephemeral
	Target   uint32       `json:"target,omitempty"`   // the container port of a host port
	Protocol string       `json:"protocol,omitempty"` // its protocol, "tcp" or "udp"
}

// String words the override here, so that compose logs it without importing the reports.
func (o Override) String() string {
	switch o.Kind {
	case OverrideCPUSet:
		return fmt.Sprintf("service %s: cpuset %q replaced by the stack's %q", o.Service, o.From, o.To)
	case OverrideHostPort:
		return fmt.Sprintf("service %s: host port %s for %d/%s made ephemeral", o.Service, o.From, o.Target, o.Protocol)
	case OverrideResource:
		return fmt.Sprintf("service %s: %s removed", o.Service, o.From)
	}
	return fmt.Sprintf("service %s: %s %q overridden", o.Service, o.Kind, o.From)
}

// Warmup accounts for warm-up requests by class, no latency kept: a failing
// warm-up is a finding though not judged.
type Warmup struct {
	DurationS float64          `json:"duration_s"`
	Offered   int64            `json:"offered"`
	Recorded  int64            `json:"recorded"`
	Failed    int64            `json:"failed,omitempty"`
	Failures  map[string]int64 `json:"failures,omitempty"` // by class; sums to Failed
}

// AddFailures counts failures by class into the warm-up, once per warm-up cell.
func (w *Warmup) AddFailures(failures map[string]int64) {
	for class, n := range failures {
		if n == 0 {
			continue
		}
		if w.Failures == nil {
			w.Failures = map[string]int64{}
		}
		w.Failures[class] += n
		w.Failed += n
	}
}

// Round says how a gate ran this result. Only a gate sets it.
type Round struct {
	Number      int       `json:"number"`         // 1-based
	First       bool      `json:"first"`          // this side ran first in its round
	OtherPaused bool      `json:"other_paused"`   // the other side's stack was paused (frozen) while this one ran
	Mode        RoundMode `json:"mode,omitempty"` // how the round's two sides ran: "" one after the other, "duet" at the same instants
	// Instance is which bring-up of the side's stack ran the round (1-based;
	// 0: not recorded, an older loadgate): rounds of one instance share its
	// offset, which the verdict's instance model carries.
	Instance int `json:"instance,omitempty"`
	// Window is set when the round is one judged window of the judged phase,
	// run after the instance's warm-up and ramps (nil: the whole scenario ran).
	Window *Window `json:"window,omitempty"`
}

// Window is the slice of the scenario's judged phase a round ran: the
// Index-th of Of windows of DurationS seconds cut from Phase (PhaseS long),
// each preceded by SettleS seconds at the phase's rate, excluded like any
// warm-up. The instance's warm-up and earlier phases ran once before its
// first window and are in no number.
type Window struct {
	Phase     string  `json:"phase"`
	Index     int     `json:"index"` // 1-based, within the instance
	Of        int     `json:"of"`
	DurationS float64 `json:"duration_s"`
	PhaseS    float64 `json:"phase_s"`
	SettleS   float64 `json:"settle_s"`
}

type RoundMode string

// Round modes; a result without one ran its sides one after the other.
const (
	RoundDuet RoundMode = "duet" // both sides at the same instants, neither paused
)

func (m RoundMode) check() error {
	switch m {
	case "", RoundDuet:
		return nil
	}
	return fmt.Errorf("round.mode: %q is not a round mode (want %q, or none: one side after the other)", string(m), string(RoundDuet))
}

// Phase is one phase of the schedule.
type Phase struct {
	Name      string     `json:"name"`
	Pattern   string     `json:"pattern"`
	Judged    bool       `json:"judged"`
	Recover   bool       `json:"recover,omitempty"` // the phase named "recover", judged separately
	DurationS float64    `json:"duration_s"`
	Workloads []Workload `json:"workloads"`
}

// Workload is what one workload measured in one phase.
type Workload struct {
	Name       string           `json:"name"`
	Offered    int64            `json:"offered"`
	Succeeded  int64            `json:"succeeded"`
	Failed     int64            `json:"failed"`
	Abandoned  int64            `json:"abandoned"`
	Late       int64            `json:"late"`
	Failures   map[string]int64 `json:"failures"`
	LatencyMS  Summary          `json:"latency_ms"` // from the due time, successes only
	ServiceMS  Summary          `json:"service_ms"` // from the send time, successes only
	Throughput Throughput       `json:"throughput"`
	Histogram  string           `json:"histogram"`         // due-time latency, HdrHistogram V2 compressed, base64, µs
	ServiceH   string           `json:"service_histogram"` // service time, same encoding
	Completed  int64            `json:"completed"`         // completions (any outcome) that landed inside the phase window

	// WebSocket sessions: a cancelled one is a success without a latency sample.
	Cancelled        int64    `json:"cancelled,omitempty"`
	MessagesReceived int64    `json:"messages_received,omitempty"`
	FirstMessageMS   *Summary `json:"first_message_ms,omitempty"`        // due time → first message, sessions that got one
	ConnectMS        *Summary `json:"connect_ms,omitempty"`              // due time → handshake done
	FirstMessageH    string   `json:"first_message_histogram,omitempty"` // same encoding as histogram
	ConnectH         string   `json:"connect_histogram,omitempty"`
}

// Summary is a nearest-rank percentile summary over Count samples.
type Summary struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	Max   float64 `json:"max"`
}

// Throughput is counted twice: completions inside the window, and offered.
type Throughput struct {
	CompletedPerS float64 `json:"completed_per_s"`
	OfferedPerS   float64 `json:"offered_per_s"`
}

// Stack is the stack's resource use, when a stack ran.
type Stack struct {
	Services  []Service `json:"services"`
	Generator *Service  `json:"generator,omitempty"`  // loadgate's own CPU (getrusage deltas) and RSS over the same intervals
	UpS       float64   `json:"up_s,omitempty"`       // from the command's start to the first request (sweep, build, up, ready)
	TeardownS float64   `json:"teardown_s,omitempty"` // from the end of the run to a clean teardown (logs saved, everything removed)
}

// Service is one service's CPU and memory over the measured phases.
type Service struct {
	Name         string  `json:"name"`
	CPUAvgPct    float64 `json:"cpu_avg_pct"`  // percent of one core, from cumulative CPU deltas
	CPUPeakPct   float64 `json:"cpu_peak_pct"` // highest one-interval delta
	MemPeakBytes int64   `json:"mem_peak_bytes"`
	Samples      int     `json:"samples"`
}

// After is what is known only after the load: the stack's samples and teardown.
type After struct {
	Stack       *Stack        // the services (and the generator) sampled over the measured phases; nil: none sampled
	Up          time.Duration // from the command's start to the first request (0: not timed)
	Teardown    time.Duration // from the last request to a clean teardown (0: not timed)
	TeardownErr error         // the stack was not torn down cleanly: the result is not usable
}

// Complete records a after load.Run; an unclean teardown makes the result unusable.
func (r *Result) Complete(a After) {
	if a.Stack != nil {
		r.Stack = a.Stack
	}
	if r.Stack != nil {
		if a.Up > 0 {
			r.Stack.UpS = a.Up.Seconds()
		}
		if a.Teardown > 0 {
			r.Stack.TeardownS = a.Teardown.Seconds()
		}
	}
	if a.TeardownErr != nil {
		r.Usable = false
		r.Unusable = append(r.Unusable, "the stack was not torn down cleanly: "+a.TeardownErr.Error())
	}
}
