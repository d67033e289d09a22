package gateway

import (
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	mcpgatewayv1 "github.com/grpc-mcp-gateway/gateway/proto/mcpgateway/v1"
	"github.com/grpc-mcp-gateway/gateway/reflection"
)

// methodAnnotations gives the MCP hints, from three sources, the later
// winning: the method's google.api.http rule (httpHints), protobuf's
// idempotency_level (NO_SIDE_EFFECTS is a read-only and so idempotent tool,
// IDEMPOTENT an idempotent one; either replaces every hint of the rule,
// since the service's owners said exactly what they meant), then each hint
// the (mcpgateway.v1.tool) option sets. Other hints stay at the protocol's
// defaults (absent). The option's title is also annotations.title, which
// 2025-03-26 clients read.
func methodAnnotations(m protoreflect.MethodDescriptor, to *mcpgatewayv1.Tool) *mcp.ToolAnnotations {
	var a mcp.ToolAnnotations
	switch idempotencyLevel(m) {
	case descriptorpb.MethodOptions_NO_SIDE_EFFECTS:
		a.ReadOnlyHint, a.IdempotentHint = boolPtr(true), boolPtr(true)
	case descriptorpb.MethodOptions_IDEMPOTENT:
		a.IdempotentHint = boolPtr(true)
	default:
		a = httpHints(reflection.HTTPRule(m))
	}
	if to != nil {
		a.Title = to.GetTitle()
		if to.ReadOnlyHint != nil {
			a.ReadOnlyHint = boolPtr(to.GetReadOnlyHint())
		}
		if to.DestructiveHint != nil {
			a.DestructiveHint = boolPtr(to.GetDestructiveHint())
		}
		if to.IdempotentHint != nil {
			a.IdempotentHint = boolPtr(to.GetIdempotentHint())
		}
		if to.OpenWorldHint != nil {
			a.OpenWorldHint = boolPtr(to.GetOpenWorldHint())
		}
	}
	if a == (mcp.ToolAnnotations{}) {
		return nil
	}
	return &a
}

// idempotencyLevel reads the method's idempotency_level, whatever Go type
// its options have.
func idempotencyLevel(m protoreflect.MethodDescriptor) descriptorpb.MethodOptions_IdempotencyLevel {
	if opts, ok := m.Options().(*descriptorpb.MethodOptions); ok {
		return opts.GetIdempotencyLevel()
	}
	// Options of another Go type (a compiler's dynamic message): read the
	// one standard field through reflection.
	if o := m.Options(); o != nil && o.ProtoReflect().IsValid() {
		if fd := o.ProtoReflect().Descriptor().Fields().ByName("idempotency_level"); fd != nil {
			return descriptorpb.MethodOptions_IdempotencyLevel(o.ProtoReflect().Get(fd).Enum())
		}
	}
	return descriptorpb.MethodOptions_IDEMPOTENCY_UNKNOWN
}

// httpHints maps the HTTP verb of a google.api.http rule onto hints, as
// HTTP defines the verbs (RFC 9110 §9.2): GET is safe and idempotent,
// DELETE idempotent and destructive, PUT idempotent. POST, PATCH and custom
// verbs promise nothing, so they give no hint. Additional bindings are
// ignored: the primary binding is the method's own verb.
func httpHints(rule *annotations.HttpRule) mcp.ToolAnnotations {
	var a mcp.ToolAnnotations
	switch rule.GetPattern().(type) {
	case *annotations.HttpRule_Get:
		a.ReadOnlyHint, a.IdempotentHint = boolPtr(true), boolPtr(true)
	case *annotations.HttpRule_Delete:
		a.DestructiveHint, a.IdempotentHint = boolPtr(true), boolPtr(true)
	case *annotations.HttpRule_Put:
		a.IdempotentHint = boolPtr(true)
	}
	return a
}

func boolPtr(b bool) *bool { return &b }
