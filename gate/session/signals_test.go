package session_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/session"
)

// syncBuf is a bytes.Buffer safe for the handler's goroutine and the test.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// The signal handler without processes: the first signal cancels, the
// second runs the registered emergency cleanups (bounded) and exits 3, a
// third exits at once even while a cleanup still runs.
func TestHandleSignals(t *testing.T) {
	const bound = 10 * time.Second
	var stderr syncBuf
	run := func(block bool) (sigs chan os.Signal, cancelled chan struct{}, exited chan int, ran chan struct{}) {
		sigs, cancelled, exited, ran = make(chan os.Signal, 4), make(chan struct{}), make(chan int, 1), make(chan struct{}, 1)
		remove := session.OnEmergency(func(ctx context.Context) error {
			ran <- struct{}{}
			if block {
				<-ctx.Done()
			}
			return nil
		})
		t.Cleanup(remove)
		go session.HandleSignals(sigs, func() { close(cancelled) }, bound, &stderr, func() { exited <- 1 })
		return
	}
	sigs, cancelled, exited, ran := run(false)
	sigs <- syscall.SIGTERM
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the first signal did not cancel")
	}
	select {
	case c := <-exited:
		t.Fatalf("exited (%d) on the first signal", c)
	case <-time.After(100 * time.Millisecond):
	}
	sigs <- syscall.SIGTERM
	select {
	case <-exited:
	case <-time.After(bound + 2*time.Second):
		t.Fatal("no exit after the second signal")
	}
	select {
	case <-ran:
	default:
		t.Error("the emergency cleanup did not run")
	}

	sigs, _, exited, ran = run(true) // a cleanup that would take the whole bound
	sigs <- os.Interrupt
	sigs <- os.Interrupt
	<-ran
	start := time.Now()
	sigs <- os.Interrupt
	select {
	case <-exited:
		if d := time.Since(start); d > time.Second {
			t.Errorf("the third signal took %s to exit", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a third signal did not exit at once")
	}
	if !strings.Contains(stderr.String(), "second") || !strings.Contains(stderr.String(), "third") {
		t.Errorf("stderr: %s", stderr.String())
	}
}
