package schema

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	"google.golang.org/protobuf/types/pluginpb"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current output")

// goldenCase is one message whose schemas are pinned in testdata/golden.
type goldenCase struct {
	name string // golden file stem
	md   protoreflect.MessageDescriptor
	opts *Options
}

func goldenCases(t testing.TB) []goldenCase {
	var cs []goldenCase
	for _, n := range []protoreflect.FullName{
		"schematest.v1.Scalars", "schematest.v1.Kitchen", "schematest.v1.WellKnown",
		"schematest.v1.Node", "schematest.v1.Ping", "schematest.v1.Dir", "schematest.v1.Registry",
		"schematest.v1.Legacy", "schematest.v1.Edition",
		"schematest.v1.Shelf", "schematest.v1.Keeper", "schematest.v1.Book",
	} {
		cs = append(cs, goldenCase{name: string(n), md: testMessage(t, n)})
	}
	cs = append(cs,
		goldenCase{name: "schematest.v1.Kitchen.proto_names", md: testMessage(t, "schematest.v1.Kitchen"), opts: &Options{UseProtoNames: true}},
		goldenCase{name: "schematest.v1.Legacy.proto_names", md: testMessage(t, "schematest.v1.Legacy"), opts: &Options{UseProtoNames: true}},
		goldenCase{name: "schematest.v1.Shelf.resolver", md: testMessage(t, "schematest.v1.Shelf"), opts: &Options{Resolver: testTypes}},
	)
	for _, md := range []protoreflect.MessageDescriptor{
		(&structpb.Struct{}).ProtoReflect().Descriptor(),
		(&structpb.Value{}).ProtoReflect().Descriptor(),
		(&structpb.ListValue{}).ProtoReflect().Descriptor(),
		(&timestamppb.Timestamp{}).ProtoReflect().Descriptor(),
		(&durationpb.Duration{}).ProtoReflect().Descriptor(),
		(&fieldmaskpb.FieldMask{}).ProtoReflect().Descriptor(),
		(&anypb.Any{}).ProtoReflect().Descriptor(),
		(&emptypb.Empty{}).ProtoReflect().Descriptor(),
		(&wrapperspb.Int64Value{}).ProtoReflect().Descriptor(),
		(&wrapperspb.FloatValue{}).ProtoReflect().Descriptor(),
		(&descriptorpb.FileDescriptorProto{}).ProtoReflect().Descriptor(),
		(&pluginpb.CodeGeneratorRequest{}).ProtoReflect().Descriptor(),
	} {
		cs = append(cs, goldenCase{name: string(md.FullName()), md: md})
	}
	return cs
}

func indent(t testing.TB, raw json.RawMessage) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		t.Fatalf("schema is not valid JSON: %v\n%s", err, raw)
	}
	buf.WriteByte('\n')
	return buf.Bytes()
}

// TestGolden pins every test message's schemas, which are reviewed by hand
// when they change (go test ./internal/schema -run TestGolden -update).
func TestGolden(t *testing.T) {
	t.Parallel()
	for _, c := range goldenCases(t) {
		for _, dir := range []string{"input", "output"} {
			t.Run(c.name+"."+dir, func(t *testing.T) {
				t.Parallel()
				got := indent(t, mustBuild(t, c.md, c.opts, dir))
				path := filepath.Join("testdata", "golden", c.name+"."+dir+".json")
				if *update {
					if err := os.WriteFile(path, got, 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run with -update to create it)", err)
				}
				if diff := cmp.Diff(string(want), string(got)); diff != "" {
					t.Errorf("%s differs from the golden file (-want +got):\n%s", path, diff)
				}
			})
		}
	}
}

func mustBuild(t testing.TB, md protoreflect.MessageDescriptor, opts *Options, dir string) json.RawMessage {
	t.Helper()
	f := Input
	if dir == "output" {
		f = Output
	}
	s, err := f(md, opts)
	if err != nil {
		t.Fatalf("%s(%s): %v", dir, md.FullName(), err)
	}
	return s
}

// compile compiles s as a draft 2020-12 schema with format and content
// assertions on, so "date-time" and "base64" are checked, not just noted.
func compile(t testing.TB, s json.RawMessage) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(s))
	if err != nil {
		t.Fatalf("unmarshal schema: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.AssertContent()
	if err := c.AddResource("mem:///schema.json", doc); err != nil {
		t.Fatalf("add schema: %v", err)
	}
	sch, err := c.Compile("mem:///schema.json")
	if err != nil {
		t.Fatalf("compile schema: %v\n%s", err, s)
	}
	return sch
}

func validate(sch *jsonschema.Schema, doc []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("instance is not JSON: %w", err)
	}
	return sch.Validate(inst)
}

// TestSchemasCompileAndLint: every schema is valid 2020-12, is an object at
// the root without combinators, and passes our own LLM-API lint.
func TestSchemasCompileAndLint(t *testing.T) {
	t.Parallel()
	for _, c := range goldenCases(t) {
		for _, dir := range []string{"input", "output"} {
			s := mustBuild(t, c.md, c.opts, dir)
			compile(t, s)
			if problems := Lint(s); len(problems) > 0 {
				t.Errorf("%s %s: lint:\n%s", c.name, dir, strings.Join(problems, "\n"))
			}
			var root map[string]any
			if err := json.Unmarshal(s, &root); err != nil {
				t.Fatal(err)
			}
			if _, ok := root["$schema"]; ok {
				t.Errorf("%s %s: root carries $schema", c.name, dir)
			}
		}
	}
}

// TestDeterministic: the bytes do not depend on map iteration or on which
// schema was built first.
func TestDeterministic(t *testing.T) {
	t.Parallel()
	for _, c := range goldenCases(t) {
		first := mustBuild(t, c.md, c.opts, "output")
		for range 5 {
			if again := mustBuild(t, c.md, c.opts, "output"); !bytes.Equal(first, again) {
				t.Fatalf("%s: schema bytes differ between runs", c.name)
			}
		}
	}
}

// TestDefs: $defs holds exactly the recursive messages and the messages the
// schema would otherwise write more than once; everything else is inlined.
func TestDefs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		md   protoreflect.MessageDescriptor
		want []string
	}{
		{testMessage(t, "schematest.v1.Scalars"), nil},
		// Nested and Scalars each appear in two fields.
		{testMessage(t, "schematest.v1.Kitchen"), []string{"schematest.v1.Kitchen.Nested", "schematest.v1.Scalars"}},
		{testMessage(t, "schematest.v1.WellKnown"), nil}, // Struct/Value are finite in JSON
		{(&structpb.Struct{}).ProtoReflect().Descriptor(), nil},
		{(&structpb.Value{}).ProtoReflect().Descriptor(), nil},
		// A recursive root is written inline and in $defs, so Leaf, used
		// once by Node, is written twice.
		{testMessage(t, "schematest.v1.Node"), []string{"schematest.v1.Leaf", "schematest.v1.Node"}},
		{testMessage(t, "schematest.v1.Ping"), []string{"schematest.v1.Ping", "schematest.v1.Pong"}},
		{testMessage(t, "schematest.v1.Dir"), []string{"schematest.v1.Dir"}},
		{testMessage(t, "schematest.v1.Registry"), []string{"schematest.v1.Dir", "schematest.v1.Leaf", "schematest.v1.Node", "schematest.v1.Ping", "schematest.v1.Pong"}},
		{(&descriptorpb.FileDescriptorProto{}).ProtoReflect().Descriptor(), []string{
			"google.protobuf.DescriptorProto", "google.protobuf.EnumDescriptorProto", "google.protobuf.FeatureSet",
			"google.protobuf.FieldDescriptorProto", "google.protobuf.FieldOptions.FeatureSupport", "google.protobuf.UninterpretedOption",
		}},
	}
	for _, tt := range tests {
		for _, dir := range []string{"input", "output"} {
			var root struct {
				Defs map[string]json.RawMessage `json:"$defs"`
			}
			if err := json.Unmarshal(mustBuild(t, tt.md, nil, dir), &root); err != nil {
				t.Fatal(err)
			}
			var got []string
			for k := range root.Defs {
				got = append(got, k)
			}
			if diff := cmp.Diff(tt.want, got, cmpSorted); diff != "" {
				t.Errorf("%s %s $defs (-want +got):\n%s", tt.md.FullName(), dir, diff)
			}
		}
	}
}

var cmpSorted = cmp.Transformer("sort", func(in []string) []string {
	out := append([]string(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
})

func TestIsObject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		md   protoreflect.MessageDescriptor
		want bool
	}{
		{(&timestamppb.Timestamp{}).ProtoReflect().Descriptor(), false},
		{(&durationpb.Duration{}).ProtoReflect().Descriptor(), false},
		{(&fieldmaskpb.FieldMask{}).ProtoReflect().Descriptor(), false},
		{(&structpb.Value{}).ProtoReflect().Descriptor(), false},
		{(&structpb.ListValue{}).ProtoReflect().Descriptor(), false},
		{(&wrapperspb.BoolValue{}).ProtoReflect().Descriptor(), false},
		{(&wrapperspb.BytesValue{}).ProtoReflect().Descriptor(), false},
		{(&structpb.Struct{}).ProtoReflect().Descriptor(), true},
		{(&anypb.Any{}).ProtoReflect().Descriptor(), true},
		{(&emptypb.Empty{}).ProtoReflect().Descriptor(), true},
		{testMessage(t, "schematest.v1.Kitchen"), true},
		// A user message named like a well-known type is an ordinary message.
		{testMessage(t, "schematest.v1.Leaf"), true},
	}
	for _, tt := range tests {
		if got := IsObject(tt.md); got != tt.want {
			t.Errorf("IsObject(%s) = %v, want %v", tt.md.FullName(), got, tt.want)
		}
	}
}

func TestNilDescriptor(t *testing.T) {
	t.Parallel()
	if _, err := Input(nil, nil); err == nil {
		t.Error("Input(nil) returned no error")
	}
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
