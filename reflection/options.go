package reflection

import (
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	mcpgatewayv1 "github.com/grpc-mcp-gateway/gateway/proto/mcpgateway/v1"
)

// ToolOptions returns the (mcpgateway.v1.tool) option of m, or nil when m
// does not set it (or sets something that does not decode as one).
//
// It works on descriptors from any source. The option may arrive as a
// typed extension (descriptors unmarshalled while this package's
// generated types were linked), as unknown fields (options decoded before
// that, or by another resolver), or inside an options message of another
// Go type (a dynamic one from a compiler); the options are re-encoded and
// decoded with the generated extension types whenever the typed extension
// is not already there. The result is a copy the caller may keep and
// modify.
func ToolOptions(m protoreflect.MethodDescriptor) *mcpgatewayv1.Tool {
	opts := &descriptorpb.MethodOptions{}
	if !decodeOptions(m.Options(), opts) || !proto.HasExtension(opts, mcpgatewayv1.E_Tool) {
		return nil
	}
	return proto.Clone(proto.GetExtension(opts, mcpgatewayv1.E_Tool).(*mcpgatewayv1.Tool)).(*mcpgatewayv1.Tool)
}

// ServiceOptions returns the (mcpgateway.v1.service) option of s, or nil
// when s does not set it. It works like ToolOptions.
func ServiceOptions(s protoreflect.ServiceDescriptor) *mcpgatewayv1.Service {
	opts := &descriptorpb.ServiceOptions{}
	if !decodeOptions(s.Options(), opts) || !proto.HasExtension(opts, mcpgatewayv1.E_Service) {
		return nil
	}
	return proto.Clone(proto.GetExtension(opts, mcpgatewayv1.E_Service).(*mcpgatewayv1.Service)).(*mcpgatewayv1.Service)
}

// decodeOptions fills dst from the options message src through the wire
// format, with the extension registry that knows our options: the one way
// that works for every representation src may have.
func decodeOptions(src, dst proto.Message) bool {
	if src == nil || !src.ProtoReflect().IsValid() {
		return false
	}
	b, err := proto.MarshalOptions{AllowPartial: true}.Marshal(src)
	if err != nil {
		return false
	}
	return proto.UnmarshalOptions{AllowPartial: true, Resolver: protoregistry.GlobalTypes}.Unmarshal(b, dst) == nil
}

// HTTPRule returns the google.api.http option of m, or nil when m has
// none. Like ToolOptions it reads any representation of the options.
func HTTPRule(m protoreflect.MethodDescriptor) *annotations.HttpRule {
	opts := &descriptorpb.MethodOptions{}
	if !decodeOptions(m.Options(), opts) || !proto.HasExtension(opts, annotations.E_Http) {
		return nil
	}
	return proto.Clone(proto.GetExtension(opts, annotations.E_Http).(*annotations.HttpRule)).(*annotations.HttpRule)
}
