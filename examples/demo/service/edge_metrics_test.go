package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/loadgate/loadgate/internal/promtext"
)

// failingListener's Accept fails with a non-close error; it records Close.
type failingListener struct {
	net.Listener
	closed atomic.Bool
}

func (l *failingListener) Accept() (net.Conn, error) {
	return nil, errors.New("accept: too many open files")
}
func (l *failingListener) Close() error { l.closed.Store(true); return l.Listener.Close() }

// Regression: an Accept error that was not a close returned at once and
// left the HTTP and gRPC servers running (and the listener open).
func TestRegression_AcceptErrorLeavesTheServersRunning(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &failingListener{Listener: inner}
	gs, err := newGRPCServer(1)
	if err != nil {
		t.Fatal(err)
	}
	err = serveSplitOn(context.Background(), ln, http.NotFoundHandler(), gs)
	if err == nil || !strings.Contains(err.Error(), "too many open files") {
		t.Errorf("err %v, want the Accept error", err)
	}
	// serveSplitOn waited for both servers: they were shut down, and the
	// listener closed.
	if !ln.closed.Load() {
		t.Errorf("the listener is still open: the servers were not stopped")
	}
}

// Regression: a handler that panicked (http.ErrAbortHandler included) was
// counted as code 200: the client got no answer.
func TestRegression_PanickingHandlerCountedAs200(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /abort", func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) })
	mux.HandleFunc("GET /ok", func(w http.ResponseWriter, r *http.Request) {})
	ts := httptest.NewServer(countCodes(mux))
	defer ts.Close()
	for _, p := range []string{"/abort", "/ok"} {
		if resp, err := http.Get(ts.URL + p); err == nil {
			resp.Body.Close()
		}
	}
	var b strings.Builder
	if err := promtext.Write(&b, apiRequests); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{`http_requests_total{route="GET /abort",code="aborted"} `, `http_requests_total{route="GET /ok",code="200"} `} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s:\n%s", want, page)
		}
	}
	if strings.Contains(page, `route="GET /abort",code="200"`) {
		t.Errorf("the aborted request is counted as 200:\n%s", page)
	}
}
