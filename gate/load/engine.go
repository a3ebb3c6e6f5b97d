package load

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
)

// Config is one run of a named load against one target.
type Config struct {
	Scenario *scenario.Scenario
	Target   Target
	// Env holds the resolved values of the scenario's ${NAME} references.
	Env map[string]string
	// Snapshots receives one JSON line per second (nil: none).
	Snapshots io.Writer
	// Progress is called once per second from a single goroutine (nil: none).
	Progress func(Progress)
	// SnapshotEvery is the snapshot interval (default 1s).
	SnapshotEvery time.Duration
	// Faults is told the schedule's start and every measured outcome
	// (faults.go). A scenario that injects faults is refused without it: a
	// fault is never silently skipped.
	Faults FaultHook
	// Started is called once each, in order, with the schedule's start,
	// before the first request is due (after Faults.Start): what is timed
	// on the run's own clock besides faults (the counted reads, watched
	// processes' sampling). Unlike Faults, it never stands for an injector.
	Started []func(t0 time.Time)
	// StartAt is the schedule's t0 (zero: now, as Run reaches its first due
	// time): the instant every due time counts from. Two runs given one
	// StartAt (a duet gate's two sides) send their schedules at the same
	// instants. A StartAt already past makes the first requests late, and
	// their lateness says so.
	StartAt time.Time

	// What the result states that the engine does not measure, known
	// before the load and copied into the Result as given (build.go), so
	// that Run returns it final; only what is known after the load
	// (result.After: stack samples, teardown) is added by Result.Complete.
	Machine  result.Machine  // where the generator runs
	Topology result.Topology // the stack's and the generator's cpus, pinning, target path
	// TargetLabel is how the result names the target, e.g. "api:8080
	// (172.18.0.3:8080)"; "" names it by its URL.
	TargetLabel  string
	Side, Commit string        // in a gate: "base"/"head" and the side's commit
	Round        *result.Round // in a gate: the round and its order; nil otherwise
}

// Progress is the state of a run at one moment, for a progress line.
type Progress struct {
	Elapsed       time.Duration
	Phase         string
	PhaseElapsed  time.Duration
	PhaseDuration time.Duration
	Interval      time.Duration // the snapshot interval
	Snapshot      Snapshot      // the last interval
}

// Run sends the named load and returns what it measured. Cancelling ctx
// stops the run early: requests in flight are recorded as abandoned and the
// result says Interrupted. Run returns an error only when the run could not
// start; a run that started always returns its result.
func Run(ctx context.Context, cfg Config) (res *result.Result, err error) {
	sc := cfg.Scenario
	// The target's addresses are checked once, here; every connection of
	// the run goes only to them (dial.go).
	if cfg.Target, err = cfg.Target.Resolve(ctx); err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	sched, err := NewSchedule(sc)
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	if err := checkFaultHook(cfg); err != nil { // faults.go
		return nil, err
	}
	shares := make([]float64, len(sc.Workloads))
	for i, w := range sc.Workloads {
		shares[i] = w.Share
	}
	mix, err := NewMix(shares)
	if err != nil {
		return nil, fmt.Errorf("mix: %w", err)
	}
	rec := newRecorder(sched, len(sc.Workloads), sc.LateAfter)
	var lazy *lazyPoll        // lazy response reads (lazy.go); nil: off
	if testClockSeam == nil { // a fake clock's operations have no sockets, and its bubble no I/O wait
		lazy = newLazyPoll()
	}
	defer lazy.close()
	cfg.Target.lazy = lazy
	e := &engine{cfg: cfg, lazy: lazy, sched: sched, mix: mix, rec: rec,
		jobs: make(chan job), seq: make([]int64, len(sc.Workloads))}
	e.waitDue.Store(-1)
	e.sess = newSessionRecorder(rec, sc) // session.go
	ops, closeOps, err := newOperations(ctx, sc, cfg)
	if err != nil {
		return nil, err
	}
	defer closeOps()
	e.ops = ops
	every := cfg.SnapshotEvery
	if every <= 0 {
		every = time.Second
	}

	// reqCtx outlives ctx by the drain: requests in flight when the schedule
	// ends may finish; it is cancelled when the run is finalized.
	reqCtx, cancelReqs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelReqs()
	e.reqCtx = reqCtx

	startedAt := time.Now()
	if !cfg.StartAt.IsZero() {
		startedAt = cfg.StartAt
	}
	e.start = startedAt
	e.wait = newWaiter(e.clock)
	defer e.wait.close()
	e.until = e.wait.until
	if testClockSeam != nil {
		testClockSeam(e) // tests only: the runtime's timers and fake operations (clock_export_test.go)
	}
	if cfg.Faults != nil {
		cfg.Faults.Start(startedAt) // before the first due time: the injector's clock (faults.go)
	}
	for _, f := range cfg.Started {
		f(startedAt)
	}
	if h := testWaitHook; h != nil {
		w := e.wait
		w.beforePark = func() { h(func() { w.due += 24 * time.Hour }) }
	}
	snapDone := make(chan struct{})
	stopSnaps := make(chan struct{})
	go func() {
		defer close(snapDone)
		e.snapshots(every, stopSnaps)
	}()
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		e.watchdog(ctx, stopSnaps)
	}()

	// The hypervisor's steal over the measured window (steal.go), on the
	// generator's cpus as the topology states them: a Config without them
	// (a library use with no topology) states no steal either.
	var steal *stealWatch
	if cfg.Topology.LoadCPUs != "" {
		steal = watchSteal(startedAt.Add(sc.Warmup))
	}
	stop := e.dispatch(ctx)
	stolen, stealWhy := steal.end(cfg.Topology.LoadCPUs, cfg.Topology.StackCPUs)
	drained := e.drain(ctx, stop != stopDone)
	abandoned := rec.abandonAll()
	cancelReqs()
	finishedAt := time.Now()
	close(stopSnaps)
	<-snapDone
	<-watchDone
	// Requests still in flight were recorded as abandoned; their goroutines
	// end at their deadline (or at once on net/http, whose requests see
	// reqCtx cancelled) and their completions are dropped by the recorder.

	res = e.result(startedAt, finishedAt)
	res.Steal = stolen
	if stealWhy != "" {
		res.NotMeasured = append(res.NotMeasured, stealWhy)
	}
	res.Interrupted = stop == stopInterrupted && stageEnded(ctx) == nil // faults.go: a failed stage is not an interruption
	switch stop {
	case stopInterrupted:
		res.Usable = false
		res.Unusable = append(res.Unusable, interruptedReason(ctx))
	case stopHung:
		res.Usable = false
		res.Unusable = append(res.Unusable, e.hung)
	case stopWallBound:
		res.NotMeasured = append(res.NotMeasured, fmt.Sprintf(
			"%d requests were never sent: the dispatcher (max_in_flight %d) could not send them before the run's wall-time bound (schedule %s + drain %s); they are recorded as abandoned",
			e.unsent, sc.MaxInFlight, sched.Duration(), sc.Drain))
	}
	if n := lazy.clockSteps(); n > 0 {
		res.NotMeasured = append(res.NotMeasured, fmt.Sprintf(
			"%d completions were timed by their read instead of the kernel's receive timestamp: the wall clock stepped during the run", n))
	}
	if !drained && abandoned > 0 {
		res.NotMeasured = append(res.NotMeasured,
			fmt.Sprintf("%d requests still in flight after the %s drain were recorded as abandoned", abandoned, sc.Drain))
	}
	return res, nil
}

// WallBound is how long a run of sc may take at most, from its first due
// time to Run's return: the schedule (warm-up included), the drain and
// WallSlack. Run never outlives it (but for the fine part of one wait and
// the bookkeeping after it, a few milliseconds).
func WallBound(sc *scenario.Scenario) (time.Duration, error) {
	sched, err := NewSchedule(sc)
	if err != nil {
		return 0, err
	}
	return sched.Duration() + sc.Drain + WallSlack, nil
}

// testWaitHook (tests only, export_test.go) runs in every timer wait between
// arming and parking; postpone moves the wait's due time a day away, which
// makes the park last until something aborts it — a stuck dispatcher.
var testWaitHook func(postpone func())

// testClockSeam (tests only, clock_export_test.go), when set, may replace a
// run's dispatcher wait (e.until) and operations once, before the first due
// time: a wait on the runtime's timers alone and operations without network
// make a run deterministic under testing/synctest's fake clock.
var testClockSeam func(e *engine)

// WallSlack is what a run may take beyond its schedule and drain: the
// dispatcher's watchdog interval and the bookkeeping at the end.
const WallSlack = 2 * time.Second

// HangAfter is how long the dispatcher may make no progress past a due time
// before the run is ended as unusable. No legitimate wait lasts longer than
// the fine part of a timer wait (2 ms); this catches a lost wake-up or any
// other stuck stage, whatever its cause.
const HangAfter = time.Second

// newOperations builds one operation per workload: fasthttp for HTTP/1.1,
// net/http for HTTP/2. closeOps releases idle connections.
func newOperations(ctx context.Context, sc *scenario.Scenario, cfg Config) (ops []operation, closeOps func(), err error) {
	ops = make([]operation, len(sc.Workloads))
	for _, w := range sc.Workloads {
		if w.HTTP == nil {
			return newOperationsByKind(ctx, sc, cfg) // ws, grpc: session.go
		}
	}
	if sc.HTTPVersion != "2" {
		hc := newFastClient(sc, cfg.Target)
		for i, w := range sc.Workloads {
			ops[i] = newFastOp(hc, cfg.Target, w, cfg.Env, sc.Timeout)
		}
		return ops, hc.CloseIdleConnections, nil
	}
	tr := newTransport(sc, cfg.Target)
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse // a redirect is a response like any other; never follow it elsewhere
	}}
	for i, w := range sc.Workloads {
		ops[i] = newHTTPOp(client, cfg.Target, w, cfg.Env, sc.Timeout)
	}
	return ops, tr.CloseIdleConnections, nil
}

type engine struct {
	cfg     Config
	sched   *Schedule
	mix     *Mix
	ops     []operation
	rec     *recorder
	sess    *sessionRecorder // session numbers beside rec's cells (session.go)
	jobs    chan job
	workers int     // started so far (dispatcher only)
	seq     []int64 // per-workload sequence number, {n}
	start   time.Time
	reqCtx  context.Context
	wg      sync.WaitGroup
	done    time.Duration // due time of the last request dispatched
	wait    *waiter
	lazy    *lazyPoll                                          // lazy response reads (lazy.go); nil: off
	until   func(ctx context.Context, due time.Duration) error // the dispatcher's wait: wait.until (a test's under testClockSeam)

	// waitDue is the due time (ns since start) the dispatcher is waiting
	// for on its timer, -1 when it is not waiting on it: the watchdog's view
	// of the dispatcher's progress.
	waitDue atomic.Int64
	over    overrun // the watchdog's account of waitDue's overrun (watchdog only)
	hungMu  sync.Mutex
	hung    string // why the watchdog ended the run ("" while it has not)
	unsent  int64  // requests recorded as never sent (dispatcher only)
}

func (e *engine) clock() time.Duration { return time.Since(e.start) }

// job is one due request handed to a worker.
type job struct {
	seg, w int
	k      int64 // the workload's sequence number, {n}
	due    time.Duration
}

// Why dispatch stopped.
type stopReason int

const (
	stopDone        stopReason = iota // every request of the schedule was dispatched
	stopInterrupted                   // ctx was cancelled
	stopHung                          // the watchdog found no progress past a due time
	stopWallBound                     // the in-flight bound stayed full until the wall-time bound
)

// dispatch sends every request of the schedule at its due time and says
// why it stopped. When the wall-time bound stopped it, the requests it never
// sent are recorded as offered and abandoned, so the result still holds the
// whole schedule; an interrupted or hung run (unusable) counts what it
// offered.
//
// Requests are handed to workers over an unbuffered channel: an idle worker
// takes the job at once; with none idle a new worker starts, up to
// max_in_flight; beyond that the dispatcher waits (stalled time) and the
// request keeps its due time, so the wait shows in its latency and
// lateness — but never past the schedule's end plus the drain, the run's
// wall-time bound. Workers live for the run, keep their scratch memory and
// end when the channel is closed.
func (e *engine) dispatch(ctx context.Context) (stop stopReason) {
	defer close(e.jobs)
	defer e.lazy.setAwake(1) // the drain: no more sweeps, read every response at once
	maxWorkers := e.cfg.Scenario.MaxInFlight
	n := e.sched.Len()
	bound := e.sched.Duration() + e.cfg.Scenario.Drain
	var boundTimer *time.Timer
	defer func() {
		if boundTimer != nil {
			boundTimer.Stop()
		}
	}()
	i := int64(0)
	defer func() {
		if stop == stopWallBound {
			e.unsent = e.recordUnsent(i, n)
		}
	}()
	for ; i < n; i++ {
		due, seg := e.sched.Due(i)
		now := e.clock()  // once per request: it serves the bound and the watchdog
		if now >= bound { // behind schedule by more than the drain
			return stopWallBound
		}
		e.waiting(due, now)
		e.lazy.beforeWait(due, now) // a long wait keeps the sockets awake (lazy.go)
		err := e.until(ctx, due)
		e.waitDue.Store(-1)
		// The responses that arrived since the last wake-up wake their
		// readers before the hand-off: the request's worker, readied last,
		// runs first (the runtime's runnext), and they run after it sends.
		e.lazy.sweep()
		if err != nil || ctx.Err() != nil {
			if e.hungReason() != "" {
				return stopHung
			}
			return stopInterrupted
		}
		w := e.mix.Next()
		j := job{seg: seg, w: w, k: e.seq[w], due: due}
		e.seq[w]++
		e.rec.offered(seg, w)
		e.done = due
		select {
		case e.jobs <- j:
			continue
		default:
		}
		if e.workers < maxWorkers {
			e.workers++
			e.wg.Add(1)
			go e.worker(j)
			continue
		}
		t0 := e.clock()
		if boundTimer == nil {
			boundTimer = time.NewTimer(bound - t0)
		}
		e.lazy.setAwake(1) // stalled: no sweep until a worker is free
		select {
		case e.jobs <- j:
			e.rec.addStall(e.clock() - t0)
			e.lazy.setAwake(-1)
		case <-ctx.Done():
			e.rec.addStall(e.clock() - t0)
			e.rec.abandonOne(seg, w)
			i++
			return stopInterrupted
		case <-boundTimer.C:
			e.rec.addStall(e.clock() - t0)
			e.rec.abandonOne(seg, w)
			e.unsent++
			i++
			return stopWallBound
		}
	}
	return stopDone
}

// recordUnsent records requests from..n-1 (never offered to a worker) as
// offered and abandoned, keeping the mix's assignment, and returns how many
// there were.
func (e *engine) recordUnsent(from, n int64) int64 {
	for i := from; i < n; i++ {
		_, seg := e.sched.Due(i)
		w := e.mix.Next()
		e.seq[w]++
		e.rec.unsent(seg, w)
	}
	return e.unsent + n - from
}

// waiting tells the watchdog the dispatcher starts a wait for due. It
// stores when the wait should end — due, or now for a request already late
// — so the watchdog measures how long a wait overran, never how far behind
// the schedule is.
func (e *engine) waiting(due, now time.Duration) {
	e.waitDue.Store(int64(max(due, now)))
}

func (e *engine) hungReason() string {
	e.hungMu.Lock()
	defer e.hungMu.Unlock()
	return e.hung
}

// watchInterval is how often the watchdog looks: on its own goroutine, so
// neither the snapshot interval nor a blocked snapshot writer delays it.
const watchInterval = 100 * time.Millisecond

// watchdog calls watch every watchInterval and at once when ctx is done,
// until stop is closed.
func (e *engine) watchdog(ctx context.Context, stop <-chan struct{}) {
	t := time.NewTicker(watchInterval)
	defer t.Stop()
	done := ctx.Done()
	for {
		select {
		case <-t.C:
			e.watch(ctx)
		case <-done:
			e.watch(ctx) // cancelled: end a wait in its fine part at once
			done = nil
		case <-stop:
			return
		}
	}
}

// watch is the watchdog's look: a cancelled run, or a dispatcher parked on its timer HangAfter past
// the due time it waits for, has its wait aborted (a run never hangs,
// whatever stuck it).
func (e *engine) watch(ctx context.Context) {
	if ctx.Err() != nil {
		e.wait.abort()
		return
	}
	now, due := e.clock(), e.waitDue.Load()
	over := e.over.look(now, time.Duration(due), due >= 0)
	if over > HangAfter || due >= 0 && now-time.Duration(due) > HangAlways {
		e.hungMu.Lock()
		if e.hung == "" {
			e.hung = fmt.Sprintf("the dispatcher made no progress for %s past the due time %s (stage: waiting on its timer); the run was ended",
				(now - time.Duration(due)).Round(time.Millisecond), time.Duration(due).Round(time.Millisecond))
		}
		e.hungMu.Unlock()
		e.wait.abort()
	}
}

// maxLookGap is the most one look of the watchdog adds to a wait's overrun.
// A look that comes later than that means this whole process was not given
// the CPU (an overloaded machine: the watchdog's own ticker was late too),
// which is not the dispatcher being stuck: the run's lateness says so, and
// ending it as unusable would throw away an honest, flagged measurement.
const maxLookGap = 2 * watchInterval

// HangAlways bounds a wait's overrun however starved the process was: past
// it the run ends as hung even if the watchdog's looks all came late.
const HangAlways = 10 * HangAfter

// overrun measures how long the dispatcher's current timer wait has
// overrun its due time while the process was running: a pure account of
// the watchdog's looks (now, the due time waited for, whether the
// dispatcher is waiting on its timer at all), with no clock of its own.
// Used by the watchdog goroutine only.
type overrun struct {
	last, due, counted time.Duration // the previous look; the wait being measured; its overrun so far
	measuring          bool
}

// look returns the overrun counted for the wait in progress at now.
func (o *overrun) look(now, due time.Duration, waiting bool) time.Duration {
	gap := min(now-o.last, maxLookGap)
	o.last = now
	switch {
	case !waiting || now <= due:
		o.measuring = false
		return 0
	case !o.measuring || due != o.due: // a wait first seen overrunning
		o.measuring, o.due, o.counted = true, due, min(now-due, gap)
	default:
		o.counted += gap
	}
	return o.counted
}

// worker sends j, then every job it receives, until the channel closes.
func (e *engine) worker(j job) {
	defer e.wg.Done()
	var s scratch
	for ok := true; ok; j, ok = <-e.jobs {
		sent := e.clock()
		e.rec.sent(j.seg, j.w, sent-j.due)
		serve(e, e.sess, j, &s, sent) // session.go
	}
}

// drain waits for requests in flight, up to the scenario's drain timeout
// after the schedule's end (none when interrupted). It reports whether every
// request finished.
func (e *engine) drain(ctx context.Context, interrupted bool) bool {
	all := make(chan struct{})
	go func() {
		e.wg.Wait()
		close(all)
	}()
	if interrupted {
		select {
		case <-all:
			return true
		default:
			return false
		}
	}
	end := e.sched.Duration()
	if end < e.done {
		end = e.done
	}
	wait := end + e.cfg.Scenario.Drain - e.clock()
	if wait < 0 {
		wait = 0
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-all:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// snapshots writes one snapshot per interval until stop is closed, then a
// last one for the partial interval.
func (e *engine) snapshots(every time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(every)
	defer t.Stop()
	var enc *json.Encoder
	if e.cfg.Snapshots != nil {
		enc = json.NewEncoder(e.cfg.Snapshots)
	}
	var last time.Duration
	emit := func() {
		now := e.clock()
		span := now - last
		last = now
		// The snapshot covers the interval that just ended: name it by the
		// segment at the interval's middle.
		seg := e.sched.SegmentAt(now - every/2)
		name, pe, pd := "drain", time.Duration(0), time.Duration(0)
		if seg >= 0 {
			s := e.sched.Segments[seg]
			name, pe, pd = s.Name, min(now-s.Start, s.Duration), s.Duration
		}
		snap := e.rec.snapshot(now, span, name)
		if enc != nil {
			_ = enc.Encode(snap) // a failing snapshot file must not stop the load; the result is the record
		}
		if e.cfg.Progress != nil {
			e.cfg.Progress(Progress{Elapsed: now, Phase: name, PhaseElapsed: pe, PhaseDuration: pd, Interval: span, Snapshot: snap})
		}
	}
	for {
		select {
		case <-t.C:
			emit()
		case <-stop:
			emit()
			return
		}
	}
}
