package load

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
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
	// Snapshots receives one JSON line per interval (nil: none).
	Snapshots io.Writer
	// Progress is called once per interval from one goroutine (nil: none).
	Progress func(Progress)
	// SnapshotEvery is the snapshot interval (default 1s).
	SnapshotEvery time.Duration
	// Faults sees t0 and every measured outcome; required if the scenario injects faults.
	Faults FaultHook
	// Started are called in order with t0, after Faults.Start, before any request is due.
	Started []func(t0 time.Time)
	// StartAt is the schedule's t0 (zero: now); a duet's two sides share it.
	StartAt time.Time

	Machine  result.Machine  // where the generator runs
	Topology result.Topology // the stack's and the generator's cpus, pinning, target path
	// TargetLabel is how the result names the target ("": its URL).
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

// Run sends the load and returns what it measured. Cancelling ctx ends it early
// (requests in flight abandoned, result Interrupted); it errs only if the run could not start.
func Run(ctx context.Context, cfg Config) (res *result.Result, err error) {
	e, release, err := newEngine(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer release()
	// reqCtx outlives ctx by the drain; it is cancelled when the run is finalized.
	reqCtx, cancelReqs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelReqs()
	e.reqCtx = reqCtx
	// The start-up's garbage collected now, before t0, not at the first due times: at the
	// rates gates run at, the one cycle a run made was at 30–130 ms (issue 51).
	runtime.GC()
	e.startClock()
	defer e.wait.close()
	stopBackground := e.startBackground(ctx)

	topo := e.cfg.Topology
	var steal *stealWatch
	if topo.LoadCPUs != "" {
		steal = watchSteal(e.start.Add(e.cfg.Scenario.Warmup))
	}
	stop := e.dispatch(ctx)
	stolen, stealWhy := steal.end(topo.LoadCPUs, topo.StackCPUs)
	drained := e.drain(ctx, stop != stopDone)
	abandoned := e.rec.abandonAll()
	cancelReqs()
	finishedAt := time.Now()
	stopBackground()

	res = e.result(e.start, finishedAt)
	res.Steal = stolen
	res.Wait = e.wait.waited()
	if stealWhy != "" {
		res.NotMeasured = append(res.NotMeasured, stealWhy)
	}
	e.explainStop(ctx, res, stop, drained, abandoned)
	return res, nil
}

// newEngine builds the run; release frees its operations and lazy reads.
func newEngine(ctx context.Context, cfg Config) (e *engine, release func(), err error) {
	sc := cfg.Scenario
	if cfg.Target, err = cfg.Target.Resolve(ctx); err != nil {
		return nil, nil, fmt.Errorf("target: %w", err)
	}
	sched, err := NewSchedule(sc)
	if err != nil {
		return nil, nil, fmt.Errorf("schedule: %w", err)
	}
	if err := checkFaultHook(cfg); err != nil {
		return nil, nil, err
	}
	shares := make([]float64, len(sc.Workloads))
	for i, w := range sc.Workloads {
		shares[i] = w.Share
	}
	mix, err := NewMix(shares)
	if err != nil {
		return nil, nil, fmt.Errorf("mix: %w", err)
	}
	rec := newRecorder(sched, len(sc.Workloads), sc.LateAfter)
	var lazy *lazyPoll        // nil: lazy reads off
	if testClockSeam == nil { // a fake clock's operations have no sockets
		lazy = newLazyPoll()
	}
	cfg.Target.lazy = lazy
	e = &engine{cfg: cfg, lazy: lazy, sched: sched, mix: mix, rec: rec,
		jobs: make(chan job), seq: make([]int64, len(sc.Workloads))}
	e.waitDue.Store(-1)
	e.sess = newSessionRecorder(rec, sc)
	ops, closeOps, err := newOperations(ctx, sc, cfg)
	if err != nil {
		lazy.close()
		return nil, nil, err
	}
	e.ops = ops
	return e, func() { closeOps(); lazy.close() }, nil
}

// startClock fixes t0 and tells Faults and Started of it.
func (e *engine) startClock() {
	e.start = time.Now()
	if !e.cfg.StartAt.IsZero() {
		e.start = e.cfg.StartAt
	}
	e.wait = newWaiter(e.clock)
	e.until = e.wait.until
	if testClockSeam != nil {
		testClockSeam(e)
	}
	if e.cfg.Faults != nil {
		e.cfg.Faults.Start(e.start)
	}
	for _, f := range e.cfg.Started {
		f(e.start)
	}
	if h := testWaitHook; h != nil {
		w := e.wait
		w.beforePark = func() { h(func() { w.due += 24 * time.Hour }) }
	}
}

// startBackground starts the snapshot and watchdog goroutines; stop ends both.
func (e *engine) startBackground(ctx context.Context) (stop func()) {
	every := e.cfg.SnapshotEvery
	if every <= 0 {
		every = time.Second
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
	return func() {
		close(stopSnaps)
		<-snapDone
		<-watchDone
	}
}

// explainStop records in res why the run ended early, if it did.
func (e *engine) explainStop(ctx context.Context, res *result.Result, stop stopReason, drained bool, abandoned int64) {
	sc := e.cfg.Scenario
	// A failed fault stage is not an interruption.
	res.Interrupted = stop == stopInterrupted && stageEnded(ctx) == nil
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
			e.unsent, sc.MaxInFlight, e.sched.Duration(), sc.Drain))
	}
	if n := e.lazy.clockSteps(); n > 0 {
		res.NotMeasured = append(res.NotMeasured, fmt.Sprintf(
			"%d completions were timed by their read instead of the kernel's receive timestamp: the wall clock stepped during the run", n))
	}
	if !drained && abandoned > 0 {
		res.NotMeasured = append(res.NotMeasured,
			fmt.Sprintf("%d requests still in flight after the %s drain were recorded as abandoned", abandoned, sc.Drain))
	}
}

// WallBound is the most a run of sc may take from its first due time to Run's return.
func WallBound(sc *scenario.Scenario) (time.Duration, error) {
	sched, err := NewSchedule(sc)
	if err != nil {
		return 0, err
	}
	return sched.Duration() + sc.Drain + WallSlack, nil
}

// testWaitHook runs before each timer park (tests); postpone parks until abort.
var testWaitHook func(postpone func())

// testClockSeam may swap a run's wait and operations for synctest's (tests).
var testClockSeam func(e *engine)

// WallSlack is what a run may take beyond its schedule and drain.
const WallSlack = 2 * time.Second

// HangAfter is how long the dispatcher may stall past a due time before the run is unusable.
const HangAfter = time.Second

// newOperations builds one operation per workload; closeOps releases idle connections.
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
	freeAt  time.Duration // when the dispatcher's last wait for a free worker ended (dispatcher only)
	wait    *waiter
	lazy    *lazyPoll                                          // lazy response reads (lazy.go); nil: off
	until   func(ctx context.Context, due time.Duration) error // the dispatcher's wait: wait.until (a test's under testClockSeam)

	// waitDue is the timer wait's due time (ns since start), -1 when not waiting.
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
	// from is when the request became the generator's to send: its due time,
	// or the end of a wait for a free worker (every one busy with the target)
	// that held it back; stalled: its own hand-off waited for one, which ends
	// when the worker taking it became free. Lateness past from is the
	// generator's own (recorder.sent); before it, the target's (latency).
	from    time.Duration
	stalled bool
}

type stopReason int

const (
	stopDone        stopReason = iota // every request of the schedule was dispatched
	stopInterrupted                   // ctx was cancelled
	stopHung                          // the watchdog found no progress past a due time
	stopWallBound                     // the in-flight bound stayed full until the wall-time bound
)

// dispatch sends each request at its due time and says why it stopped; with
// max_in_flight workers busy it waits, and the wait shows as latency.
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
		// Sweep before the hand-off, so the worker readied last runs first.
		e.lazy.sweep()
		if err != nil || ctx.Err() != nil {
			if e.hungReason() != "" {
				return stopHung
			}
			return stopInterrupted
		}
		w := e.mix.Next()
		j := job{seg: seg, w: w, k: e.seq[w], due: due, from: max(due, e.freeAt)}
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
		if why, ok := e.handOff(ctx, j, bound, &boundTimer); !ok {
			i++
			return why
		}
	}
	return stopDone
}

// handOff waits for a worker to take j; false (j abandoned) if ctx or the wall bound ends first.
func (e *engine) handOff(ctx context.Context, j job, bound time.Duration, boundTimer **time.Timer) (stopReason, bool) {
	t0 := e.clock()
	if *boundTimer == nil {
		*boundTimer = time.NewTimer(bound - t0)
	}
	e.lazy.setAwake(1) // stalled: no sweep until a worker is free
	j.stalled = true
	select {
	case e.jobs <- j:
		e.freeAt = e.clock()
		e.rec.addStall(e.freeAt - t0)
		e.lazy.setAwake(-1)
		return stopDone, true
	case <-ctx.Done():
		e.rec.addStall(e.clock() - t0)
		e.rec.abandonOne(j.seg, j.w)
		return stopInterrupted, false
	case <-(*boundTimer).C:
		e.rec.addStall(e.clock() - t0)
		e.rec.abandonOne(j.seg, j.w)
		e.unsent++
		return stopWallBound, false
	}
}

// recordUnsent records requests from..n-1 as unsent; it returns the new e.unsent.
func (e *engine) recordUnsent(from, n int64) int64 {
	for i := from; i < n; i++ {
		_, seg := e.sched.Due(i)
		w := e.mix.Next()
		e.seq[w]++
		e.rec.unsent(seg, w)
	}
	return e.unsent + n - from
}

// waiting stores when the wait for due should end: the watchdog measures overrun, not lateness.
func (e *engine) waiting(due, now time.Duration) {
	e.waitDue.Store(int64(max(due, now)))
}

func (e *engine) hungReason() string {
	e.hungMu.Lock()
	defer e.hungMu.Unlock()
	return e.hung
}

const watchInterval = 100 * time.Millisecond

// watchdog calls watch every watchInterval, and at once when ctx is done, until stop.
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

// watch aborts the dispatcher's wait when ctx is done or it overran by HangAfter.
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

// maxLookGap caps one look's share of an overrun: a later look means a starved process.
const maxLookGap = 2 * watchInterval

// HangAlways bounds an overrun however starved the process was.
const HangAlways = 10 * HangAfter

// overrun is how long the current timer wait overran while the process ran (watchdog only).
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

func (e *engine) worker(j job) {
	defer e.wg.Done()
	var s scratch
	var free time.Duration // when this worker finished its last request
	for ok := true; ok; j, ok = <-e.jobs {
		sent := e.clock()
		if j.stalled { // every worker was busy at its hand-off: this one freed first
			j.from = max(j.from, free)
		}
		e.rec.sent(j.seg, j.w, sent-j.from)
		free = serve(e, e.sess, j, &s, sent) // session.go
	}
}

// drain waits up to the drain (not when interrupted); true if every request finished.
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

// Between the sends: a background goroutine of the engine (the snapshot, the progress line)
// waits up to offDueTries × offDueRetry for the dispatcher to be asleep for offDueNeed more,
// so that its work delays no send; at high rates, where no such gap comes, it runs anyway.
const (
	offDueNeed  = time.Millisecond
	offDueRetry = 500 * time.Microsecond
	offDueTries = 20
)

// offDue waits (bounded) until the dispatcher sleeps for offDueNeed more, or stop.
func (e *engine) offDue(stop <-chan struct{}) {
	if testClockSeam != nil { // the fake clock's waits never sleep on the waiter
		return
	}
	for i := 0; i < offDueTries && !e.wait.quietFor(offDueNeed); i++ {
		select {
		case <-stop:
			return
		case <-time.After(offDueRetry):
		}
	}
}

// snapshots emits one per interval and a partial one at stop, each named by the segment at
// the interval's middle (half an interval before its end).
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
			e.offDue(stop)
			emit()
		case <-stop:
			emit()
			return
		}
	}
}
