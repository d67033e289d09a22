package schema

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
)

func TestLint(t *testing.T) {
	t.Parallel()
	deep := `{"type":"object"}`
	for range LintMaxDepth + 1 {
		deep = `{"type":"object","properties":{"a":` + deep + `}}`
	}
	tests := []struct {
		name   string
		schema string
		want   []string // substrings, one per expected problem, in order
	}{
		{"clean", `{"type":"object","properties":{"a.b-c_D9":{"type":"string"}},"$defs":{"x.Y":{"type":"object"}},"additionalProperties":{"$ref":"#/$defs/x.Y"}}`, nil},
		{"not json", `{`, []string{"(root): not valid JSON"}},
		{"root array", `[]`, []string{"(root): schema is not a JSON object"}},
		{"root type missing", `{"properties":{}}`, []string{`(root): root "type" must be "object", got nothing`}},
		{"root type array", `{"type":["object","null"]}`, []string{`root "type" must be "object", got ["object","null"]`}},
		{"root anyOf", `{"type":"object","anyOf":[{"type":"object"}],"oneOf":[],"allOf":[]}`,
			[]string{"/allOf: root allOf", "/anyOf: root anyOf", "/oneOf: root oneOf"}},
		{"nested anyOf is fine", `{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`, nil},
		{"dangling ref", `{"type":"object","properties":{"a":{"$ref":"#/$defs/Missing"}}}`,
			[]string{`/properties/a/$ref: $ref "#/$defs/Missing" names no entry`}},
		{"foreign ref", `{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`,
			[]string{`is not of the form #/$defs/<name>`}},
		{"definitions ref", `{"type":"object","definitions":{"A":{}},"properties":{"a":{"$ref":"#/definitions/A"}}}`,
			[]string{`is not of the form`}},
		{"ref inside defs", `{"type":"object","$defs":{"A":{"type":"object","properties":{"b":{"$ref":"#/$defs/B"}}}}}`,
			[]string{`/$defs/A/properties/b/$ref: $ref "#/$defs/B" names no entry`}},
		{"bad defs key", `{"type":"object","$defs":{"a b":{}}}`, []string{`/$defs/a b: $defs key "a b"`}},
		{"bad property names", `{"type":"object","properties":{"@type":{},"x":{"type":"object","properties":{"` + strings.Repeat("n", 65) + `":{}}}}}`,
			[]string{`/properties/@type: property name "@type"`, `/properties/x/properties/nnnn`}},
		{"pattern and map keys are not property names", `{"type":"object","patternProperties":{"^\\[.*\\]$":{}},"additionalProperties":{"type":"string"}}`, nil},
		{"too deep", deep, []string{"schema nested deeper than 32 levels"}},
	}
	for _, tt := range tests {
		got := Lint(json.RawMessage(tt.schema))
		if len(got) != len(tt.want) {
			t.Errorf("%s: Lint = %q, want %d problems like %q", tt.name, got, len(tt.want), tt.want)
			continue
		}
		for i := range got {
			if !strings.Contains(got[i], tt.want[i]) {
				t.Errorf("%s: problem %d = %q, want it to contain %q", tt.name, i, got[i], tt.want[i])
			}
		}
	}
}

// TestLintFlagsBadJSONName: a json_name LLM APIs reject is built as is and
// surfaces in Lint, so the gateway decides what to do with the tool.
func TestLintFlagsBadJSONName(t *testing.T) {
	t.Parallel()
	f := field("odd", 1, tString)
	f.JsonName = proto.String("not ok")
	fd, err := protodesc.NewFile(&descriptorpb.FileDescriptorProto{
		Name:        proto.String("odd.proto"),
		Package:     proto.String("odd"),
		Syntax:      proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{msg("Odd", f)},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Input(fd.Messages().Get(0), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`/properties/not ok: property name "not ok" does not match ^[a-zA-Z0-9_.-]{1,64}$`}
	if diff := cmp.Diff(want, Lint(s)); diff != "" {
		t.Error(diff)
	}
	if s, _ := Input(fd.Messages().Get(0), &Options{UseProtoNames: true}); len(Lint(s)) != 0 {
		t.Errorf("proto names: Lint = %q", Lint(s))
	}
}
