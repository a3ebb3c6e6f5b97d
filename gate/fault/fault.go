// Package fault injects a scenario's faults on the run's clock and counts what each workload
// met during and after them; a failed fault cancels the load and makes the result unusable.
// Start, Observe, Stop and Err may be called concurrently; Apply after Stop.
package fault

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/loadgate/loadgate/compose"
	"github.com/loadgate/loadgate/gate/load"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
)

// Target is the stack loadgate started; Inject returns once the action is in effect.
type Target interface {
	Services() []string
	Inject(ctx context.Context, action, service string) (Active, error)
}

// Active is a fault in effect; Undo returns once it is undone, saying how.
type Active interface {
	Containers() []string
	Undo(ctx context.Context) (how string, err error)
}

// Stack adapts a compose stack to Target.
func Stack(s *compose.Stack) Target { return stackTarget{s} }

type stackTarget struct{ s *compose.Stack }

func (t stackTarget) Services() []string { return t.s.Services() }
func (t stackTarget) Inject(ctx context.Context, action, service string) (Active, error) {
	f, err := t.s.Inject(ctx, action, service)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Clock is the injector's time source.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// ActionTimeout bounds one action or its undoing.
const ActionTimeout = time.Minute

// ErrFault is in the chain of every error about a fault not injected or undone.
var ErrFault = errors.New("fault not injected")

// Options configure an Injector.
type Options struct {
	OnFail func(error) // called once, from the injector's goroutine, when a fault fails
	Clock  Clock       // nil: the real clock
	Log    io.Writer   // one line per action; nil: none
}

// Injector is the engine's load.FaultHook for a scenario's faults.
type Injector struct {
	sc     *scenario.Scenario
	target Target
	opt    Options

	mu      sync.Mutex
	t0      time.Time
	faults  []*state
	err     error
	overrun error // a request of a fault beyond its cells (cellOf)

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

type state struct {
	phase   int
	f       scenario.Fault
	rec     scenario.Recovery
	planned time.Duration // phase start + at, from t0

	started, applied, undoStarted, ended time.Duration
	isStarted, isApplied, isEnded        bool
	containers                           []string
	undo                                 string
	err                                  string

	during  map[int][]*cell // by the due time's phase index: one cell per workload
	seconds [][]second      // [workload][second]
}

type cell struct {
	counts   result.Workload
	lat, svc *hdrhistogram.Histogram
}

type second struct {
	over  map[string]int64
	maxUS int64
	due   map[int]*samples
	done  map[int]int64
}

func (s second) counts() result.Workload {
	var w result.Workload
	for _, d := range s.due {
		w.Add(d.counts)
	}
	return w
}

// samples keeps raw values: cheaper than a histogram for a second's few requests.
type samples struct {
	counts   result.Workload
	lat, svc []int64
}

func (s *second) samplesOf(pi int, name string) *samples {
	if s.due == nil {
		s.due = map[int]*samples{}
	}
	d := s.due[pi]
	if d == nil {
		d = &samples{counts: result.Workload{Name: name}}
		s.due[pi] = d
	}
	return d
}

func inc(m *map[string]int64, key string) {
	if *m == nil {
		*m = map[string]int64{}
	}
	(*m)[key]++
}

// New returns an injector for sc's faults on target; ending ctx undoes a
// fault in effect. Call Check before the load and Stop and Apply after it.
func New(ctx context.Context, sc *scenario.Scenario, target Target, opt Options) *Injector {
	if opt.Clock == nil {
		opt.Clock = realClock{}
	}
	in := &Injector{sc: sc, target: target, opt: opt, done: make(chan struct{})}
	in.ctx, in.cancel = context.WithCancel(ctx)
	start := sc.Warmup
	for i, p := range sc.Phases {
		for _, f := range p.Inject {
			st := &state{phase: i, f: f, rec: *p.Recovery, planned: start + f.At, during: map[int][]*cell{}}
			st.seconds = make([][]second, len(sc.Workloads))
			for w := range st.seconds {
				st.seconds[w] = make([]second, scenario.RecoverySeconds(p.Recovery.Within))
			}
			in.faults = append(in.faults, st)
		}
		start += p.Duration
	}
	return in
}

// Check refuses a fault on a service the stack does not have.
func (in *Injector) Check() error {
	services := in.target.Services()
	for _, st := range in.faults {
		if !contains(services, st.f.Service) {
			return fmt.Errorf("%w: %s: %s %s: no such service in the stack (services: %s)",
				ErrFault, in.where(st), st.f.Action, st.f.Service, strings.Join(services, ", "))
		}
	}
	return nil
}

func (in *Injector) where(st *state) string {
	loc := in.sc.File
	if st.f.Line > 0 {
		loc = fmt.Sprintf("%s:%d", loc, st.f.Line)
	}
	return fmt.Sprintf("%s: phase %s", loc, in.sc.Phases[st.phase].Name)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Start is load.FaultHook.Start: fire the faults on the schedule from t0.
func (in *Injector) Start(t0 time.Time) {
	in.mu.Lock()
	in.t0 = t0
	in.mu.Unlock()
	go func() {
		defer close(in.done)
		in.run()
	}()
}

func (in *Injector) since() time.Duration { return in.opt.Clock.Now().Sub(in.t0) }

func (in *Injector) run() {
	for _, st := range in.faults {
		if err := in.sleepUntil(st.planned); err != nil {
			in.fail(st, fmt.Errorf("the run ended before its time: %w", err))
			return
		}
		if err := in.one(st); err != nil {
			in.fail(st, err)
			return
		}
	}
}

func (in *Injector) one(st *state) error {
	in.mu.Lock()
	st.started, st.isStarted = in.since(), true
	in.mu.Unlock()
	ctx, cancel := context.WithTimeout(in.ctx, ActionTimeout)
	active, err := in.target.Inject(ctx, st.f.Action, st.f.Service)
	cancel()
	if err != nil {
		in.mu.Lock()
		st.ended, st.isEnded = in.since(), true // nothing is in effect
		in.mu.Unlock()
		return err
	}
	in.mu.Lock()
	st.applied, st.isApplied, st.containers = in.since(), true, active.Containers()
	in.mu.Unlock()
	in.logf("%s %s at %s (planned %s): in effect at %s", st.f.Action, st.f.Service, secs(st.started), secs(st.planned), secs(st.applied))
	_ = in.sleepUntil(st.planned + st.f.For)
	in.mu.Lock()
	st.undoStarted = in.since()
	in.mu.Unlock()
	uctx, ucancel := context.WithTimeout(context.WithoutCancel(in.ctx), ActionTimeout)
	how, err := active.Undo(uctx)
	ucancel()
	in.mu.Lock()
	st.ended, st.isEnded, st.undo = in.since(), true, how
	in.mu.Unlock()
	if err != nil {
		return fmt.Errorf("undo: %w", err)
	}
	in.logf("%s %s undone (%s) at %s", st.f.Action, st.f.Service, how, secs(st.ended))
	if in.ctx.Err() != nil {
		return fmt.Errorf("the run ended while the fault was in effect: %w", in.ctx.Err())
	}
	return nil
}

func (in *Injector) sleepUntil(at time.Duration) error {
	if d := at - in.since(); d > 0 {
		select {
		case <-in.opt.Clock.After(d):
		case <-in.ctx.Done():
			return in.ctx.Err()
		}
	}
	return in.ctx.Err()
}

func (in *Injector) fail(st *state, err error) {
	err = fmt.Errorf("%w: %s: %s %s at %s: %w", ErrFault, in.where(st), st.f.Action, st.f.Service, st.f.At, err)
	in.mu.Lock()
	st.err = err.Error()
	first := in.err == nil
	if first {
		in.err = err
	}
	in.mu.Unlock()
	in.logf("%v", err)
	if first && in.opt.OnFail != nil {
		in.opt.OnFail(err)
	}
}

func (in *Injector) logf(format string, args ...any) {
	if in.opt.Log != nil {
		fmt.Fprintf(in.opt.Log, "loadgate: fault: "+format+"\n", args...)
	}
}

func secs(d time.Duration) string { return d.Round(time.Millisecond).String() }

// Stop undoes a fault in effect and waits for the injector. Idempotent.
func (in *Injector) Stop() {
	in.once.Do(func() {
		in.cancel()
		in.mu.Lock()
		started := !in.t0.IsZero()
		in.mu.Unlock()
		if started {
			<-in.done
		}
	})
}

// Done is closed when every fault was fired and undone or given up on.
func (in *Injector) Done() <-chan struct{} { return in.done }

// Err is the first fault that could not be injected or undone.
func (in *Injector) Err() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.err
}

// Observe is load.FaultHook.Observe, filing o by due time so Apply takes out exactly what phases hold.
func (in *Injector) Observe(o load.Outcome) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, st := range in.faults {
		if !st.isStarted {
			return // faults fire in order: none later has started either
		}
		in.countDone(st, o)
		switch {
		case o.Due < st.started:
			continue
		case !st.isEnded || o.Due < st.ended:
			if c := in.cellOf(st, o.Phase, o.Workload); c != nil {
				c.record(o)
			}
			return
		}
		k := int((o.Due - st.ended) / time.Second)
		if k >= len(st.seconds[o.Workload]) {
			continue
		}
		in.recordSecond(st, &st.seconds[o.Workload][k], o)
		return
	}
}

func (in *Injector) countDone(st *state, o load.Outcome) {
	if o.DonePhase < 0 {
		return
	}
	if o.Done >= st.started && (!st.isEnded || o.Done < st.ended) {
		if c := in.cellOf(st, o.DonePhase, o.Workload); c != nil {
			c.counts.Completed++
		}
	}
	if st.isEnded && o.Done >= st.ended {
		if k := int((o.Done - st.ended) / time.Second); k < len(st.seconds[o.Workload]) {
			s := &st.seconds[o.Workload][k]
			if s.done == nil {
				s.done = map[int]int64{}
			}
			s.done[o.DonePhase]++
		}
	}
}

func (c *cell) record(o load.Outcome) {
	if !tally(&c.counts, o) {
		return
	}
	if c.lat == nil {
		c.lat, c.svc = result.NewHistogram(), result.NewHistogram()
	}
	_ = c.lat.RecordValue(o.LatencyUS) // LatencyUS is within the histogram's range
	_ = c.svc.RecordValue(o.ServiceUS)
}

func (in *Injector) recordSecond(st *state, s *second, o load.Outcome) {
	d := s.samplesOf(o.Phase, in.sc.Workloads[o.Workload].Name)
	if !tally(&d.counts, o) {
		return
	}
	d.lat, d.svc = append(d.lat, o.LatencyUS), append(d.svc, o.ServiceUS)
	s.maxUS = max(s.maxUS, o.LatencyUS)
	for _, t := range targets(st.rec) {
		if time.Duration(o.LatencyUS)*time.Microsecond > t.limit {
			inc(&s.over, t.metric)
		}
	}
}

func tally(w *result.Workload, o load.Outcome) bool {
	w.Offered++
	if o.Late {
		w.Late++
	}
	if o.Class != "" {
		w.Failed++
		inc(&w.Failures, o.Class)
		return false
	}
	w.Succeeded++
	return true
}

// cellOf is st's cell for w in phase pi; nil past the fault's phase and the next, where
// the run is made unusable rather than memory unbounded.
func (in *Injector) cellOf(st *state, pi, w int) *cell {
	if pi != st.phase && pi != st.phase+1 {
		if in.overrun == nil {
			in.overrun = fmt.Errorf("%w: %s: %s %s: undoing it ran past phase %s, beyond the fault's phase and the next: its requests could not be counted",
				ErrFault, in.where(st), st.f.Action, st.f.Service, in.sc.Phases[pi].Name)
		}
		return nil
	}
	cs := st.during[pi]
	if cs == nil {
		cs = make([]*cell, len(in.sc.Workloads))
		st.during[pi] = cs
	}
	if cs[w] == nil {
		cs[w] = &cell{counts: result.Workload{Name: in.sc.Workloads[w].Name}}
	}
	return cs[w]
}

type target struct {
	metric string
	limit  time.Duration
}

func targets(r scenario.Recovery) []target {
	var out []target
	for _, t := range []target{{"p50", r.P50}, {"p90", r.P90}, {"p95", r.P95}, {"p99", r.P99}, {"p999", r.P999}} {
		if t.limit > 0 {
			out = append(out, t)
		}
	}
	return out
}
