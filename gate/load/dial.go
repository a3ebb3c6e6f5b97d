package load

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Target is where the load goes and the only addresses it may go to: resolved once,
// checked before connect and on the socket, so DNS rebinding changes nothing.
type Target struct {
	URL      *url.URL
	Insecure bool // skip TLS verification (self-signed loopback servers)

	// Addrs are the checked addresses (empty: resolved at the first connection).
	Addrs []netip.Addr

	// LookupIP resolves the host (nil: net.DefaultResolver); a test seam.
	LookupIP func(ctx context.Context, host string) ([]net.IP, error)

	// lazy is the run's lazy poll, set by Run (nil: rawConn for all).
	lazy *lazyPoll
}

// ErrTargetRefused is in the chain of every error about a disallowed address.
var ErrTargetRefused = errors.New("not an allowed target")

const resolveTimeout = 5 * time.Second

// ParseTarget parses an http(s) URL with a host and no credentials, query or fragment; no lookup.
func ParseTarget(raw string) (Target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Target{}, fmt.Errorf("target %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return Target{}, fmt.Errorf("target %q: scheme must be http or https", raw)
	}
	if u.Host == "" || u.Hostname() == "" {
		return Target{}, fmt.Errorf("target %q: no host", raw)
	}
	if u.User != nil {
		return Target{}, fmt.Errorf("target: credentials in the URL are not accepted (they would be written into results); use a header with ${ENV}")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return Target{}, fmt.Errorf("target %q: a query or fragment belongs in the workload's path, not the target", raw)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return Target{}, fmt.Errorf("target %q: port %q is not a TCP port (1-65535)", raw, p)
		}
	}
	return Target{URL: u}, nil
}

// LoopbackTarget is ParseTarget then CheckLoopback; run with its result so nothing resolves again.
func LoopbackTarget(ctx context.Context, raw string) (Target, error) {
	t, err := ParseTarget(raw)
	if err != nil {
		return Target{}, err
	}
	return t.CheckLoopback(ctx)
}

// CheckLoopback resolves t and refuses it unless every address is loopback (127.0.0.0/8, ::1).
func (t Target) CheckLoopback(ctx context.Context) (Target, error) {
	if t.URL == nil {
		return Target{}, fmt.Errorf("target: no URL")
	}
	if len(t.Addrs) == 0 {
		if ip, ok := literal(t.URL.Hostname()); ok {
			t.Addrs = []netip.Addr{ip}
		} else {
			addrs, err := t.lookup(ctx)
			if err != nil {
				return Target{}, err
			}
			t.Addrs = addrs
		}
	}
	if err := allLoopback(t.URL.Host, t.Addrs); err != nil {
		return Target{}, err
	}
	return t, nil
}

// Resolve fills t.Addrs if empty: an IP host as is (the caller vouches), a name if loopback only.
func (t Target) Resolve(ctx context.Context) (Target, error) {
	if t.URL == nil {
		return Target{}, fmt.Errorf("target: no URL")
	}
	if len(t.Addrs) > 0 {
		return t, nil
	}
	if ip, ok := literal(t.URL.Hostname()); ok {
		t.Addrs = []netip.Addr{ip}
		return t, nil
	}
	return t.CheckLoopback(ctx)
}

func (t Target) lookup(ctx context.Context) ([]netip.Addr, error) {
	host := t.URL.Hostname()
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	var ips []net.IP
	var err error
	if t.LookupIP != nil {
		ips, err = t.LookupIP(ctx, host)
	} else {
		ips, err = net.DefaultResolver.LookupIP(ctx, "ip", host)
	}
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", t.URL.Host, err)
	}
	var addrs []netip.Addr
	for _, ip := range ips {
		a, ok := netip.AddrFromSlice(ip)
		if !ok {
			return nil, fmt.Errorf("target %s: resolver answered %q, which is not an IP address", t.URL.Host, ip)
		}
		addrs = append(addrs, a.Unmap())
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("target %s: host resolves to no address", t.URL.Host)
	}
	return addrs, nil
}

func allLoopback(host string, addrs []netip.Addr) error {
	if len(addrs) == 0 {
		return fmt.Errorf("target %s: host resolves to no address", host)
	}
	for _, a := range addrs {
		if !a.IsLoopback() {
			return fmt.Errorf("%w: target %s resolves to %s, which is not a loopback address: loadgate run sends load only to 127.0.0.0/8 or ::1, or to a stack it started itself", ErrTargetRefused, host, a)
		}
	}
	return nil
}

func literal(host string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.WithZone("").Unmap(), true
}

func (t Target) port() uint16 {
	if p := t.URL.Port(); p != "" {
		n, _ := strconv.ParseUint(p, 10, 16)
		return uint16(n)
	}
	if t.URL.Scheme == "https" {
		return 443
	}
	return 80
}

// hostPort is what the HTTP clients dial (the URL's host, for TLS); the dialer maps it to Addrs.
func (t Target) hostPort() string {
	return net.JoinHostPort(t.URL.Hostname(), strconv.Itoa(int(t.port())))
}

// dialer is the generator's one way out. Safe for concurrent use.
type dialer struct {
	t       Target
	host    string // the URL's host name, lowercased
	port    uint16
	timeout time.Duration

	mu    sync.Mutex
	addrs []netip.Addr // set once, by the first successful resolution
	bad   error        // a resolution that failed the check: every dial fails with it
	next  atomic.Uint32

	// lazy puts plain TCP connections on lazy sockets (newFastClient only).
	lazy *lazyPoll
}

func (t Target) dialer(timeout time.Duration) *dialer {
	d := &dialer{t: t, host: strings.ToLower(t.URL.Hostname()), port: t.port(), timeout: timeout}
	if len(t.Addrs) > 0 {
		d.addrs = append([]netip.Addr(nil), t.Addrs...)
		for i, a := range d.addrs {
			d.addrs[i] = a.WithZone("").Unmap()
		}
	}
	return d
}

// allowed returns the checked addresses, resolving once when the Target had none.
func (d *dialer) allowed(ctx context.Context) ([]netip.Addr, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.addrs != nil {
		return d.addrs, nil
	}
	if d.bad != nil {
		return nil, d.bad
	}
	t, err := d.t.Resolve(ctx)
	if err != nil {
		if errors.Is(err, ErrTargetRefused) {
			d.bad = err // a checked answer that failed: for good
		}
		return nil, err // a resolver error: the next connection tries again
	}
	d.addrs = t.Addrs
	return d.addrs, nil
}

func (d *dialer) isAllowed(a netip.Addr, port uint16) bool {
	if port != d.port {
		return false
	}
	a = a.WithZone("").Unmap()
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, b := range d.addrs {
		if a == b {
			return true
		}
	}
	return false
}

// DialContext connects to addr (the target's host:port) via each checked address in turn.
func (d *dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, fmt.Errorf("%w: network %q", ErrTargetRefused, network)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || !strings.EqualFold(host, d.host) || port != strconv.Itoa(int(d.port)) {
		return nil, fmt.Errorf("%w: %s is not the target %s", ErrTargetRefused, addr, net.JoinHostPort(d.host, strconv.Itoa(int(d.port))))
	}
	addrs, err := d.allowed(ctx)
	if err != nil {
		return nil, err
	}
	nd := net.Dialer{Timeout: d.timeout, KeepAlive: 30 * time.Second, Control: d.control}
	start := int(d.next.Add(1) - 1)
	for i := range addrs {
		a := addrs[(start+i)%len(addrs)]
		var conn net.Conn
		conn, err = nd.DialContext(ctx, "tcp", netip.AddrPortFrom(a, d.port).String())
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, ErrTargetRefused) {
				return nil, err
			}
			continue
		}
		if err = d.checkConn(conn); err != nil {
			conn.Close()
			return nil, err
		}
		return wrapLazy(conn, d.lazy), nil // raw reads and writes: lazyconn.go, or rawconn.go
	}
	return nil, err
}

// control refuses, before connect(2), an address that was not checked.
func (d *dialer) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !d.isAllowed(ap.Addr(), ap.Port()) {
		return fmt.Errorf("%w: refusing to connect to %s: the checked addresses of %s are %v", ErrTargetRefused, address, d.host, d.addrs)
	}
	return nil
}

// checkConn checks the connected socket's remote address once more.
func (d *dialer) checkConn(c net.Conn) error {
	ta, ok := c.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return fmt.Errorf("%w: connection to %v is not TCP", ErrTargetRefused, c.RemoteAddr())
	}
	ap := ta.AddrPort()
	if !d.isAllowed(ap.Addr(), ap.Port()) {
		return fmt.Errorf("%w: connected to %s, which is not a checked address of %s", ErrTargetRefused, ap, d.host)
	}
	return nil
}

// dialTimeout adapts DialContext to fasthttp's DialFuncWithTimeout.
func (d *dialer) dialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	ctx := context.Background()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	return d.DialContext(ctx, "tcp", addr)
}
