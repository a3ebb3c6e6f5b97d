package load

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// rawConn is a TCP connection doing raw non-blocking system calls, waited for via the poller:
// a syscall.Syscall would wake sysmon on the generator's one P. Like a net.Conn.
type rawConn struct {
	*net.TCPConn
	rc syscall.RawConn
}

// rawIO is one Read or Write in progress and its bound callbacks.
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

// wrapRaw returns TCP c with raw reads and writes when it can, else c.
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

// read does one read(2) into r.b; false parks until readable.
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

// opError wraps err as *net.TCPConn does, keeping net.Error timeouts and errnos.
func (c *rawConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
