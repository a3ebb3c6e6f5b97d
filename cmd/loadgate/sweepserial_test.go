package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/sweep"
	"github.com/loadgate/loadgate/internal/testtier"
)

// serialScenario sweeps a 10 ms serial server: 100 req/s is all it serves.
const serialScenario = `
name: serial-10ms
timeout: 2s
ceilings: {rate: 200, duration: 1m}
phases: [{name: sustain, rate: 25, duration: 5s}]
workloads:
  - {name: a, share: 1, http: {path: /}, thresholds: {p95: 100ms, error_rate: 1%}}
`

// serialServer serves one request at a time, each in 10 ms: a queue whose
// every answer leaves 10 ms after the one before it (or after it arrived),
// timed on the absolute clock so a late wake-up of its own does not lower
// its capacity, 100 req/s, on a busy machine.
func serialServer(t *testing.T) *httptest.Server {
	var mu sync.Mutex
	var free time.Time // when the server is done with the requests it has
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		free = later(time.Now(), free).Add(10 * time.Millisecond)
		done := free
		mu.Unlock()
		time.Sleep(time.Until(done))
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Issue 45: a sweep of a 10 ms serial server stopped on "generator behind
// schedule" at 25–75/s in 3 of 3 runs, for a few sends 1.8 ms late. It must
// find the server's own limit: 95/s held, 125/s queueing. The e2e tier
// (real clock, 40 s); TestSweepStopRuleOnLateness in gate/sweep is the
// rule on fixed steps. Run it 5 times:
//
//	LOADGATE_TEST_TIER=e2e go test -run TestSweepSerialServer -count=5 -v ./cmd/loadgate
func TestSweepSerialServer(t *testing.T) {
	testtier.Require(t, testtier.E2E)
	srv := serialServer(t)
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"sweep", "--scenario", writeScenario(t, serialScenario), "--target", srv.URL,
		"--out", out, "--rates", "25,50,75,95,125,150", "--step", "5s", "--warmup", "1s", "--progress", "never"}, &stdout, &stderr)
	if c := code(err); c != 0 {
		t.Fatalf("exit %d (%v)\n%s", c, err, stderr.String())
	}
	sw, err := sweep.ReadFile(filepath.Join(out, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := report.SweepText(&text, sw); err != nil {
		t.Fatal(err)
	}
	for _, s := range sw.Steps {
		lat := ""
		if s.Lateness != nil {
			lat = " explains " + join(s.Lateness.Explains)
		}
		t.Logf("step %d %v/s: held %v %v, late %d of %d, stalled %.3f s%s", s.Number, s.Rate, s.Held, s.NotHeld, s.Late, s.Offered, s.StalledS, lat)
	}
	if sw.SustainableRate == nil || *sw.SustainableRate < 75 || sw.Manner == sweep.GeneratorLimit {
		t.Fatalf("sustainable %v, manner %q: want the server's limit near 100/s, not the generator's\n%s", sw.SustainableRate, sw.Manner, text.String())
	}
	if sw.DegradesAt == nil || *sw.DegradesAt > 125 {
		t.Errorf("degrades at %v, want by 125/s (the server serves 100/s)\n%s", sw.DegradesAt, text.String())
	}
	t.Logf("found: sustainable %v/s, degrades at %v/s, manner %s", *sw.SustainableRate, *sw.DegradesAt, sw.Manner)
}

func join(ss []string) string {
	var b bytes.Buffer
	for i, s := range ss {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s)
	}
	return "[" + b.String() + "]"
}
