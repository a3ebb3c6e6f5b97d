package load

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// cpuPerOp reports the process's CPU time (user+system, client and the
// in-process loopback server together) per operation.
func cpuPerOp(b *testing.B, f func(k int64)) {
	var r0, r1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f(int64(i))
	}
	b.StopTimer()
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	cpu := time.Duration(r1.Utime.Nano()-r0.Utime.Nano()+r1.Stime.Nano()-r0.Stime.Nano()) / time.Duration(b.N)
	b.ReportMetric(float64(cpu.Microseconds()), "cpu-µs/op")
}

func BenchmarkWSChatSession(b *testing.B) {
	t := b
	srv := newWSServer(t)
	sc := wsScenario(t, `{path: "/chat?room={n}", send: ['{"q":"hello {n}"}'], receive: 3}`)
	client, tr := newWSClient(sc, srv.target(t))
	defer tr.CloseIdleConnections()
	op := newWSOp(client, srv.target(t), sc.Workloads[0], nil, sc.Timeout, maxBody(sc))
	var s scratch
	cpuPerOp(b, func(k int64) {
		if c := op.do(context.Background(), k, &s); c != "" {
			b.Fatal(c)
		}
	})
}

func BenchmarkGRPCUnaryCall(b *testing.B) {
	t := b
	srv := newGRPCServer(t, true)
	sc := grpcScenario(t, `{name: a, grpc: {method: grpc.health.v1.Health/Check, request: {service: load}}}`)
	c, err := newGRPCClient(sc, srv.target(t))
	if err != nil {
		b.Fatal(err)
	}
	defer c.close()
	op, err := newGRPCOp(context.Background(), c, sc.Workloads[0], nil, sc)
	if err != nil {
		b.Fatal(err)
	}
	var s scratch
	cpuPerOp(b, func(k int64) {
		if c := op.do(context.Background(), k, &s); c != "" {
			b.Fatal(c)
		}
	})
}
