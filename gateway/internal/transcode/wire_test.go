package transcode_test

import (
	"math"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// w builds wire data by hand, for encodings proto.Marshal never produces.
type w []byte

func (b w) tag(num protowire.Number, t protowire.Type) w {
	return protowire.AppendTag(b, num, t)
}
func (b w) varint(num protowire.Number, v uint64) w {
	return protowire.AppendVarint(b.tag(num, protowire.VarintType), v)
}
func (b w) fixed32(num protowire.Number, v uint32) w {
	return protowire.AppendFixed32(b.tag(num, protowire.Fixed32Type), v)
}
func (b w) fixed64(num protowire.Number, v uint64) w {
	return protowire.AppendFixed64(b.tag(num, protowire.Fixed64Type), v)
}
func (b w) bytes(num protowire.Number, v []byte) w {
	return protowire.AppendBytes(b.tag(num, protowire.BytesType), v)
}
func (b w) str(num protowire.Number, s string) w { return b.bytes(num, []byte(s)) }
func (b w) group(num protowire.Number, inner w) w {
	return append(b.tag(num, protowire.StartGroupType), inner...).tag(num, protowire.EndGroupType)
}
func (b w) raw(p ...byte) w { return append(b, p...) }

func packedVarints(vs ...uint64) []byte {
	var b []byte
	for _, v := range vs {
		b = protowire.AppendVarint(b, v)
	}
	return b
}

// Field numbers in tt3.All (see schema_test.go).
const (
	aInt32, aInt64, aUint32, aSint32, aFloat, aDouble, aBool, aString, aBytes, aEnum = 1, 2, 3, 5, 11, 12, 13, 14, 15, 16
	aOInt32, aOString                                                                = 21, 34
	aRInt32, aRFixed32, aRString, aREnum                                             = 41, 47, 54, 56
	aUInt32, aUDouble                                                                = 61, 72
	aMInt32, aMBool, aMString                                                        = 81, 91, 92
	aMVMsg, aMVEnum                                                                  = 93, 94
	aCString, aCInt64, aCMsg                                                         = 101, 102, 103
	aChild, aChildren                                                                = 110, 111
	aAny, aTS, aDur, aFM, aStruct, aValue                                            = 120, 121, 122, 123, 124, 125
	aBig                                                                             = 536870911
)

// TestHandBuiltWire covers wire encodings that proto.Marshal never emits but
// that decoders must accept: repeated singular fields, split messages,
// duplicate map keys, unknown fields, packed/unpacked mismatches, and a
// range of malformed inputs.
func TestHandBuiltWire(t *testing.T) {
	t.Parallel()
	s := schema()
	entry := func(k, v w) []byte { return append(k, v...) }
	deep := func(levels int) []byte {
		b := w{}.varint(aInt32, 7)
		for range levels - 1 {
			b = w{}.bytes(aChild, b)
		}
		return b
	}
	cases := []struct {
		name string
		md   protoreflect.MessageDescriptor
		wire []byte
		ok   bool
	}{
		{"empty", s.all, nil, true},
		{"last scalar wins", s.all, w{}.varint(aInt32, 1).str(aString, "a").varint(aInt32, 2).str(aString, "b"), true},
		{"implicit zero on wire omitted", s.all, w{}.varint(aInt32, 0).str(aString, "").fixed64(aDouble, 0), true},
		{"negative zero emitted", s.all, w{}.fixed64(aDouble, math.Float64bits(math.Copysign(0, -1))).fixed32(aFloat, 0x80000000), true},
		{"int32 truncates to zero", s.all, w{}.varint(aInt32, 1<<32).varint(aUint32, 1<<32|5).varint(aSint32, 1<<32|3), true},
		{"bool varint 2", s.all, w{}.varint(aBool, 2), true},
		{"enum beyond int32", s.all, w{}.varint(aEnum, 1<<32|1).varint(aREnum, 77).varint(aREnum, math.MaxUint64), true},
		{"enum alias first name", s.all, w{}.varint(aEnum, 1), true},
		{"proto3 optional zero present", s.all, w{}.varint(aOInt32, 0).str(aOString, ""), true},
		{"split message merges", s.all, w{}.bytes(aChild, w{}.varint(aInt32, 1).varint(aRInt32, 1)).varint(aInt64, 9).bytes(aChild, w{}.str(aString, "x").varint(aRInt32, 2)), true},
		{"empty message present", s.all, w{}.bytes(aChild, nil), true},
		{"repeated messages not merged", s.all, w{}.bytes(aChildren, w{}.varint(aInt32, 1)).bytes(aChildren, w{}.varint(aInt32, 2)), true},
		{"oneof last wins", s.all, w{}.str(aCString, "a").varint(aCInt64, 5), true},
		{"oneof switch back", s.all, w{}.bytes(aCMsg, w{}.varint(aInt32, 1)).str(aCString, "a").bytes(aCMsg, w{}.varint(aInt64, 2)), true},
		{"oneof message merges", s.all, w{}.bytes(aCMsg, w{}.varint(aInt32, 1)).bytes(aCMsg, w{}.varint(aInt64, 2)), true},
		{"oneof discarded malformed", s.all, w{}.bytes(aCMsg, w{}.raw(0x08)).str(aCString, "a"), false},
		{"oneof discarded invalid utf8", s.all, w{}.bytes(aCMsg, w{}.str(aString, "\xff")).str(aCString, "a"), false},
		{"unpacked field sent packed", s.all, w{}.bytes(aUInt32, packedVarints(1, 2, 3)).varint(aUInt32, 4), true},
		{"packed field sent unpacked", s.all, w{}.varint(aRInt32, 1).bytes(aRInt32, packedVarints(2, 3)).varint(aRInt32, 4), true},
		{"packed fixed", s.all, w{}.bytes(aRFixed32, []byte{1, 0, 0, 0, 2, 0, 0, 0}).fixed32(aRFixed32, 3), true},
		{"packed fixed bad length", s.all, w{}.bytes(aRFixed32, []byte{1, 0, 0}), false},
		{"packed varint truncated", s.all, w{}.bytes(aRInt32, []byte{0x80}), false},
		{"empty packed run omitted", s.all, w{}.bytes(aRInt32, nil).bytes(aUDouble, nil), true},
		{"packed double", s.all, w{}.bytes(aUDouble, protowire.AppendFixed64(nil, math.Float64bits(math.Inf(-1)))), true},
		{"repeated strings", s.all, w{}.str(aRString, "a").str(aRString, "").str(aRString, "\u2028"), true},
		{"wrong wire type is unknown", s.all, w{}.fixed32(aInt32, 5).varint(aString, 3).varint(aChild, 1).varint(aRString, 1), true},
		{"unknown fields skipped", s.all, w{}.varint(9999, 1).fixed64(9998, 1).str(9997, "x").group(9996, w{}.varint(1, 1)).fixed32(9995, 1), true},
		{"max field number", s.all, w{}.varint(aBig, 42), true},
		{"duplicate map keys", s.all, w{}.bytes(aMString, entry(w{}.str(1, "k"), w{}.str(2, "1"))).bytes(aMString, entry(w{}.str(1, "k"), w{}.str(2, "2"))).bytes(aMString, entry(w{}.str(1, "a"), nil)), true},
		{"map entry missing key and value", s.all, w{}.bytes(aMInt32, nil).bytes(aMVEnum, nil).bytes(aMVMsg, nil), true},
		{"map entry repeated key and value", s.all, w{}.bytes(aMInt32, entry(w{}.varint(1, 5).str(2, "x"), w{}.varint(1, 6).str(2, "y"))), true},
		{"map entry unknown and wrong type", s.all, w{}.bytes(aMInt32, entry(w{}.fixed32(1, 5).str(3, "z"), w{}.varint(2, 1).str(2, "v"))), true},
		{"map int keys sorted numerically", s.all, w{}.bytes(aMInt32, w{}.varint(1, 10)).bytes(aMInt32, w{}.varint(1, 9)).bytes(aMInt32, w{}.varint(1, math.MaxUint64)).bytes(aMInt32, w{}.varint(1, 1<<32|10)), true},
		{"map bool keys", s.all, w{}.bytes(aMBool, w{}.varint(1, 2).str(2, "two")).bytes(aMBool, w{}.varint(1, 0)).bytes(aMBool, w{}.varint(1, 1).str(2, "one")), true},
		{"map message values merge within entry", s.all, w{}.bytes(aMVMsg, entry(w{}.str(1, "k"), w{}.bytes(2, w{}.varint(aInt32, 1)).bytes(2, w{}.varint(aInt64, 2)))), true},
		{"map message values replaced across entries", s.all, w{}.bytes(aMVMsg, entry(w{}.str(1, "k"), w{}.bytes(2, w{}.varint(aInt32, 1)))).bytes(aMVMsg, entry(w{}.str(1, "k"), w{}.bytes(2, w{}.varint(aInt64, 2)))), true},
		{"map overwritten value malformed", s.all, w{}.bytes(aMVMsg, entry(w{}.str(1, "k"), w{}.bytes(2, w{}.raw(0xff)))).bytes(aMVMsg, entry(w{}.str(1, "k"), nil)), false},
		{"map key invalid utf8", s.all, w{}.bytes(aMString, w{}.str(1, "\xfe")), false},
		{"proto3 overwritten invalid utf8", s.all, w{}.str(aString, "\xff").str(aString, "ok"), false},
		{"proto2 overwritten invalid utf8", s.p2, w{}.str(20, "\xff").str(20, "ok"), true},
		{"proto2 emitted invalid utf8", s.p2, w{}.str(20, "\xff"), false},
		{"proto2 required missing", s.p2, w{}.varint(1, 1), false},
		{"proto2 required in child missing", s.p2, w{}.str(20, "r").bytes(40, w{}.varint(1, 1)), false},
		{"proto2 required in merged child", s.p2, w{}.str(20, "r").bytes(40, w{}.varint(1, 1)).bytes(40, w{}.str(20, "x")), true},
		{"proto2 required in discarded oneof", s.p2, w{}.str(20, "r").bytes(51, w{}.varint(1, 1)).str(50, "s"), true},
		{"proto2 defaults not emitted", s.p2, w{}.str(20, "r"), true},
		{"proto2 closed enum unknown", s.p2, w{}.str(20, "r").varint(61, 9).varint(23, 7).bytes(24, packedVarints(1, 8)).bytes(42, w{}.varint(1, 3).varint(2, 99)), true},
		{"proto2 group merge", s.p2, w{}.str(20, "r").group(30, w{}.varint(31, 1)).group(30, w{}.str(32, "b")), true},
		{"proto2 repeated group", s.p2, w{}.str(20, "r").group(33, w{}.varint(34, 1)).group(33, w{}.bytes(35, w{}.str(20, "in"))), true},
		{"group end mismatch", s.p2, w{}.str(20, "r").tag(30, protowire.StartGroupType).tag(31, protowire.EndGroupType), false},
		{"group unterminated", s.p2, w{}.str(20, "r").tag(30, protowire.StartGroupType).varint(31, 1), false},
		{"group as bytes is unknown", s.p2, w{}.str(20, "r").bytes(30, w{}.varint(31, 1)), true},
		{"extension fallback", s.p2, w{}.str(20, "r").bytes(60, w{}.varint(1, 4).varint(150, 1).str(2, "s")).bytes(60, w{}.varint(1, 5)), true},
		{"extension fallback malformed", s.p2, w{}.str(20, "r").bytes(60, w{}.raw(0x08)), false},
		{"editions delimited", s.e, w{}.varint(5, 1).group(6, w{}.varint(1, 0).varint(5, 2)).group(7, w{}.varint(5, 3)), true},
		{"editions explicit zero", s.e, w{}.varint(5, 1).varint(1, 0).varint(2, 0), true},
		{"editions legacy required missing", s.e, w{}.varint(1, 1), false},
		{"editions no utf8 overwritten", s.e, w{}.varint(5, 1).str(3, "\xff").str(3, "ok"), true},
		{"editions no utf8 map key", s.e, w{}.varint(5, 1).bytes(13, w{}.str(1, "\xff").str(1, "k")), false},
		{"editions verified utf8", s.e, w{}.varint(5, 1).str(4, "\xff").str(4, "ok"), false},
		{"editions closed enum unknown", s.e, w{}.varint(5, 1).varint(11, 9).varint(12, 1).varint(12, 8).varint(10, 5), true},
		{"editions expanded sent packed", s.e, w{}.varint(5, 1).bytes(8, packedVarints(1, 2)), true},
		{"truncated varint", s.all, w{}.raw(0x08, 0x80), false},
		{"truncated bytes", s.all, w{}.raw(0x72, 0x05, 'a'), false},
		{"field number zero", s.all, w{}.raw(0x00, 0x01), false},
		{"field number too large", s.all, protowire.AppendVarint(nil, uint64(1<<29)<<3), false},
		{"wire type 6", s.all, w{}.raw(0x0e), false},
		{"stray end group", s.all, w{}.tag(5, protowire.EndGroupType), false},
		{"any empty", s.all, w{}.bytes(aAny, nil), true},
		{"any value without url", s.all, w{}.bytes(aAny, w{}.str(2, "x")), false},
		{"any unresolvable", s.all, w{}.bytes(aAny, w{}.str(1, "type.googleapis.com/nope.Nope")), false},
		{"any url without slash", s.all, w{}.bytes(aAny, w{}.str(1, "tt3.All")), true},
		{"any inner malformed", s.all, w{}.bytes(aAny, w{}.str(1, "type.googleapis.com/tt3.All").bytes(2, w{}.raw(0x08))), false},
		{"any inner wkt", s.all, w{}.bytes(aAny, w{}.str(1, "type.googleapis.com/google.protobuf.Duration").bytes(2, w{}.varint(1, 3))), true},
		{"any inner empty value", s.all, w{}.bytes(aAny, w{}.str(1, "type.googleapis.com/google.protobuf.Empty")), true},
		{"any inner proto2 partial", s.all, w{}.bytes(aAny, w{}.str(1, "type.googleapis.com/tt2.P2").bytes(2, w{}.varint(1, 3))), true},
		{"any inner generated closed enum", s.all, w{}.bytes(aAny, w{}.str(1, "type.googleapis.com/google.protobuf.FieldDescriptorProto").bytes(2, w{}.varint(4, 9).str(1, "n"))), true},
		{"any in any", s.all, w{}.bytes(aAny, w{}.str(1, "type.googleapis.com/google.protobuf.Any").bytes(2, w{}.str(1, "type.googleapis.com/google.protobuf.Timestamp").bytes(2, w{}.varint(1, 1)))), true},
		{"any fields split", s.all, w{}.bytes(aAny, w{}.str(1, "type.googleapis.com/tt3.All")).bytes(aAny, w{}.bytes(2, w{}.varint(aInt32, 5))), true},
		{"timestamp fields merged", s.all, w{}.bytes(aTS, w{}.varint(1, 5)).bytes(aTS, w{}.varint(2, 1000)), true},
		{"timestamp nanos truncated int32", s.all, w{}.bytes(aTS, w{}.varint(2, 1<<32|7)), true},
		{"timestamp out of range", s.all, w{}.bytes(aTS, w{}.varint(1, 1<<40)), false},
		{"duration negative", s.all, w{}.bytes(aDur, w{}.varint(1, uint64(1<<64-3)).varint(2, uint64(1<<64-5000))), true},
		{"duration nanos only negative", s.all, w{}.bytes(aDur, w{}.varint(2, uint64(1<<64-500000000))), true},
		{"field mask", s.all, w{}.bytes(aFM, w{}.str(1, "a.b_c").str(1, "x")), true},
		{"field mask irreversible", s.all, w{}.bytes(aFM, w{}.str(1, "a_1")), false},
		{"value unset", s.all, w{}.bytes(aValue, nil), false},
		{"value oneof switch", s.all, w{}.bytes(aValue, w{}.str(3, "s").fixed64(2, math.Float64bits(2.5))), true},
		{"value nan", s.all, w{}.bytes(aValue, w{}.fixed64(2, math.Float64bits(math.NaN()))), false},
		{"value null unknown number", s.all, w{}.bytes(aValue, w{}.varint(1, 7)), true},
		{"struct entry without value", s.all, w{}.bytes(aStruct, w{}.bytes(1, w{}.str(1, "k"))), false},
		{"struct duplicate keys", s.all, w{}.bytes(aStruct, w{}.bytes(1, w{}.str(1, "k").bytes(2, w{}.varint(4, 1))).bytes(1, w{}.str(1, "k").bytes(2, w{}.str(3, "v")))), true},
		{"nesting at the limit", s.all, deep(10000), true},
		{"nesting beyond the limit", s.all, deep(10001), false},
	}
	for _, tc := range cases {
		for _, protoNames := range []bool{false, true} {
			d := newDiffer(t, tc.md, protoNames)
			if ok := d.check(t, tc.wire); ok != tc.ok {
				t.Errorf("%s: rendered=%v, want %v", tc.name, ok, tc.ok)
			}
		}
	}
}

// TestReferencePanicInput pins the input on which protobuf's reflective
// decoder panics (see errReferencePanic): AppendJSON must not panic and keeps
// the last well-typed key.
func TestReferencePanicInput(t *testing.T) {
	t.Parallel()
	d := newDiffer(t, schema().all, false)
	wire := w{}.bytes(aMString, w{}.str(1, "k").varint(1, 5).str(2, "v"))
	got, err := d.enc.AppendJSON(nil, wire)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"mString":{"k":"v"}}`; string(got) != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}
