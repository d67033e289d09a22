package descriptors_test

import (
	"testing"

	"google.golang.org/grpc"
	refv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zoo"
	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zootest"
)

// TestDiscoverSharesServedBundledFiles: the well-known and options files
// a Go backend serves exactly as the gateway links them are the gateway's
// own descriptors in the Result, not second copies.
func TestDiscoverSharesServedBundledFiles(t *testing.T) {
	t.Parallel()
	res, err := discover(t, zootest.Start(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"google/protobuf/timestamp.proto", "google/protobuf/struct.proto", "google/protobuf/descriptor.proto", "mcpgateway/v1/annotations.proto"} {
		got, err := res.Files.FindFileByPath(path)
		if err != nil {
			t.Fatalf("Files lacks %s: %v", path, err)
		}
		if want, _ := protoregistry.GlobalFiles.FindFileByPath(path); got != want {
			t.Errorf("%s is a copy built from what the backend served, not the bundled one", path)
		}
	}
}

// TestDiscoverBuildsServedBundledFileThatDiffers: a served
// google/protobuf/timestamp.proto that is not the gateway's (here with a
// field more) is the backend's: it is built from what was served.
func TestDiscoverBuildsServedBundledFileThatDiffers(t *testing.T) {
	t.Parallel()
	bundledTS, err := protoregistry.GlobalFiles.FindFileByPath("google/protobuf/timestamp.proto")
	if err != nil {
		t.Fatal(err)
	}
	ts := protodesc.ToFileDescriptorProto(bundledTS)
	ts.MessageType[0].Field = append(ts.MessageType[0].Field, &descriptorpb.FieldDescriptorProto{
		Name: proto.String("zone"), Number: proto.Int32(3), JsonName: proto.String("zone"),
		Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(),
	})
	addr := startServer(t, func(s *grpc.Server) {
		zoo.Register(s, zoo.NewServer())
		refv1.RegisterServerReflectionServer(s, zooOnlyReflection{with: []*descriptorpb.FileDescriptorProto{ts}})
	})
	res, err := discover(t, addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := res.Files.FindFileByPath("google/protobuf/timestamp.proto")
	if err != nil {
		t.Fatal(err)
	}
	if got.Messages().Get(0).Fields().ByName("zone") == nil {
		t.Error("timestamp.proto is the bundled copy, not the one served with a field more")
	}
	st, err := res.Files.FindFileByPath("google/protobuf/struct.proto")
	if err != nil {
		t.Fatal(err)
	}
	if bundled, _ := protoregistry.GlobalFiles.FindFileByPath("google/protobuf/struct.proto"); st != bundled {
		t.Error("struct.proto, not served, is not the bundled copy")
	}
}
