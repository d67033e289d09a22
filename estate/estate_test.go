package estate_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/aiplatform/apiv1/aiplatformpb"
	"cloud.google.com/go/compute/apiv1/computepb"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	"github.com/grpc-mcp-gateway/gateway/estate"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func serve(t testing.TB, opts *estate.Options) *grpc.ClientConn {
	t.Helper()
	srv, err := estate.Serve(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(srv.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func countMethods(t *testing.T) int {
	n := 0
	for _, s := range estate.Services() {
		n += s.Methods().Len()
	}
	return n
}

// TestSize holds the estate to the size the README's figures are for, and
// checks that its descriptor set stands on its own.
func TestSize(t *testing.T) {
	if n := len(estate.Services()); n != estate.NumServices {
		t.Errorf("%d services, want %d", n, estate.NumServices)
	}
	if n := countMethods(t); n != estate.NumMethods {
		t.Errorf("%d methods, want %d", n, estate.NumMethods)
	}
	files, err := protodesc.NewFiles(estate.DescriptorSet())
	if err != nil {
		t.Fatalf("descriptor set does not stand alone: %v", err)
	}
	for _, fd := range estate.Files() {
		if _, err := files.FindFileByPath(fd.Path()); err != nil {
			t.Errorf("descriptor set lacks %s", fd.Path())
		}
	}
}

// TestReflection discovers the served estate with the gateway's own
// reflection client: every service and method is there.
func TestReflection(t *testing.T) {
	conn := serve(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := descriptors.NewServerReflection(conn, nil).Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	methods := 0
	for _, s := range res.Services {
		methods += s.Methods().Len()
	}
	if len(res.Services) != estate.NumServices || methods != estate.NumMethods {
		t.Errorf("discovered %d services, %d methods; want %d, %d", len(res.Services), methods, estate.NumServices, estate.NumMethods)
	}
}

// TestCalls makes one call of every shape the estate has: unary, server
// stream and bidirectional stream.
func TestCalls(t *testing.T) {
	conn := serve(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	op := &computepb.Operation{}
	if err := conn.Invoke(ctx, "/google.cloud.compute.v1.Instances/Insert", &computepb.InsertInstanceRequest{Project: "p"}, op); err != nil {
		t.Fatalf("unary: %v", err)
	}
	if !proto.Equal(op, &computepb.Operation{}) {
		t.Errorf("unary answered %v, want an empty Operation", op)
	}

	sd := &grpc.StreamDesc{ServerStreams: true}
	st, err := conn.NewStream(ctx, sd, "/google.cloud.aiplatform.v1.PredictionService/StreamGenerateContent")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SendMsg(&aiplatformpb.GenerateContentRequest{Model: "m"}); err != nil {
		t.Fatal(err)
	}
	if err := st.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if got := recvAll(t, st, func() proto.Message { return &aiplatformpb.GenerateContentResponse{} }); got != 1 {
		t.Errorf("server stream sent %d messages, want 1", got)
	}

	bidi, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, "/google.pubsub.v1.Subscriber/StreamingPull")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := bidi.SendMsg(&pubsubpb.StreamingPullRequest{Subscription: "s"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := bidi.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if got := recvAll(t, bidi, func() proto.Message { return &pubsubpb.StreamingPullResponse{} }); got != 3 {
		t.Errorf("bidi stream answered %d messages to 3 requests, want 3", got)
	}
}

func recvAll(t *testing.T, st grpc.ClientStream, next func() proto.Message) int {
	t.Helper()
	n := 0
	for {
		err := st.RecvMsg(next())
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			t.Fatalf("after %d messages: %v", n, err)
		}
		n++
	}
}

// TestUnaryOverride: a handler named in Options.Unary answers its method
// with the request it was given, and a status error reaches the client.
func TestUnaryOverride(t *testing.T) {
	conn := serve(t, &estate.Options{Unary: map[string]estate.UnaryHandler{
		"/google.cloud.compute.v1.Instances/Get": func(_ context.Context, req proto.Message) (proto.Message, error) {
			return &computepb.Instance{Name: proto.String(req.(*computepb.GetInstanceRequest).GetInstance())}, nil
		},
		"/google.cloud.compute.v1.Instances/Delete": func(context.Context, proto.Message) (proto.Message, error) {
			return nil, status.Error(codes.NotFound, "no such instance")
		},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := &computepb.Instance{}
	if err := conn.Invoke(ctx, "/google.cloud.compute.v1.Instances/Get", &computepb.GetInstanceRequest{Instance: "vm-1"}, got); err != nil {
		t.Fatal(err)
	}
	if got.GetName() != "vm-1" {
		t.Errorf("override answered name %q, want vm-1", got.GetName())
	}
	err := conn.Invoke(ctx, "/google.cloud.compute.v1.Instances/Delete", &computepb.DeleteInstanceRequest{}, &computepb.Operation{})
	if status.Code(err) != codes.NotFound {
		t.Errorf("override error: got %v, want NotFound", err)
	}
}

// TestOptionsErrors: a misnamed override or service is refused, naming it.
func TestOptionsErrors(t *testing.T) {
	for _, tc := range []struct {
		opts *estate.Options
		want string
	}{
		{&estate.Options{Unary: map[string]estate.UnaryHandler{"/google.cloud.compute.v1.Instances/Nope": nil}}, "Instances/Nope"},
		{&estate.Options{Unary: map[string]estate.UnaryHandler{"/google.pubsub.v1.Subscriber/StreamingPull": nil}}, "StreamingPull"},
		{&estate.Options{Services: []protoreflect.FullName{"google.nope.Service"}}, "google.nope.Service"},
		{&estate.Options{Services: []protoreflect.FullName{"google.cloud.compute.v1.Instance"}}, "not a service"},
	} {
		srv, err := estate.Serve(tc.opts)
		if err == nil {
			srv.Stop()
			t.Errorf("%+v: no error", tc.opts)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %q does not mention %q", err, tc.want)
		}
	}
}

// TestExtraService: a service outside the estate that the client modules
// register can be served too.
func TestExtraService(t *testing.T) {
	conn := serve(t, &estate.Options{Services: append(estate.ServiceNames(), "google.longrunning.Operations")})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := descriptors.NewServerReflection(conn, nil).Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Services) != estate.NumServices+1 {
		t.Errorf("%d services, want %d", len(res.Services), estate.NumServices+1)
	}
}
