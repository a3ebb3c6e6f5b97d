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

// The leak role, for `loadgate soak`: GET /leak leaks LEAK_BYTES_PER_REQ up to
// LEAK_MAX_BYTES into a mapping outside the Go heap, so RSS grows by exactly
// that, unblurred by GC; a heap buffer as large is dropped so 0 does the same work.
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
