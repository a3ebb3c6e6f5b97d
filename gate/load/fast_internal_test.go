package load

import (
	"bytes"
	"context"
	"net"
	"net/netip"
	"net/url"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/scenario"
)

// rawHTTPServer answers every request on 127.0.0.1 with answer, one
// request at a time per connection, and allocates nothing per request
// once a connection is up: an allocation counted while it serves is the
// client's. A HEAD gets answer's header only.
func rawHTTPServer(t *testing.T, answer string) *url.URL {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	full := []byte(answer)
	head := full
	if i := bytes.Index(full, []byte("\r\n\r\n")); i >= 0 {
		head = full[:i+4]
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 64<<10)
				n := 0
				for {
					m, err := c.Read(buf[n:])
					if err != nil {
						return
					}
					n += m
					for {
						end := bytes.Index(buf[:n], []byte("\r\n\r\n"))
						if end < 0 {
							break
						}
						out := full
						if bytes.HasPrefix(buf, []byte("HEAD ")) {
							out = head
						}
						if _, err := c.Write(out); err != nil {
							return
						}
						n = copy(buf, buf[end+4:n])
					}
				}
			}()
		}
	}()
	return &url.URL{Scheme: "http", Host: ln.Addr().String(), Path: "/"}
}

// TestRegression_StreamedResponseAllocated: fasthttp's transport wrapped
// every streamed response body in an object and three closures for its
// caller (4 allocations, 184 B a response, bench/README.md "The
// generator's garbage collector"), and a generator at 20 000 req/s ran a
// collection every second on its one core. drainTransport reads the body
// itself: a request of a worker that has sent one before allocates
// nothing, whatever the framing of its response, on a lazy connection and
// on the poller's.
func TestRegression_StreamedResponseAllocated(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts do not hold under the race detector (sync.Pool drops on purpose)")
	}
	answers := map[string]string{
		"content-length": "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		"chunked":        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n3\r\nabc\r\n0\r\n\r\n",
		"empty":          "HTTP/1.1 204 No Content\r\n\r\n",
		"larger":         "HTTP/1.1 200 OK\r\nContent-Length: 70000\r\n\r\n" + string(bytes.Repeat([]byte("x"), 70000)),
	}
	for _, lazy := range []bool{true, false} {
		for name, answer := range answers {
			for _, method := range []string{"GET", "HEAD"} {
				u := rawHTTPServer(t, answer)
				tg := Target{URL: u, Addrs: []netip.Addr{netip.MustParseAddr("127.0.0.1")}}
				if lazy {
					lp := newTestLazy(t)
					lp.setAwake(1) // no dispatcher here to sweep: read as data comes
					tg.lazy = lp
				}
				sc := &scenario.Scenario{Timeout: 5 * time.Second, MaxInFlight: 1}
				w := scenario.Workload{Name: "w", HTTP: &scenario.HTTP{Method: method, Path: "/"}, Expect: scenario.Expect{Status: []int{200, 204}}}
				hc := newFastClient(sc, tg)
				op := newFastOp(hc, tg, w, nil, sc.Timeout)
				var s scratch
				ctx := context.Background()
				for k := range int64(20) { // the connection, the worker's buffer, fasthttp's pools
					if class := op.do(ctx, k, &s); class != "" {
						t.Fatalf("lazy %t, %s %s: warm-up request %d: %s", lazy, method, name, k, class)
					}
				}
				var class string
				allocs := testing.AllocsPerRun(200, func() {
					if c := op.do(ctx, 0, &s); c != "" {
						class = c
					}
				})
				hc.CloseIdleConnections()
				if class != "" {
					t.Fatalf("lazy %t, %s %s: %s", lazy, method, name, class)
				}
				if allocs > 0 {
					t.Errorf("lazy %t, %s %s: %.2f allocations a request, want none", lazy, method, name, allocs)
				}
			}
		}
	}
}
