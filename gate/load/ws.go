package load

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/loadgate/loadgate/gate/scenario"
)

// wsOp is a WebSocket session workload; every wait is within send time + timeout + hold.
type wsOp struct {
	client  *http.Client
	prefix  string // ws[s]://host[:port][/base path]
	path    scenario.Template
	send    []scenario.Template
	header  http.Header
	host    string
	receive int
	hold    time.Duration
	ping    time.Duration
	ws      *scenario.WS
	timeout time.Duration
	maxBody int64
}

// newWSClient is the client for handshakes: HTTP/1.1 only, no proxy, the target's dialer.
func newWSClient(sc *scenario.Scenario, t Target) (*http.Client, *http.Transport) {
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            t.dialer(sc.Timeout).DialContext,
		MaxIdleConnsPerHost:    4, // only refused handshakes leave a connection behind
		IdleConnTimeout:        30 * time.Second,
		DisableCompression:     true,
		MaxResponseHeaderBytes: maxHeaderBytes,
		TLSClientConfig:        &tls.Config{InsecureSkipVerify: t.Insecure, ServerName: t.URL.Hostname(), NextProtos: []string{"http/1.1"}},
	}
	var p http.Protocols
	p.SetHTTP1(true)
	tr.Protocols = &p
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse // a redirect is a refused handshake (handshake 302), never followed
	}}, tr
}

func newWSOp(client *http.Client, t Target, w scenario.Workload, env map[string]string, timeout time.Duration, maxBody int64) *wsOp {
	x := w.WS
	scheme := "ws://"
	if t.URL.Scheme == "https" {
		scheme = "wss://"
	}
	op := &wsOp{
		client:  client,
		prefix:  strings.TrimSuffix(scheme+t.URL.Host+t.URL.Path, "/"),
		header:  http.Header{},
		receive: x.Receive,
		hold:    x.Hold,
		ping:    x.Ping,
		ws:      x,
		timeout: timeout,
		maxBody: maxBody,
	}
	op.path = scenario.CompileTemplate(x.Path, env, x.Vars)
	for _, m := range x.Send {
		op.send = append(op.send, scenario.CompileTemplate(m, env, x.Vars))
	}
	hasUA := false
	for k, v := range x.Headers {
		v = scenario.ExpandEnv(v, env)
		if strings.EqualFold(k, "Host") {
			op.host = v
			continue
		}
		hasUA = hasUA || strings.EqualFold(k, "User-Agent")
		op.header.Set(k, v)
	}
	if !hasUA {
		op.header.Set("User-Agent", "loadgate")
	}
	return op
}

// WebSocket failure classes (besides the transport's: timeout, refused, …).
const (
	ClassMessageTooLarge = "message too large" // a message above max_body
	ClassPingTimeout     = "ping timeout"      // no pong within the timeout while held
)

var closeClasses sync.Map // websocket.StatusCode → "closed 1011"

// closedClass names a close by the peer with its status code.
func closedClass(code websocket.StatusCode) string {
	if v, ok := closeClasses.Load(code); ok {
		return v.(string)
	}
	s := "closed " + strconv.Itoa(int(code))
	if code < 1000 || code > 4999 {
		s = "closed other"
	}
	closeClasses.Store(code, s)
	return s
}

// handshakeClass names a refused handshake by its HTTP status.
func handshakeClass(code int) string {
	if code < 100 || code > 599 {
		return "handshake other"
	}
	return "handshake " + statusClass(code)[len("status "):]
}

func (op *wsOp) do(ctx context.Context, k int64, s *scratch) string {
	var st sessionStats
	return op.session(ctx, k, s, &st)
}

// session runs the k-th session into st; st.cancelled marks one of the cancelled share.
func (op *wsOp) session(ctx context.Context, k int64, s *scratch, st *sessionStats) string {
	start := time.Now()
	st.start = start
	ctx, cancel := context.WithTimeout(ctx, op.timeout+op.hold)
	defer cancel()
	s.uri = op.path.AppendTo(append(s.uri[:0], op.prefix...), k)
	c, resp, err := websocket.Dial(ctx, string(s.uri), &websocket.DialOptions{
		HTTPClient: op.client, HTTPHeader: op.header, Host: op.host,
	})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return handshakeClass(resp.StatusCode)
		}
		return op.classify(ctx, err)
	}
	defer c.CloseNow()
	c.SetReadLimit(op.maxBody)
	st.connect = time.Since(start)
	for i := range op.send {
		s.body = op.send[i].AppendTo(s.body[:0], k)
		if err := c.Write(ctx, websocket.MessageText, s.body); err != nil {
			return op.classify(ctx, err)
		}
	}
	cancelled := op.ws.Cancels(k)
	for i := 0; i < op.receive; i++ {
		if err := op.readOne(ctx, c, s); err != nil {
			return op.classify(ctx, err)
		}
		st.messages++
		if i == 0 {
			st.first = time.Since(start)
			if cancelled {
				// A person stops the answer: close now, part-way.
				st.end, st.cancelled = st.first, true
				_ = c.Close(websocket.StatusNormalClosure, "")
				return ""
			}
		}
	}
	if op.hold > 0 {
		if class := op.holdOpen(ctx, c, s, st); class != "" {
			return class
		}
	}
	st.end = time.Since(start)
	_ = c.Close(websocket.StatusNormalClosure, "")
	return ""
}

func (op *wsOp) readOne(ctx context.Context, c *websocket.Conn, s *scratch) error {
	_, r, err := c.Reader(ctx)
	if err != nil {
		return err
	}
	return discardBody(r, op.maxBody, s.buffer())
}

// holdOpen holds the socket for hold, counting pushes and pinging; its reader ends first.
func (op *wsOp) holdOpen(ctx context.Context, c *websocket.Conn, s *scratch, st *sessionStats) (class string) {
	readErr := make(chan error, 1)
	var n int64
	buf := s.buffer()
	go func() {
		for {
			_, r, err := c.Reader(ctx)
			if err == nil {
				err = discardBody(r, op.maxBody, buf)
			}
			if err != nil {
				readErr <- err
				return
			}
			n++ // read by holdOpen only after readErr
		}
	}()
	timer := time.NewTimer(op.hold)
	defer timer.Stop()
	var tick <-chan time.Time
	if op.ping > 0 {
		t := time.NewTicker(op.ping)
		defer t.Stop()
		tick = t.C
	}
	readDone := false
loop:
	for {
		select {
		case <-timer.C:
			break loop
		case err := <-readErr:
			readDone = true
			class = op.classify(ctx, err)
			break loop
		case <-tick:
			pctx, pcancel := context.WithTimeout(ctx, op.timeout)
			err := c.Ping(pctx)
			pcancel()
			if err != nil {
				class = ClassPingTimeout
				if ctx.Err() != nil {
					class = ClassTimeout
				}
				break loop
			}
		}
	}
	if class == "" {
		st.end = time.Since(st.start)
		_ = c.Close(websocket.StatusNormalClosure, "")
	} else {
		_ = c.CloseNow()
	}
	if !readDone {
		<-readErr
	}
	st.messages += n
	return class
}

// classify names a session's error: a peer's close by code, an oversized message, else classify.
func (op *wsOp) classify(ctx context.Context, err error) string {
	if code := websocket.CloseStatus(err); code != -1 {
		if code == websocket.StatusMessageTooBig && errors.Is(err, websocket.ErrMessageTooBig) {
			return ClassMessageTooLarge
		}
		return closedClass(code)
	}
	switch {
	case errors.Is(err, websocket.ErrMessageTooBig), errors.Is(err, errBodyTooLarge):
		return ClassMessageTooLarge
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return ClassTimeout
	}
	return classify(ctx, err)
}
