package load_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/load"
)

const faultScenario = `name: f
stack: {compose: [compose.yaml], target: api:8080}
warmup: 200ms
phases:
  - name: sustain
    rate: 50
    duration: 1s
    inject: [{action: stop, service: db, at: 100ms, for: 100ms}]
    recovery: {within: 500ms, error_rate: 0%}
workloads: [{name: read, http: {path: /}}, {name: write, http: {path: /w}}]
`

// hook counts what the engine tells a fault injector.
type hook struct {
	mu     sync.Mutex
	starts int
	seen   map[int]int64 // by workload
	warm   int           // outcomes due in the warm-up (must be none)
}

func (h *hook) Start(time.Time) { h.mu.Lock(); h.starts++; h.mu.Unlock() }
func (h *hook) Observe(o load.Outcome) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if o.Due < 200*time.Millisecond || o.Phase != 0 || o.Done < o.Due {
		h.warm++
	}
	h.seen[o.Workload]++
}

func TestFaultHook(t *testing.T) {
	sc := mustScenario(t, faultScenario)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	u, err := urlParse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	// A scenario with faults is refused without an injector: never skipped.
	if _, err := load.Run(context.Background(), load.Config{Scenario: sc, Target: load.Target{URL: u}}); !errors.Is(err, load.ErrNoFaultHook) {
		t.Fatalf("Run without a fault hook: %v, want ErrNoFaultHook", err)
	}
	// Regression: the counted reads and the watched pids' sampling were
	// once chained into Faults as start hooks, so a run that had counts but
	// no injector passed the check and skipped its faults. Start listeners
	// are Started, and never stand for an injector.
	started := 0
	if _, err := load.Run(context.Background(), load.Config{Scenario: sc, Target: load.Target{URL: u},
		Started: []func(time.Time){func(time.Time) { started++ }}}); !errors.Is(err, load.ErrNoFaultHook) {
		t.Fatalf("Run with start listeners and no fault hook: %v, want ErrNoFaultHook", err)
	}
	h := &hook{seen: map[int]int64{}}
	res, err := load.Run(context.Background(), load.Config{Scenario: sc, Target: load.Target{URL: u}, Faults: h})
	if err != nil {
		t.Fatal(err)
	}
	assertEveryRequestRecorded(t, res)
	var startedAt time.Time
	res, err = load.Run(context.Background(), load.Config{Scenario: sc, Target: load.Target{URL: u}, Faults: &hook{seen: map[int]int64{}},
		Started: []func(time.Time){func(t0 time.Time) { started++; startedAt = t0 }}})
	if err != nil {
		t.Fatal(err)
	}
	if started != 1 || startedAt.IsZero() {
		t.Errorf("Started called %d times (at %v), want once with the schedule's start", started, startedAt)
	}
	if h.starts != 1 || h.warm != 0 {
		t.Errorf("Start called %d times, %d outcomes outside the measured phase", h.starts, h.warm)
	}
	// Every counted outcome of the measured phase was observed, once.
	for i, w := range res.Phases[0].Workloads {
		if got := w.Succeeded + w.Failed; h.seen[i] != got {
			t.Errorf("%s: observed %d outcomes, the result counts %d", w.Name, h.seen[i], got)
		}
	}
}

// stopper ends the run from its first outcome with a StageError cause,
// as the CLI does when a fault cannot be injected.
type stopper struct {
	once   sync.Once
	cancel context.CancelCauseFunc
	last   load.Outcome
	mu     sync.Mutex
}

func (s *stopper) Start(time.Time) {}
func (s *stopper) Observe(o load.Outcome) {
	s.mu.Lock()
	s.last = o
	s.mu.Unlock()
	s.once.Do(func() {
		s.cancel(&load.StageError{Err: errors.New("fault not injected: f.yaml:8: stop db: engine said no")})
	})
}

// Regression (review: a failed fault was reported as INTERRUPTED, "stopped
// before its schedule ended"): a run ended by a failed stage is unusable
// naming it, and not interrupted.
func TestStageErrorIsNotInterrupted(t *testing.T) {
	sc := mustScenario(t, faultScenario)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	u, err := urlParse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	h := &stopper{cancel: cancel}
	res, err := load.Run(ctx, load.Config{Scenario: sc, Target: load.Target{URL: u}, Faults: h})
	if err != nil {
		t.Fatal(err)
	}
	if res.Interrupted || res.Usable {
		t.Errorf("interrupted %v, usable %v; want unusable, not interrupted", res.Interrupted, res.Usable)
	}
	if len(res.Unusable) != 1 || !strings.Contains(res.Unusable[0], "ended before its schedule by a failed stage of the run: fault not injected: f.yaml:8: stop db") {
		t.Errorf("unusable = %q", res.Unusable)
	}
	// The derived numbers are the recorder's (one owner: MakeOutcome).
	h.mu.Lock()
	o := h.last
	h.mu.Unlock()
	if o.LatencyUS != int64((o.Done-o.Due)/time.Microsecond) || o.ServiceUS != int64((o.Done-o.Sent)/time.Microsecond) || o.DonePhase > 0 {
		t.Errorf("outcome %+v: derived numbers do not match its times", o)
	}
}
