package descriptors_test

import (
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	refv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	refv1alphagrpc "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	zoov1 "github.com/grpc-mcp-gateway/gateway/examples/zoo/gen/zoo/v1"
	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zoo"
	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zootest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// startServer serves a gRPC server set up by register on a loopback port
// for the duration of the test.
func startServer(t *testing.T, register func(*grpc.Server), opts ...grpc.ServerOption) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(opts...)
	register(s)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Serve(lis)
	}()
	t.Cleanup(func() {
		s.Stop()
		<-done
	})
	return lis.Addr().String()
}

func discover(t *testing.T, addr string, opts *descriptors.ServerReflectionOptions) (*descriptors.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	return descriptors.NewServerReflection(zootest.Dial(t, addr), opts).Discover(ctx)
}

func serviceNames(res *descriptors.Result) []string {
	var names []string
	for _, sd := range res.Services {
		names = append(names, string(sd.FullName()))
	}
	return names
}

func TestDiscoverZoo(t *testing.T) {
	t.Parallel()
	res, err := discover(t, zootest.Start(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"grpc.health.v1.Health", zoo.ServiceName}, serviceNames(res)); diff != "" {
		t.Errorf("services (-want +got):\n%s", diff)
	}

	t.Run("descriptors match the compiled ones", func(t *testing.T) {
		got, err := res.Files.FindFileByPath("zoo/v1/zoo.proto")
		if err != nil {
			t.Fatal(err)
		}
		want := zoov1.File_zoo_v1_zoo_proto
		if diff := cmp.Diff(descriptors.Decoded(protodesc.ToFileDescriptorProto(want)), descriptors.Decoded(protodesc.ToFileDescriptorProto(got)), protocmp.Transform()); diff != "" {
			t.Errorf("reflected zoo.proto differs (-want +got):\n%s", diff)
		}
	})

	t.Run("every method resolves", func(t *testing.T) {
		for _, sd := range res.Services {
			methods := sd.Methods()
			for i := range methods.Len() {
				md := methods.Get(i)
				for _, m := range []protoreflect.MessageDescriptor{md.Input(), md.Output()} {
					if m.IsPlaceholder() {
						t.Errorf("%s: %s is a placeholder", md.FullName(), m.FullName())
					}
					d, err := res.Files.FindDescriptorByName(m.FullName())
					if err != nil {
						t.Errorf("%s: %s not in Files: %v", md.FullName(), m.FullName(), err)
					} else if d != m {
						t.Errorf("%s: Files holds a different descriptor for %s", md.FullName(), m.FullName())
					}
				}
			}
		}
	})

	t.Run("well-known types resolve", func(t *testing.T) {
		d, err := res.Files.FindDescriptorByName("zoo.v1.Animal")
		if err != nil {
			t.Fatal(err)
		}
		animal := d.(protoreflect.MessageDescriptor)
		for field, want := range map[protoreflect.Name]protoreflect.FullName{
			"birth_time":       "google.protobuf.Timestamp",
			"attributes":       "google.protobuf.Struct",
			"daily_feedings":   "google.protobuf.Int32Value",
			"feeding_interval": "google.protobuf.Duration",
		} {
			fd := animal.Fields().ByName(field)
			if fd == nil || fd.Message() == nil || fd.Message().IsPlaceholder() || fd.Message().FullName() != want {
				t.Errorf("Animal.%s: want a resolved %s, got %v", field, want, fd)
			}
		}
		for _, path := range []string{"google/protobuf/timestamp.proto", "google/protobuf/struct.proto", "google/protobuf/any.proto"} {
			if _, err := res.Files.FindFileByPath(path); err != nil {
				t.Errorf("Files lacks %s: %v", path, err)
			}
		}
	})

	t.Run("method options survive", func(t *testing.T) {
		sd := res.Services[slices.IndexFunc(res.Services, func(sd protoreflect.ServiceDescriptor) bool { return sd.FullName() == zoo.ServiceName })]
		for name, want := range map[protoreflect.Name]descriptorpb.MethodOptions_IdempotencyLevel{
			"GetAnimal":    descriptorpb.MethodOptions_NO_SIDE_EFFECTS,
			"UpdateAnimal": descriptorpb.MethodOptions_IDEMPOTENT,
			"CreateAnimal": descriptorpb.MethodOptions_IDEMPOTENCY_UNKNOWN,
		} {
			opts, _ := sd.Methods().ByName(name).Options().(*descriptorpb.MethodOptions)
			if got := opts.GetIdempotencyLevel(); got != want {
				t.Errorf("%s idempotency_level = %v, want %v", name, got, want)
			}
		}
		m := sd.Methods()
		if !m.ByName("WatchFeedings").IsStreamingServer() || !m.ByName("RecordObservations").IsStreamingClient() {
			t.Error("streaming flags lost")
		}
	})

	t.Run("dynamic call with Any resolves through Files", func(t *testing.T) {
		// The gateway's path: dynamicpb messages from the reflected
		// descriptors, protojson with a resolver built from Files.
		conn := zootest.Dial(t, zootest.Start(t))
		types := dynamicpb.NewTypes(res.Files)
		in, _ := types.FindMessageByName("zoo.v1.GetAnimalRequest")
		out, _ := types.FindMessageByName("zoo.v1.GetAnimalResponse")
		req := in.New().Interface()
		if err := (protojson.UnmarshalOptions{Resolver: types}).Unmarshal([]byte(`{"id":"pingu"}`), req); err != nil {
			t.Fatal(err)
		}
		resp := out.New().Interface()
		if err := conn.Invoke(t.Context(), "/zoo.v1.ZooService/GetAnimal", req, resp); err != nil {
			t.Fatal(err)
		}
		js, err := protojson.MarshalOptions{Resolver: types}.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`"@type":"type.googleapis.com/zoo.v1.Vaccination"`, `"vaccine":"avian influenza"`, `"birthTime":"2019-02-02T09:00:00Z"`} {
			if !strings.Contains(strings.ReplaceAll(string(js), " ", ""), strings.ReplaceAll(want, " ", "")) {
				t.Errorf("response JSON lacks %s:\n%s", want, js)
			}
		}
	})
}

// TestDiscoverReflectionVersions checks each version of the reflection
// service alone, since many servers offer only one.
func TestDiscoverReflectionVersions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		register func(*grpc.Server)
	}{
		{"v1 and v1alpha", func(s *grpc.Server) { reflection.Register(s) }},
		{"v1 only", func(s *grpc.Server) { reflection.RegisterV1(s) }},
		{"v1alpha only", func(s *grpc.Server) {
			refv1alphagrpc.RegisterServerReflectionServer(s, reflection.NewServer(reflection.ServerOptions{Services: s}))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr := startServer(t, func(s *grpc.Server) {
				zoo.Register(s, zoo.NewServer())
				tc.register(s)
			})
			res, err := discover(t, addr, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{zoo.ServiceName}, serviceNames(res)); diff != "" {
				t.Errorf("services (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDiscoverWithoutReflection(t *testing.T) {
	t.Parallel()
	_, err := discover(t, zootest.Start(t, zoo.WithoutReflection()), nil)
	if !errors.Is(err, descriptors.ErrReflectionNotSupported) {
		t.Fatalf("err = %v, want ErrReflectionNotSupported", err)
	}
	if got := status.Code(err); got != codes.Unimplemented {
		t.Errorf("status.Code(err) = %v, want Unimplemented", got)
	}
}

func TestDiscoverUnreachable(t *testing.T) {
	t.Parallel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close() // nothing listens there now
	_, err = discover(t, addr, nil)
	if err == nil {
		t.Fatal("Discover succeeded against a closed port")
	}
	if got := status.Code(err); got != codes.Unavailable {
		t.Errorf("status.Code(err) = %v, want Unavailable; err = %v", got, err)
	}
	if errors.Is(err, descriptors.ErrReflectionNotSupported) {
		t.Errorf("unreachable reported as no reflection: %v", err)
	}
	t.Logf("error: %v", err)
}

// TestDiscoverDeadline uses a peer that accepts TCP but never speaks HTTP/2,
// so only ctx can end the call.
func TestDiscoverDeadline(t *testing.T) {
	t.Parallel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan struct{})
	go func() {
		defer close(accepted)
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		lis.Close()
		<-accepted
	})
	conn := zootest.Dial(t, lis.Addr().String())
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	_, err = descriptors.NewServerReflection(conn, nil).Discover(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want one wrapping context.DeadlineExceeded", err)
	}
	t.Logf("error: %v", err)
}

// zooOnlyReflection is a reflection v1 server that serves zoo/v1/zoo.proto
// and nothing else, not even the well-known files it imports, as some
// non-Go reflection servers do (grpcurl #459, #547), or, with with, those
// files too, sent beside zoo.proto in each answer.
type zooOnlyReflection struct {
	refv1.UnimplementedServerReflectionServer
	with []*descriptorpb.FileDescriptorProto
}

func (z zooOnlyReflection) ServerReflectionInfo(stream refv1.ServerReflection_ServerReflectionInfoServer) error {
	var raw [][]byte
	for _, fd := range append([]*descriptorpb.FileDescriptorProto{protodesc.ToFileDescriptorProto(zoov1.File_zoo_v1_zoo_proto)}, z.with...) {
		b, err := proto.Marshal(fd)
		if err != nil {
			return err
		}
		raw = append(raw, b)
	}
	files := &refv1.ServerReflectionResponse_FileDescriptorResponse{
		FileDescriptorResponse: &refv1.FileDescriptorResponse{FileDescriptorProto: raw},
	}
	notFound := &refv1.ServerReflectionResponse_ErrorResponse{
		ErrorResponse: &refv1.ErrorResponse{ErrorCode: int32(codes.NotFound), ErrorMessage: "not found"},
	}
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		resp := &refv1.ServerReflectionResponse{ValidHost: req.GetHost(), OriginalRequest: req}
		switch {
		case req.GetListServices() != "":
			resp.MessageResponse = &refv1.ServerReflectionResponse_ListServicesResponse{
				ListServicesResponse: &refv1.ListServiceResponse{Service: []*refv1.ServiceResponse{{Name: zoo.ServiceName}}},
			}
		case strings.HasPrefix(req.GetFileContainingSymbol(), "zoo.v1."), req.GetFileByFilename() == "zoo/v1/zoo.proto":
			resp.MessageResponse = files
		default:
			resp.MessageResponse = notFound
		}
		if err := stream.Send(resp); err != nil {
			return err
		}
	}
}

func TestDiscoverFallsBackToBundledWellKnownFiles(t *testing.T) {
	t.Parallel()
	addr := startServer(t, func(s *grpc.Server) {
		zoo.Register(s, zoo.NewServer())
		refv1.RegisterServerReflectionServer(s, zooOnlyReflection{})
	})
	res, err := discover(t, addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{zoo.ServiceName}, serviceNames(res)); diff != "" {
		t.Errorf("services (-want +got):\n%s", diff)
	}
	for _, path := range []string{"google/protobuf/timestamp.proto", "google/protobuf/struct.proto"} {
		got, err := res.Files.FindFileByPath(path)
		if err != nil {
			t.Fatalf("Files lacks %s: %v", path, err)
		}
		want, _ := protoregistry.GlobalFiles.FindFileByPath(path)
		if got != want {
			t.Errorf("%s is not the bundled copy", path)
		}
	}
}

// ghostServices advertises, next to the real services, one whose
// descriptors nobody has: a misconfigured reflection server.
type ghostServices struct{ s *grpc.Server }

func (g ghostServices) GetServiceInfo() map[string]grpc.ServiceInfo {
	m := g.s.GetServiceInfo()
	m["ghost.v1.GhostService"] = grpc.ServiceInfo{}
	return m
}

func TestDiscoverBrokenService(t *testing.T) {
	t.Parallel()
	addr := startServer(t, func(s *grpc.Server) {
		zoo.Register(s, zoo.NewServer())
		healthpb.RegisterHealthServer(s, health.NewServer())
		refv1alphagrpc.RegisterServerReflectionServer(s, reflection.NewServer(reflection.ServerOptions{Services: ghostServices{s}}))
	})

	_, err := discover(t, addr, nil)
	if err == nil || !strings.Contains(err.Error(), "ghost.v1.GhostService") {
		t.Errorf("err = %v, want one naming ghost.v1.GhostService", err)
	}

	res, err := discover(t, addr, &descriptors.ServerReflectionOptions{SkipBrokenServices: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"grpc.health.v1.Health", zoo.ServiceName}, serviceNames(res)); diff != "" {
		t.Errorf("services (-want +got):\n%s", diff)
	}
}
