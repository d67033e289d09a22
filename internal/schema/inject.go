package schema

import (
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Injector completes a converted request before it is checked: the
// arguments an operator fixed or gave a default (gateway/overrides.go)
// are set in the message, and those a caller may not send are refused.
// It runs after protojson and before the checks, so a required field the
// injector supplies is not missing, and the backend's rules see the
// request it will receive.
type Injector interface {
	// Inject refuses what the caller set that it may not (hidden and
	// fixed arguments), as violations at their paths, and otherwise sets
	// the fixed and default values in msg.
	Inject(msg protoreflect.Message) []Violation
	// Supplies reports whether the injector sets the argument at path
	// (in the schema's names), whose absence is then no violation.
	Supplies(path string) bool
}

// DecodeInjected is DecodeWarn with in completing the converted request
// before its checks (nil: none, as DecodeWarn): one validator of a
// message type serves every tool of that request type, whatever each
// tool's injector.
func (v *Validator) DecodeInjected(args []byte, msg proto.Message, in Injector) (Warnings, error) {
	return v.decode(args, msg, in)
}

// injected runs in, if any, on msg.
func injected(in Injector, msg protoreflect.Message) []Violation {
	if in == nil {
		return nil
	}
	return in.Inject(msg)
}

// Required reports whether the input schema requires fd: proto2
// required, google.api.field_behavior REQUIRED, or protovalidate's
// required, as Validator checks them.
func Required(fd protoreflect.FieldDescriptor) bool {
	return fd.Cardinality() == protoreflect.Required || fieldBehavior(fd).has(annotations.FieldBehavior_REQUIRED) || RulesRequire(fd)
}
