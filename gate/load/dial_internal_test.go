package load

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// The dialer connects only to checked addresses, refuses any other
// address in net.Dialer.Control (before connect(2): the peer never sees a
// SYN) and refuses a dial for another host or port.
func TestDialerRefusesUncheckedAddress(t *testing.T) {
	// Each listener counts its own accepts: the accept of the first
	// (allowed) dial may land late, and must not be counted against the
	// other address.
	listen := func(addr string, accepted *atomic.Int64) net.Listener {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				accepted.Add(1)
				c.Close()
			}
		}()
		t.Cleanup(func() { l.Close() })
		return l
	}
	var accepted atomic.Int64 // by the other address
	l := listen("127.0.0.1:0", new(atomic.Int64))
	port := l.Addr().(*net.TCPAddr).Port
	other := listen("127.0.0.2:"+strconv.Itoa(port), &accepted) // another loopback address, same port
	u, _ := url.Parse("http://svc.test:" + strconv.Itoa(port))
	d := Target{URL: u, Addrs: []netip.Addr{netip.MustParseAddr("127.0.0.1")}}.dialer(time.Second)
	ctx := context.Background()

	c, err := d.DialContext(ctx, "tcp", "svc.test:"+strconv.Itoa(port))
	if err != nil {
		t.Fatalf("dial the checked address: %v", err)
	}
	if got := c.RemoteAddr().String(); got != l.Addr().String() {
		t.Errorf("connected to %s, want %s", got, l.Addr())
	}
	c.Close()

	for _, addr := range []string{"127.0.0.2:" + strconv.Itoa(port), "svc.test:1", "evil.test:" + strconv.Itoa(port)} {
		if _, err := d.DialContext(ctx, "tcp", addr); !errors.Is(err, ErrTargetRefused) {
			t.Errorf("DialContext(%s) = %v, want ErrTargetRefused", addr, err)
		} else if cl := classify(ctx, err); cl != ClassTargetNotAllowed {
			t.Errorf("DialContext(%s) classified %q, want %q", addr, cl, ClassTargetNotAllowed)
		}
	}
	// The Control hook alone: a dial to an address that is not checked
	// fails before connecting.
	nd := net.Dialer{Timeout: time.Second, Control: d.control}
	before := accepted.Load()
	if _, err := nd.Dial("tcp", other.Addr().String()); !errors.Is(err, ErrTargetRefused) {
		t.Errorf("Control let %s through: %v", other.Addr(), err)
	}
	time.Sleep(50 * time.Millisecond)
	if n := accepted.Load() - before; n != 0 {
		t.Errorf("%d connections reached %s", n, other.Addr())
	}
}
