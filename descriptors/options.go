package descriptors

import (
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/gofeaturespb"

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

// Resource returns the google.api.resource option of md (AIP-123: the
// resource's type and name patterns), or nil when md has none. Like
// ToolOptions it reads any representation of the options.
func Resource(md protoreflect.MessageDescriptor) *annotations.ResourceDescriptor {
	opts := &descriptorpb.MessageOptions{}
	if !decodeOptions(md.Options(), opts) || !proto.HasExtension(opts, annotations.E_Resource) {
		return nil
	}
	return proto.Clone(proto.GetExtension(opts, annotations.E_Resource).(*annotations.ResourceDescriptor)).(*annotations.ResourceDescriptor)
}

// FieldFacts are the google.api options of one field that say what it is
// for: its field_behavior (AIP-203) and resource_reference (AIP-122).
type FieldFacts struct {
	// Required: field_behavior REQUIRED.
	Required bool
	// OutputOnly: field_behavior OUTPUT_ONLY.
	OutputOnly bool
	// ResourceType is resource_reference.type ("pubsub.googleapis.com/Topic"),
	// ChildType resource_reference.child_type; either may be "*" or "".
	ResourceType, ChildType string
}

// Field returns fd's FieldFacts, the zero value when it sets none. Like
// ToolOptions it reads any representation of the options, in one decode.
func Field(fd protoreflect.FieldDescriptor) FieldFacts {
	opts := &descriptorpb.FieldOptions{}
	if !decodeOptions(fd.Options(), opts) {
		return FieldFacts{}
	}
	var f FieldFacts
	if proto.HasExtension(opts, annotations.E_FieldBehavior) {
		for _, b := range proto.GetExtension(opts, annotations.E_FieldBehavior).([]annotations.FieldBehavior) {
			switch b {
			case annotations.FieldBehavior_REQUIRED:
				f.Required = true
			case annotations.FieldBehavior_OUTPUT_ONLY:
				f.OutputOnly = true
			}
		}
	}
	if proto.HasExtension(opts, annotations.E_ResourceReference) {
		r := proto.GetExtension(opts, annotations.E_ResourceReference).(*annotations.ResourceReference)
		f.ResourceType, f.ChildType = r.GetType(), r.GetChildType()
	}
	return f
}

// ResourceDefinitions returns the google.api.resource_definition options
// of fd (AIP-123 resources defined at file level, often for resources of
// another API), nil when it has none.
func ResourceDefinitions(fd protoreflect.FileDescriptor) []*annotations.ResourceDescriptor {
	opts := &descriptorpb.FileOptions{}
	if !decodeOptions(fd.Options(), opts) || !proto.HasExtension(opts, annotations.E_ResourceDefinition) {
		return nil
	}
	return proto.GetExtension(opts, annotations.E_ResourceDefinition).([]*annotations.ResourceDescriptor)
}

// IdempotencyLevel returns m's idempotency_level option, whatever Go type
// its options came in.
func IdempotencyLevel(m protoreflect.MethodDescriptor) descriptorpb.MethodOptions_IdempotencyLevel {
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

// fileTypes is the one extension a file's descriptor is decoded with:
// the Go features of editions, which protodesc.NewFile reads. Every other
// option extension (google.api's field_behavior, http, resource...; ours)
// stays in its wire form, as unknown fields of the options message: the
// readers here, and those of package gateway, decode the wire form
// whatever representation the options have, while decoded extensions take
// several times the memory (on the googleapis catalog, most of a field's
// options are a field_behavior of a few bytes, held decoded as an
// extension map and a list).
var fileTypes = func() *protoregistry.Types {
	t := new(protoregistry.Types)
	if err := t.RegisterExtension(gofeaturespb.E_Go); err != nil {
		panic(err)
	}
	return t
}()

// unmarshalFile decodes a file's descriptor, or a set of them, keeping
// option extensions in their wire form (fileTypes).
func unmarshalFile(b []byte, m proto.Message) error {
	return proto.UnmarshalOptions{AllowPartial: true, Resolver: fileTypes}.Unmarshal(b, m)
}
