package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	zoov1 "github.com/grpc-mcp-gateway/gateway/examples/zoo/gen/zoo/v1"
	"github.com/grpc-mcp-gateway/gateway/internal/wellknown"
)

// wireFiles are types the wire converter takes, beyond testdata's (most of
// whose types hold maps or well-known types it declines): every scalar kind
// singular, repeated packed and expanded, in proto3, proto2 and editions,
// oneofs, wrappers, custom JSON names, recursion.
func wireFiles() []*descriptorpb.FileDescriptorProto {
	const p = ".wiretest.v1."
	const g = ".google.protobuf."
	kinds := []descriptorpb.FieldDescriptorProto_Type{tInt32, tInt64, tUint32, tUint64, tSint32, tSint64,
		tFixed32, tFixed64, tSfixed32, tSfixed64, tFloat, tDouble, tBool, tString, tBytes}
	all := func(expanded bool) []*fdp {
		var fs []*fdp
		for i, k := range kinds {
			n := int32(i + 1)
			name := strings.ToLower(strings.TrimPrefix(k.String(), "TYPE_"))
			fs = append(fs, field("s_"+name, n, k), repeated(field("r_"+name, 100+n, k)))
			if expanded {
				fs[len(fs)-1].Options = &descriptorpb.FieldOptions{Packed: proto.Bool(false)}
			}
		}
		return fs
	}
	mix := msg("Mix", all(false)...)
	mix.Field = append(mix.Field,
		field("color", 20, tEnum, p+"Hue"), repeated(field("colors", 21, tEnum, p+"Hue")),
		field("child", 22, tMessage, p+"Mix"), repeated(field("children", 23, tMessage, p+"Leaf")),
		inOneof(field("o_str", 30, tString), 0), inOneof(field("o_int", 31, tInt64), 0),
		inOneof(field("o_leaf", 32, tMessage, p+"Leaf"), 0), inOneof(field("o_hue", 33, tEnum, p+"Hue"), 0),
		inOneof(field("p_bool", 34, tBool), 1), inOneof(field("p_bytes", 35, tBytes), 1),
		field("w_double", 40, tMessage, g+"DoubleValue"), field("w_float", 41, tMessage, g+"FloatValue"),
		field("w_int64", 42, tMessage, g+"Int64Value"), field("w_uint64", 43, tMessage, g+"UInt64Value"),
		field("w_int32", 44, tMessage, g+"Int32Value"), field("w_uint32", 45, tMessage, g+"UInt32Value"),
		field("w_bool", 46, tMessage, g+"BoolValue"), field("w_string", 47, tMessage, g+"StringValue"),
		field("w_bytes", 48, tMessage, g+"BytesValue"), repeated(field("w_list", 49, tMessage, g+"Int32Value")),
		field("empty", 50, tMessage, g+"Empty"),
		field("ts", 51, tMessage, g+"Timestamp"), field("dur", 52, tMessage, g+"Duration"),
		repeated(field("ts_list", 53, tMessage, g+"Timestamp")),
	)
	opt := inOneof(field("opt_int", 60, tInt32), 2)
	opt.Proto3Optional = proto.Bool(true)
	optStr := inOneof(field("opt_str", 61, tString), 3)
	optStr.Proto3Optional = proto.Bool(true)
	named := field("named", 62, tString)
	named.JsonName = proto.String("otherName")
	mix.Field = append(mix.Field, opt, optStr, named)
	mix.OneofDecl = []*descriptorpb.OneofDescriptorProto{
		{Name: proto.String("pick")}, {Name: proto.String("flag")},
		{Name: proto.String("_opt_int")}, {Name: proto.String("_opt_str")},
	}
	three := &descriptorpb.FileDescriptorProto{
		Name: proto.String("wiretest/v1/three.proto"), Package: proto.String("wiretest.v1"), Syntax: proto.String("proto3"),
		Dependency: []string{"google/protobuf/wrappers.proto", "google/protobuf/empty.proto",
			"google/protobuf/timestamp.proto", "google/protobuf/duration.proto"},
		EnumType: []*descriptorpb.EnumDescriptorProto{{Name: proto.String("Hue"), Value: []*descriptorpb.EnumValueDescriptorProto{
			{Name: proto.String("HUE_UNSPECIFIED"), Number: proto.Int32(0)},
			{Name: proto.String("HUE_RED"), Number: proto.Int32(1)},
			{Name: proto.String("HUE_DEEP"), Number: proto.Int32(-3)},
		}}},
		MessageType: []*descriptorpb.DescriptorProto{mix, msg("Leaf", field("text", 1, tString), field("n", 2, tSint64))},
	}
	old := msg("Old", all(true)...)
	old.Field = append(old.Field, field("sub", 50, tMessage, ".wiretest.v1.Old"))
	two := &descriptorpb.FileDescriptorProto{
		Name: proto.String("wiretest/v1/two.proto"), Package: proto.String("wiretest.v1"), Syntax: proto.String("proto2"),
		MessageType: []*descriptorpb.DescriptorProto{old},
	}
	implicit := field("implicit", 1, tInt32)
	implicit.Options = &descriptorpb.FieldOptions{Features: &descriptorpb.FeatureSet{FieldPresence: descriptorpb.FeatureSet_IMPLICIT.Enum()}}
	expanded := repeated(field("expanded", 3, tInt32))
	expanded.Options = &descriptorpb.FieldOptions{Features: &descriptorpb.FeatureSet{RepeatedFieldEncoding: descriptorpb.FeatureSet_EXPANDED.Enum()}}
	ed := &descriptorpb.FileDescriptorProto{
		Name: proto.String("wiretest/v1/ed.proto"), Package: proto.String("wiretest.v1"), Syntax: proto.String("editions"),
		Edition: descriptorpb.Edition_EDITION_2023.Enum(),
		MessageType: []*descriptorpb.DescriptorProto{msg("Ed", implicit, field("explicit", 2, tInt32), expanded,
			repeated(field("packed", 4, tSint32)), field("text", 5, tString), field("leaf", 6, tMessage, p+"Leaf"))},
		Dependency: []string{"wiretest/v1/three.proto"},
	}
	return []*descriptorpb.FileDescriptorProto{three, two, ed}
}

// wireTypes are the message types the differential tests cover, the
// converter's and the declined alike: wireFiles', testdata's, the zoo's
// and the well-known types.
var wireTypes = func() []protoreflect.MessageDescriptor {
	files := new(protoregistry.Files)
	testFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if err := files.RegisterFile(fd); err != nil {
			panic(err)
		}
		return true
	})
	for _, f := range wireFiles() {
		fd, err := protodesc.NewFile(f, files)
		if err != nil {
			panic(fmt.Sprintf("%s: %v", f.GetName(), err))
		}
		if err := files.RegisterFile(fd); err != nil {
			panic(err)
		}
	}
	var out []protoreflect.MessageDescriptor
	var add func(protoreflect.MessageDescriptors)
	add = func(ms protoreflect.MessageDescriptors) {
		for i := range ms.Len() {
			if !ms.Get(i).IsMapEntry() {
				out = append(out, ms.Get(i))
			}
			add(ms.Get(i).Messages())
		}
	}
	files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		add(fd.Messages())
		return true
	})
	add(zoov1.File_zoo_v1_zoo_proto.Messages())
	return out
}()

func wireTestType(t testing.TB, name protoreflect.FullName) protoreflect.MessageDescriptor {
	t.Helper()
	for _, md := range wireTypes {
		if md.FullName() == name {
			return md
		}
	}
	t.Fatalf("no type %s", name)
	return nil
}

// checkWire compares the converter with Decode and protojson on one
// input: when the converter accepts, Decode must accept without a warning,
// and the converter's bytes must be those of the deterministic marshal of
// Decode's message, which must be what protojson itself reads. It reports
// whether the converter accepted.
func checkWire(t testing.TB, v *Validator, args []byte) bool {
	t.Helper()
	got, ok := v.AppendWire([]byte("prefix"), args)
	if !bytes.HasPrefix(got, []byte("prefix")) {
		t.Fatalf("AppendWire(%q) changed what was in the buffer: %q", args, got)
	}
	got = got[len("prefix"):]
	if !ok {
		if len(got) != 0 {
			t.Fatalf("AppendWire(%q) declined but left %q", args, got)
		}
		return false
	}
	m := dynamicpb.NewMessage(v.md)
	ws, err := v.DecodeWarn(args, m)
	if err != nil || ws.Len() > 0 {
		t.Fatalf("%s: AppendWire accepted %q, Decode did not: %v %s", v.md.FullName(), args, err, ws.String())
	}
	raw := args
	if !IsObject(v.md) {
		var w map[string]json.RawMessage
		if err := json.Unmarshal(args, &w); err != nil {
			t.Fatalf("wrapper arguments %q: %v", args, err)
		}
		raw = w[WrapperProperty]
	}
	pj := dynamicpb.NewMessage(v.md)
	if string(raw) != "null" {
		if err := (protojson.UnmarshalOptions{Resolver: testTypes}).Unmarshal(raw, pj); err != nil {
			t.Fatalf("%s: AppendWire accepted %q, protojson refuses it: %v", v.md.FullName(), args, err)
		}
	}
	if !proto.Equal(pj, m) && !hasNaN(pj) {
		t.Fatalf("%s: Decode and protojson differ on %q", v.md.FullName(), args)
	}
	want, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: AppendWire(%q) = %x, want %x", v.md.FullName(), args, got, want)
	}
	back := dynamicpb.NewMessage(v.md)
	if err := proto.Unmarshal(got, back); err != nil {
		t.Fatalf("%s: AppendWire(%q) = %x, which does not unmarshal: %v", v.md.FullName(), args, got, err)
	}
	if !proto.Equal(back, pj) && !hasNaN(pj) {
		t.Fatalf("%s: AppendWire(%q) unmarshals to %v, protojson reads %v", v.md.FullName(), args, back, pj)
	}
	return true
}

// hasNaN: proto.Equal finds a NaN unequal to itself; the byte comparison
// covers such messages.
func hasNaN(m proto.Message) bool {
	b, _ := protojson.Marshal(m)
	return bytes.Contains(b, []byte(`"NaN"`))
}

func TestWireEligibility(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name protoreflect.FullName
		fast bool
	}{
		{"wiretest.v1.Mix", true},
		{"wiretest.v1.Old", true},
		{"wiretest.v1.Ed", true},
		{"zoo.v1.GetAnimalRequest", true},
		{"schematest.v1.Scalars", true},
		{"google.protobuf.Int64Value", true},
		{"google.protobuf.BytesValue", true},
		{"google.protobuf.Empty", true},
		{"schematest.v1.Kitchen", true},       // maps of every key kind, a oneof
		{"schematest.v1.Node", true},          // recursive, through a map too
		{"zoo.v1.FeedAnimalRequest", true},    // a map in a oneof's message
		{"schematest.v1.WellKnown", false},    // Timestamp, Struct, Any...
		{"schematest.v1.Legacy", false},       // required, groups, extensions, closed enum
		{"schematest.v1.Edition", false},      // legacy required, closed enum
		{"zoo.v1.CreateAnimalRequest", false}, // Timestamp, Struct
		{"google.protobuf.Timestamp", true},
		{"google.protobuf.Duration", true},
		{"google.protobuf.FieldMask", false},           // its own JSON form
		{"google.protobuf.Value", false},               // any JSON
		{"google.protobuf.FileDescriptorProto", false}, // extension ranges in its options
	} {
		v := mustValidator(t, wireTestType(t, tc.name), nil)
		if v.Fast() != tc.fast {
			t.Errorf("%s: Fast() = %v, want %v", tc.name, v.Fast(), tc.fast)
		}
	}
	// A type with rules or required fields has checks after protojson.
	for _, name := range []protoreflect.FullName{"schematest.v1.Legacy.Inner"} {
		if v := mustValidator(t, wireTestType(t, name), nil); v.Fast() {
			t.Errorf("%s: Fast() = true for a type with checks", name)
		}
	}
}

// TestWireOddDescriptors: types only a hand-built descriptor (a backend's
// reflection, not protoc) can declare, which protojson reads otherwise
// than their fields say, are not converted: a JSON name in brackets
// (protojson takes it for an extension's), a google.protobuf.Empty with
// fields (protojson refuses any member of one), a Timestamp of another
// shape.
func TestWireOddDescriptors(t *testing.T) {
	t.Parallel()
	field := func(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type, json string) *descriptorpb.FieldDescriptorProto {
		f := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(num), Type: typ.Enum(),
			Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()}
		if json != "" {
			f.JsonName = proto.String(json)
		}
		return f
	}
	for _, tc := range []struct {
		pkg string
		msg *descriptorpb.DescriptorProto
	}{
		{"odd.v1", &descriptorpb.DescriptorProto{Name: proto.String("Bracketed"), Field: []*descriptorpb.FieldDescriptorProto{
			field("x", 1, descriptorpb.FieldDescriptorProto_TYPE_INT32, "[x]")}}},
		{"google.protobuf", &descriptorpb.DescriptorProto{Name: proto.String("Empty"), Field: []*descriptorpb.FieldDescriptorProto{
			field("x", 1, descriptorpb.FieldDescriptorProto_TYPE_INT32, "")}}},
		{"google.protobuf", &descriptorpb.DescriptorProto{Name: proto.String("Timestamp"), Field: []*descriptorpb.FieldDescriptorProto{
			field("seconds", 1, descriptorpb.FieldDescriptorProto_TYPE_STRING, ""),
			field("nanos", 2, descriptorpb.FieldDescriptorProto_TYPE_INT32, "")}}},
	} {
		fdp := &descriptorpb.FileDescriptorProto{Name: proto.String("odd/" + tc.msg.GetName() + ".proto"), Package: proto.String(tc.pkg),
			Syntax: proto.String("proto3"), MessageType: []*descriptorpb.DescriptorProto{tc.msg}}
		fd, err := protodesc.NewFile(fdp, new(protoregistry.Files))
		if err != nil {
			t.Fatalf("%s: %v", tc.msg.GetName(), err)
		}
		md := fd.Messages().Get(0)
		v, err := NewValidator(md, &Options{Resolver: testTypes})
		if err != nil {
			t.Fatalf("%s: %v", md.FullName(), err)
		}
		if v.Fast() {
			if _, ok := v.AppendWire(nil, []byte(`{"x":5}`)); ok {
				t.Errorf("%s: converted; protojson refuses the member", md.FullName())
			}
			t.Errorf("%s: Fast() = true, want the type declined", md.FullName())
		}
	}
}

// wireCases are inputs for Mix that probe protojson's rules one at a time:
// each either converts to the same bytes or is declined.
var wireCases = []string{
	`{}`, ` { } `, `{"sInt32":1}`, `{"s_int32":1}`, `{"sInt32":1,"s_int32":2}`, `{"sInt32":1,"sInt32":2}`,
	`{"sInt32":null,"sInt32":1}`, `{"sInt32":null}`, `{"sInt32":"1"}`, `{"sInt32":" 1"}`, `{"sInt32":1.0}`,
	`{"sInt32":1e2}`, `{"sInt32":-0}`, `{"sUint32":-0}`, `{"sUint32":"-0"}`, `{"sUint32":-1}`,
	`{"sInt32":2147483648}`, `{"sInt32":-2147483648}`, `{"sInt64":"9223372036854775807"}`,
	`{"sInt64":9223372036854775807}`, `{"sUint64":"18446744073709551615"}`, `{"sInt32":01}`,
	`{"sInt32":1,}`, `{"sInt32":1 "sInt64":2}`, `{"sInt32":true}`, `{"sInt32":[]}`,
	`{"sSint32":-5,"sSint64":"-9","sFixed32":7,"sFixed64":"8","sSfixed32":-1,"sSfixed64":-2}`,
	`{"sFloat":1.5,"sDouble":-0.0}`, `{"sDouble":-0}`, `{"sDouble":0}`, `{"sFloat":"NaN"}`, `{"sDouble":"Infinity"}`,
	`{"sDouble":"-Infinity"}`, `{"sDouble":"1e3"}`, `{"sDouble":1e400}`, `{"sFloat":3.5e38}`, `{"sFloat":1e-50}`,
	`{"sDouble":"nan"}`, `{"sBool":true,"sString":"x"}`, `{"sBool":false}`, `{"sBool":"true"}`, `{"sBool":truex}`,
	`{"sString":""}`, `{"sString":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00"}`, `{"sString":"\ud83d"}`, `{"sString":"\udc00\ud83d"}`,
	`{"sString":"\u0000"}`, "{\"sString\":\"\x01\"}", "{\"sString\":\"\xff\"}", `{"sString":"é€😀"}`, `{"sString":"\x"}`,
	`{"s\u0053tring":"k"}`, `{"sBytes":"AQID"}`, `{"sBytes":"AQI="}`, `{"sBytes":"AQI"}`, `{"sBytes":"-_-_"}`, `{"sBytes":"+/+/"}`,
	`{"sBytes":"json"}`, `{"sBytes":"abcd"}`, `{"sBytes":""}`, `{"sBytes":"A\u0051ID"}`, `{"sBytes":"AQ\nID"}`,
	`{"rInt32":[1,2,-3]}`, `{"rInt32":[]}`, `{"rInt32":null}`, `{"rInt32":[null]}`, `{"rInt32":[1,]}`, `{"rInt32":1}`,
	`{"rString":["a","",""]}`, `{"rBytes":["AQID",""]}`, `{"rBool":[false,true]}`, `{"rDouble":[0,"NaN",-0]}`,
	`{"rSfixed64":["1",2]}`, `{"color":"HUE_RED"}`, `{"color":1}`, `{"color":7}`, `{"color":-3}`, `{"color":"HUE_DEEP"}`,
	`{"color":"HUE_UNSPECIFIED"}`, `{"color":"1"}`, `{"color":"nope"}`, `{"colors":["HUE_RED",0,5]}`,
	`{"child":{}}`, `{"child":null}`, `{"child":{"child":{"sInt32":1}}}`, `{"children":[{},{"text":"x"}]}`, `{"children":[null]}`,
	`{"oStr":"a","oInt":1}`, `{"oStr":"a","oInt":null}`, `{"oStr":null,"oInt":"5"}`, `{"oStr":""}`, `{"oInt":0}`, `{"oLeaf":{}}`,
	`{"oHue":"HUE_UNSPECIFIED"}`, `{"pBool":false,"oStr":"x"}`, `{"pBytes":""}`,
	`{"wDouble":0}`, `{"wDouble":1.5}`, `{"wDouble":null}`, `{"wFloat":"NaN"}`, `{"wInt64":"5"}`, `{"wUint64":0}`,
	`{"wInt32":-1}`, `{"wUint32":3}`, `{"wBool":false}`, `{"wString":""}`, `{"wString":"s"}`, `{"wBytes":"AQID"}`,
	`{"wBytes":"json"}`, `{"wList":[1,0,null]}`, `{"wList":[1,0]}`, `{"wInt32":{"value":1}}`, `{"empty":{}}`, `{"empty":{"x":1}}`,
	`{"optInt":0}`, `{"optStr":""}`, `{"opt_int":0,"optInt":1}`, `{"named":"a"}`, `{"otherName":"a"}`, `{"unknown":1}`,
	`{"ts":"2024-05-01T12:00:00Z"}`, `{"ts":"2024-05-01T12:00:00.123456789+02:00"}`, `{"ts":"2024-05-01T12:00:00.1234567891Z"}`,
	`{"ts":"1970-01-01T00:00:00Z"}`, `{"ts":"0001-01-01T00:00:00Z"}`, `{"ts":"9999-12-31T23:59:59.999999999Z"}`, `{"ts":"2024-05-01t12:00:00z"}`,
	`{"ts":"2024-05-01 12:00:00Z"}`, `{"ts":"2024-13-01T12:00:00Z"}`, `{"ts":"2024-05-01T12:00:00"}`, `{"ts":1}`, `{"ts":null}`, `{"ts":{}}`,
	`{"tsList":["2024-05-01T12:00:00Z",null]}`, `{"tsList":["2024-05-01T12:00:00Z","1970-01-01T00:00:00.5Z"]}`,
	`{"dur":"1s"}`, `{"dur":"-1.5s"}`, `{"dur":"-0.000000001s"}`, `{"dur":"0s"}`, `{"dur":"-0s"}`, `{"dur":"1.s"}`, `{"dur":".5s"}`,
	`{"dur":"+1s"}`, `{"dur":"01s"}`, `{"dur":"1.1234567891s"}`, `{"dur":"315576000000s"}`, `{"dur":"315576000001s"}`, `{"dur":"1"}`,
	`{"dur":"1S"}`, `{"dur":"\u0031s"}`, `{"dur":5}`,
	`{"sInt32":1.50e1}`, `{"sInt32":150e-1}`, `{"sInt32":15e-1}`, `{"sUint64":"1.8446744073709551615e19"}`,
	`{"sUint64":1.8446744073709551616e19}`, `{"sInt64":1e20}`, `{"sInt32":-0.0}`, `{"sUint32":-0.0e5}`, `{"sUint32":-1e0}`,
	`{"color":1.0}`, `{"color":1.5}`, `{"sInt32":0e99999999999}`, `{"sInt32":1e99999999999}`, `{"sInt32":0.05e2}`,
	`{"sInt32":-0.05E+2}`, `{"sSfixed64":"-9.223372036854775808e18"}`, `{"rInt64":[1e3,"2.0",300e-2]}`,
	`{"sString":"x"} x`, `{"sString":"x"}}`, `{"sString":"x"`, `[]`, `null`, ``, `{"child":{"child":{"child":{}}}}`,
	`{"oStr":"x","sInt32":2,"child":{"sInt64":"3","sInt32":1},"sBool":true}`,
}

func TestWireCases(t *testing.T) {
	t.Parallel()
	v := mustValidator(t, wireTestType(t, "wiretest.v1.Mix"), nil)
	accepted := 0
	for _, c := range wireCases {
		if checkWire(t, v, []byte(c)) {
			accepted++
		}
	}
	// The converter must take the common forms, or it is no use.
	for _, c := range []string{`{"sInt32":1}`, `{"s_int32":1}`, `{"sInt32":1.0}`, `{"sInt32":1e2}`, `{"sInt32":150e-1}`, `{"sInt64":"9223372036854775807"}`, `{"sFloat":"NaN"}`,
		`{"sString":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00"}`, `{"rInt32":[1,2,-3]}`, `{"color":"HUE_RED"}`,
		`{"wList":[1,0]}`, `{"child":{"child":{"sInt32":1}}}`, `{"ts":"2024-05-01T12:00:00Z"}`, `{"dur":"-1.5s"}`, `{"oStr":"x","sInt32":2,"child":{"sInt64":"3","sInt32":1},"sBool":true}`} {
		if _, ok := v.AppendWire(nil, []byte(c)); !ok {
			t.Errorf("AppendWire declined %s", c)
		}
	}
	t.Logf("%d of %d accepted", accepted, len(wireCases))
	for _, c := range []struct {
		name protoreflect.FullName
		args string
		ok   bool
	}{
		{"google.protobuf.Int64Value", `{"value":"5"}`, true},
		{"google.protobuf.Int64Value", `{"value":0}`, true},
		{"google.protobuf.Int64Value", `{"value":null}`, true},
		{"google.protobuf.Int64Value", ` {"value" : 7 } `, true},
		{"google.protobuf.Int64Value", `{"value":1,"value":2}`, false},
		{"google.protobuf.Int64Value", `{"v\u0061lue":1}`, false},
		{"google.protobuf.Int64Value", `{}`, false},
		{"google.protobuf.BytesValue", `{"value":"AQID"}`, true},
		{"google.protobuf.BytesValue", `{"value":"json"}`, false},
		{"google.protobuf.Timestamp", `{"value":"2024-05-01T12:00:00.5Z"}`, true},
		{"google.protobuf.Timestamp", `{"value":null}`, true},
		{"google.protobuf.Duration", `{"value":"-3.25s"}`, true},
		{"google.protobuf.Empty", `{}`, true},
		{"wiretest.v1.Old", `{"sInt32":0,"sString":"","rInt32":[1,2],"sub":{"sBool":false}}`, true},
		{"wiretest.v1.Ed", `{"implicit":0,"explicit":0,"expanded":[1,2],"packed":[-1,1],"leaf":{"n":"-2"}}`, true},
		{"zoo.v1.GetAnimalRequest", `{"id":"leo"}`, true},
	} {
		v := mustValidator(t, wireTestType(t, c.name), nil)
		if got := checkWire(t, v, []byte(c.args)); got != c.ok {
			t.Errorf("%s: AppendWire(%s) accepted = %v, want %v", c.name, c.args, got, c.ok)
		}
	}
	kitchen := mustValidator(t, wireTestType(t, "schematest.v1.Kitchen"), nil)
	for _, c := range kitchenCases {
		checkWire(t, kitchen, []byte(c.args))
		if _, ok := kitchen.AppendWire(nil, []byte(c.args)); ok != c.ok {
			t.Errorf("Kitchen: AppendWire(%s) accepted = %v, want %v", c.args, ok, c.ok)
		}
	}
}

// kitchenCases probe maps: keys as protojson parses them (strconv for
// integers), repeated keys after parsing, order, null values.
var kitchenCases = []struct {
	args string
	ok   bool
}{
	{`{"strMap":{"b":"1","a":"2","":""}}`, true},
	{`{"strMap":{"a":"1","a":"2"}}`, false},
	{`{"strMap":{"a":"1","\u0061":"2"}}`, false},
	{`{"strMap":{"\u00e9":"x","e":"y"}}`, true},
	{`{"strMap":{"a":null}}`, false},
	{`{"strMap":null}`, true},
	{`{"strMap":{}}`, true},
	{`{"int32Map":{"1":{},"01":{}}}`, false},
	{`{"int32Map":{"+1":{"label":"x"},"-0":{},"-2147483648":{"counts":["1"]}}}`, true},
	{`{"int32Map":{"2147483648":{}}}`, false},
	{`{"int32Map":{" 1":{}}}`, false},
	{`{"int32Map":{"1":null}}`, false},
	{`{"int64Map":{"-5":"COLOR_RED","5":0,"0":2}}`, true},
	{`{"int64Map":{"1":"nope"}}`, false},
	{`{"uint32Map":{"4294967295":"AQID","0":""}}`, true},
	{`{"uint32Map":{"-1":"AQID"}}`, false},
	{`{"uint32Map":{"1":"json"}}`, false},
	{`{"uint64Map":{"18446744073709551615":"NaN","1":-0}}`, true},
	{`{"boolMap":{"true":"t","false":"f"}}`, true},
	{`{"boolMap":{"True":"t"}}`, false},
	{`{"sint32Map":{"-3":"7","3":-7}}`, true},
	{`{"fixed64Map":{"9":"Infinity","8":1.5}}`, true},
	{`{"str_map":{"k":"v"},"strMap":{}}`, false},
}

// TestWireDifferential fills random messages of every type the converter
// takes, writes each as protojson would (JSON and proto names), varies the
// JSON the ways a client may, and checks every input with checkWire;
// protojson's own output must be accepted.
func TestWireDifferential(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	n := 300
	if testing.Short() {
		n = 60
	}
	own, mutants := 0, 0
	defer func() { t.Logf("accepted: %d of protojson's own, %d variations", own, mutants) }()
	for _, md := range wireTypes {
		if skipWellKnown(md) {
			continue // declined (TestWireEligibility), and random values are not valid
		}
		v := mustValidator(t, md, nil)
		runs := n
		if !v.Fast() {
			runs = 10 // what is declined is declined at once
		}
		for i := 0; i < runs; i++ {
			m := dynamicpb.NewMessage(md)
			fillRandom(rng, m, 0)
			for _, names := range []bool{false, true} {
				js, err := protojson.MarshalOptions{UseProtoNames: names, Resolver: testTypes, AllowPartial: true}.Marshal(m)
				if err != nil {
					t.Fatal(err)
				}
				args := wrapIfNeeded(md, js)
				accepted := checkWire(t, v, args)
				if v.Fast() && !accepted && !warnsOrHas(v, args) {
					t.Fatalf("%s: AppendWire declined protojson's own %s", md.FullName(), args)
				}
				if accepted {
					own++
				}
				for _, mut := range mutate(rng, args) {
					if checkWire(t, v, mut) {
						mutants++
					}
				}
			}
		}
	}
}

// warnsOrHas: Decode warns about args (a bytes value that looks like a
// word), which the converter leaves to Decode.
func warnsOrHas(v *Validator, args []byte) bool {
	ws, err := v.DecodeWarn(args, dynamicpb.NewMessage(v.md))
	return err != nil || ws.Len() > 0
}

// mutate varies valid arguments the ways clients and protojson's edge
// cases do: reordered, spaced, nulls, duplicates, escapes, truncation.
func mutate(rng *rand.Rand, args []byte) [][]byte {
	s := string(args)
	out := [][]byte{
		[]byte(" \n" + strings.ReplaceAll(s, ",", " ,\t") + " "),
		[]byte(strings.Replace(s, ":", ":null,\"x\":", 1)),
		[]byte(strings.Replace(s, "{", `{"sInt32":null,`, 1)),
		[]byte(strings.Replace(s, `"`, `"\u00`+fmt.Sprintf("%02x", 'a'+rng.IntN(26)), 1+rng.IntN(3))),
		[]byte(strings.ReplaceAll(s, `"`, `\"`)),
		[]byte(s[:rng.IntN(len(s)+1)]),
		[]byte(strings.Replace(s, "[", "[null,", 1)),
		[]byte(strings.Replace(s, ",", ",,", 1)),
	}
	// Members reversed, and one repeated.
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) == nil && len(obj) > 0 {
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		var b strings.Builder
		b.WriteByte('{')
		for i := len(keys) - 1; i >= 0; i-- {
			fmt.Fprintf(&b, "%q:%s,", keys[i], obj[keys[i]])
		}
		fmt.Fprintf(&b, "%q:%s}", keys[0], obj[keys[0]])
		dup := b.String()
		out = append(out, []byte(dup), []byte(dup[:strings.LastIndexByte(dup[:len(dup)-1], ',')]+"}"))
	}
	// Numbers as strings and strings as numbers.
	out = append(out, []byte(strings.NewReplacer(`":1`, `":"1`, `,"`, `1,"`).Replace(s)))
	return out
}

// fillRandom sets a random subset of m's fields to random values, edge
// values often.
func fillRandom(rng *rand.Rand, m protoreflect.Message, depth int) {
	fields := m.Descriptor().Fields()
	switch wellknown.Of(m.Descriptor()) {
	case wellknown.Timestamp:
		secs := minTimestampSeconds + rng.Int64N(maxTimestampSeconds-minTimestampSeconds+1)
		if rng.IntN(3) == 0 {
			secs = []int64{0, minTimestampSeconds, maxTimestampSeconds}[rng.IntN(3)]
		}
		m.Set(fields.ByNumber(1), protoreflect.ValueOfInt64(secs))
		m.Set(fields.ByNumber(2), protoreflect.ValueOfInt32([]int32{0, 1, 999999999, 500000000, rng.Int32N(1e9)}[rng.IntN(5)]))
		return
	case wellknown.Duration:
		secs := rng.Int64N(2*maxDurationSeconds+1) - maxDurationSeconds
		if rng.IntN(3) == 0 {
			secs = []int64{0, 1, -1, maxDurationSeconds, -maxDurationSeconds}[rng.IntN(5)]
		}
		nanos := []int32{0, 1, 999999999, 10, rng.Int32N(1e9)}[rng.IntN(5)]
		if secs < 0 || secs == 0 && rng.IntN(2) == 0 {
			nanos = -nanos
		}
		m.Set(fields.ByNumber(1), protoreflect.ValueOfInt64(secs))
		m.Set(fields.ByNumber(2), protoreflect.ValueOfInt32(nanos))
		return
	}
	for i := range fields.Len() {
		fd := fields.Get(i)
		if rng.IntN(3) == 0 || fd.Message() != nil && depth > 3 {
			continue
		}
		if od := fd.ContainingOneof(); od != nil && m.WhichOneof(od) != nil {
			continue
		}
		if sub := messageOf(fd); sub != nil && skipWellKnown(sub) {
			continue
		}
		switch {
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			for range rng.IntN(3) {
				k := randomScalar(rng, fd.MapKey())
				var val protoreflect.Value
				if fd.MapValue().Message() != nil {
					val = mp.NewValue()
					fillRandom(rng, val.Message(), depth+1)
				} else {
					val = randomScalar(rng, fd.MapValue())
				}
				mp.Set(k.MapKey(), val)
			}
		case fd.IsList():
			l := m.Mutable(fd).List()
			for range rng.IntN(4) {
				if fd.Message() != nil {
					e := l.NewElement()
					fillRandom(rng, e.Message(), depth+1)
					l.Append(e)
				} else {
					l.Append(randomScalar(rng, fd))
				}
			}
		case fd.Message() != nil:
			fillRandom(rng, m.Mutable(fd).Message(), depth+1)
		default:
			m.Set(fd, randomScalar(rng, fd))
		}
	}
}

// skipWellKnown: leave the well-known types with a JSON form of their own
// unset (random values of theirs are mostly not valid, and the converter
// declines them anyway), and reports whether it did.
func skipWellKnown(md protoreflect.MessageDescriptor) bool {
	switch wellknown.Of(md) {
	case wellknown.None, wellknown.Wrapper, wellknown.Timestamp, wellknown.Duration:
		return false
	}
	return true
}

func randomScalar(rng *rand.Rand, fd protoreflect.FieldDescriptor) protoreflect.Value {
	pick := func(edge ...uint64) uint64 {
		if rng.IntN(2) == 0 {
			return edge[rng.IntN(len(edge))]
		}
		return rng.Uint64()
	}
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(rng.IntN(2) == 0)
	case protoreflect.EnumKind:
		vals := fd.Enum().Values()
		if rng.IntN(4) == 0 && !fd.Enum().IsClosed() {
			return protoreflect.ValueOfEnum(protoreflect.EnumNumber(rng.IntN(20) - 10))
		}
		return protoreflect.ValueOfEnum(vals.Get(rng.IntN(vals.Len())).Number())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(pick(0, 1, math.MaxUint64, math.MaxInt32, 1<<31)))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(int64(pick(0, 1, math.MaxUint64, math.MaxInt64, 1<<63)))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(pick(0, 1, math.MaxUint32)))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(pick(0, 1, math.MaxUint64))
	case protoreflect.FloatKind:
		fs := []float32{0, float32(math.Copysign(0, -1)), 1.5, float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), math.MaxFloat32, math.SmallestNonzeroFloat32}
		if rng.IntN(2) == 0 {
			return protoreflect.ValueOfFloat32(fs[rng.IntN(len(fs))])
		}
		return protoreflect.ValueOfFloat32(math.Float32frombits(rng.Uint32()))
	case protoreflect.DoubleKind:
		ds := []float64{0, math.Copysign(0, -1), 0.1, math.NaN(), math.Inf(1), math.Inf(-1), math.MaxFloat64, math.SmallestNonzeroFloat64, 1e21}
		if rng.IntN(2) == 0 {
			return protoreflect.ValueOfFloat64(ds[rng.IntN(len(ds))])
		}
		return protoreflect.ValueOfFloat64(math.Float64frombits(rng.Uint64()))
	case protoreflect.StringKind:
		ss := []string{"", "leo", "a\"b\\c\n\u0001", "é€😀", "\u2028x", "<&>"}
		return protoreflect.ValueOfString(ss[rng.IntN(len(ss))])
	case protoreflect.BytesKind:
		bs := [][]byte{nil, {1, 2, 3}, []byte("text"), {0xff, 0xfe, 0xfd, 0xfc}, bytes.Repeat([]byte{7}, 200)}
		return protoreflect.ValueOfBytes(bs[rng.IntN(len(bs))])
	}
	panic(fd.Kind())
}

// FuzzAppendWire checks the converter against Decode and protojson on
// arbitrary arguments for each of a few types: whatever it accepts must be
// exactly what they make of the same arguments.
func FuzzAppendWire(f *testing.F) {
	names := []protoreflect.FullName{"wiretest.v1.Mix", "wiretest.v1.Old", "wiretest.v1.Ed",
		"google.protobuf.Int64Value", "google.protobuf.BytesValue", "zoo.v1.GetAnimalRequest", "schematest.v1.Scalars",
		"schematest.v1.Kitchen", "schematest.v1.Node", "google.protobuf.Timestamp", "google.protobuf.Duration"}
	vs := make([]*Validator, len(names))
	for i, n := range names {
		vs[i] = mustValidator(f, wireTestType(f, n), nil)
	}
	for _, c := range wireCases {
		f.Add(uint8(0), []byte(c))
	}
	f.Add(uint8(1), []byte(`{"sInt32":1,"rInt32":[1,2],"sub":{"sString":"x"}}`))
	f.Add(uint8(2), []byte(`{"implicit":0,"explicit":0,"expanded":[1],"packed":[2]}`))
	f.Add(uint8(3), []byte(`{"value":"-5"}`))
	f.Add(uint8(4), []byte(`{"value":"AQID"}`))
	f.Add(uint8(5), []byte(`{"id":"leo"}`))
	f.Add(uint8(6), []byte(`{"fInt32":1,"optInt32":0,"customName":"x"}`))
	for _, c := range kitchenCases {
		f.Add(uint8(7), []byte(c.args))
	}
	f.Add(uint8(8), []byte(`{"name":"a","children":[{"byName":{"x":{"leaf":{"text":"t"}}}}],"parent":{"name":"p"}}`))
	f.Add(uint8(9), []byte(`{"value":"2024-05-01T12:00:00.000001-07:30"}`))
	f.Add(uint8(10), []byte(`{"value":"-0.5s"}`))
	f.Fuzz(func(t *testing.T, which uint8, args []byte) {
		checkWire(t, vs[int(which)%len(vs)], args)
	})
}

func BenchmarkDecodeArguments(b *testing.B) {
	for _, c := range []struct {
		name protoreflect.FullName
		args string
	}{
		{"zoo.v1.GetAnimalRequest", `{"id":"leo"}`},
		{"wiretest.v1.Mix", `{"sInt32":7,"sInt64":"123456789","sString":"a name","sDouble":2.5,"color":"HUE_RED","rInt32":[1,2,3],"child":{"sBool":true,"sString":"x"},"children":[{"text":"leaf"}]}`},
	} {
		md := wireTestType(b, c.name)
		v := mustValidator(b, md, nil)
		args := []byte(c.args)
		b.Run(string(md.Name())+"/protojson", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m := dynamicpb.NewMessage(md)
				if err := v.Decode(args, m); err != nil {
					b.Fatal(err)
				}
				if _, err := (proto.MarshalOptions{AllowPartial: true}).MarshalAppend(make([]byte, 0, 128), m); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(string(md.Name())+"/wire", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := v.AppendWire(make([]byte, 0, len(args)), args); !ok {
					b.Fatal("declined")
				}
			}
		})
	}
}
