package transcode_test

import (
	"fmt"
	"strings"
	"sync"
	"unicode"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	// Registers the well-known types the test schemas import.
	_ "google.golang.org/protobuf/types/known/anypb"
	_ "google.golang.org/protobuf/types/known/durationpb"
	_ "google.golang.org/protobuf/types/known/emptypb"
	_ "google.golang.org/protobuf/types/known/fieldmaskpb"
	_ "google.golang.org/protobuf/types/known/structpb"
	_ "google.golang.org/protobuf/types/known/timestamppb"
	_ "google.golang.org/protobuf/types/known/wrapperspb"
)

// The test schemas are built as descriptor protos, the way the gateway
// receives them from server reflection, so no generated code is involved.

type fdp = descriptorpb.FieldDescriptorProto

var (
	optional = descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()
	repeated = descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
	required = descriptorpb.FieldDescriptorProto_LABEL_REQUIRED.Enum()
)

func fld(name string, num int32, label *descriptorpb.FieldDescriptorProto_Label, typ descriptorpb.FieldDescriptorProto_Type, typeName string) *fdp {
	f := &fdp{Name: proto.String(name), Number: proto.Int32(num), Label: label, Type: typ.Enum()}
	if typeName != "" {
		f.TypeName = proto.String(typeName)
	}
	return f
}

// scalarTypes lists every scalar kind with a short name used in field names.
var scalarTypes = []struct {
	name string
	typ  descriptorpb.FieldDescriptorProto_Type
}{
	{"int32", descriptorpb.FieldDescriptorProto_TYPE_INT32},
	{"int64", descriptorpb.FieldDescriptorProto_TYPE_INT64},
	{"uint32", descriptorpb.FieldDescriptorProto_TYPE_UINT32},
	{"uint64", descriptorpb.FieldDescriptorProto_TYPE_UINT64},
	{"sint32", descriptorpb.FieldDescriptorProto_TYPE_SINT32},
	{"sint64", descriptorpb.FieldDescriptorProto_TYPE_SINT64},
	{"fixed32", descriptorpb.FieldDescriptorProto_TYPE_FIXED32},
	{"fixed64", descriptorpb.FieldDescriptorProto_TYPE_FIXED64},
	{"sfixed32", descriptorpb.FieldDescriptorProto_TYPE_SFIXED32},
	{"sfixed64", descriptorpb.FieldDescriptorProto_TYPE_SFIXED64},
	{"float", descriptorpb.FieldDescriptorProto_TYPE_FLOAT},
	{"double", descriptorpb.FieldDescriptorProto_TYPE_DOUBLE},
	{"bool", descriptorpb.FieldDescriptorProto_TYPE_BOOL},
	{"string", descriptorpb.FieldDescriptorProto_TYPE_STRING},
	{"bytes", descriptorpb.FieldDescriptorProto_TYPE_BYTES},
}

const (
	tMsg  = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE
	tEnum = descriptorpb.FieldDescriptorProto_TYPE_ENUM
	tGrp  = descriptorpb.FieldDescriptorProto_TYPE_GROUP
	tStr  = descriptorpb.FieldDescriptorProto_TYPE_STRING
	tI32  = descriptorpb.FieldDescriptorProto_TYPE_INT32
	tI64  = descriptorpb.FieldDescriptorProto_TYPE_INT64
	tByt  = descriptorpb.FieldDescriptorProto_TYPE_BYTES
	tDbl  = descriptorpb.FieldDescriptorProto_TYPE_DOUBLE
	tBool = descriptorpb.FieldDescriptorProto_TYPE_BOOL
)

// mapEntry declares the nested entry message for a map field.
func mapEntry(name string, key descriptorpb.FieldDescriptorProto_Type, val descriptorpb.FieldDescriptorProto_Type, valType string) *descriptorpb.DescriptorProto {
	return &descriptorpb.DescriptorProto{
		Name:    proto.String(name),
		Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
		Field: []*fdp{
			fld("key", 1, optional, key, ""),
			fld("value", 2, optional, val, valType),
		},
	}
}

func proto3File() *descriptorpb.FileDescriptorProto {
	m := &descriptorpb.DescriptorProto{Name: proto.String("All")}
	add := func(f *fdp) { m.Field = append(m.Field, f) }
	for i, s := range scalarTypes {
		add(fld("s_"+s.name, int32(1+i), optional, s.typ, ""))
	}
	add(fld("s_enum", 16, optional, tEnum, ".tt3.Color"))
	for i, s := range scalarTypes {
		f := fld("o_"+s.name, int32(21+i), optional, s.typ, "")
		f.Proto3Optional = proto.Bool(true)
		f.OneofIndex = proto.Int32(int32(1 + i))
		add(f)
	}
	for i, s := range scalarTypes {
		add(fld("r_"+s.name, int32(41+i), repeated, s.typ, ""))
	}
	add(fld("r_enum", 56, repeated, tEnum, ".tt3.Color"))
	for i, s := range scalarTypes[:13] {
		f := fld("u_"+s.name, int32(61+i), repeated, s.typ, "")
		f.Options = &descriptorpb.FieldOptions{Packed: proto.Bool(false)}
		add(f)
	}
	keyTypes := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13} // every legal key kind
	for i, k := range keyTypes {
		s := scalarTypes[k]
		entry := entryName("m_" + s.name)
		m.NestedType = append(m.NestedType, mapEntry(entry, s.typ, tStr, ""))
		add(fld("m_"+s.name, int32(81+i), repeated, tMsg, ".tt3.All."+entry))
	}
	vals := []struct {
		name string
		typ  descriptorpb.FieldDescriptorProto_Type
		tn   string
	}{
		{"msg", tMsg, ".tt3.All"}, {"enum", tEnum, ".tt3.Color"}, {"bytes", tByt, ""},
		{"double", tDbl, ""}, {"value", tMsg, ".google.protobuf.Value"},
		{"ts", tMsg, ".google.protobuf.Timestamp"}, {"any", tMsg, ".google.protobuf.Any"},
		{"null", tEnum, ".google.protobuf.NullValue"},
	}
	for i, v := range vals {
		entry := entryName("mv_" + v.name)
		key := tStr
		if i%2 == 1 {
			key = tI32
		}
		m.NestedType = append(m.NestedType, mapEntry(entry, key, v.typ, v.tn))
		add(fld("mv_"+v.name, int32(93+i), repeated, tMsg, ".tt3.All."+entry))
	}
	m.OneofDecl = append(m.OneofDecl, &descriptorpb.OneofDescriptorProto{Name: proto.String("choice")})
	for i, s := range scalarTypes {
		m.OneofDecl = append(m.OneofDecl, &descriptorpb.OneofDescriptorProto{Name: proto.String("_o_" + s.name)})
		_ = i
	}
	for _, f := range []*fdp{
		fld("c_string", 101, optional, tStr, ""),
		fld("c_int64", 102, optional, tI64, ""),
		fld("c_msg", 103, optional, tMsg, ".tt3.All"),
		fld("c_enum", 104, optional, tEnum, ".tt3.Color"),
		fld("c_null", 105, optional, tEnum, ".google.protobuf.NullValue"),
		fld("c_bytes", 106, optional, tByt, ""),
		fld("c_ts", 107, optional, tMsg, ".google.protobuf.Timestamp"),
	} {
		f.OneofIndex = proto.Int32(0)
		add(f)
	}
	add(fld("child", 110, optional, tMsg, ".tt3.All"))
	add(fld("children", 111, repeated, tMsg, ".tt3.All"))
	wkts := []string{"Any", "Timestamp", "Duration", "FieldMask", "Struct", "Value", "ListValue",
		"BoolValue", "Int32Value", "Int64Value", "UInt32Value", "UInt64Value", "FloatValue",
		"DoubleValue", "StringValue", "BytesValue", "Empty"}
	for i, w := range wkts {
		add(fld("w_"+w, int32(120+i), optional, tMsg, ".google.protobuf."+w))
	}
	add(fld("w_null", 140, optional, tEnum, ".google.protobuf.NullValue"))
	for i, w := range []string{"Any", "Timestamp", "Value", "Duration", "Struct"} {
		add(fld("rw_"+w, int32(141+i), repeated, tMsg, ".google.protobuf."+w))
	}
	custom := fld("custom_named", 150, optional, tStr, "")
	custom.JsonName = proto.String("Custom_Name")
	add(custom)
	add(fld("big_number", 536870911, optional, tI32, ""))

	color := &descriptorpb.EnumDescriptorProto{
		Name:    proto.String("Color"),
		Options: &descriptorpb.EnumOptions{AllowAlias: proto.Bool(true)},
	}
	for _, v := range []struct {
		n string
		v int32
	}{{"COLOR_UNSPECIFIED", 0}, {"RED", 1}, {"CRIMSON", 1}, {"GREEN", 2}, {"NEGATIVE", -3}, {"FAR", 100000}} {
		color.Value = append(color.Value, &descriptorpb.EnumValueDescriptorProto{Name: proto.String(v.n), Number: proto.Int32(v.v)})
	}
	return &descriptorpb.FileDescriptorProto{
		Name:    proto.String("tt3.proto"),
		Package: proto.String("tt3"),
		Syntax:  proto.String("proto3"),
		Dependency: []string{
			"google/protobuf/any.proto", "google/protobuf/timestamp.proto", "google/protobuf/duration.proto",
			"google/protobuf/field_mask.proto", "google/protobuf/struct.proto", "google/protobuf/wrappers.proto",
			"google/protobuf/empty.proto",
		},
		MessageType: []*descriptorpb.DescriptorProto{m},
		EnumType:    []*descriptorpb.EnumDescriptorProto{color},
	}
}

func proto2File() *descriptorpb.FileDescriptorProto {
	m := &descriptorpb.DescriptorProto{Name: proto.String("P2")}
	add := func(f *fdp) { m.Field = append(m.Field, f) }
	defaults := []string{"-7", "-9000000000", "7", "18446744073709551615", "-5", "5", "11", "12", "-13", "-14", "1.5", "-inf", "true", "d\u00e9faut", "a\\000b"}
	for i, s := range scalarTypes {
		f := fld("d_"+s.name, int32(1+i), optional, s.typ, "")
		f.DefaultValue = proto.String(defaults[i])
		add(f)
	}
	e := fld("d_enum", 16, optional, tEnum, ".tt2.Closed")
	e.DefaultValue = proto.String("C_TWO")
	add(e)
	add(fld("req", 20, required, tStr, ""))
	add(fld("unpacked", 21, repeated, tI32, ""))
	p := fld("packed", 22, repeated, descriptorpb.FieldDescriptorProto_TYPE_SINT64, "")
	p.Options = &descriptorpb.FieldOptions{Packed: proto.Bool(true)}
	add(p)
	add(fld("closed_rep", 23, repeated, tEnum, ".tt2.Closed"))
	cp := fld("closed_packed", 24, repeated, tEnum, ".tt2.Closed")
	cp.Options = &descriptorpb.FieldOptions{Packed: proto.Bool(true)}
	add(cp)
	add(fld("optgroup", 30, optional, tGrp, ".tt2.P2.OptGroup"))
	add(fld("repgroup", 33, repeated, tGrp, ".tt2.P2.RepGroup"))
	add(fld("child", 40, optional, tMsg, ".tt2.P2"))
	add(fld("kids", 41, repeated, tMsg, ".tt2.P2.KidsEntry"))
	add(fld("cmap", 42, repeated, tMsg, ".tt2.P2.CmapEntry"))
	for _, f := range []*fdp{fld("p_str", 50, optional, tStr, ""), fld("p_msg", 51, optional, tMsg, ".tt2.P2")} {
		f.OneofIndex = proto.Int32(0)
		add(f)
	}
	add(fld("ext", 60, optional, tMsg, ".tt2.Ext"))
	add(fld("s_closed", 61, optional, tEnum, ".tt2.Closed"))
	m.OneofDecl = []*descriptorpb.OneofDescriptorProto{{Name: proto.String("pick")}}
	m.NestedType = []*descriptorpb.DescriptorProto{
		{Name: proto.String("OptGroup"), Field: []*fdp{fld("a", 31, optional, tI32, ""), fld("b", 32, optional, tStr, "")}},
		{Name: proto.String("RepGroup"), Field: []*fdp{fld("c", 34, optional, tI64, ""), fld("inner", 35, optional, tMsg, ".tt2.P2")}},
		mapEntry("KidsEntry", tStr, tMsg, ".tt2.P2"),
		mapEntry("CmapEntry", tI32, tEnum, ".tt2.Closed"),
	}
	ext := &descriptorpb.DescriptorProto{
		Name:           proto.String("Ext"),
		Field:          []*fdp{fld("x", 1, optional, tI32, ""), fld("s", 2, optional, tStr, "")},
		ExtensionRange: []*descriptorpb.DescriptorProto_ExtensionRange{{Start: proto.Int32(100), End: proto.Int32(201)}},
	}
	closed := &descriptorpb.EnumDescriptorProto{Name: proto.String("Closed")}
	for _, v := range []struct {
		n string
		v int32
	}{{"C_ZERO", 0}, {"C_ONE", 1}, {"C_TWO", 2}, {"C_NEG", -1}} {
		closed.Value = append(closed.Value, &descriptorpb.EnumValueDescriptorProto{Name: proto.String(v.n), Number: proto.Int32(v.v)})
	}
	return &descriptorpb.FileDescriptorProto{
		Name:        proto.String("tt2.proto"),
		Package:     proto.String("tt2"),
		Syntax:      proto.String("proto2"),
		MessageType: []*descriptorpb.DescriptorProto{m, ext},
		EnumType:    []*descriptorpb.EnumDescriptorProto{closed},
	}
}

func editionsFile() *descriptorpb.FileDescriptorProto {
	feat := func(fs *descriptorpb.FeatureSet) *descriptorpb.FieldOptions {
		return &descriptorpb.FieldOptions{Features: fs}
	}
	implicit := fld("implicit_int", 2, optional, tI32, "")
	implicit.Options = feat(&descriptorpb.FeatureSet{FieldPresence: descriptorpb.FeatureSet_IMPLICIT.Enum()})
	noUTF8 := fld("no_utf8", 3, optional, tStr, "")
	noUTF8.Options = feat(&descriptorpb.FeatureSet{Utf8Validation: descriptorpb.FeatureSet_NONE.Enum()})
	req := fld("req", 5, optional, tI32, "")
	req.Options = feat(&descriptorpb.FeatureSet{FieldPresence: descriptorpb.FeatureSet_LEGACY_REQUIRED.Enum()})
	delim := fld("delimited", 6, optional, tGrp, ".tte.E")
	delimList := fld("delim_list", 7, repeated, tGrp, ".tte.E")
	expanded := fld("expanded", 8, repeated, tI32, "")
	expanded.Options = feat(&descriptorpb.FeatureSet{RepeatedFieldEncoding: descriptorpb.FeatureSet_EXPANDED.Enum()})
	m := &descriptorpb.DescriptorProto{
		Name: proto.String("E"),
		Field: []*fdp{
			fld("explicit_int", 1, optional, tI32, ""), implicit, noUTF8,
			fld("verified", 4, optional, tStr, ""), req, delim, delimList, expanded,
			fld("packed", 9, repeated, tI32, ""),
			fld("open", 10, optional, tEnum, ".tte.OpenE"),
			fld("closed", 11, optional, tEnum, ".tte.ClosedE"),
			fld("closed_list", 12, repeated, tEnum, ".tte.ClosedE"),
			fld("no_utf8_map", 13, repeated, tMsg, ".tte.E.NoUtf8MapEntry"),
		},
		NestedType: []*descriptorpb.DescriptorProto{mapEntry("NoUtf8MapEntry", tStr, tStr, "")},
	}
	m.Field[12].Options = feat(&descriptorpb.FeatureSet{Utf8Validation: descriptorpb.FeatureSet_NONE.Enum()})
	open := &descriptorpb.EnumDescriptorProto{Name: proto.String("OpenE"), Value: []*descriptorpb.EnumValueDescriptorProto{
		{Name: proto.String("OPEN_ZERO"), Number: proto.Int32(0)}, {Name: proto.String("OPEN_ONE"), Number: proto.Int32(1)},
	}}
	closed := &descriptorpb.EnumDescriptorProto{
		Name:    proto.String("ClosedE"),
		Options: &descriptorpb.EnumOptions{Features: &descriptorpb.FeatureSet{EnumType: descriptorpb.FeatureSet_CLOSED.Enum()}},
		Value: []*descriptorpb.EnumValueDescriptorProto{
			{Name: proto.String("CLOSED_ONE"), Number: proto.Int32(1)}, {Name: proto.String("CLOSED_TWO"), Number: proto.Int32(2)},
		},
	}
	return &descriptorpb.FileDescriptorProto{
		Name:        proto.String("tte.proto"),
		Package:     proto.String("tte"),
		Syntax:      proto.String("editions"),
		Edition:     descriptorpb.Edition_EDITION_2023.Enum(),
		MessageType: []*descriptorpb.DescriptorProto{m},
		EnumType:    []*descriptorpb.EnumDescriptorProto{open, closed},
	}
}

// testSchema holds the compiled test files and a resolver that knows their
// messages (as dynamic types) and the generated well-known types.
type testSchema struct {
	all, p2, ext, e protoreflect.MessageDescriptor
	types           *protoregistry.Types
}

var schema = sync.OnceValue(func() *testSchema {
	files := new(protoregistry.Files)
	var out testSchema
	out.types = new(protoregistry.Types)
	for _, f := range []*descriptorpb.FileDescriptorProto{proto3File(), proto2File(), editionsFile()} {
		fd, err := protodesc.NewFile(f, protoregistry.GlobalFiles)
		if err != nil {
			panic(fmt.Sprintf("building %s: %v", f.GetName(), err))
		}
		if err := files.RegisterFile(fd); err != nil {
			panic(err)
		}
		for i := range fd.Messages().Len() {
			if err := out.types.RegisterMessage(dynamicpb.NewMessageType(fd.Messages().Get(i))); err != nil {
				panic(err)
			}
		}
	}
	find := func(name protoreflect.FullName) protoreflect.MessageDescriptor {
		d, err := files.FindDescriptorByName(name)
		if err != nil {
			panic(err)
		}
		return d.(protoreflect.MessageDescriptor)
	}
	out.all, out.p2, out.ext, out.e = find("tt3.All"), find("tt2.P2"), find("tt2.Ext"), find("tte.E")
	return &out
})

// resolver looks types up in the test registry first, then globally.
type resolver struct{ local *protoregistry.Types }

func (r resolver) FindMessageByName(n protoreflect.FullName) (protoreflect.MessageType, error) {
	if mt, err := r.local.FindMessageByName(n); err == nil {
		return mt, nil
	}
	return protoregistry.GlobalTypes.FindMessageByName(n)
}

func (r resolver) FindMessageByURL(u string) (protoreflect.MessageType, error) {
	if mt, err := r.local.FindMessageByURL(u); err == nil {
		return mt, nil
	}
	return protoregistry.GlobalTypes.FindMessageByURL(u)
}

func (r resolver) FindExtensionByName(n protoreflect.FullName) (protoreflect.ExtensionType, error) {
	return protoregistry.GlobalTypes.FindExtensionByName(n)
}

func (r resolver) FindExtensionByNumber(m protoreflect.FullName, n protoreflect.FieldNumber) (protoreflect.ExtensionType, error) {
	return protoregistry.GlobalTypes.FindExtensionByNumber(m, n)
}

// entryName is the map entry message name protoc derives from a field name.
func entryName(field string) string {
	var b strings.Builder
	up := true
	for _, c := range field {
		if c == '_' {
			up = true
			continue
		}
		if up {
			c = unicode.ToUpper(c)
		}
		up = false
		b.WriteRune(c)
	}
	return b.String() + "Entry"
}

func protodescFile(md protoreflect.MessageDescriptor) *descriptorpb.FileDescriptorProto {
	return protodesc.ToFileDescriptorProto(md.ParentFile())
}
