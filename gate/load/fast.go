package load

import (
	"context"
	"crypto/tls"
	"errors"
	"math"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/loadgate/loadgate/gate/scenario"
)

// operation sends the k-th request of a workload and classifies the
// outcome ("" is a success). Implementations are safe for concurrent use;
// the scratch belongs to the calling worker.
type operation interface {
	do(ctx context.Context, k int64, s *scratch) string
}

// scratch is a worker's reusable memory: with it a request allocates
// nothing on the generator's heap, so the GC (a hiccup on the generator's
// one core) rarely runs.
type scratch struct {
	uri, body []byte
	buf       []byte // response bodies are read into it and dropped (bodyChunk)
	req       fasthttp.Request
	resp      fasthttp.Response
	built     *fastOp // req is this operation's whole request, reused as it is (fastOp.static); nil: build it
	rx        rxStamp // the response's last read on a lazy connection (lazy.go); zero otherwise

	// What fastOp.do and drainTransport.RoundTrip tell each other about
	// the request in flight (the transport finds the scratch as the
	// request's user value, streamKey).
	deadline time.Time // the request's deadline
	bodyErr  error     // why the body was not read to its end; nil: it was
}

// buffer is the worker's body buffer, made on its first body.
func (s *scratch) buffer() []byte {
	if s.buf == nil {
		s.buf = make([]byte, bodyChunk)
	}
	return s.buf
}

// fastOp is an HTTP/1.1 operation on fasthttp's client, which costs a third
// of net/http's CPU per request: one goroutine hand-off less per request, no
// per-request timer goroutine, pooled requests and responses (the
// generator's CPU is what bounds the rate it can hold honestly). HTTP/2 stays
// on net/http (httpOp).
//
// A connection closed or reset by the server before the first response
// byte is classed "closed" (fasthttp cannot tell FIN from RST there); a reset
// after it is "reset".
//
// fasthttp retries idempotent requests on connection errors by default;
// that is switched off: an offered request is exactly one attempt.
//
// Response bodies are streamed (HostClient.StreamResponseBody) and read by
// the client's transport (drainTransport), to their end, in bodyChunk
// pieces into the worker's scratch buffer, and dropped, so a body of any
// length, or an endless chunked one, costs bodyChunk bytes. A body longer
// than max_body is "body too large": reading stops there and the
// connection is closed, not reused, so the rest of that body is never read
// as the next response.
//
// A Host header from the scenario is sent as given (Request.UseHostHeader);
// without it fasthttp would send the URI's host.
type fastOp struct {
	hc      *fasthttp.HostClient
	method  string
	prefix  string // scheme://host[:port][/base path]
	path    scenario.Template
	body    scenario.Template
	hasBody bool
	headers [][2]string
	host    string
	timeout time.Duration
	expect  [600]bool
	// static: every request of the workload is the same (no placeholder
	// in the path or body). A worker then builds it once in its scratch and
	// sends that Request again: fasthttp keeps it parsed, so the URI is not
	// parsed again nor the headers set again for every request.
	static bool
}

func newFastClient(sc *scenario.Scenario, t Target) *fasthttp.HostClient {
	limit := maxBody(sc)
	if limit > math.MaxInt {
		limit = math.MaxInt
	}
	d := t.dialer(sc.Timeout)
	if t.URL.Scheme == "http" {
		d.lazy = t.lazy // cleartext HTTP/1.1: lazy sockets (lazy.go); TLS keeps the poller
	}
	return &fasthttp.HostClient{
		// Addr is the URL's host name and port: TLS verifies (and sends as
		// SNI) that name; the dialer connects to the checked addresses only.
		Addr:               t.hostPort(),
		IsTLS:              t.URL.Scheme == "https",
		TLSConfig:          &tls.Config{InsecureSkipVerify: t.Insecure, ServerName: t.URL.Hostname()},
		DialTimeout:        d.dialTimeout,
		StreamResponseBody: true,
		Transport:          drainTransport{},
		// Ignored by fasthttp on streamed bodies: drainTransport enforces
		// it while it reads the body.
		MaxResponseBodySize:           int(limit),
		MaxConns:                      sc.MaxInFlight,
		MaxIdleConnDuration:           90 * time.Second,
		MaxIdemponentCallAttempts:     1,
		RetryIfErr:                    func(*fasthttp.Request, int, error) (bool, bool) { return false, false },
		DisableHeaderNamesNormalizing: true,
		DisablePathNormalizing:        true,
		NoDefaultUserAgentHeader:      true,
	}
}

func newFastOp(hc *fasthttp.HostClient, t Target, w scenario.Workload, env map[string]string, timeout time.Duration) *fastOp {
	h := w.HTTP
	op := &fastOp{
		hc:      hc,
		method:  h.Method,
		prefix:  strings.TrimSuffix(t.URL.Scheme+"://"+t.URL.Host+t.URL.Path, "/"),
		timeout: timeout,
	}
	op.path = scenario.CompileTemplate(h.Path, env, h.Vars)
	if h.Body != "" {
		op.body = scenario.CompileTemplate(h.Body, env, h.Vars)
		op.hasBody = true
	}
	op.static = op.path.Static() && (!op.hasBody || op.body.Static())
	hasUA := false
	for k, v := range h.Headers {
		v = scenario.ExpandEnv(v, env)
		switch {
		case strings.EqualFold(k, "Host"):
			op.host = v
		default:
			hasUA = hasUA || strings.EqualFold(k, "User-Agent")
			op.headers = append(op.headers, [2]string{k, v})
		}
	}
	if !hasUA {
		op.headers = append(op.headers, [2]string{"User-Agent", "loadgate"})
	}
	for _, s := range w.Expect.Status {
		if s >= 0 && s < len(op.expect) {
			op.expect[s] = true
		}
	}
	return op
}

func (op *fastOp) do(_ context.Context, k int64, s *scratch) string {
	req, resp := &s.req, &s.resp
	if s.built != op {
		op.build(req, k, s)
		resp.Reset() // fasthttp keeps a HEAD's SkipBody on the Response
		s.built = nil
		if op.static {
			s.built = op
		}
	}
	s.deadline, s.bodyErr = time.Now().Add(op.timeout), nil
	if err := op.hc.DoDeadline(req, resp, s.deadline); err != nil {
		s.built = nil // whatever fasthttp left in it, the next request is built anew
		return classifyFast(err)
	}
	if s.bodyErr != nil {
		return bodyClass(s.bodyErr, s.deadline)
	}
	code := resp.StatusCode()
	if code < 0 || code >= len(op.expect) || !op.expect[code] {
		return statusClass(code)
	}
	return ""
}

// build makes req the k-th request of the workload.
func (op *fastOp) build(req *fasthttp.Request, k int64, s *scratch) {
	req.Reset()
	req.SetUserValue(streamKey{}, s) // for drainTransport
	s.uri = op.path.AppendTo(append(s.uri[:0], op.prefix...), k)
	req.SetRequestURIBytes(s.uri)
	req.Header.SetMethod(op.method)
	for _, h := range op.headers {
		req.Header.Set(h[0], h[1])
	}
	if op.host != "" {
		// The URI is a full URL (fasthttp checks its scheme against the
		// client's); without UseHostHeader its host would replace this one.
		req.Header.SetHost(op.host)
		req.UseHostHeader = true
	}
	if op.hasBody {
		s.body = op.body.AppendTo(s.body[:0], k)
		if op.static {
			// Sent again as built (do): the body is the request's own copy,
			// for s.body is the worker's scratch, which the next operation
			// of another workload (WebSocket, gRPC, another HTTP) overwrites.
			req.SetBody(s.body)
		} else {
			req.SetBodyRaw(s.body)
		}
	}
}

// streamKey is the request's user value under which fastOp hands its
// worker's scratch to drainTransport.
type streamKey struct{}

// errNoScratch: a request without its worker's scratch reached the
// transport (it cannot: fastOp.build sets it on every request).
var errNoScratch = errors.New("loadgate: a request reached the transport without its worker's scratch")

// drainTransport is the HostClient's transport: fasthttp's own
// (transport.RoundTrip in fasthttp 1.78: the connection from the pool, the
// request written, the response's header read) but for the body, which it
// reads itself, to its end, before the connection goes back to the pool.
// fasthttp hands a streamed body to its caller wrapped in an object and
// three closures, made for every response (4 allocations, 184 B), and at
// 20 000 req/s that garbage made a collection every second on the
// generator's one core (bench/README.md, "The generator's garbage
// collector"). Here the body is read through fasthttp's pooled stream into
// the worker's buffer (its scratch, the request's user value), and a
// response costs nothing on the heap. Reading it before the connection is
// released also lets every response, a HEAD's or a 204 too, take its
// receive timestamp from the connection that read it.
//
// The limits are the client's: the request's deadline (the scratch's) on
// every read and write, MaxResponseBodySize as max_body. A body that was
// not read to its end (max_body, the deadline, a broken chunk) closes its
// connection, and why is left in the scratch (bodyErr) for fastOp.do to
// class. A 101 Switching Protocols closes its connection too: it no longer
// speaks HTTP/1.1. fasthttp's MaxConnDuration, ReadTimeout and WriteTimeout
// are not applied here (newFastClient sets none of them).
type drainTransport struct{}

func (drainTransport) RoundTrip(hc *fasthttp.HostClient, req *fasthttp.Request, resp *fasthttp.Response) (retry bool, err error) {
	s, _ := req.UserValue(streamKey{}).(*scratch)
	if s == nil {
		return false, errNoScratch
	}
	cc, err := hc.AcquireConn(time.Until(s.deadline), req.ConnectionClose())
	if err != nil {
		return false, err
	}
	conn := cc.Conn()
	resp.ParseNetConn(conn)
	if err := conn.SetWriteDeadline(s.deadline); err != nil {
		hc.CloseConn(cc)
		return true, err
	}
	bw := hc.AcquireWriter(conn)
	err = req.Write(bw)
	if err == nil {
		err = bw.Flush()
	}
	hc.ReleaseWriter(bw)
	if t, ok := err.(interface{ Timeout() bool }); ok && t.Timeout() {
		err = fasthttp.ErrTimeout
	}
	if err != nil {
		hc.CloseConn(cc)
		return true, err
	}
	if err := conn.SetReadDeadline(s.deadline); err != nil {
		hc.CloseConn(cc)
		return true, err
	}
	if req.Header.IsHead() {
		resp.SkipBody = true
	}
	if hc.DisableHeaderNamesNormalizing {
		resp.Header.DisableNormalizing()
	}
	br := hc.AcquireReader(conn)
	if err := resp.ReadLimitBody(br, hc.MaxResponseBodySize); err != nil {
		hc.ReleaseReader(br)
		hc.CloseConn(cc)
		return err != fasthttp.ErrBodyTooLarge, err
	}
	limit := int64(hc.MaxResponseBodySize) // max_body (newFastClient)
	if limit <= 0 {
		limit = scenario.DefaultMaxBody
	}
	s.bodyErr = drainBody(resp, limit, s.buffer())
	s.rx = stampOf(conn.LocalAddr()) // its last byte read; the connection is still this request's
	_ = resp.CloseBodyStream()       // the stream back to fasthttp's pool
	hc.ReleaseReader(br)
	if s.bodyErr != nil || req.ConnectionClose() || resp.ConnectionClose() || resp.StatusCode() == fasthttp.StatusSwitchingProtocols {
		hc.CloseConn(cc)
	} else {
		hc.ReleaseConn(cc)
	}
	return false, nil
}

// drainBody reads resp's streamed body to its end into buf, at most limit
// bytes: an announced Content-Length above limit is not read at all.
func drainBody(resp *fasthttp.Response, limit int64, buf []byte) error {
	bs := resp.BodyStream()
	if bs == nil {
		return nil // no body (HEAD, 1xx, 204, 304)
	}
	if cl := resp.Header.ContentLength(); cl > 0 && int64(cl) > limit {
		return errBodyTooLarge
	}
	return discardBody(bs, limit, buf)
}

// bodyClass names why a body was not read to its end (drainBody's error;
// deadline is the request's).
func bodyClass(err error, deadline time.Time) string {
	switch {
	case errors.Is(err, errBodyTooLarge):
		return ClassBodyTooLarge
	case !time.Now().Before(deadline):
		// The body was still arriving at the deadline. fasthttp wraps a
		// read timeout inside a chunk header in ErrBrokenChunk, which
		// hides it from errors.Is.
		return ClassTimeout
	}
	var broken fasthttp.ErrBrokenChunk
	if errors.As(err, &broken) && strings.Contains(err.Error(), "EOF") {
		return ClassEOF // the connection ended inside a chunked body
	}
	return classifyFast(err)
}

func classifyFast(err error) string {
	switch {
	case errors.Is(err, fasthttp.ErrTimeout), errors.Is(err, fasthttp.ErrDialTimeout):
		return ClassTimeout
	case errors.Is(err, fasthttp.ErrConnectionClosed):
		// fasthttp folds every error on the first response byte into this
		// one: a FIN and an RST before any byte of the response look alike.
		return ClassClosed
	case errors.Is(err, fasthttp.ErrNoFreeConns):
		return ClassOther // cannot happen: permits bound concurrency to MaxConns
	}
	return classify(context.Background(), err)
}
