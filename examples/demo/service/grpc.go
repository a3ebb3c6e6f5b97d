package main

// The grpc role (and edge's HTTP/2): QuoteService/Quote with health and reflection.
// Without protoc, the descriptor is built in Go and served with dynamicpb messages.

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

func init() {
	roles["grpc"] = func(ctx context.Context, listen string) error {
		gs, err := newGRPCServer(envInt("GRPC_ITERATIONS", 200))
		if err != nil {
			return err
		}
		mux := http.NewServeMux() // HTTP/1.1 on the same port: the compose healthcheck
		mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
		return serveSplit(ctx, listen, mux, gs)
	}
}

const (
	quoteFile    = "loadgate/demo/v1/quote.proto"
	quoteService = "loadgate.demo.v1.QuoteService"
)

// quoteFileProto is quote.proto, written as its descriptor.
func quoteFileProto() *descriptorpb.FileDescriptorProto {
	field := func(name, json string, num int32, typ descriptorpb.FieldDescriptorProto_Type) *descriptorpb.FieldDescriptorProto {
		return &descriptorpb.FieldDescriptorProto{
			Name: proto.String(name), JsonName: proto.String(json), Number: proto.Int32(num),
			Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), Type: typ.Enum(),
		}
	}
	const (
		i64 = descriptorpb.FieldDescriptorProto_TYPE_INT64
		i32 = descriptorpb.FieldDescriptorProto_TYPE_INT32
		str = descriptorpb.FieldDescriptorProto_TYPE_STRING
	)
	return &descriptorpb.FileDescriptorProto{
		Name:    proto.String(quoteFile),
		Package: proto.String("loadgate.demo.v1"),
		Syntax:  proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: proto.String("QuoteRequest"), Field: []*descriptorpb.FieldDescriptorProto{
				field("item_id", "itemId", 1, i64), field("quantity", "quantity", 2, i32), field("customer", "customer", 3, str),
			}},
			{Name: proto.String("QuoteResponse"), Field: []*descriptorpb.FieldDescriptorProto{
				field("item_id", "itemId", 1, i64), field("name", "name", 2, str), field("unit_cents", "unitCents", 3, i64),
				field("total_cents", "totalCents", 4, i64), field("digest", "digest", 5, str),
			}},
		},
		Service: []*descriptorpb.ServiceDescriptorProto{{
			Name: proto.String("QuoteService"),
			Method: []*descriptorpb.MethodDescriptorProto{{
				Name:       proto.String("Quote"),
				InputType:  proto.String(".loadgate.demo.v1.QuoteRequest"),
				OutputType: proto.String(".loadgate.demo.v1.QuoteResponse"),
			}},
		}},
	}
}

var (
	quoteOnce sync.Once
	quoteDesc protoreflect.FileDescriptor
	quoteErr  error
)

// quoteDescriptor builds quote.proto once and registers it globally for reflection.
func quoteDescriptor() (protoreflect.FileDescriptor, error) {
	quoteOnce.Do(func() {
		quoteDesc, quoteErr = protodesc.NewFile(quoteFileProto(), protoregistry.GlobalFiles)
		if quoteErr == nil {
			quoteErr = protoregistry.GlobalFiles.RegisterFile(quoteDesc)
		}
		if quoteErr != nil {
			quoteErr = fmt.Errorf("%s: %w", quoteFile, quoteErr)
		}
	})
	return quoteDesc, quoteErr
}

// newGRPCServer is a gRPC server with QuoteService, health and reflection.
func newGRPCServer(iterations int) (*grpc.Server, error) {
	fd, err := quoteDescriptor()
	if err != nil {
		return nil, err
	}
	sd := fd.Services().ByName("QuoteService")
	m := sd.Methods().ByName("Quote")
	q := &quoter{in: m.Input(), out: m.Output(), iterations: max(iterations, 1)}
	gs := grpc.NewServer(grpc.MaxRecvMsgSize(1<<20), grpc.MaxConcurrentStreams(1024))
	gs.RegisterService(&grpc.ServiceDesc{
		ServiceName: quoteService,
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{
			MethodName: "Quote",
			Handler: func(_ any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
				req := dynamicpb.NewMessage(q.in)
				if err := dec(req); err != nil {
					return nil, err
				}
				if ic == nil {
					return q.quote(ctx, req)
				}
				info := &grpc.UnaryServerInfo{FullMethod: "/" + quoteService + "/Quote"}
				return ic(ctx, req, info, func(ctx context.Context, r any) (any, error) {
					return q.quote(ctx, r.(*dynamicpb.Message))
				})
			},
		}},
		Metadata: quoteFile,
	}, struct{}{})
	healthpb.RegisterHealthServer(gs, health.NewServer()) // SERVING
	reflection.Register(gs)
	return gs, nil
}

type quoter struct {
	in, out    protoreflect.MessageDescriptor
	iterations int
}

func (q *quoter) quote(ctx context.Context, req *dynamicpb.Message) (*dynamicpb.Message, error) {
	fields := q.in.Fields()
	id := req.Get(fields.ByName("item_id")).Int()
	qty := req.Get(fields.ByName("quantity")).Int()
	customer := req.Get(fields.ByName("customer")).String()
	if id < 0 || qty < 0 {
		return nil, status.Errorf(codes.InvalidArgument, "item_id and quantity must be >= 0 (got %d, %d)", id, qty)
	}
	if qty == 0 {
		qty = 1
	}
	it := mkItem(int(id%maxItems) + 1)
	var seed [8]byte
	binary.LittleEndian.PutUint64(seed[:], uint64(id))
	sum := sha256.Sum256(append(seed[:], customer...))
	for i := 1; i < q.iterations; i++ {
		sum = sha256.Sum256(sum[:])
	}
	if err := ctx.Err(); err != nil {
		return nil, status.FromContextError(err).Err()
	}
	resp := dynamicpb.NewMessage(q.out)
	of := q.out.Fields()
	resp.Set(of.ByName("item_id"), protoreflect.ValueOfInt64(int64(it.ID)))
	resp.Set(of.ByName("name"), protoreflect.ValueOfString(it.Name))
	resp.Set(of.ByName("unit_cents"), protoreflect.ValueOfInt64(int64(it.Price)))
	resp.Set(of.ByName("total_cents"), protoreflect.ValueOfInt64(int64(it.Price)*qty))
	resp.Set(of.ByName("digest"), protoreflect.ValueOfString(hex.EncodeToString(sum[:8])))
	return resp, nil
}
