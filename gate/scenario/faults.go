package scenario

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

const (
	FaultStop       = "stop"       // stop the service's containers, start them again after For
	FaultPause      = "pause"      // freeze them (cgroup freezer), unpause after For
	FaultKill       = "kill"       // SIGKILL; after For, start whatever its restart policy has not restarted
	FaultDisconnect = "disconnect" // disconnect from the project network(s), reconnect after For
)

// FaultActions lists the known actions, in the docs' order.
var FaultActions = []string{FaultStop, FaultPause, FaultKill, FaultDisconnect}

// MaxFaults bounds a scenario's faults, MaxRecoveryCells their recovery windows'
// seconds × workloads, MaxRecoveryRequests the requests due in them at peak rate:
// a run keeps each success's values until the recovery is judged.
const (
	MaxFaults           = 64
	MaxRecoveryCells    = 1 << 16
	MaxRecoveryRequests = 1 << 22
)

// RecoverySeconds is the one-second steps in a recovery window, the last maybe short.
func RecoverySeconds(within time.Duration) int {
	return int((within + time.Second - 1) / time.Second)
}

// Fault is one failure injected during a phase on a stack service. At is scaled
// by --scale; For, the failure mode, is not.
type Fault struct {
	Action  string        // FaultStop, FaultPause, FaultKill or FaultDisconnect
	Service string        // a service of the stack (checked against the stack once it is up)
	At      time.Duration // from the phase's start
	For     time.Duration // how long the failure lasts before it is undone (> 0)

	Line int // line of the fault in the scenario file (0 in memory)
}

// Recovery: within Within of each fault's end some second must start a run of
// seconds meeting the targets. Percentile 0 or ErrorRate < 0: none.
type Recovery struct {
	Within                   time.Duration
	ErrorRate                float64 // fraction in [0,1]; -1 when none
	P50, P90, P95, P99, P999 time.Duration

	Line int
}

func (r Recovery) HasErrorRate() bool { return r.ErrorRate >= 0 }

var (
	faultKeys    = []string{"action", "service", "at", "for"}
	recoveryKeys = []string{"within", "error_rate", "p50", "p90", "p95", "p99", "p999"}
)

// faults decodes a phase's inject: and recovery:, once p.Duration is known.
func (d *decoder) faults(f *fields, p *Phase) {
	inj, rec := f.get("inject"), f.get("recovery")
	if rec != nil {
		r := d.recovery(rec, f.sub("recovery"))
		p.Recovery = &r
	}
	if inj == nil {
		if rec != nil && d.ok() {
			d.failf(f.keys["recovery"].Line, f.sub("recovery"), "declares a recovery but the phase injects no fault (add inject:)")
		}
		return
	}
	items := d.list(inj, f.sub("inject"))
	if d.ok() && len(items) == 0 {
		d.failf(inj.Line, f.sub("inject"), "must list at least one fault (or leave inject out)")
	}
	for i, item := range items {
		p.Inject = append(p.Inject, d.fault(item, index(f.sub("inject"), i)))
	}
	if d.ok() && p.Recovery == nil {
		d.failf(f.keys["inject"].Line, f.sub("inject"), "a phase that injects faults must declare recovery: {within: ..., error_rate: ..., p95: ...}; recovery is never judged per run")
	}
}

func (d *decoder) fault(n *yaml.Node, path string) Fault {
	f := d.mapping(n, path, faultKeys)
	ft := Fault{Line: f.line}
	an := d.require(f, "action")
	ft.Action = d.str(an, f.sub("action"))
	if an != nil && d.ok() {
		d.check(slices.Contains(FaultActions, ft.Action), an, f.sub("action"),
			"unknown action %q (known: %s)", clip(ft.Action), strings.Join(FaultActions, ", "))
	}
	sn := d.require(f, "service")
	ft.Service = d.str(sn, f.sub("service"))
	if sn != nil && d.ok() {
		d.check(serviceRE.MatchString(ft.Service), sn, f.sub("service"), "%q is not a compose service name", clip(ft.Service)) // the rule count: uses (count.go)
	}
	atn := d.require(f, "at")
	ft.At = d.duration(atn, f.sub("at"))
	if atn != nil && d.ok() {
		d.check(ft.At >= 0, atn, f.sub("at"), "must be >= 0")
	}
	ft.For = d.requiredDuration(f, "for")
	return ft
}

func (d *decoder) recovery(n *yaml.Node, path string) Recovery {
	f := d.mapping(n, path, recoveryKeys)
	r := Recovery{Line: f.line, ErrorRate: -1}
	r.Within = d.requiredDuration(f, "within")
	if v := f.get("error_rate"); v != nil {
		r.ErrorRate = d.errorRate(v, f.sub("error_rate"))
	}
	for _, p := range []struct {
		key string
		dst *time.Duration
	}{{"p50", &r.P50}, {"p90", &r.P90}, {"p95", &r.P95}, {"p99", &r.P99}, {"p999", &r.P999}} {
		if v := f.get(p.key); v != nil {
			*p.dst = d.positiveDuration(v, f.sub(p.key))
		}
	}
	if d.ok() && !r.HasErrorRate() && r.P50 == 0 && r.P90 == 0 && r.P95 == 0 && r.P99 == 0 && r.P999 == 0 {
		d.failf(f.line, path, "must set at least one target (error_rate, p50, p90, p95, p99 or p999) beside within")
	}
	return r
}

// checkFaults validates the faults after --scale.
func (s *Scenario) checkFaults() error {
	b := faultBudget{s: s}
	for _, p := range s.Phases {
		b.peak = max(b.peak, p.PeakRate())
	}
	var start time.Duration = s.Warmup // phase start, from the schedule's t0
	total := s.TotalDuration()
	var prevEnd time.Duration = -1
	var prev string
	for i, p := range s.Phases {
		for j, ft := range p.Inject {
			field := fmt.Sprintf("phases[%d].inject[%d]", i, j)
			fail := func(format string, args ...any) error {
				return &Error{File: s.File, Line: ft.Line, Field: field, Msg: fmt.Sprintf(format, args...)}
			}
			if err := b.add(i, p, ft, field, fail); err != nil {
				return err
			}
			if err := s.checkFault(p, ft, fail); err != nil {
				return err
			}
			abs := start + ft.At
			end := abs + ft.For + p.Recovery.Within
			if end > total {
				return fail("the recovery window (at %v + for %v + recovery.within %v) ends after the run's schedule (%v%s): it could not be judged",
					ft.At, ft.For, p.Recovery.Within, total, s.scaleNote())
			}
			if abs < prevEnd {
				return fail("starts inside the window (fault and recovery.within) of %s: faults are judged one at a time", prev)
			}
			prevEnd, prev = end, fmt.Sprintf("phases[%d] %s %s at %v", i, ft.Action, ft.Service, ft.At)
		}
		start += p.Duration
	}
	return nil
}

// faultBudget counts the faults so far against the fixed limits.
type faultBudget struct {
	s                        *Scenario
	peak, requests           float64
	count, cells, faultCells int
}

func (b *faultBudget) add(i int, p Phase, ft Fault, field string, fail func(string, ...any) error) error {
	s := b.s
	b.count++
	if b.count > MaxFaults {
		return fail("more than %d faults in one scenario", MaxFaults)
	}
	b.cells += RecoverySeconds(p.Recovery.Within) * len(s.Workloads)
	if b.cells > MaxRecoveryCells {
		return fail("the recovery windows hold more than %d seconds × workloads (each is counted per second): shorten recovery.within or inject fewer faults", MaxRecoveryCells)
	}
	if b.requests += b.peak * p.Recovery.Within.Seconds(); b.requests > MaxRecoveryRequests {
		return fail("the recovery windows would hold about %.0f requests at the peak rate of %g/s, more than the %d a run keeps until recovery is judged: shorten recovery.within or inject fewer faults", b.requests, b.peak, MaxRecoveryRequests)
	}
	b.faultCells += faultReach(s, i) * len(s.Workloads)
	if b.faultCells+s.engineCells() > MaxCells {
		return &Error{File: s.File, Line: ft.Line, Field: field, Err: ErrLimit,
			Msg: fmt.Sprintf("the faults' cells (%d so far, one per workload in a fault's phase and the next) and the phases' (%d) exceed the limit of %d cells: inject fewer faults or use fewer workloads",
				b.faultCells, s.engineCells(), MaxCells)}
	}
	return nil
}

// checkFault refuses a fault without a stack or with WebSocket workloads, on the
// target (but pause), or outlasting its phase.
func (s *Scenario) checkFault(p Phase, ft Fault, fail func(string, ...any) error) error {
	if ws := wsWorkload(s); ws != "" {
		return fail("inject is not supported with WebSocket workloads yet (workload %s): their session numbers cannot be split around a fault", ws)
	}
	if s.Stack == nil {
		return fail("inject needs a stack: section: faults act only on services of the stack loadgate starts")
	}
	if ft.Action != FaultPause && targetService(s.Stack.Target) == ft.Service {
		return fail("cannot %s %s, the load's target: its address may change, and the load only goes to the address it checked; %s a service behind it, or pause the target", ft.Action, ft.Service, ft.Action)
	}
	if ft.At+ft.For > p.Duration {
		return fail("at %v + for %v ends after phase %s (%v%s)", ft.At, ft.For, p.Name, p.Duration, s.scaleNote())
	}
	return nil
}

// FaultCells is how many cells a fault injector may keep: per fault, one per
// workload in its phase and the next (undoing may overrun it).
func (s *Scenario) FaultCells() int {
	n := 0
	for i, p := range s.Phases {
		n += len(p.Inject) * faultReach(s, i) * len(s.Workloads)
	}
	return n
}

func faultReach(s *Scenario, i int) int {
	if i+1 < len(s.Phases) {
		return 2
	}
	return 1
}

// engineCells is segments × workloads (checkCells).
func (s *Scenario) engineCells() int {
	segments := len(s.Phases)
	if s.Warmup > 0 {
		segments++
	}
	return segments * len(s.Workloads)
}

func wsWorkload(s *Scenario) string {
	for _, w := range s.Workloads {
		if w.WS != nil {
			return w.Name
		}
	}
	return ""
}

func targetService(target string) string {
	svc, _, _ := strings.Cut(target, ":")
	return svc
}

func (s *Scenario) HasFaults() bool {
	for _, p := range s.Phases {
		if len(p.Inject) > 0 {
			return true
		}
	}
	return false
}

func scaleFaults(p *Phase, f float64) {
	for i := range p.Inject {
		p.Inject[i].At = scaleDuration(p.Inject[i].At, f)
	}
}

// canonFault is a fault in the hash: faults change what the load meets, so a
// run with them is never compared with one without.
type canonFault struct {
	Action  string `json:"action"`
	Service string `json:"service"`
	At      int64  `json:"at"`
	For     int64  `json:"for"`
}

func canonicalFaults(p Phase) []canonFault {
	var out []canonFault
	for _, ft := range p.Inject {
		out = append(out, canonFault{Action: ft.Action, Service: ft.Service, At: int64(ft.At), For: int64(ft.For)})
	}
	return out
}
