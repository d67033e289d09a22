package schema

import (
	validatepb "buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"buf.build/go/protovalidate"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The options this package reads are extensions (google.api.field_behavior,
// buf.validatepb.*). Depending on where a descriptor came from they arrive as
// a generated extension value (the Go package was linked in when the options
// were parsed), as a dynamicpb message (the descriptors were parsed with a
// dynamic resolver), or as unknown fields (server reflection, where nothing
// knew the extension). Every reader here works from the wire form or through
// protovalidate's resolver, which handle all three the same way.

// behavior is the set of google.api.field_behavior values on a field.
type behavior uint16

func (b behavior) has(fb annotations.FieldBehavior) bool { return b&(1<<fb) != 0 }

var fieldBehaviorNumber = annotations.E_FieldBehavior.TypeDescriptor().Number()

// fieldBehavior reads google.api.field_behavior (a repeated enum, packed or
// not) from fd's options by field number, so it needs no registered
// extension type.
func fieldBehavior(fd protoreflect.FieldDescriptor) behavior {
	opts := fd.Options()
	if opts == nil {
		return 0
	}
	raw, err := proto.MarshalOptions{AllowPartial: true}.Marshal(opts)
	if err != nil {
		return 0
	}
	var b behavior
	set := func(v uint64) {
		if v < 16 {
			b |= 1 << v
		}
	}
	for len(raw) > 0 {
		num, typ, n := protowire.ConsumeTag(raw)
		if n < 0 {
			return b
		}
		raw = raw[n:]
		if num == fieldBehaviorNumber {
			switch typ {
			case protowire.VarintType:
				v, m := protowire.ConsumeVarint(raw)
				if m < 0 {
					return b
				}
				set(v)
				raw = raw[m:]
				continue
			case protowire.BytesType:
				packed, m := protowire.ConsumeBytes(raw)
				if m < 0 {
					return b
				}
				for len(packed) > 0 {
					v, k := protowire.ConsumeVarint(packed)
					if k < 0 {
						break
					}
					set(v)
					packed = packed[k:]
				}
				raw = raw[m:]
				continue
			}
		}
		m := protowire.ConsumeFieldValue(num, typ, raw)
		if m < 0 {
			return b
		}
		raw = raw[m:]
	}
	return b
}

// RulesRequire reports whether fd's protovalidate rules make it required
// ((buf.validate.field).required): the backend refuses a request without
// it, as the input schema's "required" says.
func RulesRequire(fd protoreflect.FieldDescriptor) bool {
	return fieldRules(fd).GetRequired()
}

// fieldRules returns fd's buf.validatepb.field rules, or nil when it has none
// or they cannot be read. A rule set that says IGNORE_ALWAYS counts as none.
func fieldRules(fd protoreflect.FieldDescriptor) *validatepb.FieldRules {
	if !mayCarry(fd.Options(), validatepb.E_Field) {
		return pgvFieldRules(fd)
	}
	r, err := protovalidate.ResolveFieldRules(fd)
	if err != nil || r == nil || r.GetIgnore() == validatepb.Ignore_IGNORE_ALWAYS {
		return nil
	}
	return r
}

// mayCarry says whether the options opts may set the extension x: as a
// field of its number, known or unknown. protovalidate decodes the unknown
// fields of every options message it is asked about again, looking for
// its rules; asked only when their number is there, it is not made to
// decode the google.api options of every field of a large API (which the
// descriptors package leaves unknown) to find none.
func mayCarry(opts proto.Message, x protoreflect.ExtensionType) bool {
	return hasField(opts, x.TypeDescriptor().Number())
}

// hasField says whether opts sets the field num, known or unknown.
func hasField(opts proto.Message, num protoreflect.FieldNumber) bool {
	if opts == nil {
		return false
	}
	m := opts.ProtoReflect()
	if !m.IsValid() {
		return false
	}
	found := false
	m.Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		found = fd.Number() == num
		return !found
	})
	for b := m.GetUnknown(); !found && len(b) > 0; {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return true // malformed: protovalidate says what it makes of it
		}
		found = n == num
		b = b[l:]
		if l = protowire.ConsumeFieldValue(n, typ, b); l < 0 {
			return true
		}
		b = b[l:]
	}
	return found
}

func messageRules(md protoreflect.MessageDescriptor) *validatepb.MessageRules {
	if !mayCarry(md.Options(), validatepb.E_Message) {
		return nil
	}
	r, err := protovalidate.ResolveMessageRules(md)
	if err != nil {
		return nil
	}
	return r
}

func oneofRules(od protoreflect.OneofDescriptor) *validatepb.OneofRules {
	if !mayCarry(od.Options(), validatepb.E_Oneof) {
		return nil
	}
	r, err := protovalidate.ResolveOneofRules(od)
	if err != nil {
		return nil
	}
	return r
}

// hasRules reports whether any message reachable from md carries a
// buf.validate rule, so the Validator can skip protovalidate entirely for
// the (common) request types that have none.
func hasRules(md protoreflect.MessageDescriptor) bool {
	seen := map[protoreflect.FullName]bool{}
	var visit func(md protoreflect.MessageDescriptor) bool
	visit = func(md protoreflect.MessageDescriptor) bool {
		if seen[md.FullName()] || md.IsPlaceholder() {
			return false
		}
		seen[md.FullName()] = true
		if r := messageRules(md); r != nil && (len(r.GetCel()) > 0 || len(r.GetCelExpression()) > 0 || len(r.GetOneof()) > 0) {
			return true
		}
		oneofs := md.Oneofs()
		for i := range oneofs.Len() {
			if r := oneofRules(oneofs.Get(i)); r != nil && r.GetRequired() {
				return true
			}
		}
		fields := md.Fields()
		for i := range fields.Len() {
			fd := fields.Get(i)
			if fieldRules(fd) != nil {
				return true
			}
			if fd.IsMap() {
				fd = fd.MapValue()
			}
			if m := fd.Message(); m != nil && visit(m) {
				return true
			}
		}
		return false
	}
	return visit(md)
}
