// Package stub is `loadgate stub`: an HTTP server standing in for a
// third-party provider, slow and failing on purpose at stated rates.
package stub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/internal/ctxwait"
	"github.com/loadgate/loadgate/internal/promtext"
)

// Limits on a Config.
const (
	DefaultHoldMax = 30 * time.Second
	MaxHold        = 5 * time.Minute
	MaxChunks      = 10000
	MaxRoutes      = 64
	MaxRouteLen    = 200
	MaxBody        = 64 << 10
	ShutdownBound  = 5 * time.Second // how long Serve waits for requests in flight
)

// Metric is the name of the stub's request counter.
const Metric = "loadgate_stub_requests_total"

// Outcomes, the values of the counter's outcome label.
const (
	OutcomeOK         = "ok"
	OutcomeError      = "error"
	OutcomeTimeout    = "timeout"
	OutcomeClientGone = "client_gone"
)

// Paths the stub serves besides its routes.
const (
	PathHealth  = "/healthz"
	PathConfig  = "/stub/config"
	PathMetrics = "/metrics"
)

// Config is what a stub does; the zero Config answers 200 at once on "/".
type Config struct {
	Delay       Delay
	ErrorRate   float64       // in [0, 1]
	TimeoutRate float64       // in [0, 1]; ErrorRate + TimeoutRate <= 1
	HoldMax     time.Duration // a held request's bound (0: DefaultHoldMax)
	Stream      *Stream       // nil: never streams
	Seed        uint64
	Routes      []string // net/http ServeMux patterns ("GET /profile/{id}"); none: "/"
	// Body is a 200's JSON ("" a small object), at most MaxBody; {name} stands for the
	// route's wildcard, JSON-escaped: '{"id":"{id}"}'.
	Body string
}

// Stream is how a stub streams server-sent events.
type Stream struct {
	Chunks int           // events per answer, in [1, MaxChunks]
	First  Delay         // from the headers to the first event
	Every  time.Duration // between events, in [0, MaxDelay]
}

// ErrConfig is wrapped by every error of Config.Validate.
var ErrConfig = errors.New("invalid stub configuration")

// Validate says what is wrong with c, if anything.
func (c Config) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, a...))
	}
	rate := func(v float64) bool { return v >= 0 && v <= 1 && !math.IsNaN(v) }
	switch {
	case !rate(c.ErrorRate):
		return bad("error rate %v is not a fraction in [0, 1]", c.ErrorRate)
	case !rate(c.TimeoutRate):
		return bad("timeout rate %v is not a fraction in [0, 1]", c.TimeoutRate)
	case c.ErrorRate+c.TimeoutRate > 1+1e-12:
		return bad("error rate %v and timeout rate %v add up to more than 1", c.ErrorRate, c.TimeoutRate)
	case c.HoldMax < 0 || c.HoldMax > MaxHold:
		return bad("hold max %s is outside [0, %s]", c.HoldMax, MaxHold)
	case len(c.Routes) > MaxRoutes:
		return bad("%d routes (at most %d)", len(c.Routes), MaxRoutes)
	}
	if err := checkDelay(c.Delay); err != nil {
		return bad("delay: %v", err)
	}
	if s := c.Stream; s != nil {
		if s.Chunks < 1 || s.Chunks > MaxChunks {
			return bad("stream chunks %d is outside [1, %d]", s.Chunks, MaxChunks)
		}
		if s.Every < 0 || s.Every > MaxDelay {
			return bad("stream chunk pace %s is outside [0, %s]", s.Every, MaxDelay)
		}
		if err := checkDelay(s.First); err != nil {
			return bad("stream first chunk: %v", err)
		}
	}
	if len(c.Body) > MaxBody {
		return bad("body of %d bytes (at most %d)", len(c.Body), MaxBody)
	}
	for _, r := range c.Routes {
		if r == "" || len(r) > MaxRouteLen || strings.ContainsFunc(r, func(c rune) bool { return c < ' ' || c == 0x7f }) {
			return bad("route %q: must be a ServeMux pattern of at most %d characters, without control characters", clip(r), MaxRouteLen)
		}
	}
	return nil
}

// checkDelay: a Delay built in code, not by ParseDelay, is checked the same.
func checkDelay(d Delay) error {
	if d.Dist == "" {
		d.Dist = "fixed"
	}
	_, err := ParseDelay(d.String())
	if err != nil {
		return err
	}
	if d.Dist != "fixed" && d.Dist != "uniform" && d.Dist != "lognormal" {
		return fmt.Errorf("unknown distribution %q", d.Dist)
	}
	return nil
}

func (c Config) routes() []string {
	if len(c.Routes) == 0 {
		return []string{"/"}
	}
	return c.Routes
}

func (c Config) holdMax() time.Duration {
	if c.HoldMax == 0 {
		return DefaultHoldMax
	}
	return c.HoldMax
}

// Stated is c as GET /stub/config (and so the report) states it.
func (c Config) Stated() result.StubConfig {
	s := result.StubConfig{Delay: c.Delay.Stated(), ErrorRate: c.ErrorRate, TimeoutRate: c.TimeoutRate,
		HoldMaxMS: ms(c.holdMax()), Seed: c.Seed, Routes: append([]string(nil), c.routes()...), Body: c.Body}
	if c.Stream != nil {
		s.Stream = &result.StubStream{Chunks: c.Stream.Chunks, First: c.Stream.First.Stated(), ChunkEveryMS: ms(c.Stream.Every)}
	}
	return s
}

// Server is a stub: each answer waits a seeded Delay draw, then fails, holds
// until the client gives up, or answers 200. Safe for concurrent use.
type Server struct {
	cfg      Config
	mux      *http.ServeMux
	requests *promtext.CounterVec

	mu  sync.Mutex // guards rng
	rng *rand.Rand
}

// New returns a stub serving cfg, or an ErrConfig error naming what is wrong.
func New(cfg Config) (s *Server, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Routes = cfg.routes()
	s = &Server{cfg: cfg, mux: http.NewServeMux(),
		requests: promtext.NewCounterVec(Metric, "Requests the stub answered (or held), by route pattern and outcome.", "route", "outcome"),
		rng:      rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))}
	stated, _ := json.Marshal(cfg.Stated())
	s.mux.HandleFunc("GET "+PathHealth, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	s.mux.HandleFunc("GET "+PathConfig, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(append(stated, '\n'))
	})
	s.mux.Handle("GET "+PathMetrics, promtext.Handler(s.requests))
	for _, p := range cfg.Routes {
		if err := s.handle(p); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// handle registers a route, turning net/http's panic into an error.
func (s *Server) handle(pattern string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: route %q: %v", ErrConfig, clip(pattern), p)
		}
	}()
	s.mux.HandleFunc(pattern, s.answer)
	return nil
}

// Config is the configuration with default routes filled in.
func (s *Server) Config() Config { return s.cfg }

// ServeHTTP serves one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

type draw struct {
	outcome string // ok, error or timeout
	delay   time.Duration
	first   time.Duration // streamed answers: to the first event
}

func (s *Server) draw() draw {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := draw{outcome: OutcomeOK}
	switch u := s.rng.Float64(); {
	case u < s.cfg.ErrorRate:
		d.outcome = OutcomeError
	case u < s.cfg.ErrorRate+s.cfg.TimeoutRate:
		d.outcome = OutcomeTimeout
	}
	d.delay = s.cfg.Delay.Draw(s.rng)
	if s.cfg.Stream != nil {
		d.first = s.cfg.Stream.First.Draw(s.rng)
	}
	return d
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request) {
	route := r.Pattern
	d := s.draw()
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
	ctx := r.Context()
	if d.outcome == OutcomeTimeout {
		hctx, cancel := context.WithTimeout(ctx, s.cfg.holdMax())
		<-hctx.Done()
		cancel()
		s.requests.Inc(route, OutcomeTimeout)
		panic(http.ErrAbortHandler) // close the connection without an answer
	}
	if ctxwait.For(ctx, d.delay) != nil {
		s.requests.Inc(route, OutcomeClientGone)
		return
	}
	if d.outcome == OutcomeError {
		s.requests.Inc(route, OutcomeError)
		writeJSON(w, http.StatusInternalServerError, map[string]any{"error": "loadgate stub: injected error", "path": r.URL.Path})
		return
	}
	if s.cfg.Stream != nil && strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		s.requests.Inc(route, s.stream(ctx, w, r, d))
		return
	}
	s.requests.Inc(route, OutcomeOK)
	if s.cfg.Body == "" {
		writeJSON(w, http.StatusOK, map[string]any{"path": r.URL.Path, "delay_ms": ms(d.delay), "served_by": "loadgate stub"})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, expand(s.cfg.Body, r)+"\n")
}

// expand replaces each {name} of body by r's wildcard, JSON-escaped.
func expand(body string, r *http.Request) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(body, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(body[i:], '}')
		if j < 0 {
			break
		}
		name := body[i+1 : i+j]
		if name == "" || strings.ContainsAny(name, " \t\n\"{:,") {
			b.WriteString(body[:i+1])
			body = body[i+1:]
			continue
		}
		b.WriteString(body[:i])
		q, _ := json.Marshal(r.PathValue(name))
		b.Write(q[1 : len(q)-1])
		body = body[i+j+1:]
	}
	b.WriteString(body)
	return b.String()
}

// stream writes one answer's server-sent events and returns its outcome.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, r *http.Request, d draw) string {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if rc.Flush() != nil {
		return OutcomeClientGone
	}
	n := s.cfg.Stream.Chunks
	for i := 1; i <= n; i++ {
		pause := s.cfg.Stream.Every
		if i == 1 {
			pause = d.first
		}
		if ctxwait.For(ctx, pause) != nil {
			return OutcomeClientGone
		}
		line := `data: {"chunk":` + strconv.Itoa(i) + `,"of":` + strconv.Itoa(n) + `}` + "\n\n"
		if i == n {
			line += "data: [DONE]\n\n"
		}
		if _, err := io.WriteString(w, line); err != nil || rc.Flush() != nil {
			return OutcomeClientGone
		}
	}
	return OutcomeOK
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// Serve serves on ln until ctx ends, then shuts down within ShutdownBound, cancelling held
// requests; it returns nil after a shutdown caused by ctx.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownBound)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			srv.Close()
		}
	}()
	err := srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		<-done
		return nil
	}
	srv.Close()
	return fmt.Errorf("stub: serve %s: %w", ln.Addr(), err)
}
