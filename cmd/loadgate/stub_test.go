package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// loadgate stub: bad flags exit 2 naming the flag, -h exits 0, a failed
// healthcheck exits 3.
func TestStubExitCodes(t *testing.T) {
	for _, c := range []struct {
		args []string
		want int
		msg  string
	}{
		{[]string{"stub", "-h"}, 0, "Usage: loadgate stub"},
		{[]string{"stub", "--delay", "lognormal:p50=2s"}, 2, "--delay"},
		{[]string{"stub", "--error-rate", "0.7", "--timeout-rate", "0.7"}, 2, "add up to more than 1"},
		{[]string{"stub", "--stream-chunks", "3", "--stream-first", "soon"}, 2, "--stream-first"},
		{[]string{"stub", "--route", "GET /metrics"}, 2, "route"},
		{[]string{"stub", "-healthcheck", "http://127.0.0.1:1/healthz"}, 3, "healthcheck"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), c.args, &stdout, &stderr)
		if got := exitCode(err, &stderr); got != c.want || !strings.Contains(stderr.String(), c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d with %q", c.args, got, stderr.String(), c.want, c.msg)
		}
	}
}

// The stub serves until its context ends, its healthcheck mode passes
// against it, and it stops cleanly (exit 0).
func TestStubServesUntilCancelled(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var stderr bytes.Buffer
	go func() {
		done <- run(ctx, []string{"stub", "--listen", addr, "--route", "GET /profile/{id}"}, &bytes.Buffer{}, &stderr)
	}()
	var herr error
	for i := 0; i < 100; i++ { // until it listens (bounded: 100 tries)
		if herr = run(context.Background(), []string{"stub", "-healthcheck", "http://" + addr + "/healthz"}, &bytes.Buffer{}, &bytes.Buffer{}); herr == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if herr != nil {
		t.Fatalf("healthcheck never passed: %v", herr)
	}
	resp, err := http.Get("http://" + addr + "/profile/3")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /profile/3: %v %v", resp, err)
	}
	resp.Body.Close()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("stub returned %v after cancel; stderr %s", err, stderr.String())
	}
}
