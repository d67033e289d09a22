package gateway_test

import (
	"strings"
	"testing"

	validatepb "buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/grpc-mcp-gateway/gateway/gateway"
)

// TestDescriptionNamesRulesRequired: a field the backend's protovalidate
// rules make required ((buf.validate.field).required) is named among what
// a call requires in the description written from the method's
// structure, as a field_behavior REQUIRED one is.
func TestDescriptionNamesRulesRequired(t *testing.T) {
	t.Parallel()
	f := apiFile("rules.v1", "Keepers", method("GetKeeper"))
	f.Dependency = append(f.Dependency, "buf/validate/validate.proto")
	fo := &descriptorpb.FieldOptions{}
	proto.SetExtension(fo, validatepb.E_Field, &validatepb.FieldRules{Required: proto.Bool(true)})
	f.MessageType[0].Field = append(f.MessageType[0].Field, &descriptorpb.FieldDescriptorProto{
		Name: proto.String("keeper_id"), JsonName: proto.String("keeperId"), Number: proto.Int32(2),
		Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
		Options: fo,
	})
	api := &fakeAPI{}
	api.set(t, f)
	addr, _ := serveFake(t, api, "127.0.0.1:0")
	g, _ := newGateway(t, []gateway.Backend{dialBackend(t, "rules", addr)}, nil)
	d := toolByName(t, g, "Keepers_GetKeeper").Description
	if !strings.Contains(d, "Requires: keeperId.") {
		t.Errorf("description %q does not say the call requires keeperId", d)
	}
}
