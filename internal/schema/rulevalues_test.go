package schema

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	validatepb "buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/protobuf/encoding/protowire"
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
				doc := ruleSchema(t, member, rf, c.value, typ, typeName, false)
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
	typ descriptorpb.FieldDescriptorProto_Type, typeName string, pgv bool) string {
	t.Helper()
	rules := &validatepb.FieldRules{}
	rm := rules.ProtoReflect().NewField(member).Message()
	if rf.IsList() {
		rm.Mutable(rf).List().Append(v) // one member
	} else {
		rm.Set(rf, v)
	}
	rules.ProtoReflect().Set(member, protoreflect.ValueOfMessage(rm))
	var raw []byte
	if pgv {
		// PGV's wire form of the same rule: tests that use it check the
		// numbers are PGV's too.
		b, err := proto.Marshal(rules)
		if err != nil {
			t.Fatal(err)
		}
		raw = protowire.AppendBytes(protowire.AppendTag(nil, pgvRulesNumber, protowire.BytesType), b)
		rules = nil
	}
	return schemaOfRules(t, member.Name(), typ, typeName, rules, raw)
}

// schemaOfRules is the input schema of a message whose one field, of
// FieldRules' member's type, has the protovalidate rules r and the raw
// option fields raw.
func schemaOfRules(t *testing.T, member protoreflect.Name, typ descriptorpb.FieldDescriptorProto_Type, typeName string,
	rules *validatepb.FieldRules, raw []byte) string {
	t.Helper()

	var f *fdp
	var nested []*descriptorpb.DescriptorProto
	switch member {
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
	if rules != nil {
		withOpts(f, rules)
	}
	if raw != nil {
		f.Options = &descriptorpb.FieldOptions{}
		f.Options.ProtoReflect().SetUnknown(raw)
	}
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
		t.Fatalf("%s: %v", member, err)
	}
	doc, err := Input(fd.Messages().Get(0), nil)
	if err != nil {
		t.Fatalf("%s: %v", member, err)
	}
	return string(doc)
}

// pgvRules are protoc-gen-validate's rules that carry a value, by type
// member and number, as PGV's validate.proto (v1.3) numbers them: the
// checks turned on (email, unique...), ignore_empty, required, skip and
// the nested items, keys and values are tested apart (TestPGVRules).
var pgvRules = map[protoreflect.Name]map[protoreflect.Name]protowire.Number{
	"bool":      {"const": 1},
	"string":    {"const": 1, "len": 19, "min_len": 2, "max_len": 3, "len_bytes": 20, "min_bytes": 4, "max_bytes": 5, "pattern": 6, "prefix": 7, "suffix": 8, "contains": 9, "not_contains": 23, "in": 10, "not_in": 11, "well_known_regex": 24},
	"bytes":     {"const": 1, "len": 13, "min_len": 2, "max_len": 3, "pattern": 4, "prefix": 5, "suffix": 6, "contains": 7, "in": 8, "not_in": 9},
	"enum":      {"const": 1, "in": 3, "not_in": 4},
	"repeated":  {"min_items": 1, "max_items": 2},
	"map":       {"min_pairs": 1, "max_pairs": 2},
	"any":       {"in": 2, "not_in": 3},
	"duration":  {"const": 2, "lt": 3, "lte": 4, "gt": 5, "gte": 6, "in": 7, "not_in": 8},
	"timestamp": {"const": 2, "lt": 3, "lte": 4, "gt": 5, "gte": 6, "within": 9},
}

func init() {
	for _, m := range []protoreflect.Name{"float", "double", "int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32", "fixed64", "sfixed32", "sfixed64"} {
		pgvRules[m] = map[protoreflect.Name]protowire.Number{"const": 1, "lt": 2, "lte": 3, "gt": 4, "gte": 5, "in": 6, "not_in": 7}
	}
}

// TestEveryPGVRuleShowsItsValue: every PGV rule with a value, set as
// (validate.rules) the way a PGV service's descriptors carry it, shows its
// value in the schema as protovalidate's does. The gateway reads PGV's
// rules as protovalidate's under the same numbers, so the test also fails
// when protovalidate numbers a rule otherwise than PGV.
func TestEveryPGVRuleShowsItsValue(t *testing.T) {
	frd := (&validatepb.FieldRules{}).ProtoReflect().Descriptor()
	walked := 0
	for memberName, rules := range pgvRules {
		member := frd.Fields().ByName(memberName)
		if member == nil {
			t.Errorf("protovalidate has no FieldRules.%s", memberName)
			continue
		}
		typ, typeName, _ := ruleFieldType(memberName)
		for name, num := range rules {
			rf := member.Message().Fields().ByName(name)
			if rf == nil || rf.Number() != num {
				t.Errorf("PGV's %s.%s is %d; protovalidate's is %v", memberName, name, num, rf)
				continue
			}
			for _, c := range ruleSamples(t, member, rf) {
				walked++
				doc := ruleSchema(t, member, rf, c.value, typ, typeName, true)
				found := false
				for _, w := range c.want {
					found = found || strings.Contains(doc, w)
				}
				if !found {
					t.Errorf("PGV %s.%s=%v: the value is in neither a keyword nor the description:\n%s", memberName, name, c.want, doc)
				}
			}
		}
	}
	if walked < 110 {
		t.Errorf("walked %d PGV rules, want every one with a value", walked)
	}
}

// TestPGVRules: the PGV rules protovalidate numbers otherwise or says
// elsewhere: ignore_empty (protovalidate's ignore), message.required and
// any/duration/timestamp required (protovalidate's required),
// message.skip (no rules), map.no_sparse (none), and the rules of a
// list's items.
func TestPGVRules(t *testing.T) {
	field := func(num protowire.Number, inner []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), inner)
	}
	varint := func(num protowire.Number, v uint64) []byte {
		return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
	}
	cat := func(bs ...[]byte) []byte {
		var out []byte
		for _, b := range bs {
			out = append(out, b...)
		}
		return out
	}
	opt := func(rules []byte) []byte { return field(pgvRulesNumber, rules) }
	for _, c := range []struct {
		name          string
		member        protoreflect.Name
		raw           []byte
		want, wantNot []string
	}{
		// string {min_len: 3, ignore_empty: true}: 26 is protovalidate's
		// ip_with_prefixlen, which must not appear.
		{"string ignore_empty", "string", opt(field(14, cat(varint(2, 3), varint(26, 1)))),
			[]string{`"minLength":3`}, []string{"ip_with_prefixlen"}},
		// int32 {gt: 5, ignore_empty: true}: 8 is protovalidate's example.
		{"int32 ignore_empty", "int32", opt(field(3, cat(varint(4, 5), varint(8, 1)))),
			[]string{`"exclusiveMinimum":5`}, []string{`"examples"`}},
		// double {lt: 1, ignore_empty: true}: 8 is protovalidate's finite.
		{"double ignore_empty", "double", opt(field(2, cat(protowire.AppendFixed64(protowire.AppendTag(nil, 2, protowire.Fixed64Type), 0x3ff0000000000000), varint(8, 1)))),
			[]string{`"exclusiveMaximum":1`}, []string{"finite"}},
		{"message required", "any", opt(field(pgvMessage, varint(pgvMessageRequired, 1))),
			[]string{`"required":["f"]`}, nil},
		{"any required", "any", opt(field(20, varint(1, 1))),
			[]string{`"required":["f"]`}, nil},
		{"duration required", "duration", opt(field(21, varint(1, 1))),
			[]string{`"required":["f"]`}, nil},
		{"message skip", "string", opt(cat(field(14, varint(2, 3)), field(pgvMessage, varint(pgvMessageSkip, 1)))),
			nil, []string{`"minLength"`}},
		{"map no_sparse", "map", opt(field(19, cat(varint(1, 2), varint(3, 1)))),
			[]string{`"minProperties":2`}, []string{"Constraints"}},
		{"repeated items", "repeated", opt(field(18, cat(varint(1, 1), field(4, field(14, cat(varint(3, 7), varint(26, 1))))))),
			[]string{`"minItems":1`, `"maxLength":7`}, []string{"ip_with_prefixlen"}},
	} {
		typ, typeName, _ := ruleFieldType(c.member)
		doc := schemaOfRules(t, c.member, typ, typeName, nil, c.raw)
		for _, w := range c.want {
			if !strings.Contains(doc, w) {
				t.Errorf("%s: no %s in\n%s", c.name, w, doc)
			}
		}
		for _, w := range c.wantNot {
			if strings.Contains(doc, w) {
				t.Errorf("%s: %s in\n%s", c.name, w, doc)
			}
		}
	}
}
