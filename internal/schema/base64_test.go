package schema

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// TestBytesDescription: every bytes value of an input schema (a field,
// list items, map values, a BytesValue) says it is base64 of the raw
// bytes, with an example that is right; output schemas keep the
// annotation alone.
func TestBytesDescription(t *testing.T) {
	t.Parallel()
	example := regexp.MustCompile(`the text (\S+) is "([^"]+)"`).FindStringSubmatch(BytesDescription)
	if example == nil {
		t.Fatalf("BytesDescription has no example: %q", BytesDescription)
	}
	if got := base64.StdEncoding.EncodeToString([]byte(example[1])); got != example[2] {
		t.Errorf("the example says %s is %q; it is %q", example[1], example[2], got)
	}
	for _, tt := range []struct {
		msg  protoreflect.FullName
		path []string
	}{
		{"schematest.v1.Scalars", []string{"properties", "fBytes"}},
		{"schematest.v1.Kitchen", []string{"properties", "blobs", "items"}},
		{"schematest.v1.Kitchen", []string{"properties", "uint32Map", "additionalProperties"}},
		{"schematest.v1.WellKnown", []string{"properties", "bytesValue"}},
	} {
		md := testMessage(t, tt.msg)
		in, err := Input(md, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := dig(t, in, tt.path); n["contentEncoding"] != "base64" || n["description"] != BytesDescription {
			t.Errorf("%s input %v: %v", tt.msg, tt.path, n)
		}
		out, err := Output(md, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := dig(t, out, tt.path); n["contentEncoding"] != "base64" || n["description"] != nil {
			t.Errorf("%s output %v: %v", tt.msg, tt.path, n)
		}
	}
}

// dig returns the object at path in a schema.
func dig(t *testing.T, schema json.RawMessage, path []string) map[string]any {
	t.Helper()
	var n any
	if err := json.Unmarshal(schema, &n); err != nil {
		t.Fatal(err)
	}
	for _, p := range path {
		m, ok := n.(map[string]any)
		if !ok {
			t.Fatalf("no %v in %s", path, schema)
		}
		n = m[p]
	}
	m, _ := n.(map[string]any)
	return m
}

// TestDecodeBytesForms: bytes values are taken in the canonical forms
// only (padded, one alphabet, no line breaks), wherever they are: a
// field, a list, a map, a BytesValue, inside an Any, in a stringified
// message, at the root. Each refused value is one protojson takes, so the
// refusal is the gateway's own; the answer names the value to send.
func TestDecodeBytesForms(t *testing.T) {
	t.Parallel()
	const padRule = `expected base64 padded with "=" to a multiple of 4 characters`
	const aqi = padRule + `: "AQI=", got "AQI"`
	tests := []struct {
		name, msg, args string
		want            []string // violations; nil: accepted
	}{
		{"standard padded", "schematest.v1.Scalars", `{"fBytes":"AQI="}`, nil},
		{"standard, two pads", "schematest.v1.Scalars", `{"fBytes":"AQ=="}`, nil},
		{"standard alphabet", "schematest.v1.Scalars", `{"fBytes":"+/+/"}`, nil},
		{"URL-safe alphabet", "schematest.v1.Scalars", `{"fBytes":"-_-_"}`, nil},
		{"no padding needed", "schematest.v1.Scalars", `{"fBytes":"YmluYXJ5L3BsYWlu"}`, nil},
		{"empty", "schematest.v1.Scalars", `{"fBytes":""}`, nil},
		{"escaped padding", "schematest.v1.Scalars", `{"fBytes":"AQI\u003d"}`, nil},
		{"unpadded", "schematest.v1.Scalars", `{"fBytes":"AQID/w"}`,
			[]string{`fBytes: ` + padRule + `: "AQID/w==", got "AQID/w"`}},
		{"unpadded URL-safe", "schematest.v1.Scalars", `{"fBytes":"Ab-_Qw"}`,
			[]string{`fBytes: ` + padRule + `: "Ab-_Qw==", got "Ab-_Qw"`}},
		{"unpadded, one case", "schematest.v1.Scalars", `{"fBytes":"AQI"}`,
			[]string{`fBytes: ` + aqi}},
		{"a word", "schematest.v1.Scalars", `{"fBytes":"json/plain"}`,
			[]string{`fBytes: ` + padRule + `; the base64 of the text "json/plain" is "anNvbi9wbGFpbg=="; if it is base64 already, pad it: "json/plain==", got "json/plain"`}},
		{"line breaks", "schematest.v1.Scalars", `{"fBytes":"AQID\nAQID"}`,
			[]string{`fBytes: ` + padRule + `, with no line breaks, got "AQID\nAQID"`}},
		{"in a list", "schematest.v1.Kitchen", `{"blobs":["AQI=","gzip/x"]}`,
			[]string{`blobs[1]: ` + padRule + `; the base64 of the text "gzip/x" is "Z3ppcC94"; if it is base64 already, pad it: "gzip/x==", got "gzip/x"`}},
		{"in a map", "schematest.v1.Kitchen", `{"uint32Map":{"7":"AQI"}}`,
			[]string{`uint32Map["7"]: ` + aqi}},
		{"nested", "schematest.v1.Kitchen", `{"scalars":{"fBytes":"AQI"}}`,
			[]string{`scalars.fBytes: ` + aqi}},
		{"stringified", "schematest.v1.Kitchen", `{"scalars":"{\"fBytes\":\"AQI\"}"}`,
			[]string{`scalars.fBytes: ` + aqi}},
		{"BytesValue", "schematest.v1.WellKnown", `{"bytesValue":"AQI"}`,
			[]string{`bytesValue: ` + aqi}},
		{"BytesValue in an Any", "schematest.v1.WellKnown", `{"any":{"@type":"type.googleapis.com/google.protobuf.BytesValue","value":"AQI"}}`,
			[]string{`any.value: ` + aqi}},
		{"message in an Any", "schematest.v1.WellKnown", `{"anys":[{"@type":"type.googleapis.com/schematest.v1.Scalars","fBytes":"AQI"}]}`,
			[]string{`anys[0].fBytes: ` + aqi}},
		{"root BytesValue", "google.protobuf.BytesValue", `{"value":"AQI"}`,
			[]string{`value: ` + aqi}},
		{"recursive type", "google.protobuf.FileDescriptorProto",
			`{"messageType":[{"nestedType":[{"options":{"uninterpretedOption":[{"stringValue":"AQI"}]}}]}]}`,
			[]string{`messageType[0].nestedType[0].options.uninterpretedOption[0].stringValue: ` + aqi}},
		{"with another violation", "schematest.v1.Kitchen", `{"blobs":["AQI"],"scalars":{"fInt32":"x"}}`,
			[]string{`blobs[0]: ` + aqi,
				`scalars.fInt32: expected an integer in the int32 range (a number or a decimal string), got "x"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			md := testMessage(t, protoreflect.FullName(tt.msg))
			v := mustValidator(t, md, nil)
			got := violations(t, v.Decode([]byte(tt.args), dynamicpb.NewMessage(md)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
			if tt.want == nil || strings.Contains(tt.name, "another") || tt.name == "stringified" {
				return
			}
			// What is refused here, protojson takes: the check is the
			// gateway's.
			raw := []byte(tt.args)
			if v.wrap {
				raw, _ = unwrapFast(raw)
			}
			if err := (protojson.UnmarshalOptions{Resolver: testTypes}).Unmarshal(raw, dynamicpb.NewMessage(md)); err != nil {
				t.Errorf("protojson refuses %s too: %v", tt.args, err)
			}
		})
	}
}

// TestDecodeWarnsLiteral: a canonical value that looks like a word and
// whose bytes are not text is taken, with a warning naming its path and
// the base64 of the text; real base64 (of text or of binary data) draws
// none, and neither does a word-like value whose bytes are text.
func TestDecodeWarnsLiteral(t *testing.T) {
	t.Parallel()
	const read = ` was read as base64 and sent as 3 bytes that are not text; if you meant the text, the base64 of the text `
	tests := []struct {
		name, msg, args string
		want            []string
	}{
		{"words", "schematest.v1.Kitchen",
			`{"scalars":{"fBytes":"json"},"blobs":["gzip","anNvbi9wbGFpbg==","AAECAwQFBgcICQoLDA0ODw==","YmluYXJ5L3BsYWlu","a0c0"],"uint32Map":{"1":"binary/plain"}}`,
			[]string{
				`scalars.fBytes: "json"` + read + `"json" is "anNvbg=="`,
				`blobs[0]: "gzip"` + read + `"gzip" is "Z3ppcA=="`,
				`uint32Map["1"]: "binary/plain" was read as base64 and sent as 9 bytes that are not text; if you meant the text, the base64 of the text "binary/plain" is "YmluYXJ5L3BsYWlu"`,
			}},
		{"digits and a separator", "schematest.v1.Kitchen", `{"blobs":["utf8","v1/plain"]}`,
			[]string{`blobs[0]: "utf8"` + read + `"utf8" is "dXRmOA=="`,
				`blobs[1]: "v1/plain" was read as base64 and sent as 6 bytes that are not text; if you meant the text, the base64 of the text "v1/plain" is "djEvcGxhaW4="`}},
		// Upper case is base64 of small byte values as often as it is a
		// word: "AQID" is 1, 2, 3.
		{"upper case and digits", "schematest.v1.Kitchen", `{"blobs":["NONE","1234","AQID"]}`, nil},
		{"proto names", "schematest.v1.Kitchen", `{"uint32_map":{"2":"true"}}`,
			[]string{`uint32Map["2"]: "true"` + read + `"true" is "dHJ1ZQ=="`}},
		{"BytesValue and Any", "schematest.v1.WellKnown",
			`{"bytesValue":"test","any":{"@type":"type.googleapis.com/google.protobuf.BytesValue","value":"json"},"anys":[{"@type":"type.googleapis.com/schematest.v1.Scalars","fBytes":"gzip"}]}`,
			[]string{`bytesValue: "test"` + read + `"test" is "dGVzdA=="`, `any.value: "json"` + read + `"json" is "anNvbg=="`, `anys[0].fBytes: "gzip"` + read + `"gzip" is "Z3ppcA=="`}},
		{"root BytesValue", "google.protobuf.BytesValue", `{"value":"json"}`,
			[]string{`value: "json"` + read + `"json" is "anNvbg=="`}},
		{"repaired arguments", "schematest.v1.Kitchen", `{"scalars":"{\"fBytes\":\"json\"}","strMap":null}`,
			[]string{`scalars.fBytes: "json"` + read + `"json" is "anNvbg=="`}},
		{"real base64 of text", "schematest.v1.Scalars", `{"fBytes":"anNvbi9wbGFpbg=="}`, nil},
		{"no warnings with an error", "schematest.v1.Kitchen", `{"blobs":["json"],"scalars":{"fInt32":"x"}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			md := testMessage(t, protoreflect.FullName(tt.msg))
			v := mustValidator(t, md, nil)
			ws, err := v.DecodeWarn([]byte(tt.args), dynamicpb.NewMessage(md))
			if err != nil && !strings.Contains(tt.name, "error") {
				t.Fatal(err)
			}
			var got []string
			for _, w := range ws.List {
				got = append(got, w.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWarningsBounded: a flood of word-like values costs a count past
// MaxWarnings, not a message each.
func TestWarningsBounded(t *testing.T) {
	t.Parallel()
	md := testMessage(t, "schematest.v1.Kitchen")
	v := mustValidator(t, md, nil)
	const n = 100_000
	args := []byte(`{"blobs":[` + strings.TrimSuffix(strings.Repeat(`"json",`, n), ",") + `]}`)
	ws, err := v.DecodeWarn(args, dynamicpb.NewMessage(md))
	if err != nil {
		t.Fatal(err)
	}
	if len(ws.List) != MaxWarnings || ws.Omitted != n-MaxWarnings || ws.Len() != n {
		t.Errorf("%d warnings, %d omitted", len(ws.List), ws.Omitted)
	}
	if s := ws.String(); !strings.HasSuffix(s, fmt.Sprintf("\nand %d more values like these", n-MaxWarnings)) || strings.Count(s, "\n") != MaxWarnings {
		t.Errorf("String() = ...%s", s[max(0, len(s)-200):])
	}
}

// TestBytesPlanAtDiscovery: which types can hold bytes is decided when
// the Validator is built; a type that cannot has no plan, so its calls
// skip the check entirely, recursive types included.
func TestBytesPlanAtDiscovery(t *testing.T) {
	t.Parallel()
	for name, want := range map[protoreflect.FullName]bool{
		"schematest.v1.Leaf":                  false,
		"schematest.v1.Node":                  false, // recursive, no bytes
		"schematest.v1.Dir":                   false,
		"google.protobuf.Timestamp":           false,
		"schematest.v1.Scalars":               true,
		"schematest.v1.Kitchen":               true, // through scalars, a list and a map
		"schematest.v1.WellKnown":             true, // a BytesValue, an Any
		"google.protobuf.FileDescriptorProto": true, // deep in recursive options
	} {
		v := mustValidator(t, testMessage(t, name), nil)
		if got := v.bytes != nil; got != want {
			t.Errorf("%s: plan %v, want %v", name, got, want)
		}
	}
}

// FuzzBytesValue: any string as a bytes value, in a list and a map,
// never panics; a value taken is canonical and converts to the bytes it
// spells; a value refused is refused at its path, whatever protojson
// would do with it.
func FuzzBytesValue(f *testing.F) {
	for _, s := range []string{"AQI=", "AQI", "json", "json/plain", "-_8=", "+-AA", "AQID\nAQID", "", "====", "A===", "\u00e9t\u00e9", "a0c0"} {
		f.Add(s)
	}
	md := testMessage(f, "schematest.v1.Kitchen")
	v := mustValidator(f, md, nil)
	blobs := md.Fields().ByName("blobs")
	f.Fuzz(func(t *testing.T, s string) {
		q, err := json.Marshal(s)
		if err != nil {
			return
		}
		args := []byte(`{"blobs":[` + string(q) + `],"uint32Map":{"3":` + string(q) + `}}`)
		m := dynamicpb.NewMessage(md)
		ws, err := v.DecodeWarn(args, m)
		if err != nil {
			got := violations(t, err)
			if len(got) != 2 || !strings.HasPrefix(got[0], "blobs[0]: expected ") || !strings.HasPrefix(got[1], `uint32Map["3"]: expected `) {
				t.Fatalf("%q refused as %q", s, got)
			}
			return
		}
		if classify([]byte(s)) != canonical {
			t.Fatalf("%q taken, but it is not canonical", s)
		}
		want, err := encodingOf([]byte(s)).DecodeString(s)
		if err != nil {
			t.Fatalf("%q taken, but it does not decode: %v", s, err)
		}
		if got := m.Get(blobs).List().Get(0).Bytes(); !bytes.Equal(got, want) {
			t.Fatalf("%q converted to %x, want %x", s, got, want)
		}
		if n := ws.Len(); n != 0 && n != 2 {
			t.Fatalf("%q: %d warnings, want one per place or none", s, n)
		}
	})
}

// BenchmarkDecodeBytes is Decode of arguments with bytes values (a list,
// a nested field and a map value), next to protojson alone: what checking
// their base64 costs on the fast path.
func BenchmarkDecodeBytes(b *testing.B) {
	benchDecode(b, "", testMessage(b, "schematest.v1.Kitchen"),
		[]byte(`{"blobs":["AQI=","anNvbi9wbGFpbg=="],"scalars":{"fBytes":"AQID","fString":"x"},"uint32Map":{"1":"AA=="},"strMap":{"a":"b"}}`))
}
