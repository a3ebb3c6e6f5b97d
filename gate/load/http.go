package load

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/loadgate/loadgate/gate/scenario"
)

// httpOp is one workload's HTTP operation. Safe for concurrent use.
type httpOp struct {
	client  *http.Client
	method  string
	base    string // scheme://host[:port][/prefix] without a trailing slash
	path    scenario.Template
	body    scenario.Template
	hasBody bool
	header  http.Header // shared, never written after construction
	host    string
	timeout time.Duration
	maxBody int64
	expect  [600]bool
}

// transport is net/http's transport with the body limit, which newHTTPOp reads back.
type transport struct {
	*http.Transport
	maxBody int64
}

// HTTP/2 receive windows, small to bound the generator's memory.
const (
	h2StreamWindow = 256 << 10
	h2ConnWindow   = 1 << 20
	h2MaxFrame     = 64 << 10
	maxHeaderBytes = 64 << 10 // response header block, HTTP/2 (fasthttp: its 4 KiB read buffer)
)

func newTransport(sc *scenario.Scenario, t Target) *transport {
	tr := &http.Transport{
		Proxy:                  nil, // never through a proxy: the load goes only to its own target
		DialContext:            t.dialer(sc.Timeout).DialContext,
		MaxIdleConns:           0,
		MaxIdleConnsPerHost:    sc.MaxInFlight,
		IdleConnTimeout:        90 * time.Second,
		DisableCompression:     true,
		ResponseHeaderTimeout:  0, // the per-request context deadline bounds the whole exchange
		MaxResponseHeaderBytes: maxHeaderBytes,
		TLSClientConfig:        &tls.Config{InsecureSkipVerify: t.Insecure, ServerName: t.URL.Hostname()},
		HTTP2: &http.HTTP2Config{
			MaxReceiveBufferPerStream:     h2StreamWindow,
			MaxReceiveBufferPerConnection: h2ConnWindow,
			MaxReadFrameSize:              h2MaxFrame,
		},
	}
	var p http.Protocols
	if sc.HTTPVersion == "2" {
		if t.URL.Scheme == "https" {
			p.SetHTTP2(true)
		} else {
			p.SetUnencryptedHTTP2(true) // h2c with prior knowledge
		}
	} else {
		p.SetHTTP1(true)
	}
	tr.Protocols = &p
	return &transport{Transport: tr, maxBody: maxBody(sc)}
}

// maxBody is the scenario's max_body, or its default for a scenario not from the parser.
func maxBody(sc *scenario.Scenario) int64 {
	if sc.MaxBody > 0 {
		return sc.MaxBody
	}
	return scenario.DefaultMaxBody
}

func newHTTPOp(client *http.Client, t Target, w scenario.Workload, env map[string]string, timeout time.Duration) *httpOp {
	h := w.HTTP
	op := &httpOp{
		client:  client,
		timeout: timeout,
		method:  h.Method,
		base:    strings.TrimSuffix(t.URL.Scheme+"://"+t.URL.Host+t.URL.Path, "/"),
		header:  make(http.Header, len(h.Headers)),
		maxBody: scenario.DefaultMaxBody,
	}
	if tr, ok := client.Transport.(*transport); ok {
		op.maxBody = tr.maxBody
	}
	op.path = scenario.CompileTemplate(h.Path, env, h.Vars)
	if h.Body != "" {
		op.body = scenario.CompileTemplate(h.Body, env, h.Vars)
		op.hasBody = true
	}
	for k, v := range h.Headers {
		v = scenario.ExpandEnv(v, env)
		if strings.EqualFold(k, "Host") {
			op.host = v
			continue
		}
		op.header.Set(k, v)
	}
	for _, s := range w.Expect.Status {
		if s >= 0 && s < len(op.expect) {
			op.expect[s] = true
		}
	}
	return op
}

// do sends the k-th request and classifies the outcome; the timeout runs from now.
func (op *httpOp) do(ctx context.Context, k int64, s *scratch) string {
	ctx, cancel := context.WithTimeout(ctx, op.timeout)
	defer cancel()
	s.uri = op.path.AppendTo(append(s.uri[:0], op.base...), k)
	var body io.Reader
	var n int64
	if op.hasBody {
		s.body = op.body.AppendTo(s.body[:0], k)
		b := string(s.body)
		body, n = strings.NewReader(b), int64(len(b))
	}
	req, err := http.NewRequestWithContext(ctx, op.method, string(s.uri), body)
	if err != nil {
		return "request"
	}
	req.ContentLength = n
	req.Header = op.header
	if op.host != "" {
		req.Host = op.host
	}
	resp, err := op.client.Do(req)
	if err != nil {
		return classify(ctx, err)
	}
	// Closing an unread body resets the stream or closes the connection.
	if resp.ContentLength > op.maxBody {
		resp.Body.Close()
		return ClassBodyTooLarge
	}
	err = discardBody(resp.Body, op.maxBody, s.buffer())
	resp.Body.Close()
	if err != nil {
		if errors.Is(err, errBodyTooLarge) {
			return ClassBodyTooLarge
		}
		return classify(ctx, err)
	}
	if resp.StatusCode < 0 || resp.StatusCode >= len(op.expect) || !op.expect[resp.StatusCode] {
		return statusClass(resp.StatusCode)
	}
	return ""
}

var statusClasses [600]string

func init() {
	for i := range statusClasses {
		statusClasses[i] = "status " + strconv.Itoa(i)
	}
}

func statusClass(code int) string {
	if code >= 0 && code < len(statusClasses) {
		return statusClasses[code]
	}
	return "status " + strconv.Itoa(code)
}

// Failure classes.
const (
	ClassTimeout  = "timeout"
	ClassRefused  = "refused"
	ClassReset    = "reset"
	ClassEOF      = "eof"
	ClassClosed   = "closed" // closed or reset before the first response byte
	ClassTLS      = "tls"
	ClassDNS      = "dns"
	ClassCanceled = "canceled"
	ClassOther    = "other"
	// ClassBodyTooLarge: the body exceeded max_body; read up to it, connection closed.
	ClassBodyTooLarge = "body too large"
	// ClassTargetNotAllowed: the dialer refused an address that failed the target check.
	ClassTargetNotAllowed = "target not allowed"
)

// bodyChunk is a worker's body buffer size: bodies are read into it and dropped.
const bodyChunk = 16 << 10

var errBodyTooLarge = errors.New("response body above max_body")

// discardBody reads r to its end into buf; over limit bytes is errBodyTooLarge.
func discardBody(r io.Reader, limit int64, buf []byte) error {
	var n int64
	for {
		m, err := r.Read(buf)
		n += int64(m)
		if n > limit {
			return errBodyTooLarge
		}
		switch {
		case err == io.EOF:
			return nil
		case err != nil:
			return err
		}
	}
}

// classify names a transport error, never with its text: URLs may carry secrets.
func classify(ctx context.Context, err error) string {
	var ne net.Error
	var dnsErr *net.DNSError
	var tlsErr tls.RecordHeaderError
	var certErr *tls.CertificateVerificationError
	switch {
	case errors.Is(err, ErrTargetRefused):
		return ClassTargetNotAllowed
	case errors.Is(err, errBodyTooLarge):
		return ClassBodyTooLarge
	case errors.Is(err, context.DeadlineExceeded), errors.Is(ctx.Err(), context.DeadlineExceeded):
		return ClassTimeout
	case errors.Is(err, context.Canceled):
		return ClassCanceled
	case errors.Is(err, syscall.ECONNREFUSED):
		return ClassRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED):
		return ClassReset
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return ClassEOF
	case errors.As(err, &dnsErr):
		return ClassDNS
	case errors.As(err, &tlsErr), errors.As(err, &certErr):
		return ClassTLS
	case errors.As(err, &ne) && ne.Timeout():
		return ClassTimeout
	}
	if strings.Contains(err.Error(), "server closed idle connection") {
		return ClassEOF
	}
	return ClassOther
}

// describe is for a user-facing message about a target that cannot be used.
func describe(u *url.URL) string {
	c := *u
	c.User = nil
	return fmt.Sprintf("%s://%s%s", c.Scheme, c.Host, c.Path)
}
