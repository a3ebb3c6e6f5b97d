package load

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// rawConn is a TCP connection whose reads and writes are raw system calls
// on the non-blocking socket, waited for through the runtime poller
// (syscall.RawConn), instead of the standard library's syscall.Read/Write.
//
// Why (bench/README.md, "Wake-ups per request"): every syscall.Syscall
// enters the scheduler's syscall state, and the first one after the
// generator's only P went idle wakes sysmon from its deep sleep (a futex
// wake, and sysmon then polls every 20 µs until it sees the P idle again):
// about half the generator's context switches per request were sysmon's.
// A read or write on a non-blocking socket never blocks, so it needs no
// syscall state: RawSyscall leaves sysmon asleep, and a P can never be
// handed off to another thread in the middle of a request.
//
// Everything else (deadlines, Close, addresses) is the *net.TCPConn's.
// A rawConn is safe for concurrent use, like a net.Conn (net/http's
// writeLoop may still be in a Write of an upgraded connection when a
// WebSocket's first frame is written): each call has its own rawIO, from
// a pool, with its callback bound once (a closure made for every call was
// an allocation a read and a write, TestRegression_StreamedResponseAllocated).
type rawConn struct {
	*net.TCPConn
	rc syscall.RawConn
}

// rawIO is one Read or Write in progress: the buffer, what the system
// call did with it, and the callbacks RawConn.Read and Write run (read and
// write, bound to this rawIO when it was made).
type rawIO struct {
	b        []byte
	n        int
	errno    syscall.Errno
	rfn, wfn func(fd uintptr) bool
}

var rawIOs = sync.Pool{New: func() any {
	r := &rawIO{}
	r.rfn, r.wfn = r.read, r.write
	return r
}}

// wrapRaw returns c with raw reads and writes when it is a TCP connection
// whose descriptor can be reached, and c itself otherwise.
func wrapRaw(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	return &rawConn{TCPConn: tc, rc: rc}
}

func (c *rawConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	op := rawIOs.Get().(*rawIO)
	op.b, op.n, op.errno = b, 0, 0
	err := c.rc.Read(op.rfn)
	n, errno := op.n, op.errno
	op.b = nil // the caller's buffer is not kept in the pool
	rawIOs.Put(op)
	switch {
	case err != nil:
		return 0, c.opError("read", err)
	case errno != 0:
		return 0, c.opError("read", os.NewSyscallError("read", errno))
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (c *rawConn) Write(b []byte) (int, error) {
	op := rawIOs.Get().(*rawIO)
	op.b, op.n, op.errno = b, 0, 0
	err := c.rc.Write(op.wfn)
	n, errno := op.n, op.errno
	op.b = nil
	rawIOs.Put(op)
	switch {
	case err != nil:
		return n, c.opError("write", err)
	case errno != 0:
		return n, c.opError("write", os.NewSyscallError("write", errno))
	}
	return n, nil
}

// read is the read callback: one read(2) into r.b; false parks on the
// poller until the socket is readable.
func (r *rawIO) read(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&r.b[0])), uintptr(len(r.b)))
		switch e {
		case 0:
			r.n = int(n)
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false // park on the poller until readable
		default:
			r.errno = e
			return true
		}
	}
}

// write is the write callback: write(2) until all of w.b is written; false
// parks on the poller until the socket is writable (what was written so
// far stays in w.n).
func (w *rawIO) write(fd uintptr) bool {
	for w.n < len(w.b) {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&w.b[w.n])), uintptr(len(w.b)-w.n))
		switch {
		case e == 0 && n == 0:
			w.errno = syscall.EIO // write(2) wrote nothing without an error: never loop on it
			return true
		case e == 0:
			w.n += int(n)
		case e == syscall.EINTR:
		case e == syscall.EAGAIN:
			return false // park on the poller until writable
		default:
			w.errno = e
			return true
		}
	}
	return true
}

// opError dresses err as the standard library does (a *net.OpError), so
// that classify, fasthttp and net/http see what they would from a
// *net.TCPConn: timeouts stay net.Error timeouts, errnos stay errnos.
func (c *rawConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
