package schema

import (
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// TestInputAgreesWithProtojson feeds hand-written arguments to both the Input
// schema and protojson.Unmarshal and expects the same verdict: the schema
// neither rejects what the gateway can convert nor accepts what it cannot.
// The cases are the forms a model is likely to produce, right and wrong.
func TestInputAgreesWithProtojson(t *testing.T) {
	t.Parallel()
	tests := []struct {
		msg  protoreflect.FullName
		json string
		ok   bool
	}{
		// 32-bit integers.
		{"schematest.v1.Scalars", `{"fInt32": 2147483647}`, true},
		{"schematest.v1.Scalars", `{"fInt32": -2147483648}`, true},
		{"schematest.v1.Scalars", `{"fInt32": 2147483648}`, false},
		{"schematest.v1.Scalars", `{"fInt32": 1.5}`, false},
		{"schematest.v1.Scalars", `{"fInt32": 3.0}`, true},
		{"schematest.v1.Scalars", `{"fInt32": true}`, false},
		{"schematest.v1.Scalars", `{"fUint32": -1}`, false},
		{"schematest.v1.Scalars", `{"fUint32": 4294967295}`, true},
		{"schematest.v1.Scalars", `{"fFixed32": 4294967296}`, false},
		// 64-bit integers: strings or numbers.
		{"schematest.v1.Scalars", `{"fInt64": "-9223372036854775808"}`, true},
		{"schematest.v1.Scalars", `{"fInt64": -9223372036854775808}`, true},
		{"schematest.v1.Scalars", `{"fInt64": 9223372036854775808}`, false},
		{"schematest.v1.Scalars", `{"fInt64": "12abc"}`, false},
		{"schematest.v1.Scalars", `{"fUint64": "18446744073709551615"}`, true},
		{"schematest.v1.Scalars", `{"fUint64": 18446744073709551615}`, true},
		{"schematest.v1.Scalars", `{"fUint64": "-1"}`, false},
		{"schematest.v1.Scalars", `{"fUint64": -1}`, false},
		{"schematest.v1.Scalars", `{"fSfixed64": 1.5}`, false},
		// Floats.
		{"schematest.v1.Scalars", `{"fDouble": "NaN", "fFloat": "-Infinity"}`, true},
		{"schematest.v1.Scalars", `{"fDouble": "nan"}`, false},
		{"schematest.v1.Scalars", `{"fDouble": 1e308}`, true},
		{"schematest.v1.Scalars", `{"fFloat": 3.4028235e38}`, true},
		{"schematest.v1.Scalars", `{"fFloat": 1e39}`, false},
		{"schematest.v1.Scalars", `{"fFloat": true}`, false},
		// Others.
		{"schematest.v1.Scalars", `{"fBool": "true"}`, false},
		{"schematest.v1.Scalars", `{"fString": 5}`, false},
		{"schematest.v1.Scalars", `{"fBytes": "AQI="}`, true},
		{"schematest.v1.Scalars", `{"fBytes": 12}`, false},
		{"schematest.v1.Scalars", `{"customName": "x", "optInt32": 0}`, true},
		{"schematest.v1.Scalars", `{"unknownField": 1}`, false},
		{"schematest.v1.Scalars", `[]`, false},
		// Enums by name or number.
		{"schematest.v1.Kitchen", `{"color": "COLOR_RED"}`, true},
		{"schematest.v1.Kitchen", `{"color": 2}`, true},
		{"schematest.v1.Kitchen", `{"color": "RED"}`, false},
		{"schematest.v1.Kitchen", `{"color": true}`, false},
		{"schematest.v1.Kitchen", `{"colors": ["COLOR_RED", 0]}`, true},
		{"schematest.v1.Kitchen", `{"colors": "COLOR_RED"}`, false},
		// Maps.
		{"schematest.v1.Kitchen", `{"int32Map": {"-5": {"label": "x"}}}`, true},
		{"schematest.v1.Kitchen", `{"int32Map": {"five": {}}}`, false},
		{"schematest.v1.Kitchen", `{"uint32Map": {"-1": "AA=="}}`, false},
		{"schematest.v1.Kitchen", `{"boolMap": {"true": "y", "false": "n"}}`, true},
		{"schematest.v1.Kitchen", `{"boolMap": {"yes": "y"}}`, false},
		{"schematest.v1.Kitchen", `{"strMap": {"any key at all": "v"}}`, true},
		{"schematest.v1.Kitchen", `{"strMap": {"k": 1}}`, false},
		{"schematest.v1.Kitchen", `{"int64Map": {"9": "COLOR_GREEN"}}`, true},
		{"schematest.v1.Kitchen", `{"nested": {"label": "x", "extra": 1}}`, false},
		// A oneof member alone.
		{"schematest.v1.Kitchen", `{"dogId": "42"}`, true},
		// Well-known types.
		{"schematest.v1.WellKnown", `{"ts": "2024-01-02T03:04:05.123Z"}`, true},
		{"schematest.v1.WellKnown", `{"ts": "2024-01-02T03:04:05+01:00"}`, true},
		{"schematest.v1.WellKnown", `{"ts": "yesterday"}`, false},
		{"schematest.v1.WellKnown", `{"ts": 1700000000}`, false},
		{"schematest.v1.WellKnown", `{"dur": "1.5s"}`, true},
		{"schematest.v1.WellKnown", `{"dur": "-0.000000001s"}`, true},
		{"schematest.v1.WellKnown", `{"dur": "90m"}`, false},
		{"schematest.v1.WellKnown", `{"dur": "1.0000000001s"}`, false},
		{"schematest.v1.WellKnown", `{"dur": 3}`, false},
		{"schematest.v1.WellKnown", `{"mask": "fooBar,baz.quxQuux"}`, true},
		{"schematest.v1.WellKnown", `{"mask": ""}`, true},
		{"schematest.v1.WellKnown", `{"mask": "foo_bar"}`, false},
		{"schematest.v1.WellKnown", `{"mask": ["fooBar"]}`, false},
		{"schematest.v1.WellKnown", `{"struct": {"a": [1, {"b": null}]}}`, true},
		{"schematest.v1.WellKnown", `{"struct": [1]}`, false},
		{"schematest.v1.WellKnown", `{"value": {"a": 1}, "values": [1, "x", null, true, [], {}]}`, true},
		{"schematest.v1.WellKnown", `{"list": [1, "x"]}`, true},
		{"schematest.v1.WellKnown", `{"list": {"a": 1}}`, false},
		{"schematest.v1.WellKnown", `{"null": null}`, true},
		{"schematest.v1.WellKnown", `{"empty": {}}`, true},
		{"schematest.v1.WellKnown", `{"empty": {"x": 1}}`, false},
		{"schematest.v1.WellKnown", `{"any": {"@type": "type.googleapis.com/schematest.v1.Leaf", "text": "t"}}`, true},
		{"schematest.v1.WellKnown", `{"any": {"@type": "type.googleapis.com/google.protobuf.Duration", "value": "1s"}}`, true},
		{"schematest.v1.WellKnown", `{"any": {"text": "t"}}`, false},
		{"schematest.v1.WellKnown", `{"any": "x"}`, false},
		{"schematest.v1.WellKnown", `{"int64Value": "5", "uint32Value": 7, "bytesValue": "AA==", "boolValue": false}`, true},
		{"schematest.v1.WellKnown", `{"int64Value": {"value": "5"}}`, false},
		{"schematest.v1.WellKnown", `{"uint32Value": -7}`, false},
		{"schematest.v1.WellKnown", `{"doubleValue": "Infinity"}`, true},
		// Recursion.
		{"schematest.v1.Node", `{"children": [{"byName": {"x": {"parent": {"name": "p"}}}}]}`, true},
		{"schematest.v1.Node", `{"children": [{"byName": {"x": {"parent": {"name": 1}}}}]}`, false},
		{"schematest.v1.Ping", `{"pong": {"ping": {"n": 3, "pong": {}}}}`, true},
		{"schematest.v1.Ping", `{"pong": {"ping": {"n": "three"}}}`, false},
		{"schematest.v1.Dir", `{"entries": {"a": {"entries": {"b": {}}}}}`, true},
		{"schematest.v1.Dir", `{"entries": {"a": {"entries": []}}}`, false},
		// proto2 and editions presence.
		{"schematest.v1.Legacy", `{"id": "x", "inner": {"x": 1}}`, true},
		{"schematest.v1.Legacy", `{"inner": {"x": 1}}`, false},
		{"schematest.v1.Legacy", `{"id": "x", "inner": {}}`, false},
		{"schematest.v1.Legacy", `{"id": "x", "inner": {"x": 1}, "level": 1, "extra": {"note": "n"}}`, true},
		{"schematest.v1.Edition", `{"must": "m"}`, true},
		{"schematest.v1.Edition", `{"implicit": "i"}`, false},
		{"schematest.v1.Edition", `{"must": "m", "kind": "KIND_B", "sub": {"y": 1}}`, true},
	}
	schemas := map[protoreflect.FullName]func(doc []byte) error{}
	for _, tt := range tests {
		validateInput, ok := schemas[tt.msg]
		md := testMessage(t, tt.msg)
		if !ok {
			sch := compile(t, mustBuild(t, md, nil, "input"))
			validateInput = func(doc []byte) error { return validate(sch, doc) }
			schemas[tt.msg] = validateInput
		}
		schemaErr := validateInput([]byte(tt.json))
		if (schemaErr == nil) != tt.ok {
			t.Errorf("%s %s: schema accepted=%v, want %v (%v)", tt.msg, tt.json, schemaErr == nil, tt.ok, schemaErr)
		}
		pjErr := protojson.UnmarshalOptions{Resolver: testTypes}.Unmarshal([]byte(tt.json), dynamicpb.NewMessage(md))
		if (pjErr == nil) != tt.ok {
			t.Errorf("%s %s: protojson accepted=%v, want %v (%v)", tt.msg, tt.json, pjErr == nil, tt.ok, pjErr)
		}
	}
}

// TestWrappedRoot: a non-object message is described as {"value": ...}.
func TestWrappedRoot(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name protoreflect.FullName
		doc  string
		ok   bool
	}{
		{"google.protobuf.Timestamp", `{"value": "2024-01-02T03:04:05Z"}`, true},
		{"google.protobuf.Timestamp", `"2024-01-02T03:04:05Z"`, false},
		{"google.protobuf.Timestamp", `{}`, false},
		{"google.protobuf.Timestamp", `{"value": "2024-01-02T03:04:05Z", "other": 1}`, false},
		{"google.protobuf.Value", `{"value": null}`, true},
		{"google.protobuf.Int64Value", `{"value": "7"}`, true},
	} {
		d, err := testFiles.FindDescriptorByName(c.name)
		if err != nil {
			t.Fatal(err)
		}
		md := d.(protoreflect.MessageDescriptor)
		for _, dir := range []string{"input", "output"} {
			if err := validate(compile(t, mustBuild(t, md, nil, dir)), []byte(c.doc)); (err == nil) != c.ok {
				t.Errorf("%s %s %s: accepted=%v, want %v", c.name, dir, c.doc, err == nil, c.ok)
			}
		}
	}
}
