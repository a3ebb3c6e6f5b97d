package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// The pool role: a service of known capacity, for `loadgate sweep`
// (examples/demo/sweep.yaml).
//
//	service -role pool   GET /work (one worker for POOL_SERVICE_MS), GET /healthz
//
// Environment: POOL_WORKERS (default 4), POOL_SERVICE_MS (default 50),
// POOL_QUEUE (default 2). Its capacity is POOL_WORKERS / POOL_SERVICE_MS:
// 4 workers × 20 requests per second each = 80 req/s by default.
//
// Each worker is busy for exactly POOL_SERVICE_MS per request on the wall
// clock: a request is given the worker that frees first, starts when that
// worker frees (now, or later: it waits in the queue), and its worker is
// busy until start + POOL_SERVICE_MS, whenever the goroutine serving it
// happens to wake up. So the capacity is the one the pool was built with
// even on a loaded machine (a late wake-up adds latency to that request,
// not service time to the worker); the service time is a wait, like a
// call to a database of fixed latency, not CPU.
//
// A request may wait at most POOL_QUEUE / POOL_WORKERS service times (a
// queue of POOL_QUEUE places: it absorbs the jitter of a request that
// arrives just before a worker frees). One that would wait longer is
// refused at once with 503 and Retry-After: 1. Above its capacity the pool
// therefore gives out by honest refusal: the excess fails fast, and the
// latency of the requests it serves stays flat.
func init() {
	roles["pool"] = func(ctx context.Context, listen string) error {
		h, err := poolHandler(envInt("POOL_WORKERS", 4), time.Duration(envInt("POOL_SERVICE_MS", 50))*time.Millisecond, envInt("POOL_QUEUE", 2))
		if err != nil {
			return err
		}
		return serveHTTP(ctx, listen, h)
	}
}

// pool is the workers' schedule: when each one frees.
type pool struct {
	mu      sync.Mutex
	free    []time.Time // per worker: busy until
	service time.Duration
	maxWait time.Duration
}

// admit gives the request arriving at now the worker that frees first, and
// returns when its service ends; ok is false when it would wait longer
// than maxWait (refused, nothing booked).
func (p *pool) admit(now time.Time) (done time.Time, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := 0
	for i, t := range p.free {
		if t.Before(p.free[k]) {
			k = i
		}
	}
	start := p.free[k]
	if start.Before(now) {
		start = now
	}
	if start.Sub(now) > p.maxWait {
		return time.Time{}, false
	}
	p.free[k] = start.Add(p.service)
	return p.free[k], true
}

func poolHandler(workers int, service time.Duration, queue int) (http.Handler, error) {
	if workers < 1 || service <= 0 || queue < 0 {
		return nil, fmt.Errorf("pool: POOL_WORKERS %d must be at least 1, POOL_SERVICE_MS %v above 0 and POOL_QUEUE %d at least 0", workers, service, queue)
	}
	p := &pool{free: make([]time.Time, workers), service: service, maxWait: service * time.Duration(queue) / time.Duration(workers)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	mux.HandleFunc("GET /work", func(w http.ResponseWriter, r *http.Request) {
		done, ok := p.admit(time.Now())
		if !ok {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "every worker is busy and the queue is full", http.StatusServiceUnavailable)
			return
		}
		t := time.NewTimer(time.Until(done))
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"workers": workers, "service_ms": service.Milliseconds()})
	})
	return mux, nil
}
