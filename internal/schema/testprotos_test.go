package schema

import (
	"fmt"

	validatepb "buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/genproto/googleapis/api/annotations"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// The descriptors of testdata/*.proto, built in code so the tests need no
// protoc. Comments are attached through SourceCodeInfo the way protoc
// --include_source_info records them.

type fdp = descriptorpb.FieldDescriptorProto

const (
	tInt32    = descriptorpb.FieldDescriptorProto_TYPE_INT32
	tInt64    = descriptorpb.FieldDescriptorProto_TYPE_INT64
	tUint32   = descriptorpb.FieldDescriptorProto_TYPE_UINT32
	tUint64   = descriptorpb.FieldDescriptorProto_TYPE_UINT64
	tSint32   = descriptorpb.FieldDescriptorProto_TYPE_SINT32
	tSint64   = descriptorpb.FieldDescriptorProto_TYPE_SINT64
	tFixed32  = descriptorpb.FieldDescriptorProto_TYPE_FIXED32
	tFixed64  = descriptorpb.FieldDescriptorProto_TYPE_FIXED64
	tSfixed32 = descriptorpb.FieldDescriptorProto_TYPE_SFIXED32
	tSfixed64 = descriptorpb.FieldDescriptorProto_TYPE_SFIXED64
	tFloat    = descriptorpb.FieldDescriptorProto_TYPE_FLOAT
	tDouble   = descriptorpb.FieldDescriptorProto_TYPE_DOUBLE
	tBool     = descriptorpb.FieldDescriptorProto_TYPE_BOOL
	tString   = descriptorpb.FieldDescriptorProto_TYPE_STRING
	tBytes    = descriptorpb.FieldDescriptorProto_TYPE_BYTES
	tEnum     = descriptorpb.FieldDescriptorProto_TYPE_ENUM
	tMessage  = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE
	tGroup    = descriptorpb.FieldDescriptorProto_TYPE_GROUP
)

func field(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type, typeName ...string) *fdp {
	f := &fdp{
		Name:   proto.String(name),
		Number: proto.Int32(num),
		Type:   typ.Enum(),
		Label:  descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
	}
	if len(typeName) > 0 {
		f.TypeName = proto.String(typeName[0])
	}
	return f
}

func repeated(f *fdp) *fdp {
	f.Label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
	return f
}

func required(f *fdp) *fdp {
	f.Label = descriptorpb.FieldDescriptorProto_LABEL_REQUIRED.Enum()
	return f
}

func withDefault(f *fdp, v string) *fdp {
	f.DefaultValue = proto.String(v)
	return f
}

func inOneof(f *fdp, i int32) *fdp {
	f.OneofIndex = proto.Int32(i)
	return f
}

// mapField returns a map field and the entry message it needs nested in its
// parent.
func mapField(name string, num int32, key descriptorpb.FieldDescriptorProto_Type, val descriptorpb.FieldDescriptorProto_Type, parent string, valType ...string) (*fdp, *descriptorpb.DescriptorProto) {
	var entry strings.Builder
	for _, part := range strings.Split(name, "_") {
		entry.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	entry.WriteString("Entry")
	e := &descriptorpb.DescriptorProto{
		Name:    proto.String(entry.String()),
		Field:   []*fdp{field("key", 1, key), field("value", 2, val, valType...)},
		Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
	}
	return repeated(field(name, num, tMessage, parent+"."+entry.String())), e
}

type comment struct {
	path     []int32
	leading  string
	trailing string
}

func sourceInfo(cs ...comment) *descriptorpb.SourceCodeInfo {
	info := &descriptorpb.SourceCodeInfo{}
	for _, c := range cs {
		loc := &descriptorpb.SourceCodeInfo_Location{Path: c.path, Span: []int32{0, 0, 0}}
		if c.leading != "" {
			loc.LeadingComments = proto.String(c.leading)
		}
		if c.trailing != "" {
			loc.TrailingComments = proto.String(c.trailing)
		}
		info.Location = append(info.Location, loc)
	}
	return info
}

func msg(name string, fields ...*fdp) *descriptorpb.DescriptorProto {
	return &descriptorpb.DescriptorProto{Name: proto.String(name), Field: fields}
}

func typesFile() *descriptorpb.FileDescriptorProto {
	const p = ".schematest.v1."
	scalars := msg("Scalars",
		field("f_int32", 1, tInt32), field("f_int64", 2, tInt64),
		field("f_uint32", 3, tUint32), field("f_uint64", 4, tUint64),
		field("f_sint32", 5, tSint32), field("f_sint64", 6, tSint64),
		field("f_fixed32", 7, tFixed32), field("f_fixed64", 8, tFixed64),
		field("f_sfixed32", 9, tSfixed32), field("f_sfixed64", 10, tSfixed64),
		field("f_float", 11, tFloat), field("f_double", 12, tDouble),
		field("f_bool", 13, tBool), field("f_string", 14, tString),
		field("f_bytes", 15, tBytes),
	)
	opt := inOneof(field("opt_int32", 16, tInt32), 0)
	opt.Proto3Optional = proto.Bool(true)
	renamed := field("renamed", 17, tString)
	renamed.JsonName = proto.String("customName")
	scalars.Field = append(scalars.Field, opt, renamed)
	scalars.OneofDecl = []*descriptorpb.OneofDescriptorProto{{Name: proto.String("_opt_int32")}}

	kitchen := msg("Kitchen",
		field("scalars", 1, tMessage, p+"Scalars"),
		repeated(field("scalars_list", 2, tMessage, p+"Scalars")),
		field("color", 3, tEnum, p+"Color"),
		repeated(field("colors", 4, tEnum, p+"Color")),
		field("nested", 5, tMessage, p+"Kitchen.Nested"),
		repeated(field("nested_list", 6, tMessage, p+"Kitchen.Nested")),
	)
	kitchen.NestedType = append(kitchen.NestedType, msg("Nested",
		field("label", 1, tString), repeated(field("counts", 2, tInt64))))
	kp := p + "Kitchen"
	for _, m := range []struct {
		name     string
		num      int32
		key, val descriptorpb.FieldDescriptorProto_Type
		valType  []string
	}{
		{"str_map", 7, tString, tString, nil},
		{"int32_map", 8, tInt32, tMessage, []string{p + "Kitchen.Nested"}},
		{"int64_map", 9, tInt64, tEnum, []string{p + "Color"}},
		{"uint32_map", 10, tUint32, tBytes, nil},
		{"uint64_map", 11, tUint64, tDouble, nil},
		{"bool_map", 12, tBool, tString, nil},
		{"sint32_map", 13, tSint32, tInt64, nil},
		{"fixed64_map", 14, tFixed64, tFloat, nil},
	} {
		f, e := mapField(m.name, m.num, m.key, m.val, kp, m.valType...)
		kitchen.Field = append(kitchen.Field, f)
		kitchen.NestedType = append(kitchen.NestedType, e)
	}
	kitchen.Field = append(kitchen.Field,
		inOneof(field("cat", 15, tString), 0),
		inOneof(field("dog_id", 16, tInt64), 0),
		inOneof(field("fish", 17, tMessage, p+"Kitchen.Nested"), 0),
		inOneof(field("bird", 18, tEnum, p+"Color"), 0),
		repeated(field("doubles", 19, tDouble)),
		repeated(field("blobs", 20, tBytes)),
		repeated(field("big", 21, tUint64)),
	)
	kitchen.OneofDecl = []*descriptorpb.OneofDescriptorProto{{Name: proto.String("pet")}}

	const g = ".google.protobuf."
	wk := msg("WellKnown",
		field("ts", 1, tMessage, g+"Timestamp"),
		field("dur", 2, tMessage, g+"Duration"),
		field("mask", 3, tMessage, g+"FieldMask"),
		field("struct", 4, tMessage, g+"Struct"),
		field("value", 5, tMessage, g+"Value"),
		field("list", 6, tMessage, g+"ListValue"),
		field("null", 7, tEnum, g+"NullValue"),
		field("empty", 8, tMessage, g+"Empty"),
		field("any", 9, tMessage, g+"Any"),
		field("double_value", 10, tMessage, g+"DoubleValue"),
		field("float_value", 11, tMessage, g+"FloatValue"),
		field("int64_value", 12, tMessage, g+"Int64Value"),
		field("uint64_value", 13, tMessage, g+"UInt64Value"),
		field("int32_value", 14, tMessage, g+"Int32Value"),
		field("uint32_value", 15, tMessage, g+"UInt32Value"),
		field("bool_value", 16, tMessage, g+"BoolValue"),
		field("string_value", 17, tMessage, g+"StringValue"),
		field("bytes_value", 18, tMessage, g+"BytesValue"),
		repeated(field("ts_list", 19, tMessage, g+"Timestamp")),
		repeated(field("values", 20, tMessage, g+"Value")),
	)
	vm, vmEntry := mapField("value_map", 21, tString, tMessage, p+"WellKnown", g+"Value")
	wk.Field = append(wk.Field, vm, repeated(field("anys", 22, tMessage, g+"Any")))
	wk.NestedType = append(wk.NestedType, vmEntry)

	node := msg("Node",
		field("name", 1, tString),
		field("parent", 2, tMessage, p+"Node"),
		repeated(field("children", 3, tMessage, p+"Node")),
	)
	byName, byNameEntry := mapField("by_name", 4, tString, tMessage, p+"Node", p+"Node")
	node.Field = append(node.Field, byName, field("leaf", 5, tMessage, p+"Leaf"))
	node.NestedType = append(node.NestedType, byNameEntry)

	dir := msg("Dir")
	entries, entriesEntry := mapField("entries", 1, tString, tMessage, p+"Dir", p+"Dir")
	dir.Field = append(dir.Field, entries)
	dir.NestedType = append(dir.NestedType, entriesEntry)

	registry := msg("Registry",
		field("root", 1, tMessage, p+"Node"),
		field("ping", 2, tMessage, p+"Ping"),
	)
	dirs, dirsEntry := mapField("dirs", 3, tString, tMessage, p+"Registry", p+"Dir")
	registry.Field = append(registry.Field, dirs,
		field("leaf", 4, tMessage, p+"Leaf"), field("other_leaf", 5, tMessage, p+"Leaf"))
	registry.NestedType = append(registry.NestedType, dirsEntry)

	return &descriptorpb.FileDescriptorProto{
		Name:    proto.String("schematest/v1/types.proto"),
		Package: proto.String("schematest.v1"),
		Syntax:  proto.String("proto3"),
		Dependency: []string{
			"google/protobuf/any.proto", "google/protobuf/duration.proto",
			"google/protobuf/empty.proto", "google/protobuf/field_mask.proto",
			"google/protobuf/struct.proto", "google/protobuf/timestamp.proto",
			"google/protobuf/wrappers.proto",
		},
		EnumType: []*descriptorpb.EnumDescriptorProto{{
			Name: proto.String("Color"),
			Value: []*descriptorpb.EnumValueDescriptorProto{
				{Name: proto.String("COLOR_UNSPECIFIED"), Number: proto.Int32(0)},
				{Name: proto.String("COLOR_RED"), Number: proto.Int32(1)},
				{Name: proto.String("COLOR_GREEN"), Number: proto.Int32(2)},
			},
		}},
		MessageType: []*descriptorpb.DescriptorProto{
			scalars, kitchen, wk, node,
			msg("Leaf", field("text", 1, tString)),
			msg("Ping", field("pong", 1, tMessage, p+"Pong"), field("n", 2, tInt32)),
			msg("Pong", field("ping", 1, tMessage, p+"Ping")),
			dir, registry,
		},
		SourceCodeInfo: sourceInfo(
			comment{path: []int32{5, 0}, leading: " Color of a thing.\n"},
			comment{path: []int32{5, 0, 2, 0}, leading: " Not set.\n"},
			comment{path: []int32{5, 0, 2, 1}, trailing: " Like blood.\n"},
			comment{path: []int32{4, 0}, leading: " Scalars has one field of every scalar kind.\n"},
			comment{path: []int32{4, 0, 2, 0}, leading: " A signed 32-bit integer.\n"},
			comment{path: []int32{4, 0, 2, 13}, trailing: " A trailing comment.\n"},
			comment{path: []int32{4, 1}, leading: "*\n * Kitchen has everything else:\n * repeated fields, enums, nested messages, maps and a oneof.\n *\n *     indented code stays indented\n "},
			comment{path: []int32{4, 1, 3, 0}, leading: " Nested is declared inside Kitchen.\n"},
			comment{path: []int32{4, 1, 8, 0}, leading: " What kind of pet.\n"},
			comment{path: []int32{4, 1, 2, 14}, leading: " A cat's name.\n"},
			comment{path: []int32{4, 2}, leading: " WellKnown has a field of every well-known type.\n"},
			comment{path: []int32{4, 3}, leading: " Node is a self-recursive tree.\n"},
			comment{path: []int32{4, 3, 2, 3}, trailing: " A self-referencing map.\n"},
			comment{path: []int32{4, 4}, leading: " Leaf is not recursive, so it is inlined even inside a $defs entry.\n"},
			comment{path: []int32{4, 5}, leading: " Ping and Pong are mutually recursive.\n"},
			comment{path: []int32{4, 7}, leading: " Dir refers to itself only through a map.\n"},
			comment{path: []int32{4, 8}, leading: " Registry reaches recursive types without being recursive itself.\n"},
		),
	}
}

func legacyFile() *descriptorpb.FileDescriptorProto {
	const p = ".schematest.v1."
	legacy := msg("Legacy",
		required(field("id", 1, tString)),
		withDefault(field("count", 2, tInt32), "7"),
		withDefault(field("title", 3, tString), "untitled"),
		withDefault(field("level", 4, tEnum, p+"Level"), "LEVEL_HIGH"),
		withDefault(field("ratio", 5, tFloat), "inf"),
		withDefault(field("scale", 6, tDouble), "-inf"),
		withDefault(field("magic", 7, tBytes), `\001\002`),
		withDefault(field("enabled", 8, tBool), "true"),
		withDefault(field("big", 9, tInt64), "-5"),
		withDefault(field("ubig", 10, tUint64), "18446744073709551615"),
		field("extra", 11, tGroup, p+"Legacy.Extra"),
		repeated(field("levels", 13, tEnum, p+"Level")),
		required(field("inner", 14, tMessage, p+"Legacy.Inner")),
		withDefault(field("tiny", 15, tDouble), "0.25"),
		withDefault(field("third", 16, tFloat), "0.1"),
	)
	legacy.NestedType = []*descriptorpb.DescriptorProto{
		msg("Extra", field("note", 12, tString)),
		msg("Inner", required(field("x", 1, tInt32))),
	}
	legacy.ExtensionRange = []*descriptorpb.DescriptorProto_ExtensionRange{{Start: proto.Int32(100), End: proto.Int32(200)}}
	ext := field("tag", 100, tString)
	ext.Extendee = proto.String(p + "Legacy")
	return &descriptorpb.FileDescriptorProto{
		Name:    proto.String("schematest/v1/legacy.proto"),
		Package: proto.String("schematest.v1"),
		Syntax:  proto.String("proto2"),
		EnumType: []*descriptorpb.EnumDescriptorProto{{
			Name: proto.String("Level"),
			Value: []*descriptorpb.EnumValueDescriptorProto{
				{Name: proto.String("LEVEL_LOW"), Number: proto.Int32(1)},
				{Name: proto.String("LEVEL_HIGH"), Number: proto.Int32(2)},
			},
		}},
		MessageType: []*descriptorpb.DescriptorProto{legacy},
		Extension:   []*fdp{ext},
		SourceCodeInfo: sourceInfo(
			comment{path: []int32{5, 0}, leading: " Level is a closed enum: protojson never writes an unknown number for it.\n"},
			comment{path: []int32{4, 0}, leading: " Legacy covers proto2: required fields, defaults, groups, extensions.\n"},
		),
	}
}

func editionsFile() *descriptorpb.FileDescriptorProto {
	const p = ".schematest.v1."
	must := field("must", 1, tString)
	must.Options = &descriptorpb.FieldOptions{Features: &descriptorpb.FeatureSet{
		FieldPresence: descriptorpb.FeatureSet_LEGACY_REQUIRED.Enum()}}
	implicit := field("implicit", 2, tString)
	implicit.Options = &descriptorpb.FieldOptions{Features: &descriptorpb.FeatureSet{
		FieldPresence: descriptorpb.FeatureSet_IMPLICIT.Enum()}}
	sub := field("sub", 5, tMessage, p+"Edition.Sub")
	sub.Options = &descriptorpb.FieldOptions{Features: &descriptorpb.FeatureSet{
		MessageEncoding: descriptorpb.FeatureSet_DELIMITED.Enum()}}
	edition := msg("Edition", must, implicit, field("explicit", 3, tString),
		field("kind", 4, tEnum, p+"Edition.Kind"), sub)
	edition.EnumType = []*descriptorpb.EnumDescriptorProto{{
		Name: proto.String("Kind"),
		Value: []*descriptorpb.EnumValueDescriptorProto{
			{Name: proto.String("KIND_A"), Number: proto.Int32(1)},
			{Name: proto.String("KIND_B"), Number: proto.Int32(2)},
		},
		Options: &descriptorpb.EnumOptions{Features: &descriptorpb.FeatureSet{
			EnumType: descriptorpb.FeatureSet_CLOSED.Enum()}},
	}}
	edition.NestedType = []*descriptorpb.DescriptorProto{msg("Sub", field("y", 1, tInt32))}
	return &descriptorpb.FileDescriptorProto{
		Name:        proto.String("schematest/v1/editions.proto"),
		Package:     proto.String("schematest.v1"),
		Syntax:      proto.String("editions"),
		Edition:     descriptorpb.Edition_EDITION_2023.Enum(),
		MessageType: []*descriptorpb.DescriptorProto{edition},
		SourceCodeInfo: sourceInfo(
			comment{path: []int32{4, 0}, leading: " Edition covers editions field presence and closed enums.\n"},
		),
	}
}

// testFiles is a registry with the test files and the well-known types they
// import, and testTypes the dynamic message types of all of them: the same
// shape as what the gateway builds from reflection.
var testFiles, testTypes = func() (*protoregistry.Files, *dynamicpb.Types) {
	files := &protoregistry.Files{}
	for _, fd := range []protoreflect.FileDescriptor{
		anypb.File_google_protobuf_any_proto, durationpb.File_google_protobuf_duration_proto,
		emptypb.File_google_protobuf_empty_proto, fieldmaskpb.File_google_protobuf_field_mask_proto,
		structpb.File_google_protobuf_struct_proto, timestamppb.File_google_protobuf_timestamp_proto,
		wrapperspb.File_google_protobuf_wrappers_proto,
		descriptorpb.File_google_protobuf_descriptor_proto, fieldmaskpb.File_google_protobuf_field_mask_proto,
		validatepb.File_buf_validate_validate_proto, annotations.File_google_api_field_behavior_proto,
	} {
		if _, err := files.FindFileByPath(fd.Path()); err == nil {
			continue
		}
		if err := files.RegisterFile(fd); err != nil {
			panic(err)
		}
	}
	for _, f := range []*descriptorpb.FileDescriptorProto{typesFile(), legacyFile(), editionsFile(), asReflected(rulesFile())} {
		fd, err := protodesc.NewFile(f, files)
		if err != nil {
			panic(fmt.Sprintf("test descriptor %s: %v", f.GetName(), err))
		}
		if err := files.RegisterFile(fd); err != nil {
			panic(err)
		}
	}
	return files, dynamicpb.NewTypes(files)
}()

func testMessage(t testing.TB, name protoreflect.FullName) protoreflect.MessageDescriptor {
	t.Helper()
	d, err := testFiles.FindDescriptorByName(name)
	if err != nil {
		t.Fatalf("find %s: %v", name, err)
	}
	return d.(protoreflect.MessageDescriptor)
}
