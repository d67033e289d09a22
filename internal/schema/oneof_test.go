package schema

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
)

// TestLargeOneofListedOnce: a oneof of more than maxListedAlternatives+1
// members is listed once, in the message's description, and each member's
// note only counts the others, so the schema grows linearly with the oneof;
// a small oneof still names the alternatives in each note.
func TestLargeOneofListedOnce(t *testing.T) {
	t.Parallel()
	m := msg("Big")
	m.OneofDecl = []*descriptorpb.OneofDescriptorProto{{Name: proto.String("choice")}, {Name: proto.String("small")}}
	for i := range 6 {
		f := field(fmt.Sprintf("m%d", i), int32(i+1), tString)
		f.OneofIndex = proto.Int32(0)
		m.Field = append(m.Field, f)
	}
	for i := range 2 {
		f := field(fmt.Sprintf("s%d", i), int32(i+10), tString)
		f.OneofIndex = proto.Int32(1)
		m.Field = append(m.Field, f)
	}
	fd, err := protodesc.NewFile(&descriptorpb.FileDescriptorProto{
		Name: proto.String("oneof.proto"), Package: proto.String("oneof"), Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{m},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"input", "output"} {
		var doc struct {
			Description string
			Properties  map[string]struct{ Description string }
		}
		if err := json.Unmarshal(mustBuild(t, fd.Messages().Get(0), nil, dir), &doc); err != nil {
			t.Fatal(err)
		}
		if want := "Oneof choice (set at most one of them): m0, m1, m2, m3, m4, m5."; doc.Description != want {
			t.Errorf("%s: description %q, want %q", dir, doc.Description, want)
		}
		if got, want := doc.Properties["m3"].Description, "Alternative to the 5 other fields of oneof choice, listed in the object's description: set at most one of them."; got != want {
			t.Errorf("%s: m3 note %q, want %q", dir, got, want)
		}
		if got := doc.Properties["s0"].Description; !strings.HasPrefix(got, "Alternative to s1 (oneof small)") {
			t.Errorf("%s: s0 note %q, want the small oneof's alternatives named", dir, got)
		}
	}
}
