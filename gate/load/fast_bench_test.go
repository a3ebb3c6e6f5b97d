package load

import (
	"context"
	"net/netip"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/scenario"
)

// BenchmarkFastOpLazy sends one GET after another on a lazy connection to
// the loopback server at LOADGATE_BENCH_TARGET (e.g. bench/server pinned to
// another core) and reports the generator's CPU per request (user and
// system, this process only): the per-request client path (fastOp, fasthttp,
// lazyConn) without the dispatcher. The poll is kept awake, so each
// response wakes the reader (no sweeps here).
//
//	taskset -c 0 bench-server -addr 127.0.0.1:38200 &
//	LOADGATE_BENCH_TARGET=http://127.0.0.1:38200/ GOMAXPROCS=1 taskset -c 1 \
//	  go test -run - -bench FastOpLazy -benchtime 20000x ./gate/load
func BenchmarkFastOpLazy(b *testing.B) {
	target := os.Getenv("LOADGATE_BENCH_TARGET")
	if target == "" {
		b.Skip("LOADGATE_BENCH_TARGET not set")
	}
	lp := newLazyPoll()
	if lp == nil {
		b.Skip("lazy reads unavailable")
	}
	defer lp.close()
	lp.setAwake(1)
	u, err := url.Parse(target)
	if err != nil {
		b.Fatal(err)
	}
	tg := Target{URL: u, Addrs: []netip.Addr{netip.MustParseAddr("127.0.0.1")}, lazy: lp}
	sc := &scenario.Scenario{Timeout: 5 * time.Second, MaxInFlight: 1}
	w := scenario.Workload{Name: "w", HTTP: &scenario.HTTP{Method: "GET", Path: "/"}, Expect: scenario.Expect{Status: []int{200}}}
	hc := newFastClient(sc, tg)
	defer hc.CloseIdleConnections()
	op := newFastOp(hc, tg, w, nil, sc.Timeout)
	var s scratch
	ctx := context.Background()
	for k := range int64(100) { // the connection and the pools
		if c := op.do(ctx, k, &s); c != "" {
			b.Fatal(c)
		}
	}
	var r0, r1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if c := op.do(ctx, int64(i), &s); c != "" {
			b.Fatal(c)
		}
	}
	b.StopTimer()
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	cpu := float64(r1.Utime.Nano()-r0.Utime.Nano()+r1.Stime.Nano()-r0.Stime.Nano()) / float64(b.N)
	b.ReportMetric(cpu/1e3, "cpu-µs/op")
	b.ReportMetric(float64(r1.Nvcsw-r0.Nvcsw)/float64(b.N), "vcs/op")
}
