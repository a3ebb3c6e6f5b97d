//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"sync"
	"syscall"
)

// The leak role: a service that leaks a known amount per request, for
// `loadgate soak` (examples/demo/soak.yaml).
//
//	service -role leak   GET /leak (leaks LEAK_BYTES_PER_REQ), GET /healthz
//
// Environment: LEAK_BYTES_PER_REQ (default 4096; 0 leaks nothing: the same
// service, stable), LEAK_MAX_BYTES (the most it leaks in all, default
// 4 GiB; past it /leak answers 507).
//
// The leaked bytes are written into an anonymous mapping outside the Go
// heap, so that the process's resident memory grows by exactly
// LEAK_BYTES_PER_REQ per request (to the page) and the garbage collector's
// headroom (up to GOGC% of the live heap) does not blur the truth a soak is
// checked against: rate × LEAK_BYTES_PER_REQ. Each request also allocates
// and drops a buffer of the same size on the Go heap, so the stable service
// (0 leaked) still does the same work.
func init() {
	roles["leak"] = func(ctx context.Context, listen string) error {
		h, err := leakHandler(int64(envInt("LEAK_BYTES_PER_REQ", 4096)), int64(envInt("LEAK_MAX_BYTES", 4<<30)))
		if err != nil {
			return err
		}
		return serveHTTP(ctx, listen, h)
	}
}

func leakHandler(perReq, maxBytes int64) (http.Handler, error) {
	if perReq < 0 || maxBytes < 0 {
		return nil, fmt.Errorf("leak: LEAK_BYTES_PER_REQ %d and LEAK_MAX_BYTES %d must not be negative", perReq, maxBytes)
	}
	var arena []byte
	if perReq > 0 && maxBytes > 0 {
		var err error
		// Reserved, not committed: only the pages written become resident.
		arena, err = syscall.Mmap(-1, 0, int(maxBytes), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
		if err != nil {
			return nil, fmt.Errorf("leak: reserving %d bytes: %w", maxBytes, err)
		}
	}
	var mu sync.Mutex
	var used int64
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	mux.HandleFunc("GET /leak", func(w http.ResponseWriter, r *http.Request) {
		garbage := make([]byte, perReq+1)
		for i := range garbage {
			garbage[i] = byte(i)
		}
		mu.Lock()
		if used+perReq > int64(len(arena)) && perReq > 0 {
			mu.Unlock()
			http.Error(w, "leak: LEAK_MAX_BYTES reached", http.StatusInsufficientStorage)
			return
		}
		copy(arena[used:used+perReq], garbage)
		used += perReq
		total := used
		mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"leaked_bytes": total, "sum": garbage[len(garbage)-1]})
	})
	log.Printf("leak: %d bytes per request, at most %d", perReq, maxBytes)
	return mux, nil
}
