package descriptors

import (
	"strings"
	"testing"

	"github.com/jhump/protoreflect/v2/protoprint"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	mcpgatewayv1 "github.com/grpc-mcp-gateway/gateway/proto/mcpgateway/v1"
)

// TestOptionsInWireForm: files are decoded with their option extensions
// left as unknown fields (unmarshalFile), and every reader still finds
// them, as does the printer of the API resources: field_behavior and
// resource_reference, google.api.http, google.api.resource, and ours.
func TestOptionsInWireForm(t *testing.T) {
	fo := &descriptorpb.FieldOptions{}
	proto.SetExtension(fo, annotations.E_FieldBehavior, []annotations.FieldBehavior{annotations.FieldBehavior_REQUIRED})
	proto.SetExtension(fo, annotations.E_ResourceReference, &annotations.ResourceReference{Type: "x.example.com/Thing"})
	mo := &descriptorpb.MessageOptions{}
	proto.SetExtension(mo, annotations.E_Resource, &annotations.ResourceDescriptor{Type: "x.example.com/Thing", Pattern: []string{"things/{thing}"}})
	meo := &descriptorpb.MethodOptions{}
	proto.SetExtension(meo, annotations.E_Http, &annotations.HttpRule{Pattern: &annotations.HttpRule_Get{Get: "/v1/{name=things/*}"}})
	proto.SetExtension(meo, mcpgatewayv1.E_Tool, &mcpgatewayv1.Tool{Name: "get_thing"})
	str := descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum()
	opt := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()
	fdp := &descriptorpb.FileDescriptorProto{
		Name: proto.String("x.proto"), Package: proto.String("x"), Syntax: proto.String("proto3"),
		Dependency: []string{"google/api/field_behavior.proto", "google/api/resource.proto", "google/api/annotations.proto", "mcpgateway/v1/annotations.proto"},
		MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("Thing"), Options: mo, Field: []*descriptorpb.FieldDescriptorProto{
			{Name: proto.String("name"), Number: proto.Int32(1), Type: str, Label: opt, JsonName: proto.String("name"), Options: fo}}}},
		Service: []*descriptorpb.ServiceDescriptorProto{{Name: proto.String("S"), Method: []*descriptorpb.MethodDescriptorProto{
			{Name: proto.String("Get"), InputType: proto.String(".x.Thing"), OutputType: proto.String(".x.Thing"), Options: meo}}}},
	}
	b, err := proto.Marshal(fdp)
	if err != nil {
		t.Fatal(err)
	}
	decoded := new(descriptorpb.FileDescriptorProto)
	if err := unmarshalFile(b, decoded); err != nil {
		t.Fatal(err)
	}
	if len(decoded.GetMessageType()[0].GetField()[0].GetOptions().ProtoReflect().GetUnknown()) == 0 {
		t.Fatal("field options decoded as extensions, want unknown fields")
	}
	fd, err := protodesc.NewFile(decoded, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	msg, m := fd.Messages().Get(0), fd.Services().Get(0).Methods().Get(0)
	if got := Field(msg.Fields().Get(0)); !got.Required || got.ResourceType != "x.example.com/Thing" {
		t.Errorf("Field: %+v", got)
	}
	if got := Resource(msg); got.GetType() != "x.example.com/Thing" {
		t.Errorf("Resource: %v", got)
	}
	if got := HTTPRule(m); got.GetGet() != "/v1/{name=things/*}" {
		t.Errorf("HTTPRule: %v", got)
	}
	if got := ToolOptions(m); got.GetName() != "get_thing" {
		t.Errorf("ToolOptions: %v", got)
	}
	text, err := (&protoprint.Printer{Compact: true}).PrintProtoToString(msg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"(google.api.field_behavior) = REQUIRED", `(google.api.resource_reference) = { type: "x.example.com/Thing" }`, "things/{thing}"} {
		if !strings.Contains(text, want) {
			t.Errorf("printed message lacks %s:\n%s", want, text)
		}
	}
}
