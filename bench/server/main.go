// Command server is the benchmark's target: a loopback-only HTTP/1.1 server answering
// 200 "ok" on kept-alive connections, cheap enough that the generator is what is measured.
// GET /__bench/stats (not counted) answers its counters and rusage for bench/compare.
// It prints "listening ADDR" once bound and serves until SIGINT or SIGTERM.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
)

const body = "ok"

// statsPath answers the counters instead of "ok".
const statsPath = "/__bench/stats"

var conns, reqs atomic.Int64

func stats() string {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru) // cannot fail with valid arguments
	return fmt.Sprintf("conns %d reqs %d utime_us %d stime_us %d nvcsw %d nivcsw %d", conns.Load(), reqs.Load(),
		ru.Utime.Nano()/1000, ru.Stime.Nano()/1000, ru.Nvcsw, ru.Nivcsw)
}

func statsResponse(keepAlive bool) []byte {
	s := stats()
	conn := "Connection: close\r\n"
	if keepAlive {
		conn = ""
	}
	return fmt.Appendf(nil, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n%s\r\n%s", len(s), conn, s)
}

var (
	respKeepAlive = []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 2\r\n\r\n" + body)
	respClose     = []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 2\r\nConnection: close\r\n\r\n" + body)
	respBad       = []byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
	respChunked   = []byte("HTTP/1.1 501 Not Implemented\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "loopback address to listen on (port 0: any free port)")
	mode := flag.String("mode", "raw", `"raw" (minimal HTTP/1.1, cheapest) or "nethttp" (net/http)`)
	flag.Parse()
	if err := run(*addr, *mode, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

func run(addr, mode string, stdout io.Writer) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("refusing to listen on %q: loopback addresses only", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "listening %s\n", ln.Addr())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() { <-sig; ln.Close() }()

	switch mode {
	case "raw":
		for {
			c, err := ln.Accept()
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return nil
				}
				return err
			}
			conns.Add(1)
			go serveRaw(c)
		}
	case "nethttp":
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == statsPath {
				io.WriteString(w, stats())
				return
			}
			reqs.Add(1)
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Content-Length", "2")
			io.WriteString(w, body)
		}), ConnState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				conns.Add(1)
			}
		}}
		if err := srv.Serve(ln); err != nil && !errors.Is(err, net.ErrClosed) {
			return err
		}
		return nil
	default:
		ln.Close()
		return fmt.Errorf("unknown -mode %q", mode)
	}
}

// serveRaw answers requests on c until it closes, asks to, or sends one unparsable.
func serveRaw(c net.Conn) {
	defer c.Close()
	r := bufio.NewReaderSize(c, 16<<10)
	w := bufio.NewWriterSize(c, 16<<10)
	for {
		keep, isStats, err := readRequest(r)
		switch {
		case errors.Is(err, errChunked):
			w.Write(respChunked)
			w.Flush()
			return
		case err != nil:
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, syscall.ECONNRESET) {
				w.Write(respBad)
				w.Flush()
			}
			return
		}
		if isStats {
			w.Write(statsResponse(keep))
			if w.Flush() != nil || !keep {
				return
			}
			continue
		}
		reqs.Add(1)
		if !keep {
			w.Write(respClose)
			w.Flush()
			return
		}
		w.Write(respKeepAlive)
		// Answer pipelined requests already read in one write.
		if r.Buffered() == 0 {
			if w.Flush() != nil {
				return
			}
		}
	}
}

var errChunked = errors.New("chunked request bodies are not supported")

// readRequest consumes one request, reporting whether to keep the connection and to answer stats.
func readRequest(r *bufio.Reader) (keepAlive, isStats bool, err error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return false, false, err
	}
	// "METHOD SP TARGET SP HTTP/1.x"
	line = bytes.TrimRight(line, "\r\n")
	sp := bytes.LastIndexByte(line, ' ')
	if sp < 0 || !bytes.HasPrefix(line[sp+1:], []byte("HTTP/1.")) {
		return false, false, fmt.Errorf("bad request line %q", line)
	}
	keepAlive = string(line[sp+1:]) != "HTTP/1.0"
	if m := bytes.IndexByte(line, ' '); m >= 0 && m < sp {
		isStats = string(line[m+1:sp]) == statsPath
	}
	var length int64
	for {
		h, err := r.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return false, false, errors.New("header line too long")
			}
			return false, false, err
		}
		h = bytes.TrimRight(h, "\r\n")
		if len(h) == 0 {
			break
		}
		colon := bytes.IndexByte(h, ':')
		if colon < 0 {
			return false, false, fmt.Errorf("bad header %q", h)
		}
		name, value := h[:colon], bytes.TrimSpace(h[colon+1:])
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.ParseInt(string(value), 10, 64); err != nil || length < 0 {
				return false, false, fmt.Errorf("bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			if !bytes.EqualFold(value, []byte("identity")) {
				return false, false, errChunked
			}
		case bytes.EqualFold(name, []byte("Connection")):
			if bytes.EqualFold(value, []byte("close")) {
				keepAlive = false
			} else if bytes.EqualFold(value, []byte("keep-alive")) {
				keepAlive = true
			}
		}
	}
	if length > 0 {
		if _, err := r.Discard(int(length)); err != nil {
			return false, false, err
		}
	}
	return keepAlive, isStats, nil
}
