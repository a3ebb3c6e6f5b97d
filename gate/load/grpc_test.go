package load

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/loadgate/loadgate/gate/scenario"
)

// grpcServer is a loopback gRPC peer: grpc-go's own health service
// (grpc.health.v1.Health), "load" SERVING, "slow" answered after 500 ms;
// with server reflection unless noReflection.
type grpcServer struct {
	addr  string
	srv   *grpc.Server
	auth  atomic.Value // last authorization metadata
	calls atomic.Int64
}

func newGRPCServer(t testing.TB, withReflection bool) *grpcServer {
	t.Helper()
	s := &grpcServer{}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = lis.Addr().String()
	s.srv = grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		s.calls.Add(1)
		if md, ok := metadata.FromIncomingContext(ctx); ok && len(md["authorization"]) > 0 {
			s.auth.Store(md["authorization"][0])
		}
		if r, ok := req.(*healthpb.HealthCheckRequest); ok && r.Service == "slow" {
			select {
			case <-time.After(500 * time.Millisecond):
			case <-ctx.Done():
			}
		}
		return h(ctx, req)
	}))
	hs := health.NewServer()
	hs.SetServingStatus("load", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus("slow", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(s.srv, hs)
	if withReflection {
		reflection.Register(s.srv)
	}
	go func() { _ = s.srv.Serve(lis) }()
	t.Cleanup(s.srv.Stop)
	return s
}

func (s *grpcServer) target(t testing.TB) Target {
	t.Helper()
	u, _ := url.Parse("http://" + s.addr)
	tg, err := Target{URL: u}.CheckLoopback(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func grpcScenario(t testing.TB, workload string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse([]byte(`name: g
timeout: 200ms
phases: [{name: sustain, rate: 10, duration: 1s}]
workloads:
  - `+workload+"\n"), filepath.Join(t.TempDir(), "g.yaml"), scenario.Options{})
	if err != nil {
		t.Fatalf("scenario: %v", err)
	}
	return sc
}

func newTestGRPCOp(t *testing.T, tg Target, sc *scenario.Scenario, env map[string]string) (*grpcOp, error) {
	t.Helper()
	c, err := newGRPCClient(sc, tg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.close)
	return newGRPCOp(context.Background(), c, sc.Workloads[0], env, sc)
}

func TestGRPCUnaryByReflection(t *testing.T) {
	srv := newGRPCServer(t, true)
	sc := grpcScenario(t, `{name: check, grpc: {method: grpc.health.v1.Health/Check, request: {service: load}, metadata: {authorization: "Bearer ${TOK}"}}}`)
	op, err := newTestGRPCOp(t, srv.target(t), sc, map[string]string{"TOK": `s"3`})
	if err != nil {
		t.Fatal(err)
	}
	if op.static == nil {
		t.Error("a request without {n} is encoded once")
	}
	var s scratch
	for k := range int64(5) {
		if class := op.do(context.Background(), k, &s); class != "" {
			t.Fatalf("call %d: %q", k, class)
		}
	}
	if srv.calls.Load() != 5 {
		t.Errorf("server saw %d calls, want 5", srv.calls.Load())
	}
	if got := srv.auth.Load(); got != `Bearer s"3` {
		t.Errorf("authorization %q", got)
	}
}

func TestGRPCClassesAndExpect(t *testing.T) {
	srv := newGRPCServer(t, true)
	for _, tc := range []struct{ workload, class string }{
		{`{name: a, grpc: {method: grpc.health.v1.Health/Check, request: {service: "x-{n}"}}}`, "grpc NotFound"},
		{`{name: a, grpc: {method: grpc.health.v1.Health/Check, request: {service: "x-{n}"}}, expect: {code: [OK, NOT_FOUND]}}`, ""},
		{`{name: a, grpc: {method: grpc.health.v1.Health/Check, request: {service: slow}}}`, ClassTimeout},
	} {
		sc := grpcScenario(t, tc.workload)
		op, err := newTestGRPCOp(t, srv.target(t), sc, nil)
		if err != nil {
			t.Fatal(err)
		}
		var s scratch
		if got := op.do(context.Background(), 3, &s); got != tc.class {
			t.Errorf("%s: class %q, want %q", tc.workload, got, tc.class)
		}
	}
	// A server that went away: Unavailable.
	sc := grpcScenario(t, `{name: a, grpc: {method: grpc.health.v1.Health/Check, request: {service: load}}}`)
	op, err := newTestGRPCOp(t, srv.target(t), sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv.srv.Stop()
	var s scratch
	if got := op.do(context.Background(), 0, &s); got != "grpc Unavailable" {
		t.Errorf("stopped server: class %q, want grpc Unavailable", got)
	}
}

// writeHealthProtoset writes grpc.health.v1's FileDescriptorSet, as
// protoc --descriptor_set_out would.
func writeHealthProtoset(t *testing.T) string {
	t.Helper()
	fd := protodesc.ToFileDescriptorProto(healthpb.File_grpc_health_v1_health_proto)
	b, err := proto.Marshal(&descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{fd}})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "health.protoset")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGRPCDescriptorSetWithoutReflection(t *testing.T) {
	srv := newGRPCServer(t, false)
	set := writeHealthProtoset(t)
	sc := grpcScenario(t, `{name: a, grpc: {method: grpc.health.v1.Health/Check, request: {service: load}}}`)
	if _, err := newTestGRPCOp(t, srv.target(t), sc, nil); err == nil || !errors.Is(err, ErrOperation) || !strings.Contains(err.Error(), "does not offer reflection") {
		t.Errorf("no reflection, no descriptors: %v", err)
	}
	sc = grpcScenario(t, `{name: a, grpc: {method: grpc.health.v1.Health/Check, request: {service: "load"}, descriptors: `+set+`}}`)
	op, err := newTestGRPCOp(t, srv.target(t), sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	var s scratch
	if class := op.do(context.Background(), 0, &s); class != "" {
		t.Errorf("class %q", class)
	}
}

func TestGRPCRefusals(t *testing.T) {
	srv := newGRPCServer(t, true)
	for _, tc := range []struct{ workload, want string }{
		{`{name: a, grpc: {method: grpc.health.v1.Health/Nope}}`, "grpc.method grpc.health.v1.Health/Nope: service grpc.health.v1.Health has no method Nope (it has: Check, List, Watch)"},
		{`{name: a, grpc: {method: iohr.engine.v1.EngineService/Evaluate}}`, "grpc.method iohr.engine.v1.EngineService/Evaluate: the server (reflection) answers NotFound"},
		{`{name: a, grpc: {method: grpc.health.v1.Health/Watch}}`, "a streaming method"},
		{`{name: a, grpc: {method: grpc.health.v1.Health/Check, request: {subject_id: "x"}}}`, "grpc.request does not fit grpc.health.v1.HealthCheckRequest"},
	} {
		sc := grpcScenario(t, tc.workload)
		_, err := newTestGRPCOp(t, srv.target(t), sc, nil)
		if err == nil || !errors.Is(err, ErrOperation) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %q", tc.workload, err, tc.want)
		} else {
			t.Logf("refused: %v", err)
		}
	}
}
