package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

const (
	boundDepth  = 40   // levels of boundtest.v1.Deep
	boundFields = 25   // described string fields per level
	boundWide   = 2000 // fields of boundtest.v1.Wide
)

// boundFile builds, with descriptorpb, messages too large for a small
// budget: Deep, a chain of boundDepth levels (each with boundFields
// described strings, a next level singular and repeated, and a map of
// them); Wide, boundWide described strings and a proto2 required field
// last; Tree, recursive, with described fields and a deep Deep inside.
func boundFile(t testing.TB) protoreflect.FileDescriptor {
	t.Helper()
	const p = ".boundtest.v1."
	fdp := &descriptorpb.FileDescriptorProto{
		Name: proto.String("bound.proto"), Package: proto.String("boundtest.v1"), Syntax: proto.String("proto2"),
	}
	var cs []comment
	long := strings.Repeat("A sentence that documents this field at some length. ", 3)
	for l := range boundDepth {
		m := msg(fmt.Sprintf("Level%d", l))
		for i := range boundFields {
			m.Field = append(m.Field, field(fmt.Sprintf("f%d", i), int32(i+1), tString))
			cs = append(cs, comment{path: []int32{4, int32(len(fdp.MessageType)), 2, int32(i)}, leading: long})
		}
		if l+1 < boundDepth {
			next := p + fmt.Sprintf("Level%d", l+1)
			m.Field = append(m.Field, field("next", 100, tMessage, next), repeated(field("more", 101, tMessage, next)))
			f, e := mapField("by_key", 102, tString, tMessage, p+string(m.GetName()), next)
			m.Field = append(m.Field, f)
			m.NestedType = append(m.NestedType, e)
		}
		fdp.MessageType = append(fdp.MessageType, m)
	}
	wide := msg("Wide")
	for i := range boundWide {
		wide.Field = append(wide.Field, field(fmt.Sprintf("w%d", i), int32(i+1), tString))
		cs = append(cs, comment{path: []int32{4, int32(len(fdp.MessageType)), 2, int32(i)}, leading: long})
	}
	wide.Field = append(wide.Field, required(field("id", boundWide+1, tString)))
	fdp.MessageType = append(fdp.MessageType, wide)
	tree := msg("Tree", field("name", 1, tString), repeated(field("children", 2, tMessage, p+"Tree")),
		field("deep", 3, tMessage, p+"Level0"), field("wide", 4, tMessage, p+"Wide"))
	fdp.MessageType = append(fdp.MessageType, tree)
	fdp.SourceCodeInfo = sourceInfo(cs...)
	fd, err := protodesc.NewFile(fdp, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fd
}

func boundResource(md protoreflect.MessageDescriptor) string {
	return "grpc://test/" + string(md.FullName())
}

// deepArgs is a value of Level<l> that sets every field down to the last
// level, through next, more and byKey.
func deepArgs(l int) map[string]any {
	v := map[string]any{}
	for i := range boundFields {
		v[fmt.Sprintf("f%d", i)] = fmt.Sprintf("v%d.%d", l, i)
	}
	if l+1 < boundDepth {
		v["next"] = deepArgs(l + 1)
		if l%8 == 0 { // every level through more and byKey too would be 3^40 values
			v["more"] = []any{deepArgs(l + 1)}
			v["byKey"] = map[string]any{"k": deepArgs(l + 1)}
		}
	}
	return v
}

func wideArgs() map[string]any {
	v := map[string]any{"id": "x"}
	for i := range boundWide {
		v[fmt.Sprintf("w%d", i)] = fmt.Sprintf("v%d", i)
	}
	return v
}

// TestBoundedSchemas: deep, wide and recursive messages get a schema within
// the budget that still accepts every valid value of the message (the JSON
// Schema validator and the gateway's Validator both take it), names the
// resource of each message it leaves out, says it is shortened, lints and
// compiles, and is the same bytes on every build.
func TestBoundedSchemas(t *testing.T) {
	t.Parallel()
	fd := boundFile(t)
	wide := wideArgs()
	tree := map[string]any{"name": "root", "children": []any{map[string]any{"name": "c", "deep": deepArgs(0)}},
		"deep": deepArgs(0), "wide": wide}
	for _, tt := range []struct {
		msg      protoreflect.Name
		budget   int
		args     map[string]any
		escaped  string // a message the bounded schema leaves to its resource
		moreNote string // the note of a message that lists only some fields
	}{
		{"Level0", 16 << 10, deepArgs(0), "boundtest.v1.Level", ""},
		{"Level0", 8 << 10, deepArgs(0), "boundtest.v1.Level1", ""},
		{"Level0", 3 << 10, deepArgs(0), "", "more fields are not listed here: see resource grpc://test/boundtest.v1.Level0."},
		{"Wide", 16 << 10, wide, "", "more fields are not listed here: see resource grpc://test/boundtest.v1.Wide."},
		{"Wide", 2 << 10, wide, "", "fields are not listed here: see resource grpc://test/boundtest.v1.Wide."},
		{"Tree", 16 << 10, tree, "boundtest.v1.", ""},
		{"Tree", 400, tree, "", "fields are not listed here: see resource grpc://test/boundtest.v1.Tree."},
	} {
		md := fd.Messages().ByName(tt.msg)
		for _, dir := range []string{"input", "output"} {
			name := fmt.Sprintf("%s/%d/%s", tt.msg, tt.budget, dir)
			within := InputWithin
			full := mustBuild(t, md, nil, dir)
			if dir == "output" {
				within = OutputWithin
			}
			b := Bound{MaxBytes: tt.budget, Resource: boundResource}
			s, err := within(md, nil, b)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			t.Logf("%s: %d bytes, whole %d", name, len(s), len(full))
			if len(full) <= tt.budget {
				t.Fatalf("%s: the whole schema (%d bytes) fits the budget; the case tests nothing", name, len(full))
			}
			if len(s) > tt.budget {
				t.Errorf("%s: %d bytes, over the budget of %d", name, len(s), tt.budget)
			}
			again, _ := within(md, nil, b)
			if !bytes.Equal(s, again) {
				t.Errorf("%s: two builds differ", name)
			}
			if p := Lint(s); len(p) > 0 {
				t.Errorf("%s: lint: %q", name, p)
			}
			var root struct{ Description string }
			if err := json.Unmarshal(s, &root); err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(root.Description, BoundedNote) {
				t.Errorf("%s: root description %q does not end with the note", name, root.Description)
			}
			if tt.escaped != "" && !strings.Contains(string(s), `"description":"A `+tt.escaped) {
				t.Errorf("%s: no escape for %s...", name, tt.escaped)
			}
			if tt.escaped != "" && !strings.Contains(string(s), "; its fields are not listed here: see resource grpc://test/"+tt.escaped) {
				t.Errorf("%s: no escape naming the resource of %s...", name, tt.escaped)
			}
			if tt.moreNote != "" && !strings.Contains(string(s), tt.moreNote) {
				t.Errorf("%s: no %q in\n%s", name, tt.moreNote, s)
			}
			args, err := json.Marshal(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if err := validate(compile(t, s), args); err != nil {
				t.Errorf("%s: a valid value is refused by the bounded schema: %v", name, err)
			}
			if dir == "input" {
				if err := mustValidator(t, md, nil).Decode(args, dynamicpb.NewMessage(md)); err != nil {
					t.Errorf("%s: the validator refuses a valid value: %v", name, err)
				}
			}
		}
	}
}

// TestBoundedKeepsSmallSchemas: a schema within the budget is Input's or
// Output's, byte for byte, so tools under it never change.
func TestBoundedKeepsSmallSchemas(t *testing.T) {
	t.Parallel()
	for _, c := range goldenCases(t) {
		for _, dir := range []string{"input", "output"} {
			full := mustBuild(t, c.md, c.opts, dir)
			within := InputWithin
			if dir == "output" {
				within = OutputWithin
			}
			for _, max := range []int{0, len(full)} {
				s, err := within(c.md, c.opts, Bound{MaxBytes: max, Resource: boundResource})
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(s, full) {
					t.Errorf("%s %s within %d: changed", c.name, dir, max)
				}
			}
		}
	}
}

// TestBoundedRequiredKept: a root listing only some fields keeps its
// required ones, and says how many it leaves out.
func TestBoundedRequiredKept(t *testing.T) {
	t.Parallel()
	md := boundFile(t).Messages().ByName("Wide")
	s, err := InputWithin(md, nil, Bound{MaxBytes: 4 << 10, Resource: boundResource})
	if err != nil {
		t.Fatal(err)
	}
	var root struct {
		Properties           map[string]json.RawMessage
		Required             []string
		AdditionalProperties *bool
	}
	if err := json.Unmarshal(s, &root); err != nil {
		t.Fatal(err)
	}
	if _, ok := root.Properties["id"]; !ok || len(root.Required) != 1 || root.Required[0] != "id" {
		t.Errorf("required %q, id listed %v; want id", root.Required, ok)
	}
	if root.AdditionalProperties != nil {
		t.Errorf("additionalProperties %v on an object that lists only some fields", *root.AdditionalProperties)
	}
	want := fmt.Sprintf("%d more fields are not listed here", boundWide+1-len(root.Properties))
	if !strings.Contains(string(s), want) {
		t.Errorf("no %q in %s", want, s)
	}
	// Without a resource, the escape names the message.
	s, err = InputWithin(md, nil, Bound{MaxBytes: 2 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(s), "see the message boundtest.v1.Wide") {
		t.Errorf("no message named in %s", s)
	}
}

// TestBoundedStreams: a stream's schema is bounded around its messages'.
func TestBoundedStreams(t *testing.T) {
	t.Parallel()
	md := boundFile(t).Messages().ByName("Level0")
	b := Bound{MaxBytes: 8 << 10, Resource: boundResource}
	for name, c := range map[string]struct {
		within func(protoreflect.MessageDescriptor, *Options, Bound) (json.RawMessage, error)
		whole  func(protoreflect.MessageDescriptor, *Options) (json.RawMessage, error)
		member string
	}{
		"input":  {StreamInputWithin, StreamInput, StreamRequestsProperty},
		"output": {StreamOutputWithin, StreamOutput, StreamMessagesProperty},
	} {
		s, err := c.within(md, nil, b)
		if err != nil {
			t.Fatal(err)
		}
		whole, _ := c.whole(md, nil)
		t.Logf("%s: %d bytes, whole %d", name, len(s), len(whole))
		if len(s) > b.MaxBytes {
			t.Errorf("%s: %d bytes, over %d", name, len(s), b.MaxBytes)
		}
		args, _ := json.Marshal(map[string]any{c.member: []any{deepArgs(0), deepArgs(30)}})
		if err := validate(compile(t, s), args); err != nil {
			t.Errorf("%s: a valid stream is refused: %v", name, err)
		}
		if small, _ := c.within(md, nil, Bound{MaxBytes: len(whole)}); !bytes.Equal(small, whole) {
			t.Errorf("%s: a stream schema within its budget changed", name)
		}
	}
}

// TestBoundedWholeRoot: with WholeRoot the root lists every field, over
// the budget when it must.
func TestBoundedWholeRoot(t *testing.T) {
	t.Parallel()
	md := boundFile(t).Messages().ByName("Wide")
	s, err := OutputWithin(md, nil, Bound{MaxBytes: 4 << 10, WholeRoot: true})
	if err != nil {
		t.Fatal(err)
	}
	var root struct{ Properties map[string]json.RawMessage }
	if err := json.Unmarshal(s, &root); err != nil {
		t.Fatal(err)
	}
	if len(root.Properties) != boundWide+1 {
		t.Errorf("%d properties, want all %d", len(root.Properties), boundWide+1)
	}
}

// TestBoundedWholeWhenItFits: a schema of many small messages, whose
// escapes would take more bytes than their bodies, is returned whole when
// it fits, told its size or not.
func TestBoundedWholeWhenItFits(t *testing.T) {
	t.Parallel()
	root := msg("Root")
	fdp := &descriptorpb.FileDescriptorProto{Name: proto.String("tiny.proto"), Package: proto.String("tiny.v1"), Syntax: proto.String("proto3")}
	for i := range 30 {
		name := fmt.Sprintf("T%d", i)
		fdp.MessageType = append(fdp.MessageType, msg(name, field("x", 1, tBool)))
		root.Field = append(root.Field, field(fmt.Sprintf("t%d", i), int32(i+1), tMessage, ".tiny.v1."+name))
	}
	fdp.MessageType = append(fdp.MessageType, root)
	fd, err := protodesc.NewFile(fdp, nil)
	if err != nil {
		t.Fatal(err)
	}
	md := fd.Messages().ByName("Root")
	whole := mustBuild(t, md, nil, "input")
	for _, known := range []int{0, len(whole)} {
		s, err := InputWithin(md, nil, Bound{MaxBytes: len(whole), Resource: boundResource, WholeBytes: known})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(s, whole) {
			t.Errorf("size known %d: not the whole schema (%d bytes, whole %d)", known, len(s), len(whole))
		}
	}
}
