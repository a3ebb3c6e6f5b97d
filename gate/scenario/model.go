// Package scenario owns the named load: the YAML model users write, its
// validation (errors name file, line and field), its normalized hash and
// --scale. A *Scenario is immutable once loaded; safe for concurrent reads.
package scenario

import "time"

// Scenario is a validated, defaulted named load.
type Scenario struct {
	Name        string
	Stack       *Stack        // nil when the file has no stack: section
	Warmup      time.Duration // same pattern as the first phase; excluded from every number
	Timeout     time.Duration // per request (default 5s)
	MaxInFlight int           // concurrency bound (default 512)
	LateAfter   time.Duration // a request sent later than this after its due time is late (default 1ms)
	Drain       time.Duration // how long in-flight requests may finish after the last due time (default: Timeout)
	HTTPVersion string        // "1.1" (default) or "2" (TLS ALPN for https targets, h2c for http)
	// MaxBody (bytes, > 0; default DefaultMaxBody): a larger response body is a failure of its own class.
	MaxBody  int64
	Ceilings Ceilings
	// Tolerance is the relative change of a latency percentile that is no
	// change (0.1 for "10%"; 0: not given). ToleranceFloor is its absolute
	// floor (ToleranceFloorSet: given, 0 included). Both are the `gate:`
	// block's (or their deprecated top-level keys'). A gate takes both from
	// base's file; an operator's flag or input can only tighten them.
	Tolerance         float64
	ToleranceFloor    time.Duration
	ToleranceFloorSet bool
	Phases            []Phase
	Workloads         []Workload
	Count             *Count // count: a service's counter of every workload's requests (count.go); nil when none
	// OldSpellings: the keys the file spells in a deprecated way, by line
	// (loadgate check warns); it loads as the current spelling would.
	OldSpellings []error

	File string // "" in memory
	// Hash: two scenarios with equal Hash issue the same requests on the same
	// schedule (thresholds, ceilings, the stack and count are left out). It is
	// not updated on change: call ComputeHash again.
	Hash  string
	Scale float64 // --scale, 1 when none

	// lines maps field paths to the line of their value, for errors after Parse.
	lines map[string]int
}

// Stack names the compose files and the service:port that receives the load.
type Stack struct {
	Compose []string // paths relative to the scenario file, made absolute by Load
	Target  string   // service:port
	// Prepare is argv run in Dir before the stack is built, by each gate side in its checkout.
	Prepare []string
	Dir     string // the scenario file's directory, absolute
	// Allow names the HostKeys the stack may use; in a gate, base's scenario decides.
	Allow []string
}

// HostKeys are the compose settings that reach past the stack (into the host, the
// other side, the runner's files or environment), refused unless stack.allow names
// them; compose's allow-list refuses each under one of these names (compose's
// TestAllowNamesAreHostKeys keeps both lists alike).
var HostKeys = []string{
	"privileged", "pid", "ipc", "userns_mode", "network_mode", "cap_add", "devices", "security_opt",
	"bind", "docker_socket", "network_driver", "uts", "cgroup", "cgroup_parent",
	"device_cgroup_rules", "volumes_from", "external_links", "gpus", "runtime", "isolation",
	"sysctls", "storage_opt", "credential_spec", "annotations", "use_api_socket", "provider",
	"models", "volume_driver", "log_driver", "log_opt", "net", "dockerfile", "logging", "environment",
	"env_file", "label_file", "volumes", "build.context", "build.additional_contexts",
	"build.network", "build.ssh", "build.secrets", "build.cache_to", "build.cache_from", "build.tags",
	"build.entitlements", "networks.driver", "networks.external", "networks.name",
	"networks.driver_opts", "networks.ipam", "volumes.driver", "volumes.driver_opts",
	"volumes.external", "volumes.name", "secrets", "configs",
}

// Ceilings refuse (never clamp) a run that asks for more.
type Ceilings struct {
	Rate     float64       // requests per second, the highest instantaneous rate of any phase
	Duration time.Duration // warmup + all phases
	InFlight int           // max_in_flight
	MaxBody  int64         // max_body, bytes
	Timeout  time.Duration // timeout (per request)
	Drain    time.Duration // drain (after the last due time)
}

const (
	Constant = "constant"
	Ramp     = "ramp"
	Step     = "step"
	Burst    = "burst"
)

// Phase is one stretch of the schedule.
type Phase struct {
	Name     string
	Pattern  string        // Constant, Ramp, Step or Burst
	Duration time.Duration // total length of the phase
	Judged   bool          // the verdict is computed on this phase

	Rate     float64       // constant: the rate; burst: the base rate
	From, To float64       // ramp: linear rate from From to To over Duration
	Rates    []float64     // step: rates held in turn, each for Hold
	Hold     time.Duration // step
	Peak     float64       // burst: rate during a spike
	Every    time.Duration // burst: period; each period starts with For at Peak, then runs at Rate
	For      time.Duration // burst: spike length (0 < For < Every)

	Inject   []Fault   // failures injected during the phase (faults.go); none when empty
	Recovery *Recovery // what recovery after them means; set exactly when Inject is

	Line int // line of the phase in the scenario file (0 in memory)
}

// Workload is one named kind of request with its share of the mix.
type Workload struct {
	Name       string
	Share      float64     // relative weight (> 0); the mix normalizes shares
	HTTP       *HTTP       // exactly one of HTTP, WS and GRPC is set (protocols.go) ...
	WS         *WS         // ... a WebSocket session
	GRPC       *GRPC       // ... a gRPC unary call
	OpenAPI    *OpenAPIRef // openapi: the operation as named; HTTP holds it resolved from the document
	Expect     Expect
	Thresholds Thresholds
	Count      *Count // count: the service's own counter of this workload (count.go); nil when none

	Line int
}

// HTTP is an HTTP operation template.
type HTTP struct {
	Method  string            // default GET
	Path    string            // template: {n} is the workload's sequence number, {name} a value of Vars[name] in turn
	Headers map[string]string // values may hold ${ENV} references
	Body    string            // template like Path; may hold ${ENV}
	Vars    map[string][]string
}

// Expect lists what counts as success.
type Expect struct {
	Status []int    // default [200]
	Codes  []string // gRPC codes that succeed, by canonical name (default [OK])
}

// Thresholds are absolute limits judged on head. Duration 0 or ErrorRate < 0:
// none; an omitted error_rate gets DefaultErrorRate.
type Thresholds struct {
	P50, P90, P95, P99, P999 time.Duration
	ErrorRate                float64           // fraction in [0,1]; -1 when none
	ErrorRateDefault         bool              // ErrorRate is DefaultErrorRate because the file left error_rate out
	FirstMessage, Connect    SessionThresholds // WebSocket sessions
}

func (t Thresholds) HasErrorRate() bool { return t.ErrorRate >= 0 }

// PeakRate is the highest instantaneous rate the phase asks for.
func (p Phase) PeakRate() float64 {
	switch p.Pattern {
	case Ramp:
		return max(p.From, p.To)
	case Step:
		peak := 0.0
		for _, r := range p.Rates {
			peak = max(peak, r)
		}
		return peak
	case Burst:
		return max(p.Rate, p.Peak)
	}
	return p.Rate
}

// JudgedPhase returns the phase the verdict is computed on (ok false: none).
func (s *Scenario) JudgedPhase() (p Phase, ok bool) {
	for _, p := range s.Phases {
		if p.Judged {
			return p, true
		}
	}
	return Phase{}, false
}

// TotalDuration is warmup plus all phases.
func (s *Scenario) TotalDuration() time.Duration {
	d := s.Warmup
	for _, p := range s.Phases {
		d += p.Duration
	}
	return d
}
