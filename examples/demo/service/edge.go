package main

// The edge role: api, WebSocket and gRPC on one port, so one stack.target reaches
// all three; a connection opening with the HTTP/2 preface goes to gRPC.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"google.golang.org/grpc"
)

func init() {
	roles["edge"] = func(ctx context.Context, listen string) error {
		gs, err := newGRPCServer(envInt("GRPC_ITERATIONS", 200))
		if err != nil {
			return err
		}
		mux := http.NewServeMux()
		mux.Handle("/", apiHandler(env("BACKEND_URL", "http://backend:8081"), envInt("SEARCH_ITERATIONS", 3000)))
		registerWS(ctx, mux, wsConfigFromEnv())
		return serveSplit(ctx, listen, mux, gs)
	}
}

// h2Preface opens every HTTP/2 connection (RFC 9113 §3.4).
var h2Preface = []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")

// sniffTimeout bounds the wait for a new connection's first bytes.
const sniffTimeout = 10 * time.Second

// serveSplit serves HTTP/1.1 (h) and gRPC (gs) on listen until ctx ends.
func serveSplit(ctx context.Context, listen string, h http.Handler, gs *grpc.Server) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	return serveSplitOn(ctx, ln, h, gs)
}

// serveSplitOn is serveSplit on ln, which it closes; an Accept error stops both.
func serveSplitOn(ctx context.Context, ln net.Listener, h http.Handler, gs *grpc.Server) error {
	parent := ctx
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	httpL, grpcL := newConnQueue(ln.Addr()), newConnQueue(ln.Addr())
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(httpL) }()
	go func() { errc <- gs.Serve(grpcL) }()
	go func() {
		<-ctx.Done()
		_ = ln.Close()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		stopped := make(chan struct{})
		go func() { gs.GracefulStop(); close(stopped) }()
		_ = srv.Shutdown(sctx)
		select {
		case <-stopped:
		case <-sctx.Done():
			gs.Stop()
		}
		httpL.Close()
		grpcL.Close()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			if parent.Err() != nil || errors.Is(err, net.ErrClosed) {
				stop() // a listener closed under us: stop the servers too
				<-errc
				<-errc
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			stop() // the servers stop (the goroutine above) before we return
			<-errc
			<-errc
			return err
		}
		go route(ctx, c, httpL, grpcL)
	}
}

// route queues c on its protocol's listener, told by its first bytes.
func route(ctx context.Context, c net.Conn, httpL, grpcL *connQueue) {
	_ = c.SetReadDeadline(time.Now().Add(sniffTimeout))
	buf := make([]byte, 0, len(h2Preface))
	for len(buf) < len(h2Preface) && bytes.HasPrefix(h2Preface, buf) {
		n, err := c.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			_ = c.Close()
			return
		}
	}
	_ = c.SetReadDeadline(time.Time{})
	pc := &prefixConn{Conn: c, r: io.MultiReader(bytes.NewReader(buf), c)}
	q := httpL
	if bytes.Equal(buf, h2Preface) {
		q = grpcL
	}
	if !q.put(ctx, pc) {
		_ = c.Close()
	}
}

// prefixConn is a connection whose first bytes were read already.
type prefixConn struct {
	net.Conn
	r io.Reader
}

func (c *prefixConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// connQueue is a net.Listener fed by route. Safe for concurrent use.
type connQueue struct {
	addr net.Addr
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

func newConnQueue(addr net.Addr) *connQueue {
	return &connQueue{addr: addr, ch: make(chan net.Conn), done: make(chan struct{})}
}

func (q *connQueue) put(ctx context.Context, c net.Conn) bool {
	select {
	case q.ch <- c:
		return true
	case <-q.done:
	case <-ctx.Done():
	}
	return false
}

func (q *connQueue) Accept() (net.Conn, error) {
	select {
	case c := <-q.ch:
		return c, nil
	case <-q.done:
		return nil, net.ErrClosed
	}
}

func (q *connQueue) Close() error {
	q.once.Do(func() { close(q.done) })
	return nil
}

func (q *connQueue) Addr() net.Addr { return q.addr }
