package watch

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/grpc-mcp-gateway/gateway/internal/methodglob"
	mcpgatewayv1 "github.com/grpc-mcp-gateway/gateway/proto/mcpgateway/v1"
)

// TestOpenEnded: the (mcpgateway.v1.tool) watch option decides first,
// then an operator pattern, then the method's name; unary and client
// streams are never watches.
func TestOpenEnded(t *testing.T) {
	fd, err := protodesc.NewFile(&descriptorpb.FileDescriptorProto{
		Name: proto.String("w.proto"), Package: proto.String("w"), Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("M")}},
		Service: []*descriptorpb.ServiceDescriptorProto{{Name: proto.String("S"), Method: []*descriptorpb.MethodDescriptorProto{
			{Name: proto.String("WatchThings"), InputType: proto.String(".w.M"), OutputType: proto.String(".w.M"), ServerStreaming: proto.Bool(true)},
			{Name: proto.String("StreamingPull"), InputType: proto.String(".w.M"), OutputType: proto.String(".w.M"), ServerStreaming: proto.Bool(true), ClientStreaming: proto.Bool(true)},
			{Name: proto.String("LongPollUpdates"), InputType: proto.String(".w.M"), OutputType: proto.String(".w.M"), ServerStreaming: proto.Bool(true)},
			{Name: proto.String("Export"), InputType: proto.String(".w.M"), OutputType: proto.String(".w.M"), ServerStreaming: proto.Bool(true)},
			{Name: proto.String("HTTPWatch"), InputType: proto.String(".w.M"), OutputType: proto.String(".w.M"), ServerStreaming: proto.Bool(true)},
			{Name: proto.String("Watchdog"), InputType: proto.String(".w.M"), OutputType: proto.String(".w.M"), ServerStreaming: proto.Bool(true)},
			{Name: proto.String("Watch"), InputType: proto.String(".w.M"), OutputType: proto.String(".w.M")},
			{Name: proto.String("TailUpload"), InputType: proto.String(".w.M"), OutputType: proto.String(".w.M"), ClientStreaming: proto.Bool(true)},
		}}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ms := fd.Services().Get(0).Methods()
	byName := Settings{ByName: true}
	patterns, err := methodglob.Compile("patterns", []string{"w.S/Export"})
	if err != nil {
		t.Fatal(err)
	}
	pattern := Settings{Patterns: patterns}
	on, off := &mcpgatewayv1.Tool{Watch: proto.Bool(true)}, &mcpgatewayv1.Tool{Watch: proto.Bool(false)}
	for _, c := range []struct {
		method string
		s      Settings
		to     *mcpgatewayv1.Tool
		want   bool
	}{
		{"WatchThings", byName, nil, true},
		{"StreamingPull", byName, nil, true},
		{"LongPollUpdates", byName, nil, true},
		{"Export", byName, nil, false},
		{"HTTPWatch", byName, nil, true}, // an acronym ends before the word
		{"Watchdog", byName, nil, false}, // a word, not a prefix
		{"Watch", byName, nil, false},    // unary
		{"TailUpload", byName, nil, false},
		{"WatchThings", byName, off, false},
		{"Export", byName, on, true},
		{"Export", pattern, nil, true},
		{"WatchThings", pattern, nil, false},
		{"WatchThings", pattern, on, true},
		{"Export", pattern, off, false},
	} {
		if got := c.s.OpenEnded(ms.ByName(protoreflect.Name(c.method)), c.to); got != c.want {
			t.Errorf("%s (patterns %v, names %v, option %v): open-ended %v, want %v", c.method, c.s.Patterns, c.s.ByName, c.to, got, c.want)
		}
	}
}
