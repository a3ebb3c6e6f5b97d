package load

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loadgate/loadgate/gate/scenario"
)

// Lazy reads' tests are white-box: the sweep, the socket and the
// completion instant are the engine's internals (lazy.go, lazyconn.go).

func newTestLazy(t *testing.T) *lazyPoll {
	t.Helper()
	lp := newLazyPoll()
	if lp == nil {
		t.Skip("lazy reads unavailable (LOADGATE_ENGINE_LAZY=0 or no epoll)")
	}
	t.Cleanup(lp.close)
	return lp
}

// holdRxTimestamps turns the kernel's receive timestamps on for the rest of
// the test and returns once they are on. The first socket that asks for
// them (when no other has them) only schedules their start in a kernel work
// item (net_enable_timestamp), and a TCP segment that arrives before it ran
// carries no stamp: the lazy read then has none to time the response by
// (and the engine falls back to the read's instant). On a loaded machine
// that work item runs late, so a test that checks the stamp holds one
// loopback connection with stamps on, until a byte arrives stamped on it.
func holdRxTimestamps(t *testing.T) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := l.Accept()
	if err != nil {
		c.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	on := false
	if err := rc.Control(func(fd uintptr) { on = enableRxTimestamps(int(fd)) }); err != nil || !on {
		t.Fatalf("receive timestamps not enabled: %v", err)
	}
	buf, oob := make([]byte, 1), make([]byte, 128)
	for i := 0; i < 5000; i++ { // bounded: 5000 tries, 1 ms apart
		if _, err := s.Write([]byte{1}); err != nil {
			t.Fatal(err)
		}
		stamped, rerr := false, error(nil)
		if err := rc.Read(func(fd uintptr) bool {
			_, oobn, _, _, e := unix.Recvmsg(int(fd), buf, oob, unix.MSG_DONTWAIT)
			if e == unix.EAGAIN {
				return false
			}
			if rerr = e; e == nil {
				ns, ok := parseRxTimestamp(oob[:oobn])
				stamped = ok && ns != 0
			}
			return true
		}); err != nil || rerr != nil {
			t.Fatalf("read on the timestamped connection: %v %v", err, rerr)
		}
		if stamped {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the kernel stamped no received segment in 5000 tries")
}

// lazyPair dials a lazy connection to a loopback listener and returns it
// with the server's side of it.
func lazyPair(t *testing.T, lp *lazyPoll) (*lazyConn, net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	u, _ := url.Parse("http://127.0.0.1:" + strconv.Itoa(port))
	d := Target{URL: u, Addrs: []netip.Addr{netip.MustParseAddr("127.0.0.1")}}.dialer(time.Second)
	d.lazy = lp
	accepted := make(chan net.Conn, 1)
	go func() {
		s, err := l.Accept()
		if err == nil {
			accepted <- s
		}
		close(accepted)
	}()
	c, err := d.DialContext(context.Background(), "tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	lc, ok := c.(*lazyConn)
	if !ok {
		c.Close()
		t.Fatalf("dialer returned %T, want a lazy connection", c)
	}
	s, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { lc.Close(); s.Close() })
	return lc, s
}

// A response that arrived while its reader was parked is not read until the
// dispatcher's sweep, and its completion instant is its arrival (the
// kernel's receive timestamp), not the late read.
func TestLazyResponseTimedAtArrival(t *testing.T) {
	lp := newTestLazy(t)
	holdRxTimestamps(t)
	c, srv := lazyPair(t, lp)
	e := &engine{start: time.Now(), lazy: lp}

	sent := e.clock()
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	answered := make(chan time.Duration, 1)
	answer := make(chan struct{})
	go func() {
		buf := make([]byte, 4)
		if _, err := io.ReadFull(srv, buf); err != nil {
			return
		}
		<-answer
		srv.Write([]byte("pong")) // on loopback the segment is queued, and stamped, before Write returns
		answered <- e.clock()
	}()
	type read struct {
		n   int
		err error
		at  time.Duration
	}
	got := make(chan read, 1)
	go func() {
		n, err := c.Read(make([]byte, 16))
		got <- read{n, err, e.clock()}
	}()
	for i := 0; lp.parked.Load() == 0; i++ { // the reader found no data and parked
		if i == 5000 {
			t.Fatal("the reader never parked")
		}
		time.Sleep(time.Millisecond)
	}
	close(answer)
	wrote := <-answered
	time.Sleep(50 * time.Millisecond)
	select {
	case r := <-got:
		t.Fatalf("the read returned (%d, %v) without a sweep: the response woke its reader", r.n, r.err)
	default:
	}
	lp.sweep() // the dispatcher's next wake-up
	var r read
	select {
	case r = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the sweep did not wake the parked reader")
	}
	if r.err != nil || r.n != 4 {
		t.Fatalf("read %d, %v", r.n, r.err)
	}
	done := e.completion(c.stamp, sent, e.clock())
	if c.stamp.wallNS == 0 {
		t.Fatal("no receive timestamp on the read")
	}
	if done < sent || done > wrote {
		t.Errorf("completion at %v, want between the send %v and the server's write %v (read at %v)", done, sent, wrote, r.at)
	}
	if r.at-done < 50*time.Millisecond {
		t.Errorf("read %v after the completion, want ≥ 50ms (the reader was parked until the sweep)", r.at-done)
	}
}

// A response larger than the receive buffer (its initial 128 KiB: the
// kernel grows it only while the application reads) is read at once once
// it has started (sweeps deliver its start, as the next due times would;
// none comes after), and timed by its last segment, which could only
// arrive after the reading made room for it.
func TestLazyLargeResponseReadPromptly(t *testing.T) {
	const size = 8 << 20
	lp := newTestLazy(t)
	c, srv := lazyPair(t, lp)
	e := &engine{start: time.Now(), lazy: lp}
	sent := e.clock()
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	writing := make(chan struct{})
	go func() {
		buf := make([]byte, 4)
		if _, err := io.ReadFull(srv, buf); err != nil {
			return
		}
		close(writing)
		srv.Write(make([]byte, size)) // blocks while the client's buffer is full
	}()
	<-writing
	// Wait until the receive buffer holds some of the response, then a
	// while longer for it to fill and the server to block.
	for i := 0; ; i++ {
		if n, err := unix.IoctlGetInt(c.fd, unix.SIOCINQ); err == nil && n > 0 {
			break
		}
		if i == 5000 {
			t.Fatal("the response did not start arriving")
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	readFrom := e.clock()
	// The first read finds the start of the response, or parks until the
	// poll reports it (a read at the start of a response may skip the read
	// that would find nothing): the dispatcher's sweeps deliver it. The rest
	// is read without any.
	buf := make([]byte, bodyChunk)
	n, err := readSweeping(t, lp, c, buf)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	var total atomic.Int64
	total.Add(int64(n))
	go func() {
		for total.Load() < size {
			n, err := c.Read(buf)
			if err != nil {
				done <- err
				return
			}
			total.Add(int64(n))
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the rest of a partly read response was not read without a sweep (%d of %d bytes read)", total.Load(), size)
	}
	readTo := e.clock()
	at := e.completion(c.stamp, sent, readTo)
	if at < readFrom || at > readTo {
		t.Errorf("completion %v, want within the reading %v..%v (the last segment's arrival)", at, readFrom, readTo)
	}
}

// A deadline, a deadline moved while parked, and Close each end a parked
// Read.
func TestLazyParkedReadEnds(t *testing.T) {
	lp := newTestLazy(t)
	read := func(c *lazyConn) chan error {
		ch := make(chan error, 1)
		go func() {
			_, err := c.Read(make([]byte, 16))
			ch <- err
		}()
		return ch
	}
	wait := func(ch chan error) error {
		select {
		case err := <-ch:
			return err
		case <-time.After(5 * time.Second):
			t.Fatal("the parked Read did not return")
			return nil
		}
	}
	timeout := func(err error) bool {
		var ne net.Error
		return errors.Is(err, os.ErrDeadlineExceeded) && errors.As(err, &ne) && ne.Timeout()
	}

	c, _ := lazyPair(t, lp)
	c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if err := wait(read(c)); !timeout(err) {
		t.Errorf("deadline: Read returned %v, want a timeout", err)
	}

	c, _ = lazyPair(t, lp)
	ch := read(c)
	time.Sleep(20 * time.Millisecond)
	c.SetReadDeadline(time.Unix(1, 0))
	if err := wait(ch); !timeout(err) {
		t.Errorf("deadline set while parked: Read returned %v, want a timeout", err)
	}

	c, _ = lazyPair(t, lp)
	ch = read(c)
	time.Sleep(20 * time.Millisecond)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := wait(ch); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Close: Read returned %v, want net.ErrClosed", err)
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Write after Close: %v, want net.ErrClosed", err)
	}
}

// LOADGATE_ENGINE_LAZY=0 turns lazy reads off; TLS keeps the poller path.
func TestLazySwitchAndFallback(t *testing.T) {
	for v, want := range map[string]bool{"": true, "1": true, "0": false} {
		if got := lazyWanted(v); got != want {
			t.Errorf("LOADGATE_ENGINE_LAZY=%q: lazy %v, want %v", v, got, want)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	addr := u.Host
	sc := &scenario.Scenario{Timeout: time.Second, MaxInFlight: 4}
	dialType := func(tg Target) string {
		c, err := newFastClient(sc, tg).DialTimeout(tg.hostPort(), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		switch c.(type) {
		case *lazyConn:
			return "lazy"
		case *rawConn:
			return "raw"
		}
		return "other"
	}
	lp := newTestLazy(t)
	plain := Target{URL: u, Addrs: []netip.Addr{netip.MustParseAddr("127.0.0.1")}, lazy: lp}
	if got := dialType(plain); got != "lazy" {
		t.Errorf("http with lazy reads on: %s connection", got)
	}
	tlsURL, _ := url.Parse("https://" + addr)
	secure := plain
	secure.URL = tlsURL
	if got := dialType(secure); got != "raw" {
		t.Errorf("https: %s connection, want the poller's", got)
	}

	old := lazyEnabled
	lazyEnabled = func() bool { return false }
	defer func() { lazyEnabled = old }()
	off := newLazyPoll()
	if off != nil {
		off.close()
		t.Fatal("lazy reads switched off, yet a lazy poll was made")
	}
	plain.lazy = off
	if got := dialType(plain); got != "raw" {
		t.Errorf("lazy reads off: %s connection, want the poller's", got)
	}
}

// Through fasthttp: the response's stamp reaches the worker's scratch and
// gives a completion between the send and the operation's return.
func TestLazyFastOpStampsResponse(t *testing.T) {
	lp := newTestLazy(t)
	holdRxTimestamps(t)
	lp.setAwake(1) // as in the drain: no sweeps here
	for _, body := range []int{0, 2, 300 << 10} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(strings.Repeat("x", body)))
		}))
		u, _ := url.Parse(srv.URL)
		tg := Target{URL: u, Addrs: []netip.Addr{netip.MustParseAddr("127.0.0.1")}, lazy: lp}
		sc := &scenario.Scenario{Timeout: 5 * time.Second, MaxInFlight: 4}
		w := scenario.Workload{Name: "w", HTTP: &scenario.HTTP{Method: "GET", Path: "/"}, Expect: scenario.Expect{Status: []int{200}}}
		op := newFastOp(newFastClient(sc, tg), tg, w, nil, sc.Timeout)
		e := &engine{start: time.Now(), lazy: lp}
		var s scratch
		for i := range 3 {
			sent := e.clock()
			if class := op.do(context.Background(), int64(i), &s); class != "" {
				t.Fatalf("body %d: request %d: %s", body, i, class)
			}
			now := e.clock()
			if s.rx.wallNS == 0 {
				t.Fatalf("body %d: request %d: no receive timestamp in the scratch", body, i)
			}
			if at := e.completion(s.rx, sent, now); at < sent || at > now {
				t.Errorf("body %d: completion %v outside %v..%v", body, at, sent, now)
			}
		}
		srv.Close()
	}
}

// TestRegression_EndlessBodyOutlivedItsTimeout: a peer that sends faster
// than it is read never lets a Read reach EAGAIN and park, where the
// deadline used to be looked at, so an endless chunked body ran to
// max_body instead of ending at its timeout (TestRegression_HugeBodyBoundedMemory
// under a starved test process). A deadline that has passed fails the next
// Read and Write even with data ready, as Go's poller does.
func TestRegression_EndlessBodyOutlivedItsTimeout(t *testing.T) {
	lp := newTestLazy(t)
	c, s := lazyPair(t, lp)
	if _, err := s.Write([]byte("data that is ready to read")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := c.Read(buf); err != nil { // the data has arrived: a read with no deadline gets it
		t.Fatalf("first read: %v", err)
	}
	c.SetReadDeadline(time.Now().Add(-time.Millisecond))
	var ne net.Error
	if _, err := c.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("read past its deadline with data ready: %v, want a timeout", err)
	}
	c.SetWriteDeadline(time.Now().Add(-time.Millisecond))
	if _, err := c.Write([]byte("x")); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("write past its deadline: %v, want a timeout", err)
	}
	c.SetDeadline(time.Time{})
	if _, err := c.Read(buf); err != nil {
		t.Errorf("read after the deadline was cleared: %v", err)
	}
}

// The first read of a response parks without reading when the poll has not
// reported the socket since the last read drained it (the read would find
// nothing). Not once the poll has reported the peer's FIN: a FIN read with
// the last response leaves no later event, and the next request's read
// must find the end of the connection at once, not wait for a report
// (here no sweep comes for it).
func TestLazyReadAfterPeerClosedDoesNotWait(t *testing.T) {
	lp := newTestLazy(t)
	c, srv := lazyPair(t, lp)
	exchange := func(req, resp string, closeAfter bool) {
		t.Helper()
		if _, err := c.Write([]byte(req)); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(srv, make([]byte, len(req))); err != nil {
			t.Fatal(err)
		}
		srv.Write([]byte(resp))
		if closeAfter {
			srv.Close() // the FIN follows the response
			waitTCPState(t, c.fd, unix.BPF_TCP_CLOSE_WAIT)
		}
		buf := make([]byte, 64)
		n, err := readSweeping(t, lp, c, buf)
		if err != nil || string(buf[:n]) != resp {
			t.Fatalf("read %q, %v; want %q", buf[:n], err, resp)
		}
	}
	exchange("one", "first", false)
	exchange("two", "second", true) // its sweep reports the response and the FIN
	c.Write([]byte("three"))        // may fail or not: the peer is gone
	got := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 64))
		got <- err
	}()
	select {
	case err := <-got:
		if err == nil {
			t.Fatal("read after the peer closed returned data")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the read after the peer's FIN waited for a report that never comes")
	}
}

// readSweeping is c.Read with the dispatcher's sweeps: one every
// millisecond until the read returns.
func readSweeping(t *testing.T, lp *lazyPoll, c *lazyConn, buf []byte) (int, error) {
	t.Helper()
	type read struct {
		n   int
		err error
	}
	got := make(chan read, 1)
	go func() {
		n, err := c.Read(buf)
		got <- read{n, err}
	}()
	for i := 0; ; i++ {
		select {
		case r := <-got:
			return r.n, r.err
		case <-time.After(time.Millisecond):
			lp.sweep()
		}
		if i == 5000 {
			t.Fatal("the read did not return with sweeps")
		}
	}
}

// waitTCPState waits until the socket fd is in the TCP state (BPF_TCP_*).
func waitTCPState(t *testing.T, fd int, state uint8) {
	t.Helper()
	for i := 0; ; i++ {
		if info, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO); err == nil && info.State == state {
			return
		}
		if i == 5000 {
			t.Fatalf("the socket never reached TCP state %d", state)
		}
		time.Sleep(time.Millisecond)
	}
}

// A worker's scratch reuses a workload's whole request while its requests
// are all the same; a request of another workload in between (one with a
// placeholder, built for every request) must not be sent as the first
// one's next request.
func TestFastOpReusedRequestStaysItsWorkloads(t *testing.T) {
	got := make(chan string, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Method + " " + r.URL.RequestURI()
	}))
	newOp := fastOpsAt(t, srv)
	static := newOp(scenario.HTTP{Method: "GET", Path: "/static"})
	numbered := newOp(scenario.HTTP{Method: "POST", Path: "/items/{n}", Body: "x"})
	var s scratch
	for i, op := range []*fastOp{static, static, numbered, static, numbered, static} {
		if class := op.do(context.Background(), int64(i), &s); class != "" {
			t.Fatalf("request %d: %s", i, class)
		}
	}
	var seen []string
	for range 6 {
		seen = append(seen, <-got)
	}
	want := []string{"GET /static", "GET /static", "POST /items/2", "GET /static", "POST /items/4", "GET /static"}
	if strings.Join(seen, ", ") != strings.Join(want, ", ") {
		t.Errorf("the server saw %v, want %v", seen, want)
	}
}

// Regression: a request built once and sent again kept the worker's
// scratch body (SetBodyRaw), which a WebSocket or gRPC operation of the
// same worker overwrites: a fixed POST body went out as another workload's
// message.
func TestRegression_ReusedRequestSentAnotherWorkloadsBody(t *testing.T) {
	got := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- string(b)
	}))
	newOp := fastOpsAt(t, srv)
	login := newOp(scenario.HTTP{Method: "POST", Path: "/login", Body: `{"user":"alice","pw":"x"}`})
	var s scratch
	for i := range 2 {
		if class := login.do(context.Background(), int64(i), &s); class != "" {
			t.Fatalf("request %d: %s", i, class)
		}
		// Another workload of this worker (a WebSocket send, say) renders
		// its message into the same scratch.
		s.body = append(s.body[:0], `{"q":"hello 7"}`...)
	}
	for i := range 2 {
		if b := <-got; b != `{"user":"alice","pw":"x"}` {
			t.Errorf("request %d: the server got body %q", i, b)
		}
	}
}

// fastOpsAt makes fastOps of one fasthttp client to srv (closed, with its
// idle connections, when the test ends), each expecting 200.
func fastOpsAt(t *testing.T, srv *httptest.Server) func(h scenario.HTTP) *fastOp {
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	tg := Target{URL: u, Addrs: []netip.Addr{netip.MustParseAddr("127.0.0.1")}}
	sc := &scenario.Scenario{Timeout: 5 * time.Second, MaxInFlight: 4}
	hc := newFastClient(sc, tg)
	t.Cleanup(hc.CloseIdleConnections)
	return func(h scenario.HTTP) *fastOp {
		return newFastOp(hc, tg, scenario.Workload{Name: "w", HTTP: &h, Expect: scenario.Expect{Status: []int{200}}}, nil, sc.Timeout)
	}
}

// LOADGATE_ENGINE_SPIN and LOADGATE_ENGINE_SPIN_AFTER_SLEEP set how short a
// wait must be to be spun instead of slept; a value that is not a duration
// from 0 to 1ms keeps the default.
func TestSpinDurationFrom(t *testing.T) {
	const def = 45 * time.Microsecond
	for _, c := range []struct {
		v    string
		want time.Duration
	}{
		{"", def},                       // unset: the measured default
		{"60us", 60 * time.Microsecond}, // a side-by-side run's value
		{"0s", 0},                       // never spin: every such wait sleeps
		{"1ms", time.Millisecond},       // the largest accepted
		{"2ms", def},                    // past the bound: a spin that long is a busy loop
		{"-5us", def},                   // negative: meaningless
		{"fast", def},                   // not a duration
		{"30", def},                     // no unit: not a Go duration
	} {
		if got := spinDurationFrom(c.v, def); got != c.want {
			t.Errorf("%q: %v, want %v", c.v, got, c.want)
		}
	}
}

// Unset, the two variables leave the engine's waits at their measured
// defaults: 30 µs, and 45 µs after a sleep.
func TestSpinDefaults(t *testing.T) {
	for _, c := range []struct {
		env       string
		got, want time.Duration
	}{
		{"LOADGATE_ENGINE_SPIN", spinFloor, 30 * time.Microsecond},
		{"LOADGATE_ENGINE_SPIN_AFTER_SLEEP", spinAfterSleep, 45 * time.Microsecond},
	} {
		if _, set := os.LookupEnv(c.env); set {
			t.Logf("%s is set: its default is not what this process uses", c.env)
			continue
		}
		if c.got != c.want {
			t.Errorf("%s unset: %v, want %v", c.env, c.got, c.want)
		}
	}
}

// The dispatcher's choice between spinning and sleeping, with the defaults
// (floor 30 µs, 45 µs after a sleep) unless a row says otherwise. At
// 20 000 req/s (50 µs gaps) the floor alone let half to nearly all of the
// waits sleep on the 4 December afternoon's host (0.50–0.96 voluntary
// switches per request): a sleep's wake-up latency and the dispatch left
// 35–45 µs, just over it.
func TestSpins(t *testing.T) {
	const (
		floor = spinFloorDefault
		after = spinAfterSleepDefault
	)
	us := func(n int) time.Duration { return time.Duration(n) * time.Microsecond }
	for _, c := range []struct {
		d            time.Duration
		slept        bool
		floor, after time.Duration
		want         bool
	}{
		{us(1), false, floor, after, true},      // a wait of a microsecond: a sleep costs more than that
		{us(30), false, floor, after, true},     // the floor itself is spun
		{us(31), false, floor, after, false},    // past the floor after a spin: sleep (20 000/s, on time: 50 − dispatch)
		{us(31), true, floor, after, true},      // the same wait after a sleep, whose wake-up came late: spin
		{us(45), true, floor, after, true},      // the after-sleep bound itself is spun
		{us(46), true, floor, after, false},     // past it even after a sleep: sleep
		{us(180), true, floor, after, false},    // 5 000/s: a gap of 200 µs sleeps every time, as before
		{us(80), true, floor, after, false},     // 10 000/s: so does a gap of 100 µs
		{us(40), true, floor, 0, false},         // LOADGATE_ENGINE_SPIN_AFTER_SLEEP=0: the floor alone decides
		{us(20), true, 0, 0, false},             // both 0: every wait sleeps
		{us(55), true, us(60), after, true},     // a floor above the after-sleep bound still decides alone: spun after a sleep too
		{us(55), false, us(60), after, true},    // and after a spin
		{us(1000), true, floor, us(1000), true}, // the largest accepted bound: spun
	} {
		if got := spins(c.d, c.slept, c.floor, c.after); got != c.want {
			t.Errorf("spins(%v, slept %v, floor %v, after sleep %v) = %v, want %v", c.d, c.slept, c.floor, c.after, got, c.want)
		}
	}
}
