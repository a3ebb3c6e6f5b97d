package load

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
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
func Run(ctx context.Context, cfg Config) (*result.Result, error) {
	sc := cfg.Scenario
	sched, err := NewSchedule(sc)
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	shares := make([]float64, len(sc.Workloads))
	for i, w := range sc.Workloads {
		shares[i] = w.Share
	}
	mix, err := NewMix(shares)
	if err != nil {
		return nil, fmt.Errorf("mix: %w", err)
	}
	ops, closeOps, err := newOperations(sc, cfg)
	if err != nil {
		return nil, err
	}
	defer closeOps()
	every := cfg.SnapshotEvery
	if every <= 0 {
		every = time.Second
	}

	rec := newRecorder(sched, len(sc.Workloads), sc.LateAfter)
	e := &engine{cfg: cfg, sched: sched, mix: mix, ops: ops, rec: rec,
		jobs: make(chan job), seq: make([]int64, len(ops))}
	// reqCtx outlives ctx by the drain: requests in flight when the schedule
	// ends may finish; it is cancelled when the run is finalized.
	reqCtx, cancelReqs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelReqs()
	e.reqCtx = reqCtx

	startedAt := time.Now()
	e.start = startedAt
	snapDone := make(chan struct{})
	stopSnaps := make(chan struct{})
	go func() {
		defer close(snapDone)
		e.snapshots(every, stopSnaps)
	}()

	interrupted := e.dispatch(ctx)
	drained := e.drain(ctx, interrupted)
	abandoned := rec.abandonAll()
	cancelReqs()
	finishedAt := time.Now()
	close(stopSnaps)
	<-snapDone
	// Requests still in flight were recorded as abandoned; their goroutines
	// end at their deadline (or at once on net/http, whose requests see
	// reqCtx cancelled) and their completions are dropped by the recorder.

	res := e.result(startedAt, finishedAt)
	res.Interrupted = interrupted
	if interrupted {
		res.Usable = false
		res.Unusable = append(res.Unusable, "interrupted before the schedule ended")
	}
	if !drained && abandoned > 0 {
		res.NotMeasured = append(res.NotMeasured,
			fmt.Sprintf("%d requests still in flight after the %s drain were recorded as abandoned", abandoned, sc.Drain))
	}
	return res, nil
}

// newOperations builds one operation per workload: fasthttp for HTTP/1.1,
// net/http for HTTP/2. closeOps releases idle connections.
func newOperations(sc *scenario.Scenario, cfg Config) (ops []operation, closeOps func(), err error) {
	ops = make([]operation, len(sc.Workloads))
	for _, w := range sc.Workloads {
		if w.HTTP == nil {
			return nil, nil, fmt.Errorf("workload %s: no operation", w.Name)
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
	jobs    chan job
	workers int     // started so far (dispatcher only)
	seq     []int64 // per-workload sequence number, {n}
	start   time.Time
	reqCtx  context.Context
	wg      sync.WaitGroup
	done    time.Duration // due time of the last request dispatched
}

func (e *engine) clock() time.Duration { return time.Since(e.start) }

// job is one due request handed to a worker.
type job struct {
	seg, w int
	k      int64 // the workload's sequence number, {n}
	due    time.Duration
}

// dispatch sends every request of the schedule at its due time. It returns
// true when ctx was cancelled before the schedule ended.
//
// Requests are handed to workers over an unbuffered channel: an idle worker
// takes the job at once; with none idle a new worker starts, up to
// max_in_flight; beyond that the dispatcher waits (stalled time) and the
// request keeps its due time, so the wait shows in its latency and
// lateness. Workers live for the run, keep their scratch memory and end
// when the channel is closed.
func (e *engine) dispatch(ctx context.Context) (interrupted bool) {
	defer close(e.jobs)
	wait := newWaiter(e.clock)
	defer wait.close()
	maxWorkers := e.cfg.Scenario.MaxInFlight
	n := e.sched.Len()
	for i := int64(0); i < n; i++ {
		due, seg := e.sched.Due(i)
		if err := wait.until(ctx, due); err != nil {
			return true
		}
		if ctx.Err() != nil {
			return true
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
		select {
		case e.jobs <- j:
			e.rec.addStall(e.clock() - t0)
		case <-ctx.Done():
			e.rec.addStall(e.clock() - t0)
			e.rec.abandonOne(seg, w)
			return true
		}
	}
	return false
}

// worker sends j, then every job it receives, until the channel closes.
func (e *engine) worker(j job) {
	defer e.wg.Done()
	var s scratch
	for ok := true; ok; j, ok = <-e.jobs {
		sent := e.clock()
		e.rec.sent(j.seg, j.w, sent-j.due)
		class := e.ops[j.w].do(e.reqCtx, j.k, &s)
		done := e.clock()
		e.rec.completed(j.seg, j.w, class, j.due, sent, done, e.sched.SegmentAt(done))
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
