package load

import (
	"context"
	"fmt"
	"net/http"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
)

// sessionStats is what a session reports beyond its class; times from its send, 0: not reached.
type sessionStats struct {
	start     time.Time
	connect   time.Duration // handshake done
	first     time.Duration // first message received
	end       time.Duration // last step done (before the close handshake); 0: when do returned
	messages  int64         // messages received
	cancelled bool          // closed part-way on purpose: a success without a latency sample
}

type sessionOperation interface {
	operation
	session(ctx context.Context, k int64, s *scratch, st *sessionStats) string
}

// serve runs j and records its one outcome (a session's in sr); it returns
// the clock read when the operation returned.
func serve(e *engine, sr *sessionRecorder, j job, s *scratch, sent time.Duration) (returned time.Duration) {
	op := e.ops[j.w]
	so, isSession := op.(sessionOperation)
	if !isSession {
		s.rx = rxStamp{}
		class := op.do(e.reqCtx, j.k, s)
		done := e.clock()
		returned = done
		if class == "" {
			done = e.completion(s.rx, sent, done) // the kernel's receive time of a lazy read (lazy.go)
		}
		if e.rec.completed(j.seg, j.w, class, j.due, sent, done, e.sched.SegmentAt(done)) {
			e.observe(j, class, sent, done) // faults.go
		}
		return returned
	}
	var st sessionStats
	class := so.session(e.reqCtx, j.k, s, &st)
	done := e.clock()
	returned = done
	if class == "" && st.end > 0 {
		done = min(done, sent+st.end) // the close handshake is not the service's answer
	}
	sr.completed(j.seg, j.w, class, j.due, sent, done, e.sched.SegmentAt(done), &st)
	return returned
}

// sessCell is a session workload's extra numbers in one segment.
type sessCell struct {
	cancelled, messages int64
	first, connect      *hdrhistogram.Histogram // µs from the due time; nil until a sample
}

// sessionRecorder keeps session numbers under the recorder's lock, so none land after abandonAll.
type sessionRecorder struct {
	r     *recorder
	cells []sessCell // segment*workloads + workload, like r.cells
	kinds []bool     // per workload: a session workload
}

func newSessionRecorder(r *recorder, sc *scenario.Scenario) *sessionRecorder {
	sr := &sessionRecorder{r: r, cells: make([]sessCell, len(r.cells)), kinds: make([]bool, len(sc.Workloads))}
	for i, w := range sc.Workloads {
		sr.kinds[i] = w.WS != nil
	}
	return sr
}

// completed is recorder.completed for a session, with connect and first-message times.
func (sr *sessionRecorder) completed(seg, w int, class string, due, sent, done time.Duration, doneSeg int, st *sessionStats) {
	r := sr.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	i := seg*r.workloads + w
	c := &r.cells[i]
	c.inFlight--
	r.inFlight--
	if doneSeg >= 0 {
		r.cells[doneSeg*r.workloads+w].completed++
	}
	warm := r.warmup[seg]
	if class != "" {
		c.failed++
		c.fail(class)
		r.iv.failed++
		r.iv.failures[class]++
		if !warm {
			sr.cells[i].messages += st.messages
		}
		return
	}
	c.succeeded++
	r.iv.succeeded++
	lat := us(done - due)
	if !st.cancelled {
		r.iv.lat.RecordValue(lat)
		c.record(warm, lat, us(done-sent))
	}
	if warm {
		return
	}
	sc := &sr.cells[i]
	sc.messages += st.messages
	if st.cancelled {
		sc.cancelled++
	}
	if sc.first == nil {
		sc.first, sc.connect = result.NewHistogram(), result.NewHistogram()
	}
	off := sent - due
	if st.connect > 0 {
		sc.connect.RecordValue(us(off + st.connect))
	}
	if st.first > 0 {
		sc.first.RecordValue(us(off + st.first))
	}
}

// fill writes session cell i into wr (session workloads only; r.mu held).
func (sr *sessionRecorder) fill(i int, wr *result.Workload) {
	if sr == nil || !sr.kinds[i%sr.r.workloads] {
		return
	}
	c := &sr.cells[i]
	wr.Cancelled, wr.MessagesReceived = c.cancelled, c.messages
	first, connect := c.first, c.connect
	if first == nil {
		first, connect = result.NewHistogram(), result.NewHistogram()
	}
	fs, cs := result.Summarize(first), result.Summarize(connect)
	wr.FirstMessageMS, wr.ConnectMS = &fs, &cs
	wr.FirstMessageH, _ = result.EncodeHistogram(first)
	wr.ConnectH, _ = result.EncodeHistogram(connect)
}

// ErrOperation is in the chain of every error about an operation unresolvable before the
// load: a refusal (exit 2).
var ErrOperation = fmt.Errorf("operation refused")

// newOperationsByKind builds the operations when some workloads are not plain HTTP.
func newOperationsByKind(ctx context.Context, sc *scenario.Scenario, cfg Config) (ops []operation, closeOps func(), err error) {
	ops = make([]operation, len(sc.Workloads))
	var closers []func()
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	var wsClient *http.Client
	var grpcConn *grpcClient
	var httpOps func(w scenario.Workload) operation
	for i, w := range sc.Workloads {
		switch {
		case w.WS != nil:
			if wsClient == nil {
				var tr *http.Transport
				wsClient, tr = newWSClient(sc, cfg.Target)
				closers = append(closers, tr.CloseIdleConnections)
			}
			ops[i] = newWSOp(wsClient, cfg.Target, w, cfg.Env, sc.Timeout, maxBody(sc))
		case w.GRPC != nil:
			if grpcConn == nil {
				if grpcConn, err = newGRPCClient(sc, cfg.Target); err != nil {
					return nil, nil, err
				}
				closers = append(closers, grpcConn.close)
			}
			if ops[i], err = newGRPCOp(ctx, grpcConn, w, cfg.Env, sc); err != nil {
				return nil, nil, fmt.Errorf("workload %s: %w", w.Name, err)
			}
		case w.HTTP != nil:
			if httpOps == nil {
				var closeHTTP func()
				httpOps, closeHTTP = newHTTPOperations(sc, cfg)
				closers = append(closers, closeHTTP)
			}
			ops[i] = httpOps(w)
		default:
			return nil, nil, fmt.Errorf("workload %s: no operation", w.Name)
		}
	}
	return ops, closeAll, nil
}

// newHTTPOperations is newOperations' HTTP half, per workload.
func newHTTPOperations(sc *scenario.Scenario, cfg Config) (func(scenario.Workload) operation, func()) {
	if sc.HTTPVersion != "2" {
		hc := newFastClient(sc, cfg.Target)
		return func(w scenario.Workload) operation {
			return newFastOp(hc, cfg.Target, w, cfg.Env, sc.Timeout)
		}, hc.CloseIdleConnections
	}
	tr := newTransport(sc, cfg.Target)
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	return func(w scenario.Workload) operation {
		return newHTTPOp(client, cfg.Target, w, cfg.Env, sc.Timeout)
	}, tr.CloseIdleConnections
}
