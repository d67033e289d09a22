package schema

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	validatepb "buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// TestEveryRuleShowsItsValue walks every field of every protovalidate type
// rule message (FloatRules ... TimestampRules), by descriptor reflection,
// so a rule field added to protovalidate is walked too. For each rule
// that carries a value (not a check turned on, such as email: true), it
// sets that rule alone on a field of the matching type, builds the input
// schema, and fails when the value appears in neither a keyword nor the
// description: a model must be able to read the one value const accepts,
// the members of in and not_in, lengths, patterns and bounds.
func TestEveryRuleShowsItsValue(t *testing.T) {
	frd := (&validatepb.FieldRules{}).ProtoReflect().Descriptor()
	members := frd.Oneofs().ByName("type").Fields()
	walked := 0
	for i := range members.Len() {
		member := members.Get(i)
		typ, typeName, ok := ruleFieldType(member.Name())
		if !ok {
			t.Errorf("FieldRules.%s: the test knows no field type for these rules (a new rule type?)", member.Name())
			continue
		}
		rfs := member.Message().Fields()
		for j := range rfs.Len() {
			rf := rfs.Get(j)
			if rf.Name() == "example" {
				continue // an example is not a rule
			}
			if rf.Message() != nil && rf.Message().FullName() == frd.FullName() {
				continue // items, keys, values: rules of their own, walked as their type's
			}
			if rf.Kind() == protoreflect.BoolKind && rf.Name() != "const" {
				continue // a check turned on, which has no value (tested by the goldens)
			}
			for _, c := range ruleSamples(t, member, rf) {
				walked++
				name := fmt.Sprintf("%s.%s=%v", member.Name(), rf.Name(), c.want)
				doc := ruleSchema(t, member, rf, c.value, typ, typeName)
				found := false
				for _, w := range c.want {
					found = found || strings.Contains(doc, w)
				}
				if !found {
					t.Errorf("%s: the value is in neither a keyword nor the description:\n%s", name, doc)
				}
			}
		}
	}
	if walked < 130 {
		t.Errorf("walked %d rules; protovalidate has over 130 with values", walked)
	}
}

// ruleFieldType is the type of a field the rules of FieldRules' member
// apply to.
func ruleFieldType(member protoreflect.Name) (descriptorpb.FieldDescriptorProto_Type, string, bool) {
	scalars := map[protoreflect.Name]descriptorpb.FieldDescriptorProto_Type{
		"float": tFloat, "double": tDouble, "int32": tInt32, "int64": tInt64, "uint32": tUint32, "uint64": tUint64,
		"sint32": tSint32, "sint64": tSint64, "fixed32": tFixed32, "fixed64": tFixed64, "sfixed32": tSfixed32, "sfixed64": tSfixed64,
		"bool": tBool, "string": tString, "bytes": tBytes, "repeated": tString, "map": tMessage,
	}
	if typ, ok := scalars[member]; ok {
		return typ, "", true
	}
	switch member {
	case "enum":
		return tEnum, ".rulevalues.v1.Color", true
	case "any":
		return tMessage, ".google.protobuf.Any", true
	case "duration":
		return tMessage, ".google.protobuf.Duration", true
	case "timestamp":
		return tMessage, ".google.protobuf.Timestamp", true
	case "field_mask":
		return tMessage, ".google.protobuf.FieldMask", true
	}
	return 0, "", false
}

type ruleSample struct {
	value protoreflect.Value
	want  []string // the schema must contain one of these
}

// ruleSamples are values for the rule field rf, with how each must read in
// the schema: numbers that appear nowhere else (4242), a string marked
// "xyzzy", a whole-seconds duration and timestamp.
func ruleSamples(t *testing.T, member, rf protoreflect.FieldDescriptor) []ruleSample {
	one := func(v protoreflect.Value, want ...string) []ruleSample {
		return []ruleSample{{v, want}}
	}
	switch rf.Kind() {
	case protoreflect.BoolKind: // const
		return []ruleSample{
			{protoreflect.ValueOfBool(true), []string{`"const":true`}},
			{protoreflect.ValueOfBool(false), []string{`"const":false`}},
		}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		if member.Name() == "enum" && rf.Name() == "not_in" {
			// The enum keyword lists the values left: COLOR_RED (4242)
			// is not among them.
			return one(protoreflect.ValueOfInt32(4242), `"enum":["COLOR_UNSPECIFIED",0]`)
		}
		return one(protoreflect.ValueOfInt32(4242), "4242")
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return one(protoreflect.ValueOfInt64(4242), "4242")
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return one(protoreflect.ValueOfUint32(4242), "4242")
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return one(protoreflect.ValueOfUint64(4242), "4242")
	case protoreflect.FloatKind:
		return one(protoreflect.ValueOfFloat32(42.5), "42.5")
	case protoreflect.DoubleKind:
		return one(protoreflect.ValueOfFloat64(42.5), "42.5")
	case protoreflect.StringKind:
		s := "xyzzy"
		if member.Name() == "field_mask" {
			s = "xyzzy.plugh"
		}
		return one(protoreflect.ValueOfString(s), s)
	case protoreflect.BytesKind:
		return one(protoreflect.ValueOfBytes([]byte("xyzzy")), "xyzzy", base64.StdEncoding.EncodeToString([]byte("xyzzy")))
	case protoreflect.EnumKind:
		v := rf.Enum().Values().Get(rf.Enum().Values().Len() - 1)
		return one(protoreflect.ValueOfEnum(v.Number()), string(v.Name()))
	case protoreflect.MessageKind:
		switch rf.Message().FullName() {
		case "google.protobuf.Duration":
			return one(protoreflect.ValueOfMessage(durationpb.New(4242e9).ProtoReflect()), "4242s")
		case "google.protobuf.Timestamp":
			return one(protoreflect.ValueOfMessage((&timestamppb.Timestamp{Seconds: 981173106}).ProtoReflect()), "2001-02-03T04:05:06Z")
		case "google.protobuf.FieldMask":
			return one(protoreflect.ValueOfMessage((&fieldmaskpb.FieldMask{Paths: []string{"xyzzy.plugh"}}).ProtoReflect()), "xyzzy.plugh")
		}
	}
	t.Errorf("%s.%s: the test has no sample value of kind %s (a new rule field?)", member.Name(), rf.Name(), rf.Kind())
	return nil
}

// ruleSchema is the input schema of a message whose one field has the
// one rule rf = v (of FieldRules' member), as reflection delivers it.
func ruleSchema(t *testing.T, member, rf protoreflect.FieldDescriptor, v protoreflect.Value,
	typ descriptorpb.FieldDescriptorProto_Type, typeName string) string {
	t.Helper()
	rules := &validatepb.FieldRules{}
	rm := rules.ProtoReflect().NewField(member).Message()
	if rf.IsList() {
		rm.Mutable(rf).List().Append(v) // one member
	} else {
		rm.Set(rf, v)
	}
	rules.ProtoReflect().Set(member, protoreflect.ValueOfMessage(rm))

	var f *fdp
	var nested []*descriptorpb.DescriptorProto
	switch member.Name() {
	case "repeated":
		f = repeated(field("f", 1, typ))
	case "map":
		var entry *descriptorpb.DescriptorProto
		f, entry = mapField("f", 1, tString, tString, ".rulevalues.v1.R")
		nested = append(nested, entry)
	default:
		f = field("f", 1, typ)
		if typeName != "" {
			f.TypeName = proto.String(typeName)
		}
	}
	withOpts(f, rules)
	r := msg("R", f)
	r.NestedType = nested
	file := asReflected(&descriptorpb.FileDescriptorProto{
		Name:    proto.String("rulevalues/v1/r.proto"),
		Package: proto.String("rulevalues.v1"),
		Syntax:  proto.String("proto3"),
		Dependency: []string{"buf/validate/validate.proto", "google/protobuf/any.proto", "google/protobuf/duration.proto",
			"google/protobuf/timestamp.proto", "google/protobuf/field_mask.proto"},
		EnumType: []*descriptorpb.EnumDescriptorProto{{
			Name: proto.String("Color"),
			Value: []*descriptorpb.EnumValueDescriptorProto{
				{Name: proto.String("COLOR_UNSPECIFIED"), Number: proto.Int32(0)},
				{Name: proto.String("COLOR_RED"), Number: proto.Int32(4242)},
			},
		}},
		MessageType: []*descriptorpb.DescriptorProto{r},
	})
	fd, err := protodesc.NewFile(file, testFiles)
	if err != nil {
		t.Fatalf("%s.%s: %v", member.Name(), rf.Name(), err)
	}
	doc, err := Input(fd.Messages().Get(0), nil)
	if err != nil {
		t.Fatalf("%s.%s: %v", member.Name(), rf.Name(), err)
	}
	return string(doc)
}
