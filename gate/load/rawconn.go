package load

import (
	"io"
	"net"
	"os"
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
// A rawConn is safe for one reader and one writer at a time, like a
// net.Conn.
type rawConn struct {
	*net.TCPConn
	rc syscall.RawConn
}

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
	var n int
	var errno syscall.Errno
	err := c.rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
			switch e {
			case 0:
				n = int(r)
				return true
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // park on the poller until readable
			default:
				errno = e
				return true
			}
		}
	})
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
	var n int
	var errno syscall.Errno
	err := c.rc.Write(func(fd uintptr) bool {
		for n < len(b) {
			r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[n])), uintptr(len(b)-n))
			switch {
			case e == 0 && r == 0:
				errno = syscall.EIO // write(2) wrote nothing without an error: never loop on it
				return true
			case e == 0:
				n += int(r)
			case e == syscall.EINTR:
			case e == syscall.EAGAIN:
				return false // park on the poller until writable
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return n, c.opError("write", err)
	case errno != 0:
		return n, c.opError("write", os.NewSyscallError("write", errno))
	}
	return n, nil
}

// opError dresses err as the standard library does (a *net.OpError), so
// that classify, fasthttp and net/http see what they would from a
// *net.TCPConn: timeouts stay net.Error timeouts, errnos stay errnos.
func (c *rawConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
