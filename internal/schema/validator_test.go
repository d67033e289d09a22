package schema

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/dynamicpb"
)

func mustValidator(t testing.TB, md protoreflect.MessageDescriptor, opts *Options) *Validator {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	o := *opts
	o.Resolver = testTypes
	v, err := NewValidator(md, &o)
	if err != nil {
		t.Fatalf("NewValidator(%s): %v", md.FullName(), err)
	}
	return v
}

// TestDecodeRoundTrip is the property test of the input path: random valid
// messages of every test type, written by protojson (and wrapped as the
// gateway does), decode back unchanged and pass every check.
func TestDecodeRoundTrip(t *testing.T) {
	t.Parallel()
	for _, c := range goldenCases(t) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			v := mustValidator(t, c.md, c.opts)
			mo := protojson.MarshalOptions{Resolver: testTypes, UseProtoNames: c.opts != nil && c.opts.UseProtoNames}
			for seed := range uint64(60) {
				f := &filler{r: rand.New(rand.NewPCG(seed, 9)), unknownEnums: seed%2 == 1}
				m := dynamicpb.NewMessage(c.md)
				f.fill(m, 3)
				b, err := mo.Marshal(m)
				if err != nil {
					t.Fatal(err)
				}
				doc := wrapIfNeeded(c.md, b)
				back := dynamicpb.NewMessage(c.md)
				if err := v.Decode(doc, back); err != nil {
					t.Fatalf("seed %d: Decode of a valid message: %v\n%s", seed, err, doc)
				}
				if !proto.Equal(m, back) { // proto.Equal, unlike cmp, takes NaN as equal to NaN
					t.Fatalf("seed %d: round trip changed the message (-want +got):\n%s", seed, cmp.Diff(m, back, protocmp.Transform()))
				}
			}
		})
	}
}

func shelfValidator(t testing.TB) *Validator {
	return mustValidator(t, testMessage(t, "schematest.v1.Shelf"), nil)
}

// validShelf is the smallest Shelf that passes every rule.
const validShelf = `{"name":"fiction-shelf","keeper":{"name":"Ann"},"room":"A1","tags":["a"]}`

func violations(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error is %T, not *ValidationError: %v", err, err)
	}
	if len(ve.Violations) == 0 {
		t.Fatalf("ValidationError without violations")
	}
	var out []string
	for _, v := range ve.Violations {
		out = append(out, v.String())
	}
	slices.Sort(out)
	return out
}

func TestDecodeViolations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		msg  protoreflect.FullName
		args string
		want []string // sorted Violation.String()s; nil means valid
	}{
		{"valid", "schematest.v1.Shelf", validShelf, nil},
		{"proto names accepted", "schematest.v1.Kitchen", `{"dog_id":"5","str_map":{"a":"b"}}`, nil},
		{"null is unset", "schematest.v1.Shelf",
			`{"name":"fiction-shelf","keeper":{"name":"Ann","age":null},"room":"A1","tags":["a"],"email":null,"item":null,"counts":null}`, nil},
		{"stringified object and array", "schematest.v1.Shelf",
			`{"name":"fiction-shelf","keeper":"{\"name\":\"Ann\"}","room":"A1","tags":"[\"a\",\"b\"]"}`, nil},
		{"stringified map value and Struct", "schematest.v1.WellKnown",
			`{"struct":"{\"a\":1}","list":"[1,2]","valueMap":{"k":"{\"stays\":\"a string\"}"}}`, nil},
		{"field_behavior required", "schematest.v1.Shelf", `{"keeper":{},"room":"A1","tags":["a"]}`,
			[]string{"keeper.name: required", "name: required"}},
		{"required in a list", "schematest.v1.Shelf", `{"name":"fiction-shelf","keeper":{"name":"Ann"},"room":"A1","tags":["a"],"keepers":[{"name":"B"},{"age":20}]}`,
			[]string{"keepers[1].name: required"}},
		{"protovalidate required", "schematest.v1.Shelf", `{"name":"fiction-shelf","room":"A1","tags":["a"]}`,
			[]string{"keeper: value is required"}},
		{"oneof conflict names both", "schematest.v1.Kitchen", `{"cat":"Tom","dogId":"5"}`,
			[]string{`dogId: at most one of the oneof pet may be set, but "cat" and "dogId" are both set`}},
		{"json and proto name both", "schematest.v1.Kitchen", `{"dogId":"5","dog_id":"6"}`,
			[]string{`dogId: set once, but it is also set as "dogId"`}},
		{"several at once", "schematest.v1.Shelf",
			`{"name":"X","theme":"poetry","capacity":0,"serial":"0","weight":"NaN","email":"nope","tags":[],"keeper":{"name":"Ann","age":7},"room":"A1","isbn":"1","title":"t","note":"!hey","colour":1,"genre":"GENRE_UNSPECIFIED","ipv4":5}`,
			[]string{
				`arguments: only one of isbn, title can be set`,
				`colour: no such field; expected one of: name, theme, capacity, serial, weight, email, site, id, host, ipv4, ipv6, tags, counts, keeper, keepers, item, extra, ttl, code, genre, isbn, title, room, floor, note`,
				`email: must be a valid email address, got "nope"`,
				`ipv4: expected a string, got 5`,
				`keeper.age: must be greater than or equal to 18, got 7`,
				`name: does not match regex pattern ` + "`^[a-z][a-z0-9-]*$`" + `, got "X"`,
				`name: must be at least 3 characters, got "X"`,
				`note: must not start with '!', got "!hey"`,
				`tags: must contain at least 1 item(s), got an array of 0 elements`,
				`theme: must be in list [fiction, history, science], got "poetry"`,
				`weight: must be finite, got NaN`,
				`weight: must be greater than or equal to 0 and less than 500, got NaN`,
			}},
		{"type errors with paths", "schematest.v1.Kitchen",
			`{"scalars":{"fInt32":1.5,"fBool":"yes","fBytes":"***"},"nestedList":[{"label":1},{"counts":["x"]}],"int32Map":{"five":{}},"color":"PURPLE","colors":[null]}`,
			[]string{
				`color: expected one of COLOR_UNSPECIFIED, COLOR_RED, COLOR_GREEN (enum schematest.v1.Color), got "PURPLE"`,
				`colors[0]: expected a value (null is not allowed inside a list or map)`,
				`int32Map["five"]: expected a map key that is an integer in the int32 range (a number or a decimal string)`,
				`nestedList[0].label: expected a string, got 1`,
				`nestedList[1].counts[0]: expected an integer in the int64 range (a number or a decimal string), got "x"`,
				`scalars.fBool: expected a boolean, got "yes"`,
				`scalars.fBytes: expected base64-encoded bytes, got "***"`,
				`scalars.fInt32: expected an integer in the int32 range (a number or a decimal string), got 1.5`,
			}},
		{"proto2 required and closed enum", "schematest.v1.Legacy", `{"inner":{},"level":7,"levels":[1,9]}`,
			[]string{
				"id: required",
				"inner.x: required",
				"level: expected one of LEVEL_LOW, LEVEL_HIGH (enum schematest.v1.Level), got 7",
				"levels[1]: expected one of LEVEL_LOW, LEVEL_HIGH (enum schematest.v1.Level), got 9",
			}},
		{"open enum passes unknown numbers", "schematest.v1.Kitchen", `{"color":99,"colors":[-5]}`, nil},
		{"editions legacy required", "schematest.v1.Edition", `{"implicit":"i"}`, []string{"must: required"}},
		{"well-known forms", "schematest.v1.WellKnown",
			`{"ts":"yesterday","dur":"90m","mask":"foo_bar","any":{"@type":"type.googleapis.com/schematest.v1.Leaf","text":5},"int64Value":{"value":"5"}}`,
			[]string{
				`any.text: expected a string, got 5`,
				`dur: expected a duration string in seconds such as "3.5s", got "90m"`,
				`int64Value: expected an integer (int64), got an object`,
				`mask: expected a field mask string of comma-separated camelCase paths such as "name,displayName", got "foo_bar"`,
				`ts: expected an RFC 3339 timestamp string such as "2026-01-02T15:04:05Z", got "yesterday"`,
			}},
		{"any of an unknown type", "schematest.v1.WellKnown", `{"any":{"@type":"type.googleapis.com/no.Such"}}`,
			[]string{`any.@type: expected the type URL of a message the backend defines, got "type.googleapis.com/no.Such"`}},
		{"any without @type", "schematest.v1.WellKnown", `{"any":{"text":"x"}}`,
			[]string{`any.@type: required: the type URL, such as "type.googleapis.com/package.Message"`}},
		{"not json", "schematest.v1.Kitchen", `{"a":`, []string{"arguments: a JSON object (unexpected EOF)"}},
		{"not an object", "schematest.v1.Kitchen", `[1]`, []string{"arguments: expected an object (schematest.v1.Kitchen), got an array of 1 elements"}},
		{"received is truncated", "schematest.v1.Scalars", `{"fInt32":"` + strings.Repeat("9", 100) + `"}`,
			[]string{`fInt32: expected an integer in the int32 range (a number or a decimal string), got "` + strings.Repeat("9", 63) + `...`}},
		// Wrapped roots: {"value": ...}.
		{"wrapper", "google.protobuf.Timestamp", `{"value":"2024-01-02T03:04:05Z"}`, nil},
		{"wrapper null is unset", "google.protobuf.Int64Value", `{"value":null}`, nil},
		{"wrapper missing", "google.protobuf.Timestamp", `{}`, []string{"value: required"}},
		{"wrapper extra member", "google.protobuf.Timestamp", `{"value":"2024-01-02T03:04:05Z","x":1}`,
			[]string{`x: no such field (the only member is "value")`}},
		{"wrapper bad value", "google.protobuf.Duration", `{"value":3}`,
			[]string{`value: expected a duration string in seconds such as "3.5s", got 3`}},
		{"wrapper stringified list", "google.protobuf.ListValue", `{"value":"[1,2]"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			md := testMessage(t, tt.msg)
			v := mustValidator(t, md, nil)
			m := dynamicpb.NewMessage(md)
			got := violations(t, v.Decode([]byte(tt.args), m))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecodeRepairsStringified: what a repaired call converts to is what the
// model meant.
func TestDecodeRepairsStringified(t *testing.T) {
	t.Parallel()
	v := shelfValidator(t)
	md := testMessage(t, "schematest.v1.Shelf")
	want, got := dynamicpb.NewMessage(md), dynamicpb.NewMessage(md)
	if err := v.Decode([]byte(validShelf), want); err != nil {
		t.Fatal(err)
	}
	if err := v.Decode([]byte(`{"name":"fiction-shelf","keeper":"{\"name\":\"Ann\"}","room":"A1","tags":"[\"a\"]"}`), got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestOptionsFromGeneratedAndReflected: the schema and the checks are the
// same whether the options arrive as generated extensions or as unknown
// fields (server reflection).
func TestOptionsFromGeneratedAndReflected(t *testing.T) {
	t.Parallel()
	files := &protoregistry.Files{}
	testFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if fd.Path() != "schematest/v1/rules.proto" {
			_ = files.RegisterFile(fd)
		}
		return true
	})
	fd, err := protodesc.NewFile(rulesFile(), files)
	if err != nil {
		t.Fatal(err)
	}
	typed := fd.Messages().ByName("Shelf")
	reflected := testMessage(t, "schematest.v1.Shelf")
	for _, dir := range []string{"input", "output"} {
		a, b := mustBuild(t, typed, nil, dir), mustBuild(t, reflected, nil, dir)
		if diff := cmp.Diff(string(b), string(a)); diff != "" {
			t.Errorf("%s schema differs (-reflected +generated):\n%s", dir, diff)
		}
	}
	v := mustValidator(t, typed, nil)
	got := violations(t, v.Decode([]byte(`{"keeper":{},"room":"A1","tags":["a"]}`), dynamicpb.NewMessage(typed)))
	if want := []string{"keeper.name: required", "name: required"}; !slices.Equal(got, want) {
		t.Errorf("violations = %q, want %q", got, want)
	}
}

func TestNoRulesNoChecks(t *testing.T) {
	t.Parallel()
	for _, name := range []protoreflect.FullName{"schematest.v1.Kitchen", "schematest.v1.WellKnown", "schematest.v1.Node"} {
		v := mustValidator(t, testMessage(t, name), nil)
		if v.pv != nil || v.root != nil {
			t.Errorf("%s: Validator has checks (protovalidate %v, plan %v), want none", name, v.pv != nil, v.root != nil)
		}
	}
	if v := shelfValidator(t); v.pv == nil || v.root == nil {
		t.Error("Shelf: Validator lacks its checks")
	}
}

func TestValidationErrorCapsItsText(t *testing.T) {
	t.Parallel()
	e := &ValidationError{}
	for range MaxExplained + 5 {
		e.Violations = append(e.Violations, Violation{Path: "a", Expected: "required"})
	}
	if !strings.HasSuffix(e.Error(), "; and 5 more") {
		t.Errorf("Error() = %q", e.Error())
	}
}

// Decode of a small valid message costs about one protojson.Unmarshal: the
// Validator adds nothing for a type without rules, and the rule checks for
// one with them.
func BenchmarkDecode(b *testing.B) {
	benchDecode(b, "", testMessage(b, "schematest.v1.Keeper"), []byte(`{"name":"Ann","age":30}`))
	benchDecode(b, "no-rules/", testMessage(b, "schematest.v1.Leaf"), []byte(`{"text":"hello"}`))
}

// benchDecode runs prefix+"protojson.Unmarshal" and
// prefix+"Validator.Decode" of args into md: what the validator costs
// over protojson alone.
func benchDecode(b *testing.B, prefix string, md protoreflect.MessageDescriptor, args []byte) {
	b.Run(prefix+"protojson.Unmarshal", func(b *testing.B) {
		uo := protojson.UnmarshalOptions{Resolver: testTypes}
		b.ReportAllocs()
		for b.Loop() {
			if err := uo.Unmarshal(args, dynamicpb.NewMessage(md)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(prefix+"Validator.Decode", func(b *testing.B) {
		v := mustValidator(b, md, nil)
		b.ReportAllocs()
		for b.Loop() {
			if err := v.Decode(args, dynamicpb.NewMessage(md)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestMayRequire pins which types keep protojson's required-field check:
// those that can lack a proto2 required field, directly, through a message
// they hold, or through an extension.
func TestMayRequire(t *testing.T) {
	for name, want := range map[protoreflect.FullName]bool{
		"schematest.v1.Legacy":       true,  // required fields, extension ranges
		"schematest.v1.Legacy.Inner": true,  // required x
		"schematest.v1.Legacy.Extra": false, // proto2, nothing required
		"schematest.v1.Kitchen":      false,
		"schematest.v1.Node":         false, // recursive
	} {
		if got := mayRequire(testMessage(t, name), map[protoreflect.FullName]bool{}); got != want {
			t.Errorf("mayRequire(%s) = %v, want %v", name, got, want)
		}
	}
	// Without the check, a missing required field is still reported.
	v, err := NewValidator(testMessage(t, "schematest.v1.Legacy.Inner"), nil)
	if err != nil {
		t.Fatal(err)
	}
	msg := dynamicpb.NewMessage(testMessage(t, "schematest.v1.Legacy.Inner"))
	if err := v.Decode([]byte(`{}`), msg); err == nil || !strings.Contains(err.Error(), "x: required") {
		t.Errorf("Decode({}) of Inner: %v, want x: required", err)
	}
}
