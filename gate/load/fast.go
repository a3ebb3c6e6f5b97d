package load

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
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
	req       fasthttp.Request
	resp      fasthttp.Response
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
type fastOp struct {
	hc      *fasthttp.HostClient
	method  string
	prefix  string // scheme://host[:port][/base path]
	path    template
	body    template
	hasBody bool
	headers [][2]string
	host    string
	timeout time.Duration
	expect  [600]bool
}

func newFastClient(sc *scenario.Scenario, t Target) *fasthttp.HostClient {
	addr := t.URL.Host
	isTLS := t.URL.Scheme == "https"
	if t.URL.Port() == "" {
		if isTLS {
			addr = net.JoinHostPort(t.URL.Hostname(), "443")
		} else {
			addr = net.JoinHostPort(t.URL.Hostname(), "80")
		}
	}
	dialTimeout := sc.Timeout
	return &fasthttp.HostClient{
		Addr:                          addr,
		IsTLS:                         isTLS,
		TLSConfig:                     &tls.Config{InsecureSkipVerify: t.Insecure},
		MaxConns:                      sc.MaxInFlight,
		MaxIdleConnDuration:           90 * time.Second,
		MaxIdemponentCallAttempts:     1,
		RetryIfErr:                    func(*fasthttp.Request, int, error) (bool, bool) { return false, false },
		DisableHeaderNamesNormalizing: true,
		DisablePathNormalizing:        true,
		NoDefaultUserAgentHeader:      true,
		Dial: func(addr string) (net.Conn, error) {
			return (&net.Dialer{Timeout: dialTimeout}).Dial("tcp", addr)
		},
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
	op.path = compileTemplate(scenario.ExpandEnv(h.Path, env), h.Vars)
	if h.Body != "" {
		op.body = compileTemplate(scenario.ExpandEnv(h.Body, env), h.Vars)
		op.hasBody = true
	}
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
	req.Reset()
	resp.Reset()
	s.uri = op.path.appendTo(append(s.uri[:0], op.prefix...), k)
	req.SetRequestURIBytes(s.uri)
	req.Header.SetMethod(op.method)
	for _, h := range op.headers {
		req.Header.Set(h[0], h[1])
	}
	if op.host != "" {
		req.Header.SetHost(op.host)
	}
	if op.hasBody {
		s.body = op.body.appendTo(s.body[:0], k)
		req.SetBodyRaw(s.body)
	}
	if err := op.hc.DoDeadline(req, resp, time.Now().Add(op.timeout)); err != nil {
		return classifyFast(err)
	}
	code := resp.StatusCode()
	if code < 0 || code >= len(op.expect) || !op.expect[code] {
		return statusClass(code)
	}
	return ""
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
