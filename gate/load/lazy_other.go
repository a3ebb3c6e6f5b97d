//go:build !linux

package load

import (
	"net"
	"time"
)

// Lazy reads need Linux (epoll, SO_TIMESTAMPNS: lazy.go); elsewhere every
// socket keeps the poller path, and a completion is the read.
type lazyPoll struct{}

type rxStamp struct{}

func newLazyPoll() *lazyPoll                                             { return nil }
func (*lazyPoll) setAwake(int)                                           {}
func (*lazyPoll) beforeWait(_, _ time.Duration)                          {}
func (*lazyPoll) sweep()                                                 {}
func (*lazyPoll) close()                                                 {}
func (*lazyPoll) clockSteps() int64                                      { return 0 }
func stampOf(net.Addr) rxStamp                                           { return rxStamp{} }
func wrapLazy(c net.Conn, _ *lazyPoll) net.Conn                          { return wrapRaw(c) }
func (*engine) completion(_ rxStamp, _, now time.Duration) time.Duration { return now }
