package main

import (
	"context"
	"log"
	"net/http"
	"strconv"

	"github.com/loadgate/loadgate/internal/promtext"
)

// apiRequests is the api's request counter by route and status, for a scenario's count:.
var apiRequests = promtext.NewCounterVec("http_requests_total",
	"Requests the api answered, by route pattern and status code.", "route", "code")

// withMetrics counts h's requests and serves them on METRICS_LISTEN /metrics.
func withMetrics(ctx context.Context, h http.Handler) http.Handler {
	listen := env("METRICS_LISTEN", ":9090")
	go func() {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", promtext.Handler(apiRequests))
		if err := serveHTTP(ctx, listen, mux); err != nil {
			log.Printf("metrics on %s: %v", listen, err)
		}
	}()
	return countCodes(h)
}

// codeAborted counts a panic: the client got no complete answer, whatever the status.
const codeAborted = "aborted"

// countCodes counts every request by route and code, re-raising a panic.
func countCodes(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		defer func() {
			if p := recover(); p != nil {
				apiRequests.Inc(r.Pattern, codeAborted)
				panic(p)
			}
			apiRequests.Inc(r.Pattern, strconv.Itoa(sw.code))
		}()
		h.ServeHTTP(sw, r)
	})
}

// statusWriter remembers the status code a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	code  int
	wrote bool
}

func (s *statusWriter) WriteHeader(code int) {
	if !s.wrote {
		s.code, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the real writer (Flush, ...).
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
