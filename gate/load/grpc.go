package load

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/loadgate/loadgate/gate/scenario"
)

// grpcClient is a run's one gRPC connection, over the target's dialer, retries off.
type grpcClient struct {
	conn    *grpc.ClientConn
	maxBody int64
}

// maxDescriptorFile bounds a FileDescriptorSet file read whole.
const maxDescriptorFile = 64 << 20

func newGRPCClient(sc *scenario.Scenario, t Target) (*grpcClient, error) {
	d := t.dialer(sc.Timeout)
	creds := insecure.NewCredentials()
	if t.URL.Scheme == "https" {
		creds = credentials.NewTLS(&tls.Config{InsecureSkipVerify: t.Insecure, ServerName: t.URL.Hostname()})
	}
	limit := maxBody(sc)
	if limit > math.MaxInt32 {
		limit = math.MaxInt32
	}
	conn, err := grpc.NewClient("passthrough:///"+t.hostPort(),
		grpc.WithTransportCredentials(creds),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", addr)
		}),
		grpc.WithDisableRetry(),
		grpc.WithUserAgent("loadgate"),
		grpc.WithStaticStreamWindowSize(h2StreamWindow),
		grpc.WithStaticConnWindowSize(h2ConnWindow),
		grpc.WithMaxHeaderListSize(maxHeaderBytes),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(int(limit))),
	)
	if err != nil {
		return nil, fmt.Errorf("grpc: %w", err)
	}
	return &grpcClient{conn: conn, maxBody: limit}, nil
}

func (c *grpcClient) close() { _ = c.conn.Close() }

// grpcOp is a unary call workload; responses are dropped unread.
type grpcOp struct {
	c       *grpcClient
	method  string // "/pkg.Service/Method"
	input   protoreflect.MessageDescriptor
	tmpl    scenario.Template // the request as protojson, ${ENV} substituted
	static  []byte            // the encoded request when tmpl has no {n}
	md      metadata.MD
	timeout time.Duration
	expect  [17]bool // by codes.Code
}

func newGRPCOp(ctx context.Context, c *grpcClient, w scenario.Workload, env map[string]string, sc *scenario.Scenario) (*grpcOp, error) {
	g := w.GRPC
	md, err := resolveMethod(ctx, c.conn, g, sc.Timeout)
	if err != nil {
		return nil, err
	}
	op := &grpcOp{c: c, method: "/" + g.Method, input: md.Input(), timeout: sc.Timeout}
	// ${ENV} values go into JSON strings: escape them as JSON.
	jenv := make(map[string]string, len(env))
	for k, v := range env {
		b, _ := json.Marshal(v)
		jenv[k] = string(b[1 : len(b)-1])
	}
	op.tmpl = scenario.CompileTemplate(g.Request, jenv, nil)
	first, err := op.encode(0, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: grpc.request does not fit %s: %v", ErrOperation, md.Input().FullName(), err)
	}
	if op.tmpl.Static() {
		op.static = first
	}
	if len(g.Metadata) > 0 {
		op.md = metadata.MD{}
		for k, v := range g.Metadata {
			op.md.Set(k, scenario.ExpandEnv(v, env))
		}
	}
	for _, name := range w.Expect.Codes {
		if i := slices.Index(scenario.GRPCCodeNames(), name); i >= 0 {
			op.expect[i] = true
		}
	}
	if len(w.Expect.Codes) == 0 {
		op.expect[codes.OK] = true
	}
	return op, nil
}

func (op *grpcOp) encode(k int64, s *scratch) ([]byte, error) {
	var buf []byte
	if s != nil {
		buf = s.body[:0]
	}
	buf = op.tmpl.AppendTo(buf, k)
	if s != nil {
		s.body = buf
	}
	m := dynamicpb.NewMessage(op.input)
	if err := protojson.Unmarshal(buf, m); err != nil {
		return nil, err
	}
	return proto.MarshalOptions{}.Marshal(m)
}

func (op *grpcOp) do(ctx context.Context, k int64, s *scratch) string {
	req := op.static
	if req == nil {
		var err error
		if req, err = op.encode(k, s); err != nil {
			return "request" // cannot happen: checked at k=0, and {n} only renders digits
		}
	}
	deadline := time.Now().Add(op.timeout)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	if op.md != nil {
		ctx = metadata.NewOutgoingContext(ctx, op.md)
	}
	var resp rawFrame
	err := op.c.conn.Invoke(ctx, op.method, rawFrame(req), &resp, grpc.ForceCodec(rawCodec{}))
	code := status.Code(err)
	if err != nil && (errors.Is(ctx.Err(), context.DeadlineExceeded) ||
		code == codes.DeadlineExceeded && time.Until(deadline) < ownDeadlineSlack) {
		// Our own deadline, which the server (grpc-timeout) may report a moment first.
		return ClassTimeout
	}
	if code >= 0 && int(code) < len(op.expect) && op.expect[code] {
		return ""
	}
	if code == codes.ResourceExhausted && strings.Contains(status.Convert(err).Message(), "received message larger than max") {
		return ClassBodyTooLarge // the response was above max_body (the client's own check)
	}
	return grpcClass(code)
}

// ownDeadlineSlack: a DeadlineExceeded this close to our deadline is our timeout.
const ownDeadlineSlack = 20 * time.Millisecond

var grpcClasses = func() []string {
	var out []string
	for _, n := range scenario.GRPCCodeNames() {
		out = append(out, "grpc "+n)
	}
	return out
}()

// grpcClass names a call's failure by its status code: "grpc Unavailable".
func grpcClass(c codes.Code) string {
	if int(c) < len(grpcClasses) {
		return grpcClasses[c]
	}
	return "grpc other"
}

// rawFrame is a message already in (or left in) its wire encoding.
type rawFrame []byte

// rawCodec passes rawFrames through; named "proto" for the content type application/grpc+proto.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) ([]byte, error) {
	if f, ok := v.(rawFrame); ok {
		return f, nil
	}
	return nil, fmt.Errorf("rawCodec: cannot marshal %T", v)
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	if f, ok := v.(*rawFrame); ok {
		*f = (*f)[:0] // dropped
		return nil
	}
	return fmt.Errorf("rawCodec: cannot unmarshal into %T", v)
}

// resolveMethod finds g's unary method by descriptor set or reflection; errors wrap ErrOperation.
func resolveMethod(ctx context.Context, conn *grpc.ClientConn, g *scenario.GRPC, timeout time.Duration) (protoreflect.MethodDescriptor, error) {
	var files *protoregistry.Files
	var err error
	if g.Descriptors != "" {
		files, err = descriptorFile(g.Descriptors)
	} else {
		rctx, cancel := context.WithTimeout(ctx, max(timeout, 5*time.Second))
		defer cancel()
		files, err = reflectFiles(rctx, conn, g.Service())
	}
	if err != nil {
		return nil, fmt.Errorf("%w: grpc.method %s: %v", ErrOperation, g.Method, err)
	}
	d, err := files.FindDescriptorByName(protoreflect.FullName(g.Service()))
	if err != nil {
		where := "the server (reflection)"
		if g.Descriptors != "" {
			where = g.Descriptors
		}
		return nil, fmt.Errorf("%w: grpc.method %s: %s has no service %s", ErrOperation, g.Method, where, g.Service())
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, fmt.Errorf("%w: grpc.method %s: %s is not a service", ErrOperation, g.Method, g.Service())
	}
	md := sd.Methods().ByName(protoreflect.Name(g.MethodName()))
	if md == nil {
		var names []string
		for i := range sd.Methods().Len() {
			names = append(names, string(sd.Methods().Get(i).Name()))
		}
		return nil, fmt.Errorf("%w: grpc.method %s: service %s has no method %s (it has: %s)",
			ErrOperation, g.Method, g.Service(), g.MethodName(), strings.Join(names, ", "))
	}
	if md.IsStreamingClient() || md.IsStreamingServer() {
		return nil, fmt.Errorf("%w: grpc.method %s: a streaming method; only unary methods are supported", ErrOperation, g.Method)
	}
	return md, nil
}

func descriptorFile(path string) (*protoregistry.Files, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxDescriptorFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxDescriptorFile {
		return nil, fmt.Errorf("%s: above %d MiB", path, maxDescriptorFile>>20)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("%s: not a FileDescriptorSet: %v", path, err)
	}
	return buildFiles(set.File)
}

// buildFiles makes a registry of fds, adding missing imports from the global registry.
func buildFiles(fds []*descriptorpb.FileDescriptorProto) (*protoregistry.Files, error) {
	have := map[string]bool{}
	for _, fd := range fds {
		have[fd.GetName()] = true
	}
	for i := 0; i < len(fds); i++ {
		for _, dep := range fds[i].GetDependency() {
			if have[dep] {
				continue
			}
			gd, err := protoregistry.GlobalFiles.FindFileByPath(dep)
			if err != nil {
				return nil, fmt.Errorf("import %q of %s is missing", dep, fds[i].GetName())
			}
			have[dep] = true
			fds = append(fds, protodesc.ToFileDescriptorProto(gd))
		}
	}
	return protodesc.NewFiles(&descriptorpb.FileDescriptorSet{File: fds})
}

// reflectFiles asks the server for the file defining service and all its imports.
func reflectFiles(ctx context.Context, conn *grpc.ClientConn, service string) (*protoregistry.Files, error) {
	stream, err := rpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		return nil, reflectionErr(err)
	}
	defer func() { _ = stream.CloseSend() }()
	raw, err := reflectAsk(stream, &rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: service}})
	if err != nil {
		return nil, err
	}
	got := fileSet{have: map[string]bool{}}
	if err := got.add(raw); err != nil {
		return nil, err
	}
	// Imports the server did not send with the file: ask for each (bounded).
	for i := 0; i < len(got.fds) && i < 1000; i++ {
		for _, dep := range got.fds[i].GetDependency() {
			if got.have[dep] {
				continue
			}
			if _, err := protoregistry.GlobalFiles.FindFileByPath(dep); err == nil {
				continue // buildFiles adds it
			}
			raw, err := reflectAsk(stream, &rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileByFilename{FileByFilename: dep}})
			if err != nil {
				return nil, err
			}
			if err := got.add(raw); err != nil {
				return nil, err
			}
		}
	}
	return buildFiles(got.fds)
}

func reflectAsk(stream rpb.ServerReflection_ServerReflectionInfoClient, req *rpb.ServerReflectionRequest) ([][]byte, error) {
	if err := stream.Send(req); err != nil {
		if errors.Is(err, io.EOF) { // the stream ended: its status comes with Recv
			_, err = stream.Recv()
		}
		return nil, reflectionErr(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		return nil, reflectionErr(err)
	}
	if e := resp.GetErrorResponse(); e != nil {
		return nil, fmt.Errorf("the server (reflection) answers %s: %s", codes.Code(e.GetErrorCode()), e.GetErrorMessage())
	}
	fr := resp.GetFileDescriptorResponse()
	if fr == nil {
		return nil, fmt.Errorf("the server (reflection) sent no file descriptor")
	}
	return fr.GetFileDescriptorProto(), nil
}

// fileSet is the file descriptors reflection sent, each once, in order.
type fileSet struct {
	fds  []*descriptorpb.FileDescriptorProto
	have map[string]bool
}

func (fs *fileSet) add(raw [][]byte) error {
	for _, b := range raw {
		fd := &descriptorpb.FileDescriptorProto{}
		if err := proto.Unmarshal(b, fd); err != nil {
			return fmt.Errorf("the server (reflection) sent a bad file descriptor: %v", err)
		}
		if !fs.have[fd.GetName()] {
			fs.have[fd.GetName()] = true
			fs.fds = append(fs.fds, fd)
		}
	}
	return nil
}

func reflectionErr(err error) error {
	switch status.Code(err) {
	case codes.Unimplemented:
		return fmt.Errorf("the server does not offer reflection (grpc.reflection.v1): give grpc.descriptors, a FileDescriptorSet file")
	case codes.Unavailable:
		return fmt.Errorf("the server is unavailable for reflection: %s", status.Convert(err).Message())
	}
	return fmt.Errorf("reflection: %s: %s", status.Code(err), status.Convert(err).Message())
}
