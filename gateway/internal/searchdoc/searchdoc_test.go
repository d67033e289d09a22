package searchdoc

import (
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	_ "google.golang.org/protobuf/types/known/fieldmaskpb" // google/protobuf/field_mask.proto for the request below

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/describe"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/internal/search"
)

// zooMethods compiles a small zoo API and returns its methods by name.
func zooMethods(t *testing.T) map[string]protoreflect.MethodDescriptor {
	t.Helper()
	fdp := &descriptorpb.FileDescriptorProto{}
	if err := prototext.Unmarshal([]byte(`name: "zoo.proto" package: "zoo.v1" syntax: "proto3"
		dependency: "google/protobuf/field_mask.proto"
		message_type { name: "Patch" field { name: "pause" number: 1 label: LABEL_OPTIONAL type: TYPE_BOOL } }
		message_type { name: "UpdateAnimalRequest"
			field { name: "name" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
			field { name: "patch" number: 2 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".zoo.v1.Patch" }
			field { name: "update_mask" number: 3 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".google.protobuf.FieldMask" } }
		message_type { name: "Animal"
			field { name: "name" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
			field { name: "species" number: 2 label: LABEL_OPTIONAL type: TYPE_STRING } }
		message_type { name: "GetAnimalRequest" field { name: "name" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING } }
		service { name: "ZooService"
			method { name: "UpdateAnimal" input_type: ".zoo.v1.UpdateAnimalRequest" output_type: ".zoo.v1.Animal" }
			method { name: "GetAnimal" input_type: ".zoo.v1.GetAnimalRequest" output_type: ".zoo.v1.Animal" } }`), fdp); err != nil {
		t.Fatal(err)
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	ms := map[string]protoreflect.MethodDescriptor{}
	for i := range fd.Services().Get(0).Methods().Len() {
		m := fd.Services().Get(0).Methods().Get(i)
		ms[string(m.Name())] = m
	}
	return ms
}

// TestNewFacts: a method's facts are its names, its request's fields,
// the fields of its request's own messages (not of well-known types),
// and its response's fields.
func TestNewFacts(t *testing.T) {
	m := zooMethods(t)["UpdateAnimal"]
	f := NewFacts(m, describe.Analyze(m, nil))
	want := Facts{Method: "UpdateAnimal", Service: "ZooService", Pkg: "zoo.v1", Input: "UpdateAnimalRequest",
		Fields: "name patch update_mask", Inner: "pause", Outputs: "name species"}
	f.Shape = nil // compared apart: describe's own
	if f != want {
		t.Errorf("NewFacts = %+v, want %+v", f, want)
	}
}

// TestDocument: a tool's document is keyed by its name and grouped by its
// package; its fields carry the facts by weight, the method's name first;
// its structure gives the action and kind (a Get reads its resource);
// its read-only hint comes from its annotations.
func TestDocument(t *testing.T) {
	m := zooMethods(t)["GetAnimal"]
	f := NewFacts(m, describe.Analyze(m, nil))
	f.Description = "Returns an animal."
	readOnly := true
	def := &mcp.Tool{Name: "ZooService_GetAnimal", Title: "Get animal", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: &readOnly}}
	doc := Document(def, &f)
	if doc.Key != "ZooService_GetAnimal" || doc.Group != "zoo.v1" || !doc.ReadOnly || doc.Superseded {
		t.Errorf("document %+v", doc)
	}
	if doc.Action != "get" || doc.Kind != search.KindGet || doc.Target != "animal" {
		t.Errorf("action %q, kind %q, target %q; want get, %q, animal", doc.Action, doc.Kind, doc.Target, search.KindGet)
	}
	wantFields := []search.Field{
		{Text: "GetAnimal", Weight: 3, Pairs: true},
		{Text: "ZooService_GetAnimal Get animal", Weight: 2, Pairs: true},
		{Text: "ZooService GetAnimalRequest", Weight: 1.5, Pairs: true},
		{Text: "", Weight: 1.5},
		{Text: "Returns an animal.", Weight: 1},
		{Text: "name", Weight: 0.5},
		{Text: "", Weight: 0.3},
		{Text: "name species", Weight: 0.2},
		{Text: "zoo.v1", Weight: 0.3},
	}
	if len(doc.Fields) != len(wantFields) {
		t.Fatalf("%d fields, want %d", len(doc.Fields), len(wantFields))
	}
	for i, w := range wantFields {
		if doc.Fields[i] != w {
			t.Errorf("field %d = %+v, want %+v", i, doc.Fields[i], w)
		}
	}
}
