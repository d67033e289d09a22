package describe

import (
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// FuzzDescribe: whatever names, HTTP paths and resource patterns a
// backend's descriptors carry, describing its methods never panics and
// always says something.
func FuzzDescribe(f *testing.F) {
	for _, seed := range [][3]string{
		{"GetThing", "/v1/{name=projects/*/things/*}", "projects/{project}/things/{thing}"},
		{"Insert", "/compute/v1/projects/{project}/zones/{zone}/instances", ""},
		{"X", "/v1/-", "-/{x}"},
		{"RequestCancel", "/v1/{a.b=**}:cancel", "{x=**}"},
		{"_", "}{}/{/:", "~/~/{}"},
		{"StreamDirectRawPredict", "", ""},
		{"AddOrUpdate", "/a/{b}/c/{d}/e", "a/{b}/c/{d=e/*}"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, name, path, pattern string) {
		name = strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
				return r
			}
			return -1
		}, name)
		if name == "" || name[0] >= '0' && name[0] <= '9' {
			name = "M" + name
		}
		opts := &descriptorpb.MethodOptions{}
		proto.SetExtension(opts, annotations.E_Http, &annotations.HttpRule{Pattern: &annotations.HttpRule_Post{Post: path}})
		msgOpts := &descriptorpb.MessageOptions{}
		proto.SetExtension(msgOpts, annotations.E_Resource, &annotations.ResourceDescriptor{Type: "x.example.com/Thing", Pattern: []string{pattern}})
		fieldOpts := &descriptorpb.FieldOptions{}
		proto.SetExtension(fieldOpts, annotations.E_ResourceReference, &annotations.ResourceReference{Type: "x.example.com/Thing"})
		fdp := &descriptorpb.FileDescriptorProto{
			Name: proto.String("fuzz.proto"), Package: proto.String("fuzz.v1"), Syntax: proto.String("proto3"),
			MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("Thing"), Options: msgOpts, Field: []*descriptorpb.FieldDescriptorProto{{
				Name: proto.String("name"), Number: proto.Int32(1), JsonName: proto.String("name"), Options: fieldOpts,
				Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(),
			}}}},
			Service: []*descriptorpb.ServiceDescriptorProto{{Name: proto.String("Things"), Method: []*descriptorpb.MethodDescriptorProto{
				{Name: proto.String(name), InputType: proto.String(".fuzz.v1.Thing"), OutputType: proto.String(".fuzz.v1.Thing"), Options: opts},
			}}},
		}
		fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
		if err != nil {
			return
		}
		files := new(protoregistry.Files)
		if err := files.RegisterFile(fd); err != nil {
			return
		}
		a := Analyze(fd.Services().Get(0).Methods().Get(0), &Options{Resources: NewResources(files)})
		if a.Description() == "" || a.Title() == "" {
			t.Fatalf("%q %q %q: an empty description or title", name, path, pattern)
		}
		a.Hints()
		a.Target()
		// The pattern alone, as a method without an HTTP rule reads it.
		parseShape(pattern)
	})
}
