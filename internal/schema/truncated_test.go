package schema

import (
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"
)

// TestWithTruncated: the list of cuts is added beside the message's own
// properties under a free name, a root that admits any member is left as
// it is, and the result still compiles as a schema.
func TestWithTruncated(t *testing.T) {
	cases := []struct {
		name, in, member string
		merge, same      bool
	}{
		{"properties", `{"type":"object","description":"x","properties":{"a":{"type":"string"}},"additionalProperties":false}`, "truncated", true, false},
		{"no properties", `{"type":"object","additionalProperties":false}`, "truncated", true, false},
		{"own truncated field", `{"type":"object","properties":{"truncated":{"type":"boolean"},"_truncated":{"type":"string"}},"additionalProperties":false}`, "__truncated", true, false},
		{"open root", `{"type":"object","additionalProperties":{"type":"string"}}`, "truncated", false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, member, merge, err := WithTruncated(json.RawMessage(c.in))
			if err != nil || member != c.member || merge != c.merge || (string(out) == c.in) != c.same {
				t.Fatalf("got %s %q %v %v", out, member, merge, err)
			}
			var doc struct {
				Properties map[string]json.RawMessage `json:"properties"`
			}
			if err := json.Unmarshal(out, &doc); err != nil {
				t.Fatal(err)
			}
			if !c.same && !strings.Contains(string(doc.Properties[member]), `"type":"array"`) {
				t.Errorf("no %s property: %s", member, out)
			}
		})
	}
	// A real open root: google.protobuf.Struct.
	s, err := Output(structpb.File_google_protobuf_struct_proto.Messages().ByName("Struct"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if out, _, merge, _ := WithTruncated(s); merge || string(out) != string(s) {
		t.Errorf("Struct: %s merge=%v", out, merge)
	}
}

// TestRootRequired: the members a cut must keep are the root's required
// list, from the schemas Output writes: a wrapped Value's "value", none
// for a Struct.
func TestRootRequired(t *testing.T) {
	value, err := Output((&structpb.Value{}).ProtoReflect().Descriptor(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := RootRequired(value); err != nil || strings.Join(got, ",") != WrapperProperty {
		t.Errorf("Value: %v, %v; want [%s]", got, err, WrapperProperty)
	}
	object, err := Output((&structpb.Struct{}).ProtoReflect().Descriptor(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := RootRequired(object); err != nil || len(got) != 0 {
		t.Errorf("Struct: %v, %v; want none", got, err)
	}
	if _, err := RootRequired(json.RawMessage(`[`)); err == nil || !strings.Contains(err.Error(), "output schema") {
		t.Errorf("invalid schema: %v", err)
	}
}
