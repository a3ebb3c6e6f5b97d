//go:build linux

package load

import (
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// lazyConn is a TCP connection on a lazy socket (lazy.go): raw recvmsg(2) and write(2);
// a blocked call parks until the poll, its deadline or Close wakes it. Like a net.Conn but for
// one reader and one writer; Close and the deadline setters may be called from any goroutine.
type lazyConn struct {
	lp *lazyPoll
	fd int

	mu      sync.RWMutex // read-held across each system call on fd; Close takes it to close fd
	closing atomic.Bool

	// rdl.wake, wdl.wake hold a "look again" token: from the poll, Close or a deadline.
	rdl, wdl deadline

	mid      atomic.Bool // bytes were read since the last write: a response is being read
	awaiting atomic.Bool // written after a drained read, and nothing read since: the next read starts a response
	drained  atomic.Bool // the last read left nothing queued: it found none (EAGAIN) or took less than it asked for
	hup      atomic.Bool // the poll reported the peer's FIN, a reset or an error (sticky)
	oob      [64]byte    // the reader's control buffer
	stamp    rxStamp     // the last read's (reader only)

	laddr connAddr
	raddr net.Addr
}

// connAddr is a lazy connection's local address: it leads a response to its stamp (stampOf).
type connAddr struct {
	*net.TCPAddr
	c *lazyConn
}

// stampOf returns the last read's stamp of the lazy connection at a, else zero.
func stampOf(a net.Addr) rxStamp {
	if ca, ok := a.(*connAddr); ok {
		return ca.c.stamp
	}
	return rxStamp{}
}

// deadline is one direction's deadline (epoch ns, 0: none) and wake channel.
type deadline struct {
	at     atomic.Int64
	parked atomic.Bool   // a goroutine is parked on this direction
	wake   chan struct{} // a token: look again (capacity 1)

	mu    sync.Mutex // guards armed and timer
	armed int64      // when the timer fires (ns since the epoch); 0: not armed
	timer *time.Timer
}

func (d *deadline) poke() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// arm makes the timer fire by at (≠ 0); the caller set parked and is about to park.
func (d *deadline) arm(at int64) {
	d.mu.Lock()
	if d.armed == 0 || d.armed > at {
		left := time.Duration(at - time.Now().UnixNano())
		if d.timer == nil {
			d.timer = time.AfterFunc(left, d.fire)
		} else {
			d.timer.Reset(left)
		}
		d.armed = at
	}
	d.mu.Unlock()
}

// fire wakes the parked goroutine once the deadline passed, re-arming if it moved later.
func (d *deadline) fire() {
	d.mu.Lock()
	d.armed = 0
	at, now := d.at.Load(), time.Now().UnixNano()
	parked := d.parked.Load()
	if at != 0 && at > now && parked {
		d.timer.Reset(time.Duration(at - now))
		d.armed = at
	}
	d.mu.Unlock()
	if at != 0 && at <= now && parked {
		d.poke()
	}
}

// passed: the deadline is set and past; checked per syscall, so an endless sender times out.
func (d *deadline) passed() bool {
	at := d.at.Load()
	return at != 0 && time.Now().UnixNano() >= at
}

func (d *deadline) set(t time.Time) {
	if t.IsZero() {
		d.at.Store(0)
	} else {
		d.at.Store(t.UnixNano())
	}
	// Poke only a parked goroutine: a token for nobody is a spurious wake-up later.
	if d.parked.Load() {
		d.poke()
	}
}

// wrapLazy puts TCP c on a lazy socket when lp is set and it can; else wrapRaw(c).
func wrapLazy(c net.Conn, lp *lazyPoll) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if lp == nil || !ok {
		return wrapRaw(c)
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return wrapRaw(c)
	}
	fd, derr := -1, error(nil)
	if err := rc.Control(func(s uintptr) { fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil || derr != nil {
		return wrapRaw(c)
	}
	if !enableRxTimestamps(fd) || unix.SetNonblock(fd, true) != nil {
		unix.Close(fd)
		return wrapRaw(c)
	}
	la, _ := tc.LocalAddr().(*net.TCPAddr)
	lc := &lazyConn{lp: lp, fd: fd, raddr: tc.RemoteAddr()}
	lc.rdl.wake = make(chan struct{}, 1)
	lc.wdl.wake = make(chan struct{}, 1)
	lc.laddr = connAddr{TCPAddr: la, c: lc}
	if err := lp.register(lc); err != nil {
		unix.Close(fd)
		return wrapRaw(c)
	}
	// The duplicate keeps the socket open.
	tc.Close()
	return lc
}

// enableRxTimestamps turns on receive timestamps (the 64-bit layout if the kernel has it).
func enableRxTimestamps(fd int) bool {
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_NEW, 1) == nil {
		return true
	}
	return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_OLD, 1) == nil
}

// Readiness as the edge-triggered poll reports it; a reader needs a token only when it may read.
const (
	readEvents  = unix.EPOLLIN | unix.EPOLLPRI | unix.EPOLLRDHUP | unix.EPOLLHUP | unix.EPOLLERR
	hupEvents   = unix.EPOLLRDHUP | unix.EPOLLHUP | unix.EPOLLERR
	writeEvents = unix.EPOLLOUT | unix.EPOLLHUP | unix.EPOLLERR
)

func (c *lazyConn) signal(ev uint32) {
	if ev&hupEvents != 0 {
		c.hup.Store(true)
	}
	if ev&readEvents != 0 {
		c.rdl.poke()
	}
	if ev&writeEvents != 0 {
		c.wdl.poke()
	}
}

func (c *lazyConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	// A response's start: park first, saving an empty read, unless FIN or an error came.
	if c.awaiting.Load() && !c.hup.Load() && !c.rdl.passed() {
		if err := c.park(&c.rdl, false); err != nil {
			return 0, c.opError("read", err)
		}
	}
	for {
		if c.rdl.passed() {
			return 0, c.opError("read", os.ErrDeadlineExceeded)
		}
		n, errno := c.recv(b)
		if errno != syscall.EINTR {
			// A short read took everything queued; a later arrival makes a new event.
			c.drained.Store(errno == syscall.EAGAIN || errno == 0 && n > 0 && n < len(b))
			if errno != syscall.EAGAIN {
				c.awaiting.Store(false)
			}
		}
		switch errno {
		case 0:
			if n == 0 {
				return 0, io.EOF
			}
			c.mid.Store(true)
			return n, nil
		case syscall.EINTR:
		case syscall.EAGAIN:
			// The rest of a response is read at once; its start waits for a sweep.
			if err := c.park(&c.rdl, c.mid.Load()); err != nil {
				return 0, c.opError("read", err)
			}
		case syscall.EBADF:
			return 0, c.opError("read", net.ErrClosed)
		default:
			return 0, c.opError("read", os.NewSyscallError("recvmsg", errno))
		}
	}
}

func (c *lazyConn) recv(b []byte) (int, syscall.Errno) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closing.Load() {
		return 0, syscall.EBADF
	}
	iov := unix.Iovec{Base: &b[0]}
	iov.SetLen(len(b))
	msg := unix.Msghdr{Iov: &iov, Control: &c.oob[0]}
	msg.Iovlen = 1
	msg.SetControllen(len(c.oob))
	r, _, e := unix.RawSyscall(unix.SYS_RECVMSG, uintptr(c.fd), uintptr(unsafe.Pointer(&msg)), unix.MSG_DONTWAIT)
	if e != 0 {
		return 0, e
	}
	if r > 0 {
		ns, _ := parseRxTimestamp(c.oob[:msg.Controllen])
		c.stamp = rxStamp{wallNS: ns, at: time.Now()}
	}
	return int(r), 0
}

func (c *lazyConn) Write(b []byte) (int, error) {
	c.mid.Store(false) // a new request: its response has not started
	// Park at once only if nothing was left queued (no event would come).
	c.awaiting.Store(c.drained.Load())
	n := 0
	for n < len(b) {
		if c.wdl.passed() {
			return n, c.opError("write", os.ErrDeadlineExceeded)
		}
		r, errno := c.send(b[n:])
		switch {
		case errno == 0 && r == 0:
			return n, c.opError("write", os.NewSyscallError("write", syscall.EIO)) // never loop on nothing written
		case errno == 0:
			n += r
		case errno == syscall.EINTR:
		case errno == syscall.EAGAIN:
			if err := c.park(&c.wdl, true); err != nil {
				return n, c.opError("write", err)
			}
		case errno == syscall.EBADF:
			return n, c.opError("write", net.ErrClosed)
		default:
			return n, c.opError("write", os.NewSyscallError("write", errno))
		}
	}
	return n, nil
}

func (c *lazyConn) send(b []byte) (int, syscall.Errno) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closing.Load() {
		return 0, syscall.EBADF
	}
	r, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(c.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	return int(r), e
}

// park waits for a token on d; prompt keeps the poll awake meanwhile, else a sweep wakes it.
func (c *lazyConn) park(d *deadline, prompt bool) error {
	d.parked.Store(true) // before the checks and arming: see deadline.fire, Close
	if c.closing.Load() {
		d.parked.Store(false)
		return net.ErrClosed
	}
	if at := d.at.Load(); at != 0 {
		if time.Now().UnixNano() >= at {
			d.parked.Store(false)
			return os.ErrDeadlineExceeded
		}
		d.arm(at)
	}
	lp := c.lp
	lp.parked.Add(1)
	if prompt {
		lp.setAwake(1)
	}
	<-d.wake
	if prompt {
		lp.setAwake(-1)
	}
	lp.parked.Add(-1)
	d.parked.Store(false)
	return nil
}

// Close closes the socket; a parked Read or Write returns net.ErrClosed.
func (c *lazyConn) Close() error {
	if !c.closing.CompareAndSwap(false, true) {
		return c.opError("close", net.ErrClosed)
	}
	c.rdl.poke() // a parked Read or Write looks again and finds the connection closed
	c.wdl.poke()
	c.mu.Lock() // no system call on fd is in progress, and none starts
	defer c.mu.Unlock()
	c.lp.unregister(c)
	for _, d := range []*deadline{&c.rdl, &c.wdl} {
		d.mu.Lock()
		if d.timer != nil {
			d.timer.Stop()
		}
		d.mu.Unlock()
	}
	if err := unix.Close(c.fd); err != nil {
		return c.opError("close", err)
	}
	return nil
}

func (c *lazyConn) LocalAddr() net.Addr  { return &c.laddr }
func (c *lazyConn) RemoteAddr() net.Addr { return c.raddr }

func (c *lazyConn) SetDeadline(t time.Time) error {
	c.rdl.set(t)
	c.wdl.set(t)
	return nil
}
func (c *lazyConn) SetReadDeadline(t time.Time) error  { c.rdl.set(t); return nil }
func (c *lazyConn) SetWriteDeadline(t time.Time) error { c.wdl.set(t); return nil }

func (c *lazyConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.laddr.TCPAddr, Addr: c.raddr, Err: err}
}
