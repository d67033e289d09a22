package toolname

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	mcpgatewayv1 "github.com/grpc-mcp-gateway/gateway/proto/mcpgateway/v1"
)

// namingMethods compiles one file per text (package and services) and
// returns their methods in order.
func namingMethods(t *testing.T, files ...string) []protoreflect.MethodDescriptor {
	t.Helper()
	var ms []protoreflect.MethodDescriptor
	for i, text := range files {
		fdp := &descriptorpb.FileDescriptorProto{}
		if err := prototext.Unmarshal([]byte(text), fdp); err != nil {
			t.Fatal(err)
		}
		fdp.Name = strp(string(rune('a'+i)) + ".proto")
		fdp.Syntax = strp("proto3")
		fdp.MessageType = []*descriptorpb.DescriptorProto{{Name: strp("M")}}
		fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
		if err != nil {
			t.Fatal(err)
		}
		for i := range fd.Services().Len() {
			svc := fd.Services().Get(i)
			for j := range svc.Methods().Len() {
				ms = append(ms, svc.Methods().Get(j))
			}
		}
	}
	return ms
}

func strp(s string) *string { return &s }

func namingMethod(pkg, svc, method string) string {
	return `package: "` + pkg + `" service { name: "` + svc + `" method { name: "` + method + `" input_type: ".` + pkg + `.M" output_type: ".` + pkg + `.M" } }`
}

// TestToolNames: the naming rules README.md's Tools section states.
// Service_Method by default; only colliding methods are qualified with
// package segments from the right, so an unrelated service renames
// nothing; a name_prefix goes in front and is made portable; an explicit
// name that is invalid or claimed twice falls back to the derived name,
// with a warning; a name over 64 characters keeps 55 and ends in _ and 8
// hex digits of the SHA-256 of the method's full name; across backends
// only colliding names get the backend's name in front.
func TestToolNames(t *testing.T) {
	v1 := namingMethod("acme.library.v1", "Library", "GetBook")
	v2 := namingMethod("acme.library.v2", "Library", "GetBook")
	shop := namingMethod("acme.shop.v1", "Shop", "GetItem")
	long := namingMethod("acme.long.v1", "Warehouse", strings.Repeat("Inventory", 8))

	ms := namingMethods(t, v1, v2, long)
	got := derivedNames(ms, nil)
	longName := "Warehouse_" + strings.Repeat("Inventory", 8)
	sum := sha256.Sum256([]byte(ms[2].FullName()))
	wantLong := longName[:55] + "_" + hex.EncodeToString(sum[:])[:8]
	if want := []string{"v1_Library_GetBook", "v2_Library_GetBook", wantLong}; !slices.Equal(got, want) {
		t.Errorf("derived names %q, want %q", got, want)
	}
	if n := len(got[2]); n != MaxLength {
		t.Errorf("the shortened name is %d characters, want %d", n, MaxLength)
	}

	// An unrelated service renames nothing; a prefix is made portable.
	ms = namingMethods(t, v1, shop)
	prefixes := map[protoreflect.FullName]string{"acme.shop.v1.Shop": "my.shop:"}
	if got, want := derivedNames(ms, prefixes), []string{"Library_GetBook", "my_shop_Shop_GetItem"}; !slices.Equal(got, want) {
		t.Errorf("with an unrelated service: %q, want %q", got, want)
	}

	// Explicit names: used as given when valid and unique, else the
	// derived name, with a warning.
	ms = namingMethods(t, `package: "acme.opt.v1" service { name: "S"
		method { name: "A" input_type: ".acme.opt.v1.M" output_type: ".acme.opt.v1.M" }
		method { name: "B" input_type: ".acme.opt.v1.M" output_type: ".acme.opt.v1.M" }
		method { name: "C" input_type: ".acme.opt.v1.M" output_type: ".acme.opt.v1.M" }
		method { name: "D" input_type: ".acme.opt.v1.M" output_type: ".acme.opt.v1.M" } }`)
	opts := map[protoreflect.FullName]*mcpgatewayv1.Tool{
		"acme.opt.v1.S.A": {Name: "lookup"},
		"acme.opt.v1.S.B": {Name: "has.dots"},
		"acme.opt.v1.S.C": {Name: "same"},
		"acme.opt.v1.S.D": {Name: "same"},
	}
	var logs bytes.Buffer
	got = Local(ms, opts, nil, slog.New(slog.NewTextHandler(&logs, nil)))
	if want := []string{"lookup", "S_B", "S_C", "S_D"}; !slices.Equal(got, want) {
		t.Errorf("explicit names %q, want %q", got, want)
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 3 {
		t.Errorf("%d warnings, want one per fallen-back method:\n%s", n, logs.String())
	}

	// Across backends only the colliding tools are prefixed.
	got = BackendQualified([]string{"Zoo_Get", "Zoo_Get", "Shop_GetItem"}, []string{"east", "west", "shop"},
		[]string{"zoo.v1.Zoo/Get", "zoo.v1.Zoo/Get", "shop.v1.Shop/GetItem"})
	if want := []string{"east_Zoo_Get", "west_Zoo_Get", "Shop_GetItem"}; !slices.Equal(got, want) {
		t.Errorf("across backends %q, want %q", got, want)
	}
}
