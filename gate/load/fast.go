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

// operation sends a workload's k-th request and classifies it ("" is a success).
// Concurrency-safe; the scratch is the calling worker's.
type operation interface {
	do(ctx context.Context, k int64, s *scratch) string
}

// scratch is a worker's reusable memory, so a request allocates nothing.
type scratch struct {
	uri, body []byte
	buf       []byte // response bodies are read into it and dropped (bodyChunk)
	req       fasthttp.Request
	resp      fasthttp.Response
	built     *fastOp // req is this operation's whole request, reused as it is (fastOp.static); nil: build it
	rx        rxStamp // the response's last read on a lazy connection (lazy.go); zero otherwise

	// The request in flight, for drainTransport (via the user value streamKey).
	deadline time.Time // the request's deadline
	bodyErr  error     // why the body was not read to its end; nil: it was
}

func (s *scratch) buffer() []byte {
	if s.buf == nil {
		s.buf = make([]byte, bodyChunk)
	}
	return s.buf
}

// fastOp is an HTTP/1.1 operation on fasthttp (cheaper than net/http); no retries.
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
	// static: every request is the same, so a worker builds it once.
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
		// TLS verifies the URL's host; the dialer connects only to checked addresses.
		Addr:               t.hostPort(),
		IsTLS:              t.URL.Scheme == "https",
		TLSConfig:          &tls.Config{InsecureSkipVerify: t.Insecure, ServerName: t.URL.Hostname()},
		DialTimeout:        d.dialTimeout,
		StreamResponseBody: true,
		Transport:          drainTransport{},
		// Enforced by drainTransport; fasthttp ignores it on streamed bodies.
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
		// Without UseHostHeader the URI's host would replace this one.
		req.Header.SetHost(op.host)
		req.UseHostHeader = true
	}
	if op.hasBody {
		s.body = op.body.AppendTo(s.body[:0], k)
		if op.static {
			// A copy: s.body is overwritten by the next operation.
			req.SetBody(s.body)
		} else {
			req.SetBodyRaw(s.body)
		}
	}
}

// streamKey is the request's user value holding its worker's scratch.
type streamKey struct{}

var errNoScratch = errors.New("loadgate: a request reached the transport without its worker's scratch")

// drainTransport is fasthttp's transport but drains each body into the worker's buffer (no
// garbage; the read's receive stamp kept); an unread rest or a 101 closes the connection.
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

// drainBody reads resp's body into buf up to limit; a larger Content-Length is not read.
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

// bodyClass names why a body was not read to its end.
func bodyClass(err error, deadline time.Time) string {
	switch {
	case errors.Is(err, errBodyTooLarge):
		return ClassBodyTooLarge
	case !time.Now().Before(deadline):
		// fasthttp hides a read timeout in a chunk header inside ErrBrokenChunk.
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
		// fasthttp folds every error before the first response byte into this one.
		return ClassClosed
	case errors.Is(err, fasthttp.ErrNoFreeConns):
		return ClassOther // cannot happen: permits bound concurrency to MaxConns
	}
	return classify(context.Background(), err)
}
