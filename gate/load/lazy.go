//go:build linux

package load

import (
	"encoding/binary"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Lazy response reads: a lazy socket is outside the runtime poller, saving a
// wake-up per request; the dispatcher's sweep wakes readers whose data came,
// timed by the kernel's receive timestamp. Where waiting would cost
// precision, the passive epoll p is enabled in the awake epoll e. TLS, HTTP/2, WebSocket
// and gRPC keep the poller path, as does every socket under LOADGATE_ENGINE_LAZY=0.

// lazyHorizon: a longer dispatcher wait keeps sockets awake, so low rates read at once.
const lazyHorizon = time.Millisecond

var lazyEnabled = sync.OnceValue(func() bool { return lazyWanted(os.Getenv("LOADGATE_ENGINE_LAZY")) })

func lazyWanted(v string) bool { return v != "0" }

// lazyPoll is a run's lazy sockets and two epolls; concurrency-safe but for beforeWait and sweep.
type lazyPoll struct {
	p   int // passive: every lazy socket, edge-triggered; nobody sleeps on it
	ef  *os.File
	erc syscall.RawConn

	mu     sync.Mutex  // guards what follows and every system call on p and e
	e      int         // awake: holds p while awake > 0; in the runtime poller
	conns  []*lazyConn // by descriptor
	awake  int         // reasons to wake for socket readiness
	on     bool        // p is enabled in e
	closed bool

	parked   atomic.Int32 // goroutines parked on a lazy socket
	longWait bool         // the dispatcher's current wait counts in awake (dispatcher only)
	sweepBuf [64]unix.EpollEvent
	loopDone chan struct{}

	// off is wall minus monotonic clock (ns) at the last completion; steps counts clock steps.
	off   atomic.Int64
	steps atomic.Int64
}

// newLazyPoll returns nil when lazy reads are off or unsupported.
func newLazyPoll() *lazyPoll {
	if !lazyEnabled() {
		return nil
	}
	p, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil
	}
	e, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		unix.Close(p)
		return nil
	}
	lp := &lazyPoll{p: p, e: e, loopDone: make(chan struct{})}
	if err := unix.EpollCtl(e, unix.EPOLL_CTL_ADD, p, &unix.EpollEvent{Events: unix.EPOLLET}); err != nil {
		unix.Close(p)
		unix.Close(e)
		return nil
	}
	if err := unix.SetNonblock(e, true); err != nil {
		unix.Close(p)
		unix.Close(e)
		return nil
	}
	lp.ef = os.NewFile(uintptr(e), "epoll") // non-blocking: registered with the poller
	if lp.erc, err = lp.ef.SyscallConn(); err != nil {
		lp.ef.Close()
		unix.Close(p)
		return nil
	}
	t := time.Now()
	lp.off.Store(t.UnixNano() - int64(t.Sub(processStart)))
	go lp.loop()
	return lp
}

// processStart anchors the monotonic readings of off (any fixed instant).
var processStart = time.Now()

// loop is the awake side, parked on e in the runtime poller.
func (lp *lazyPoll) loop() {
	defer close(lp.loopDone)
	var evs [64]unix.EpollEvent
	for {
		err := lp.erc.Read(func(fd uintptr) bool {
			for epollWait(int(fd), evs[:]) == len(evs) { // clears e's ready list: the next edge is new
			}
			return lp.drain(evs[:])
		})
		if err != nil { // e closed: the run is over
			return
		}
	}
}

// drain wakes the readers of every ready socket of p; true once the poll is closed.
func (lp *lazyPoll) drain(evs []unix.EpollEvent) (closed bool) {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	if lp.closed {
		return true
	}
	for {
		n := epollWait(lp.p, evs)
		for _, ev := range evs[:max(n, 0)] {
			if fd := int(ev.Fd); fd >= 0 && fd < len(lp.conns) && lp.conns[fd] != nil {
				lp.conns[fd].signal(ev.Events)
			}
		}
		if n < len(evs) {
			return false
		}
	}
}

// epollWait is a non-blocking raw epoll_wait (see rawConn); -1 on error.
func epollWait(fd int, evs []unix.EpollEvent) int {
	r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(fd), uintptr(unsafe.Pointer(&evs[0])), uintptr(len(evs)), 0, 0, 0)
	if e != 0 {
		return -1
	}
	return int(r)
}

func epollCtl(epfd, op, fd int, events uint32) syscall.Errno {
	ev := unix.EpollEvent{Events: events, Fd: int32(fd)}
	_, _, e := unix.RawSyscall6(unix.SYS_EPOLL_CTL, uintptr(epfd), uintptr(op), uintptr(fd), uintptr(unsafe.Pointer(&ev)), 0, 0)
	return e
}

// setAwake counts reasons to stay awake: p is in e while any; enabling polls p, losing nothing.
func (lp *lazyPoll) setAwake(delta int) {
	if lp == nil {
		return
	}
	lp.mu.Lock()
	defer lp.mu.Unlock()
	lp.awake += delta
	want := lp.awake > 0
	if want == lp.on || lp.closed {
		return
	}
	ev := uint32(unix.EPOLLET)
	if want {
		ev |= unix.EPOLLIN
	}
	if epollCtl(lp.e, unix.EPOLL_CTL_MOD, lp.p, ev) == 0 {
		lp.on = want
	}
}

// beforeWait keeps the sockets awake during a dispatcher wait over lazyHorizon.
func (lp *lazyPoll) beforeWait(due, now time.Duration) {
	if lp == nil {
		return
	}
	if long := due-now > lazyHorizon; long != lp.longWait {
		lp.longWait = long
		if long {
			lp.setAwake(1)
		} else {
			lp.setAwake(-1)
		}
	}
}

// sweep, the dispatcher's at every wake-up, wakes readers whose data came.
func (lp *lazyPoll) sweep() {
	if lp == nil || lp.parked.Load() == 0 {
		return
	}
	lp.drain(lp.sweepBuf[:])
}

// close ends the loop and both epolls; parked reads end at their deadline.
func (lp *lazyPoll) close() {
	if lp == nil {
		return
	}
	lp.mu.Lock()
	lp.closed = true // from now on nothing touches p or e
	lp.mu.Unlock()
	// Not under mu: Close waits for loop's Read, whose callback may need mu.
	lp.ef.Close()
	<-lp.loopDone
	lp.mu.Lock()
	unix.Close(lp.p)
	lp.mu.Unlock()
}

func (lp *lazyPoll) register(c *lazyConn) error {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	if lp.closed {
		return os.ErrClosed
	}
	for c.fd >= len(lp.conns) {
		lp.conns = append(lp.conns, nil)
	}
	lp.conns[c.fd] = c
	if e := epollCtl(lp.p, unix.EPOLL_CTL_ADD, c.fd, unix.EPOLLIN|unix.EPOLLOUT|unix.EPOLLRDHUP|unix.EPOLLET); e != 0 {
		lp.conns[c.fd] = nil
		return os.NewSyscallError("epoll_ctl", e)
	}
	return nil
}

func (lp *lazyPoll) unregister(c *lazyConn) {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	if c.fd < len(lp.conns) && lp.conns[c.fd] == c {
		lp.conns[c.fd] = nil
	}
}

// rxStamp is a lazy read's kernel receive time (wall ns, 0: none) and read time.
type rxStamp struct {
	wallNS int64
	at     time.Time // zero: no lazy read
}

// maxClockStep is the wall/monotonic drift that makes a receive timestamp distrusted.
const maxClockStep = time.Millisecond

// completion is a request's end: the kernel's receive timestamp when sound, else now.
func (e *engine) completion(st rxStamp, sent, now time.Duration) time.Duration {
	lp := e.lazy
	if lp == nil || st.wallNS == 0 || st.at.IsZero() {
		return now
	}
	read := st.at.Sub(e.start)
	off := st.at.UnixNano() - int64(st.at.Sub(processStart))
	if prev := lp.off.Load(); off-prev > int64(maxClockStep) || prev-off > int64(maxClockStep) {
		lp.off.Store(off)
		lp.steps.Add(1)
		return now
	}
	// The timestamp on the engine's clock: wall → monotonic at the read.
	at := read - time.Duration(st.at.UnixNano()-st.wallNS)
	if at > read || at < sent || read > now {
		return now
	}
	return at
}

func (lp *lazyPoll) clockSteps() int64 {
	if lp == nil {
		return 0
	}
	return lp.steps.Load()
}

// parseRxTimestamp finds SCM_TIMESTAMPNS (old or new layout) in a control buffer.
func parseRxTimestamp(oob []byte) (ns int64, ok bool) {
	const align = int(unsafe.Sizeof(uintptr(0)))
	hdr := unix.SizeofCmsghdr
	for len(oob) >= hdr {
		var l int
		if align == 8 {
			l = int(binary.NativeEndian.Uint64(oob))
		} else {
			l = int(binary.NativeEndian.Uint32(oob))
		}
		if l < hdr || l > len(oob) {
			return 0, false
		}
		level := int32(binary.NativeEndian.Uint32(oob[align:]))
		typ := int32(binary.NativeEndian.Uint32(oob[align+4:]))
		data := oob[hdr:l]
		if level == unix.SOL_SOCKET {
			switch {
			case typ == unix.SO_TIMESTAMPNS_NEW && len(data) >= 16: // struct __kernel_timespec
				sec, nsec := int64(binary.NativeEndian.Uint64(data)), int64(binary.NativeEndian.Uint64(data[8:]))
				return stampNS(sec, nsec)
			case typ == unix.SO_TIMESTAMPNS_OLD && align == 8 && len(data) >= 16:
				sec, nsec := int64(binary.NativeEndian.Uint64(data)), int64(binary.NativeEndian.Uint64(data[8:]))
				return stampNS(sec, nsec)
			case typ == unix.SO_TIMESTAMPNS_OLD && align == 4 && len(data) >= 8:
				sec, nsec := int64(int32(binary.NativeEndian.Uint32(data))), int64(int32(binary.NativeEndian.Uint32(data[4:])))
				return stampNS(sec, nsec)
			}
		}
		next := (l + align - 1) &^ (align - 1)
		if next >= len(oob) {
			return 0, false
		}
		oob = oob[next:]
	}
	return 0, false
}

func stampNS(sec, nsec int64) (int64, bool) {
	if sec <= 0 || nsec < 0 || nsec >= 1e9 || sec > 1<<33 {
		return 0, false
	}
	return sec*1e9 + nsec, true
}
