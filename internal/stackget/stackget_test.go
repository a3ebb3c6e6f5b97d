package stackget_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadgate/loadgate/internal/stackget"
)

var req = stackget.Request{MaxBytes: 1 << 10, Timeout: 5 * time.Second}

func addrOf(ts *httptest.Server) string { return strings.TrimPrefix(ts.URL, "http://") }

// counting is a server that counts the requests it got.
func counting(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n.Add(1); h(w, r) }))
	t.Cleanup(ts.Close)
	return ts, &n
}

func TestGetReadsThePage(t *testing.T) {
	ts, _ := counting(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("c 1\n" + r.Header.Get("Accept")))
	})
	r := req
	r.Accept = "text/plain"
	p, err := stackget.Get(context.Background(), addrOf(ts), "/metrics", r)
	if err != nil {
		t.Fatal(err)
	}
	if string(p.Body) != "c 1\ntext/plain" || p.ContentType != "text/plain" {
		t.Errorf("page %+v", p)
	}
}

// Regression: the metrics page and /stub/config were read by a plain
// http.Client, which follows a redirect to any host: a /metrics answering
// 302 to another address got that address fetched.
func TestRegression_RedirectToAnotherHostIsFollowed(t *testing.T) {
	other, hits := counting(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("c 1\n")) })
	for name, loc := range map[string]string{"other host": other.URL + "/metrics", "same host": "/elsewhere"} {
		ts, _ := counting(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/elsewhere" {
				w.Write([]byte("c 1\n"))
				return
			}
			http.Redirect(w, r, loc, http.StatusFound)
		})
		_, err := stackget.Get(context.Background(), addrOf(ts), "/metrics", req)
		if !errors.Is(err, stackget.ErrRefused) || !strings.Contains(err.Error(), "redirects to") {
			t.Errorf("%s: err %v, want the redirect refused", name, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the redirect's target got %d requests, want 0", n)
	}
}

// Regression: the plain client took HTTP_PROXY / HTTPS_PROXY from the
// environment. Go never proxies a loopback address, so a black-box test on
// loopback cannot tell; the transport's Proxy is checked instead, with a
// proxy set for every host, and the Get must still reach the service.
func TestRegression_ProxyFromEnvironmentIsUsed(t *testing.T) {
	proxy, proxied := counting(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("proxied\n")) })
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("HTTPS_PROXY", proxy.URL)
	t.Setenv("NO_PROXY", "")
	tr := stackget.Transport(netip.MustParseAddrPort("172.18.0.5:9090"))
	if tr.Proxy != nil {
		u, _ := tr.Proxy(&http.Request{URL: &url.URL{Scheme: "http", Host: "172.18.0.5:9090"}})
		t.Errorf("the transport has a Proxy func (it answers %v for a container's address); want none", u)
	}
	ts, _ := counting(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("direct\n")) })
	p, err := stackget.Get(context.Background(), addrOf(ts), "/metrics", req)
	if err != nil || string(p.Body) != "direct\n" || proxied.Load() != 0 {
		t.Errorf("page %q, err %v, proxy got %d requests", p.Body, err, proxied.Load())
	}
}

// The dialer connects to the one address it was made for: another port of
// the same host, or another host, is refused before connect(2).
func TestTransportDialsOnlyItsAddress(t *testing.T) {
	ts, hits := counting(t, func(w http.ResponseWriter, r *http.Request) {})
	ap := netip.MustParseAddrPort(addrOf(ts))
	tr := stackget.Transport(netip.AddrPortFrom(ap.Addr(), ap.Port()+1))
	for _, to := range []string{addrOf(ts), fmt.Sprintf("127.0.0.2:%d", ap.Port())} {
		if c, err := tr.DialContext(context.Background(), "tcp", to); !errors.Is(err, stackget.ErrRefused) {
			if c != nil {
				c.Close()
			}
			t.Errorf("dial %s: err %v, want refused", to, err)
		}
	}
	if _, err := tr.DialContext(context.Background(), "unix", "/tmp/x"); !errors.Is(err, stackget.ErrRefused) {
		t.Errorf("unix: err %v, want refused", err)
	}
	if hits.Load() != 0 {
		t.Errorf("%d requests reached the server", hits.Load())
	}
}

func TestGetRefusesNamesAndUnbounded(t *testing.T) {
	for _, addr := range []string{"api:9090", "localhost:9090", "example.com:80", "127.0.0.1"} {
		if _, err := stackget.Get(context.Background(), addr, "/metrics", req); !errors.Is(err, stackget.ErrRefused) {
			t.Errorf("%s: err %v, want refused", addr, err)
		}
	}
	if _, err := stackget.Get(context.Background(), "127.0.0.1:1", "/metrics", stackget.Request{}); err == nil || !strings.Contains(err.Error(), "no bound") {
		t.Errorf("no bounds: err %v", err)
	}
}

func TestGetBoundsTheBody(t *testing.T) {
	ts, _ := counting(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(strings.Repeat("x", 1<<10+1))) })
	if _, err := stackget.Get(context.Background(), addrOf(ts), "/metrics", req); !errors.Is(err, stackget.ErrTooLarge) {
		t.Errorf("err %v, want ErrTooLarge", err)
	}
	at, _ := counting(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(strings.Repeat("x", 1<<10))) })
	if p, err := stackget.Get(context.Background(), addrOf(at), "/metrics", req); err != nil || len(p.Body) != 1<<10 {
		t.Errorf("at the bound: %d bytes, err %v", len(p.Body), err)
	}
}

func TestGetSaysTheStatus(t *testing.T) {
	ts, _ := counting(t, func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", http.StatusServiceUnavailable) })
	_, err := stackget.Get(context.Background(), addrOf(ts), "/metrics", req)
	var se *stackget.StatusError
	if !errors.As(err, &se) || se.Code != 503 || err.Error() != "GET /metrics answered 503" {
		t.Errorf("err %v", err)
	}
}
