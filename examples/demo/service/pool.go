package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// The pool role, for `loadgate sweep`: GET /work holds one of POOL_WORKERS for
// POOL_SERVICE_MS of wall clock, a fixed capacity even on a loaded machine; past
// POOL_QUEUE waiting it answers 503 at once, so overload shows as refusal.
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

// admit books the first free worker for now; false when it would wait over maxWait.
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
