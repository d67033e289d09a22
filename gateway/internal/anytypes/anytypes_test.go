package anytypes

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/transcode"
)

// boxFiles declares t.v1.Box, which holds an Any, and t.v1.Thing, a type
// such an Any may carry.
func boxFiles(t *testing.T) *protoregistry.Files {
	t.Helper()
	fdp := &descriptorpb.FileDescriptorProto{}
	if err := prototext.Unmarshal([]byte(`name: "box.proto" package: "t.v1" syntax: "proto3" dependency: "google/protobuf/any.proto"
		message_type { name: "Box" field { name: "item" json_name: "item" number: 1 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".google.protobuf.Any" } }
		message_type { name: "Thing" field { name: "label" json_name: "label" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING } }`), fdp); err != nil {
		t.Fatal(err)
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	files := &protoregistry.Files{}
	for _, f := range []protoreflect.FileDescriptor{anypb.File_google_protobuf_any_proto, fd} {
		if err := files.RegisterFile(f); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// box is the wire form of a Box whose item holds a message of the given
// type name with label set, built from files.
func box(t *testing.T, files *protoregistry.Files, typeName string, label string) []byte {
	t.Helper()
	d, err := files.FindDescriptorByName("t.v1.Thing")
	if err != nil {
		t.Fatal(err)
	}
	thing := dynamicpb.NewMessage(d.(protoreflect.MessageDescriptor))
	thing.Set(thing.Descriptor().Fields().ByName("label"), protoreflect.ValueOfString(label))
	value, err := proto.Marshal(thing)
	if err != nil {
		t.Fatal(err)
	}
	b, err := proto.Marshal(&anypb.Any{TypeUrl: "type.googleapis.com/" + typeName, Value: value})
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte{0x0a, byte(len(b))}, b...) // Box.item = 1
}

// TestLocalTypes: without a server reflection to ask, the types are the
// discovered files': found by name and by URL, anything else not found;
// a nil *Types resolves nothing and has no remote.
func TestLocalTypes(t *testing.T) {
	a := New(&descriptors.Result{Files: boxFiles(t)})
	if a.HasRemote() {
		t.Error("HasRemote without a resolver")
	}
	if mt, err := a.FindMessageByName("t.v1.Thing"); err != nil || mt.Descriptor().FullName() != "t.v1.Thing" {
		t.Errorf("FindMessageByName(t.v1.Thing) = %v, %v", mt, err)
	}
	if mt, err := a.FindMessageByURL("type.googleapis.com/t.v1.Thing"); err != nil || mt.Descriptor().FullName() != "t.v1.Thing" {
		t.Errorf("FindMessageByURL = %v, %v", mt, err)
	}
	if _, err := a.FindMessageByName("t.v1.Ghost"); !errors.Is(err, protoregistry.NotFound) {
		t.Errorf("FindMessageByName(t.v1.Ghost): %v, want NotFound", err)
	}
	var none *Types
	if _, err := none.FindMessageByName("t.v1.Thing"); !errors.Is(err, protoregistry.NotFound) || none.HasRemote() {
		t.Errorf("nil Types: %v, HasRemote %v", err, none.HasRemote())
	}
	if got := TypeNameOf("type.googleapis.com/t.v1.Thing"); got != "t.v1.Thing" {
		t.Errorf("TypeNameOf = %q", got)
	}
}

// TestAppendWrapped: a message holding an Any of a known type renders,
// wrapped as {"value": ...} when asked; one holding an Any of a type the
// files lack fails with the rendering's error (there is no one to ask),
// and Learn names the missing type, in words a model reads.
func TestAppendWrapped(t *testing.T) {
	files := boxFiles(t)
	a := New(&descriptors.Result{Files: files})
	d, err := files.FindDescriptorByName("t.v1.Box")
	if err != nil {
		t.Fatal(err)
	}
	enc, err := transcode.Compile(d.(protoreflect.MessageDescriptor), &transcode.Options{Resolver: a})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	js, err := a.AppendWrapped(ctx, []byte("x"), enc, box(t, files, "t.v1.Thing", "hay"), false)
	if want := `x{"item":{"@type":"type.googleapis.com/t.v1.Thing","label":"hay"}}`; err != nil || string(js) != want {
		t.Errorf("AppendWrapped = %s, %v; want %s", js, err, want)
	}
	js, err = a.AppendWrapped(ctx, nil, enc, box(t, files, "t.v1.Thing", "hay"), true)
	if want := `{"value":{"item":{"@type":"type.googleapis.com/t.v1.Thing","label":"hay"}}}`; err != nil || string(js) != want {
		t.Errorf("AppendWrapped (wrapped) = %s, %v; want %s", js, err, want)
	}

	ghost := box(t, files, "t.v1.Ghost", "boo")
	var unknown *UnknownTypeError
	if _, err := a.AppendWrapped(ctx, nil, enc, ghost, false); err == nil || errors.As(err, &unknown) {
		t.Errorf("AppendWrapped of an unknown type: %v, want the rendering's error", err)
	}
	m := dynamicpb.NewMessage(d.(protoreflect.MessageDescriptor))
	if err := (proto.UnmarshalOptions{Resolver: a}).Unmarshal(ghost, m); err != nil {
		t.Fatal(err)
	}
	learnt, missing := a.Learn(ctx, m)
	if learnt || missing == nil || missing.Name != "t.v1.Ghost" {
		t.Fatalf("Learn = %v, %v; want t.v1.Ghost missing", learnt, missing)
	}
	if s := missing.Sentence("a value"); s != "the backend sent a value of type t.v1.Ghost, which the backend's descriptor files do not declare" {
		t.Errorf("Sentence = %q", s)
	}
	for cause, want := range map[error]string{
		descriptors.ErrTypeNotDescribed:  "that it does not describe",
		errors.New("connection refused"): "could not look up in the backend's server reflection just now",
	} {
		e := &UnknownTypeError{Name: "t.v1.Ghost", cause: cause}
		if s := e.Sentence("details"); !strings.Contains(s, "the backend sent details of type t.v1.Ghost") || !strings.Contains(s, want) || !errors.Is(e, cause) {
			t.Errorf("Sentence with cause %v = %q, want %q", cause, s, want)
		}
	}
}
