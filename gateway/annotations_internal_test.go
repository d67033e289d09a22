package gateway

import (
	"testing"

	_ "google.golang.org/genproto/googleapis/api/annotations" // registers google.api.http for prototext
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	mcpgatewayv1 "github.com/grpc-mcp-gateway/gateway/proto/mcpgateway/v1"
)

// TestMethodAnnotations: the google.api.http verb gives hints, the
// idempotency_level replaces them, and the (mcpgateway.v1.tool) option
// wins hint by hint.
func TestMethodAnnotations(t *testing.T) {
	fdp := &descriptorpb.FileDescriptorProto{}
	if err := prototext.Unmarshal([]byte(`
		name: "hints.proto" package: "hints.v1" syntax: "proto3"
		dependency: "google/api/annotations.proto"
		message_type { name: "M" }
		service { name: "S"
			method { name: "Get" input_type: ".hints.v1.M" output_type: ".hints.v1.M"
				options { [google.api.http] { get: "/v1/{name=things/*}" } } }
			method { name: "Delete" input_type: ".hints.v1.M" output_type: ".hints.v1.M"
				options { [google.api.http] { delete: "/v1/{name=things/*}" } } }
			method { name: "Put" input_type: ".hints.v1.M" output_type: ".hints.v1.M"
				options { [google.api.http] { put: "/v1/{name=things/*}" body: "*" } } }
			method { name: "Post" input_type: ".hints.v1.M" output_type: ".hints.v1.M"
				options { [google.api.http] { post: "/v1/things" body: "*" } } }
			method { name: "Patch" input_type: ".hints.v1.M" output_type: ".hints.v1.M"
				options { [google.api.http] { patch: "/v1/{name=things/*}" body: "*" } } }
			method { name: "Custom" input_type: ".hints.v1.M" output_type: ".hints.v1.M"
				options { [google.api.http] { custom { kind: "HEAD" path: "/v1/things" } } } }
			method { name: "GetWithPostBinding" input_type: ".hints.v1.M" output_type: ".hints.v1.M"
				options { [google.api.http] { get: "/v1/things" additional_bindings { post: "/v1/things:get" } } } }
			method { name: "NoRule" input_type: ".hints.v1.M" output_type: ".hints.v1.M" }
			method { name: "GetButIdempotent" input_type: ".hints.v1.M" output_type: ".hints.v1.M"
				options { idempotency_level: IDEMPOTENT [google.api.http] { get: "/v1/things" } } }
			method { name: "PostButNoSideEffects" input_type: ".hints.v1.M" output_type: ".hints.v1.M"
				options { idempotency_level: NO_SIDE_EFFECTS [google.api.http] { post: "/v1/things:search" body: "*" } } }
		}`), fdp); err != nil {
		t.Fatal(err)
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	yes, no := boolPtr(true), boolPtr(false)
	svc := fd.Services().Get(0)
	for _, tc := range []struct {
		method string
		tool   *mcpgatewayv1.Tool
		want   *mcp.ToolAnnotations
	}{
		{"Get", nil, &mcp.ToolAnnotations{ReadOnlyHint: yes, IdempotentHint: yes}},
		{"Delete", nil, &mcp.ToolAnnotations{DestructiveHint: yes, IdempotentHint: yes}},
		{"Put", nil, &mcp.ToolAnnotations{IdempotentHint: yes}},
		{"Post", nil, nil},
		{"Patch", nil, nil},
		{"Custom", nil, nil},
		{"GetWithPostBinding", nil, &mcp.ToolAnnotations{ReadOnlyHint: yes, IdempotentHint: yes}},
		{"NoRule", nil, nil},
		{"GetButIdempotent", nil, &mcp.ToolAnnotations{IdempotentHint: yes}},
		{"PostButNoSideEffects", nil, &mcp.ToolAnnotations{ReadOnlyHint: yes, IdempotentHint: yes}},
		{"Delete", &mcpgatewayv1.Tool{DestructiveHint: proto.Bool(false)}, &mcp.ToolAnnotations{DestructiveHint: no, IdempotentHint: yes}},
		{"Get", &mcpgatewayv1.Tool{ReadOnlyHint: proto.Bool(false), Title: "T"}, &mcp.ToolAnnotations{Title: "T", ReadOnlyHint: no, IdempotentHint: yes}},
		{"Post", &mcpgatewayv1.Tool{IdempotentHint: proto.Bool(true)}, &mcp.ToolAnnotations{IdempotentHint: yes}},
	} {
		m := svc.Methods().ByName(protoreflect.Name(tc.method))
		got := methodAnnotations(m, tc.tool)
		if !sameAnnotations(got, tc.want) {
			t.Errorf("%s with %v: got %s, want %s", tc.method, tc.tool, show(got), show(tc.want))
		}
	}
}

func sameAnnotations(a, b *mcp.ToolAnnotations) bool {
	if a == nil || b == nil {
		return a == b
	}
	eq := func(x, y *bool) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.Title == b.Title && eq(a.ReadOnlyHint, b.ReadOnlyHint) && eq(a.DestructiveHint, b.DestructiveHint) &&
		eq(a.IdempotentHint, b.IdempotentHint) && eq(a.OpenWorldHint, b.OpenWorldHint)
}

func show(a *mcp.ToolAnnotations) string {
	if a == nil {
		return "none"
	}
	s := "{title:" + a.Title
	for _, h := range []struct {
		n string
		v *bool
	}{{"readOnly", a.ReadOnlyHint}, {"destructive", a.DestructiveHint}, {"idempotent", a.IdempotentHint}, {"openWorld", a.OpenWorldHint}} {
		if h.v != nil {
			s += " " + h.n + ":" + map[bool]string{true: "true", false: "false"}[*h.v]
		}
	}
	return s + "}"
}
