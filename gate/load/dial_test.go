package load_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/load"
)

// fixedResolver answers every lookup with ips.
func fixedResolver(ips ...string) func(context.Context, string) ([]net.IP, error) {
	return func(context.Context, string) ([]net.IP, error) {
		var out []net.IP
		for _, s := range ips {
			out = append(out, net.ParseIP(s))
		}
		return out, nil
	}
}

// rebinder answers first the first time and then every later time: the
// DNS-rebinding name.
type rebinder struct {
	calls       atomic.Int64
	first, then net.IP
}

func (r *rebinder) lookup(context.Context, string) ([]net.IP, error) {
	if r.calls.Add(1) == 1 {
		return []net.IP{r.first}, nil
	}
	return []net.IP{r.then}, nil
}

func TestLoopbackTargetCheck(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		raw     string
		answer  []string
		wantErr string // "" accepted
	}{
		{"http://127.0.0.1:8080", nil, ""},
		{"http://127.1.2.3:8080/base", nil, ""},
		{"http://[::1]:8080", nil, ""},
		{"http://10.1.2.3:80", nil, "not a loopback address"},
		{"ftp://127.0.0.1/", nil, "scheme must be http or https"},
		{"http://u:p@127.0.0.1/", nil, "credentials"},
		{"http://127.0.0.1/?q=1", nil, "query or fragment"},
		{"http://127.0.0.1:99999", nil, "not a TCP port"},
		{"http://svc.test:80", []string{"127.0.0.1", "::1"}, ""},
		{"http://svc.test:80", []string{"::ffff:127.0.0.1"}, ""},
		{"http://svc.test:80", []string{"127.0.0.1", "192.0.2.1"}, "resolves to 192.0.2.1, which is not a loopback address"},
		{"http://svc.test:80", []string{}, "no address"},
	} {
		tgt, err := load.ParseTarget(c.raw)
		if err == nil {
			if c.answer != nil {
				tgt.LookupIP = fixedResolver(c.answer...)
			}
			tgt, err = tgt.CheckLoopback(ctx)
		}
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s %v: %v, want accepted", c.raw, c.answer, err)
		case c.wantErr == "" && len(tgt.Addrs) == 0:
			t.Errorf("%s %v: accepted without addresses", c.raw, c.answer)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s %v: error %v, want one containing %q", c.raw, c.answer, err, c.wantErr)
		}
	}
	// A stack's container address is an IP literal: Resolve takes it as given.
	u, _ := urlParse("http://172.18.0.5:8080")
	tgt, err := load.Target{URL: u}.Resolve(ctx)
	if err != nil || len(tgt.Addrs) != 1 || tgt.Addrs[0] != netip.MustParseAddr("172.18.0.5") {
		t.Errorf("Resolve(stack address) = %v, %v", tgt.Addrs, err)
	}
	// A name is never trusted to point anywhere but loopback.
	u, _ = urlParse("http://svc.test:8080")
	if _, err := (load.Target{URL: u, LookupIP: fixedResolver("172.18.0.5")}).Resolve(ctx); !errors.Is(err, load.ErrTargetRefused) {
		t.Errorf("Resolve(name → 172.18.0.5) = %v, want ErrTargetRefused", err)
	}
}

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

func serveCounting(t *testing.T, addr string) (*countingListener, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: l}
	var reqs atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reqs.Add(1) })}
	srv.Protocols = new(http.Protocols)
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	go srv.Serve(cl)
	t.Cleanup(func() { srv.Close() })
	return cl, &reqs
}

// DNS rebinding: a name that answers 127.0.0.1 when it is checked and
// 192.0.2.1 afterwards must not send one connection to 192.0.2.1. The test
// runs in an empty network namespace of its own (this test binary again,
// cloned with CLONE_NEWNET), where 192.0.2.1 is a local address with a
// listener that counts connections: nothing can leave the namespace, and a
// connection to 192.0.2.1 would be counted, not lost.
func TestRegression_DNSRebindingDialsCheckedIP(t *testing.T) {
	if os.Getenv("LOADGATE_NETNS_CHILD") == "1" {
		rebindingInNamespace(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRegression_DNSRebindingDialsCheckedIP$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "LOADGATE_NETNS_CHILD=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		// The clone itself failed: no permission for a network namespace.
		msg := fmt.Sprintf("!!! CANNOT CREATE A NETWORK NAMESPACE (%v): the DNS-rebinding test NOT RUN (it needs root or CAP_SYS_ADMIN; set LOADGATE_REQUIRE_NETNS=1 to fail instead)", err)
		if os.Getenv("LOADGATE_REQUIRE_NETNS") == "1" {
			t.Fatal(msg)
		}
		fmt.Fprintln(os.Stderr, msg)
		t.Skip(msg)
	}
	if strings.Contains(string(out), "NETNS SKIP") && os.Getenv("LOADGATE_REQUIRE_NETNS") != "1" {
		fmt.Fprintln(os.Stderr, "!!! DNS-rebinding test NOT RUN:\n"+string(out))
		t.Skip("!!! DNS-rebinding test NOT RUN: " + string(out))
	}
	t.Logf("in its own network namespace:\n%s", out)
	if err != nil {
		t.Fatalf("child in its network namespace: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: TestRegression_DNSRebindingDialsCheckedIP") {
		t.Fatalf("child did not pass")
	}
}

func rebindingInNamespace(t *testing.T) {
	ip := func(args ...string) error {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skipf("NETNS SKIP: no ip command (iproute2): %v", err)
	}
	// An empty namespace has only a down lo: nothing here can reach the
	// network outside.
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	if len(ifs) != 1 || ifs[0].Name != "lo" {
		t.Fatalf("interfaces %v: not an empty network namespace", ifs)
	}
	if err := ip("link", "set", "lo", "up"); err != nil {
		t.Fatal(err)
	}
	// 192.0.2.1 (TEST-NET-1) on a dummy interface, or on lo where the dummy
	// driver is missing: a non-loopback address that is local to this
	// namespace.
	where := "dummy interface lgdummy0"
	if err := ip("link", "add", "lgdummy0", "type", "dummy"); err == nil {
		if err := ip("addr", "add", "192.0.2.1/32", "dev", "lgdummy0"); err != nil {
			t.Fatal(err)
		}
		if err := ip("link", "set", "lgdummy0", "up"); err != nil {
			t.Fatal(err)
		}
	} else {
		where = "lo (no dummy driver: " + strings.TrimSpace(err.Error()) + ")"
		if err := ip("addr", "add", "192.0.2.1/32", "dev", "lo"); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("192.0.2.1 is on %s", where)

	good, goodReqs := serveCounting(t, "127.0.0.1:0")
	port := good.Addr().(*net.TCPAddr).Port
	evil, evilReqs := serveCounting(t, fmt.Sprintf("192.0.2.1:%d", port))
	// The evil listener is reachable: a connection there would be counted.
	if c, err := net.DialTimeout("tcp", evil.Addr().String(), time.Second); err != nil {
		t.Fatalf("192.0.2.1 not reachable in the namespace: %v", err)
	} else {
		c.Close()
	}
	for evil.n.Load() != 1 {
		time.Sleep(time.Millisecond)
	}
	evil.n.Store(0)

	raw := fmt.Sprintf("http://rebind.test:%d", port)
	for _, version := range []string{"1.1", "2"} {
		sc := mustScenario(t, fmt.Sprintf(`
name: rebind
http_version: "%s"
max_in_flight: 64
phases: [{name: sustain, rate: 400, duration: 500ms}]
workloads: [{name: a, share: 1, http: {path: /}}]
`, version))
		run := func(name string, tgt load.Target) (ok, offered int64, classes map[string]int64) {
			good.n.Store(0)
			goodReqs.Store(0)
			res, err := load.Run(context.Background(), load.Config{Scenario: sc, Target: tgt})
			if err != nil {
				t.Fatalf("http %s %s: %v", version, name, err)
			}
			assertEveryRequestRecorded(t, res)
			ok, _, _ = totals(res)
			t.Logf("http %s %s: offered %d, ok %d, classes %v; connections to 127.0.0.1 %d (requests %d), to 192.0.2.1 %d (requests %d)",
				version, name, res.Offered, ok, failures(res), good.n.Load(), goodReqs.Load(), evil.n.Load(), evilReqs.Load())
			if n := evil.n.Load(); n != 0 {
				t.Errorf("http %s %s: %d connections reached 192.0.2.1, want 0", version, name, n)
			}
			return ok, res.Offered, failures(res)
		}

		// The CLI's path: checked once, run with the checked addresses.
		r := &rebinder{first: net.ParseIP("127.0.0.1"), then: net.ParseIP("192.0.2.1")}
		tgt, err := load.ParseTarget(raw)
		if err != nil {
			t.Fatal(err)
		}
		tgt.LookupIP = r.lookup
		if tgt, err = tgt.CheckLoopback(context.Background()); err != nil {
			t.Fatal(err)
		}
		ok, offered, _ := run("checked target", tgt)
		if ok != offered || goodReqs.Load() != offered {
			t.Errorf("http %s checked target: ok %d, requests at 127.0.0.1 %d, of %d: want all", version, ok, goodReqs.Load(), offered)
		}
		if n := r.calls.Load(); n != 1 {
			t.Errorf("http %s checked target: resolved %d times, want once", version, n)
		}

		// A Target without addresses: the run resolves the name once, at
		// its first connection, and every later connection (64 workers)
		// dials that answer.
		r = &rebinder{first: net.ParseIP("127.0.0.1"), then: net.ParseIP("192.0.2.1")}
		tgt, _ = load.ParseTarget(raw)
		tgt.LookupIP = r.lookup
		ok, offered, _ = run("unchecked target", tgt)
		if ok != offered || goodReqs.Load() != offered {
			t.Errorf("http %s unchecked target: ok %d, requests at 127.0.0.1 %d, of %d: want all", version, ok, goodReqs.Load(), offered)
		}
		if n := r.calls.Load(); n != 1 {
			t.Errorf("http %s unchecked target: resolved %d times, want once", version, n)
		}

		// A caller that checked and dropped the addresses: the run's own
		// resolution gets 192.0.2.1 and Run refuses the target before any
		// request; nothing connects.
		r = &rebinder{first: net.ParseIP("127.0.0.1"), then: net.ParseIP("192.0.2.1")}
		tgt, _ = load.ParseTarget(raw)
		tgt.LookupIP = r.lookup
		if _, err := tgt.CheckLoopback(context.Background()); err != nil {
			t.Fatal(err)
		}
		good.n.Store(0)
		res, err := load.Run(context.Background(), load.Config{Scenario: sc, Target: tgt})
		if !errors.Is(err, load.ErrTargetRefused) || res != nil {
			t.Errorf("http %s addresses dropped: Run = %v, %v; want a refusal (ErrTargetRefused)", version, res, err)
		}
		if g, e := good.n.Load(), evil.n.Load(); g != 0 || e != 0 {
			t.Errorf("http %s addresses dropped: connections to 127.0.0.1 %d, to 192.0.2.1 %d; want none", version, g, e)
		}
	}
}

// A name that resolves outside loopback is never dialed: Run refuses it
// before the first request (ErrTargetRefused), on both HTTP versions.
func TestNameOutsideLoopbackIsNotDialed(t *testing.T) {
	for _, version := range []string{"1.1", "2"} {
		sc := mustScenario(t, fmt.Sprintf(`
name: outside
http_version: "%s"
phases: [{name: sustain, rate: 50, duration: 200ms}]
workloads: [{name: a, share: 1, http: {path: /}}]
`, version))
		u, _ := urlParse("http://outside.test:9")
		res, err := load.Run(context.Background(), load.Config{Scenario: sc, Target: load.Target{URL: u, LookupIP: fixedResolver("192.0.2.1")}})
		if !errors.Is(err, load.ErrTargetRefused) || res != nil {
			t.Errorf("http %s: Run = %v, %v; want no result and an error wrapping ErrTargetRefused", version, res, err)
		}
	}
}

// An IPv6 loopback target is dialed as [::1]:port on both HTTP versions.
func TestIPv6LoopbackTarget(t *testing.T) {
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	var reqs atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reqs.Add(1) })}
	srv.Protocols = new(http.Protocols)
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	go srv.Serve(l)
	defer srv.Close()
	for _, version := range []string{"1.1", "2"} {
		reqs.Store(0)
		sc := mustScenario(t, fmt.Sprintf(`
name: v6
http_version: "%s"
phases: [{name: sustain, rate: 40, duration: 250ms}]
workloads: [{name: a, share: 1, http: {path: /}}]
`, version))
		tgt, err := load.LoopbackTarget(context.Background(), "http://"+l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		res, err := load.Run(context.Background(), load.Config{Scenario: sc, Target: tgt})
		if err != nil {
			t.Fatal(err)
		}
		assertEveryRequestRecorded(t, res)
		if ok, _, _ := totals(res); ok != res.Offered || reqs.Load() != res.Offered {
			t.Errorf("http %s: ok %d, server saw %d, of %d; classes %v", version, ok, reqs.Load(), res.Offered, failures(res))
		}
	}
}
