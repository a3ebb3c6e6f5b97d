package counted

import (
	"context"
	"sync"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/internal/ctxwait"
)

// Probe is one count to read at Addr: the scenario's (Workload "") or a workload's.
type Probe struct {
	Workload string
	Count    *scenario.Count
	Addr     string
}

// Options are a Reader's test seams; the zero value is the real thing.
type Options struct {
	Wait func(ctx context.Context, t time.Time) error
	Now  func() time.Time
}

type read struct {
	at   time.Time
	done bool
	rd   []Reading
	err  []error
}

// Reader reads a scenario's counts at its phase boundaries. Use it from one
// goroutine: Start, then Finish, or Stop when the load failed.
type Reader struct {
	sc     *scenario.Scenario
	probes []Probe
	opt    Options

	// reads[k] is phase k's start; reads[len(phases)] the read after the drain.
	reads  []read
	mu     sync.Mutex         // guards reads while Start's goroutine runs
	cancel context.CancelFunc // ends the waits (Finish)
	stop   context.CancelFunc // ends the waits and a read in progress (Stop)
	done   chan struct{}
}

// NewReader returns a Reader for probes over sc's phases.
func NewReader(sc *scenario.Scenario, probes []Probe, opt Options) *Reader {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Wait == nil {
		opt.Wait = ctxwait.Until
	}
	return &Reader{sc: sc, probes: probes, opt: opt, reads: make([]read, len(sc.Phases)+1)}
}

// Start reads every probe at each phase's scheduled start from t0 (after the warm-up), on
// its own goroutine, and returns at once. Finish ends the waits; Stop or ctx also ends a
// read in progress.
func (r *Reader) Start(ctx context.Context, t0 time.Time) {
	var rctx, wctx context.Context
	rctx, r.stop = context.WithCancel(ctx)
	wctx, r.cancel = context.WithCancel(rctx)
	r.done = make(chan struct{})
	go func() {
		defer close(r.done)
		at := t0.Add(r.sc.Warmup)
		for k, p := range r.sc.Phases {
			if r.opt.Wait(wctx, at) != nil || rctx.Err() != nil {
				return
			}
			r.readAll(rctx, k)
			at = at.Add(p.Duration)
		}
	}()
}

func (r *Reader) readAll(ctx context.Context, k int) {
	rd := read{at: r.opt.Now(), done: true, rd: make([]Reading, len(r.probes)), err: make([]error, len(r.probes))}
	var wg sync.WaitGroup
	for i, p := range r.probes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rd.rd[i], rd.err[i] = Scrape(ctx, p.Addr, p.Count.Path, p.Count.Metric)
		}()
	}
	wg.Wait()
	r.mu.Lock()
	r.reads[k] = rd
	r.mu.Unlock()
}

// Stop ends Start's goroutine, keeping its reads; a no-op if none runs.
func (r *Reader) Stop() {
	if r.stop != nil {
		r.stop()
		<-r.done
	}
}

// Finish reads after the drain and returns each probe's counts beside what was sent.
func (r *Reader) Finish(ctx context.Context, res *result.Result) []result.Counted {
	if r.cancel != nil {
		r.cancel()
		<-r.done
	}
	r.readAll(ctx, len(r.sc.Phases))
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]result.Counted, len(r.probes))
	for i, p := range r.probes {
		c := result.Counted{Workload: p.Workload, Service: p.Count.Service, Port: p.Count.Port, Path: p.Count.Path,
			Metric: p.Count.Metric.String(), Phases: []result.CountedSpan{}}
		total := result.CountedSpan{Phase: result.TotalSpan}
		last := len(r.sc.Phases)
		for k, ph := range r.sc.Phases {
			end := k + 1
			if k == len(res.Phases)-1 {
				end = last // the last phase that ran ends at the read after the drain
			}
			s := r.span(i, k, end, res.StartedAt)
			s.Phase = ph.Name
			var ran bool
			if s.Sent, ran = sent(res, k, ph.Name, p.Workload); !ran {
				s.Counted, s.Series, s.Reset, s.NotMeasured = nil, 0, false, "the phase did not run"
			}
			total.Sent += s.Sent
			c.Phases = append(c.Phases, s)
		}
		t := r.span(i, 0, last, res.StartedAt)
		t.Phase, t.Sent = result.TotalSpan, total.Sent
		if len(res.Phases) != len(r.sc.Phases) && t.NotMeasured == "" {
			t.Counted, t.Series, t.NotMeasured = nil, 0, "not every phase ran"
		}
		c.Total = t
		out[i] = c
	}
	return out
}

// span is probe i's increase from boundary a to boundary b.
func (r *Reader) span(i, a, b int, start time.Time) result.CountedSpan {
	ra, rb := r.reads[a], r.reads[b]
	s := result.CountedSpan{}
	if ra.done {
		s.BeforeS = ra.at.Sub(start).Seconds()
	}
	if rb.done {
		s.AfterS = rb.at.Sub(start).Seconds()
	}
	switch {
	case !ra.done:
		s.NotMeasured = "the read at the start was not made (the run ended early)"
	case !rb.done:
		s.NotMeasured = "the read at the end was not made (the run ended early)"
	case ra.err[i] != nil:
		s.NotMeasured = "the read at the start failed: " + ra.err[i].Error()
	case rb.err[i] != nil:
		s.NotMeasured = "the read at the end failed: " + rb.err[i].Error()
	case len(rb.rd[i].Series) == 0:
		s.NotMeasured = "no series of " + r.probes[i].Count.Metric.String() + " was exposed at the end: check the metric's name and labels"
	default:
		inc, reset := increase(ra.rd[i], rb.rd[i])
		// A reset between inner reads counts even if the counter grew past it.
		prev := ra.rd[i]
		for k := a + 1; k < b && !reset; k++ {
			if rk := r.reads[k]; rk.done && rk.err[i] == nil {
				_, reset = increase(prev, rk.rd[i])
				prev = rk.rd[i]
			}
		}
		if !reset {
			_, reset = increase(prev, rb.rd[i])
		}
		s.Series = len(rb.rd[i].Series)
		if reset {
			s.Reset = true
			s.NotMeasured = "the service restarted (its counter went down, or its process_start_time_seconds changed): a reset is said, not subtracted"
			break
		}
		s.Counted = &inc
	}
	return s
}

// sent is what phase k of res offered for workload ("" every workload).
func sent(res *result.Result, k int, name, workload string) (n int64, ran bool) {
	if k >= len(res.Phases) || res.Phases[k].Name != name {
		return 0, false
	}
	for _, w := range res.Phases[k].Workloads {
		if workload == "" || w.Name == workload {
			n += w.Offered
		}
	}
	return n, true
}
