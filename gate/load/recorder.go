package load

import (
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/loadgate/loadgate/gate/result"
)

// cell is what one workload measured in one segment (warm-up or phase).
type cell struct {
	offered, succeeded, failed, abandoned, late int64
	completed                                   int64 // completions (any outcome) that landed inside this segment's window
	inFlight                                    int64
	failures                                    map[string]int64
	lat, svc                                    *hdrhistogram.Histogram // µs; nil until the first success, and always for the warm-up
}

// interval is what a snapshot reports: the last second.
type interval struct {
	offered, succeeded, failed, abandoned, late int64
	failures                                    map[string]int64
	lat                                         *hdrhistogram.Histogram
}

// recorder counts each offered request once when offered and once when it ends. Concurrency-safe.
type recorder struct {
	mu        sync.Mutex
	workloads int
	cells     []cell // segment*workloads + workload
	warmup    []bool // per segment
	inFlight  int64
	late      int64 // measured segments only; the generator's own lateness (recorder.sent)
	stalled   time.Duration
	lateness  *hdrhistogram.Histogram // measured segments only, µs, the generator's own
	lateAfter time.Duration
	closed    bool
	iv        interval
}

func newRecorder(sched *Schedule, workloads int, lateAfter time.Duration) *recorder {
	r := &recorder{
		workloads: workloads,
		cells:     make([]cell, len(sched.Segments)*workloads),
		warmup:    make([]bool, len(sched.Segments)),
		lateness:  result.NewHistogram(),
		lateAfter: lateAfter,
		iv:        interval{failures: map[string]int64{}, lat: result.NewHistogram()},
	}
	for s, seg := range sched.Segments {
		r.warmup[s] = seg.Warmup
	}
	return r
}

// record makes a cell's histograms at its first sample, so idle cells cost no memory.
func (c *cell) record(warmup bool, lat, svc int64) {
	if warmup {
		return
	}
	if c.lat == nil {
		c.lat, c.svc = result.NewHistogram(), result.NewHistogram()
	}
	c.lat.RecordValue(lat)
	c.svc.RecordValue(svc)
}

func (c *cell) fail(class string) {
	if c.failures == nil {
		c.failures = map[string]int64{}
	}
	c.failures[class]++
}

func us(d time.Duration) int64 {
	if d < 0 {
		return 0
	}
	v := int64(d / time.Microsecond)
	if v > result.HighestUS {
		v = result.HighestUS
	}
	return v
}

// isLate is the late rule, shared by recorder.sent and MakeOutcome.
func isLate(lateness, lateAfter time.Duration) bool { return lateness > lateAfter }

// offered counts a request handed to a worker: in flight until completed or abandoned.
func (r *recorder) offered(seg, w int) {
	r.mu.Lock()
	c := &r.cells[seg*r.workloads+w]
	c.offered++
	c.inFlight++
	r.inFlight++
	r.iv.offered++
	r.mu.Unlock()
}

// sent records how late an offered request went out by the generator's own
// doing: from its due time, less any wait for a free worker that held it back
// (job.from; that wait is the target's, in its latency and stalled_seconds).
// Nothing after abandonAll.
func (r *recorder) sent(seg, w int, lateness time.Duration) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	if isLate(lateness, r.lateAfter) {
		r.cells[seg*r.workloads+w].late++
		r.iv.late++
		if !r.warmup[seg] {
			r.late++
		}
	}
	if !r.warmup[seg] {
		r.lateness.RecordValue(us(lateness))
	}
	r.mu.Unlock()
}

// completed records a request's outcome (doneSeg -1: after the schedule); false after abandonAll.
func (r *recorder) completed(seg, w int, class string, due, sent, done time.Duration, doneSeg int) bool {
	r.mu.Lock()
	if r.closed { // already counted as abandoned
		r.mu.Unlock()
		return false
	}
	c := &r.cells[seg*r.workloads+w]
	c.inFlight--
	r.inFlight--
	if doneSeg >= 0 {
		r.cells[doneSeg*r.workloads+w].completed++
	}
	if class == "" {
		c.succeeded++
		r.iv.succeeded++
		lat := us(done - due)
		r.iv.lat.RecordValue(lat)
		c.record(r.warmup[seg], lat, us(done-sent))
	} else {
		c.failed++
		c.fail(class)
		r.iv.failed++
		r.iv.failures[class]++
	}
	r.mu.Unlock()
	return true
}

// abandonOne records an offered request never sent (the run stopped first).
func (r *recorder) abandonOne(seg, w int) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	c := &r.cells[seg*r.workloads+w]
	c.inFlight--
	r.inFlight--
	c.abandoned++
	r.iv.abandoned++
	r.mu.Unlock()
}

// unsent records a due request never offered (wall-time bound): offered and abandoned.
func (r *recorder) unsent(seg, w int) {
	r.mu.Lock()
	c := &r.cells[seg*r.workloads+w]
	c.offered++
	c.abandoned++
	r.iv.offered++
	r.iv.abandoned++
	r.mu.Unlock()
}

func (r *recorder) addStall(d time.Duration) {
	r.mu.Lock()
	r.stalled += d
	r.mu.Unlock()
}

// abandonAll abandons every request in flight and closes the recorder.
func (r *recorder) abandonAll() (abandoned int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.cells {
		c := &r.cells[i]
		c.abandoned += c.inFlight
		r.iv.abandoned += c.inFlight
		abandoned += c.inFlight
		c.inFlight = 0
	}
	r.inFlight = 0
	r.closed = true
	return abandoned
}

// Snapshot is one line of snapshots.jsonl: the last interval of the run.
type Snapshot struct {
	TS        float64          `json:"t_s"`        // end of the interval, seconds since the run started
	IntervalS float64          `json:"interval_s"` // the interval's length (the last one may be short)
	Phase     string           `json:"phase"`
	Offered   int64            `json:"offered"`
	Succeeded int64            `json:"succeeded"`
	Failed    int64            `json:"failed"`
	Abandoned int64            `json:"abandoned"`
	Failures  map[string]int64 `json:"failures"`
	InFlight  int64            `json:"in_flight"`
	Late      int64            `json:"late"`
	StalledS  float64          `json:"stalled_s"` // cumulative
	Count     int64            `json:"count"`     // successes the percentiles stand on
	P50MS     float64          `json:"p50_ms"`
	P99MS     float64          `json:"p99_ms"`
}

// snapshot takes and resets the interval counters.
func (r *recorder) snapshot(ts, span time.Duration, phase string) Snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := Snapshot{
		TS: ts.Seconds(), IntervalS: span.Seconds(), Phase: phase,
		Offered: r.iv.offered, Succeeded: r.iv.succeeded, Failed: r.iv.failed, Abandoned: r.iv.abandoned,
		Failures: r.iv.failures, InFlight: r.inFlight, Late: r.iv.late, StalledS: r.stalled.Seconds(),
		Count: r.iv.lat.TotalCount(),
		P50MS: float64(result.Quantile(r.iv.lat, 0.50)) / 1000,
		P99MS: float64(result.Quantile(r.iv.lat, 0.99)) / 1000,
	}
	r.iv.offered, r.iv.succeeded, r.iv.failed, r.iv.abandoned, r.iv.late = 0, 0, 0, 0, 0
	r.iv.failures = map[string]int64{}
	r.iv.lat.Reset()
	return s
}
