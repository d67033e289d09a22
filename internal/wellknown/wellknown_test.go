package wellknown_test

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	_ "google.golang.org/protobuf/types/known/anypb"
	_ "google.golang.org/protobuf/types/known/apipb"
	_ "google.golang.org/protobuf/types/known/durationpb"
	_ "google.golang.org/protobuf/types/known/emptypb"
	_ "google.golang.org/protobuf/types/known/fieldmaskpb"
	_ "google.golang.org/protobuf/types/known/sourcecontextpb"
	"google.golang.org/protobuf/types/known/structpb"
	_ "google.golang.org/protobuf/types/known/timestamppb"
	_ "google.golang.org/protobuf/types/known/typepb"
	_ "google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/grpc-mcp-gateway/gateway/internal/wellknown"
)

// special lists every well-known type with a JSON form of its own; every
// other message of package google.protobuf is None.
var special = map[protoreflect.FullName]wellknown.Kind{
	"google.protobuf.Any":         wellknown.Any,
	"google.protobuf.Timestamp":   wellknown.Timestamp,
	"google.protobuf.Duration":    wellknown.Duration,
	"google.protobuf.FieldMask":   wellknown.FieldMask,
	"google.protobuf.Struct":      wellknown.Struct,
	"google.protobuf.Value":       wellknown.Value,
	"google.protobuf.ListValue":   wellknown.ListValue,
	"google.protobuf.BoolValue":   wellknown.Wrapper,
	"google.protobuf.Int32Value":  wellknown.Wrapper,
	"google.protobuf.Int64Value":  wellknown.Wrapper,
	"google.protobuf.UInt32Value": wellknown.Wrapper,
	"google.protobuf.UInt64Value": wellknown.Wrapper,
	"google.protobuf.FloatValue":  wellknown.Wrapper,
	"google.protobuf.DoubleValue": wellknown.Wrapper,
	"google.protobuf.StringValue": wellknown.Wrapper,
	"google.protobuf.BytesValue":  wellknown.Wrapper,
}

// googleProtobuf returns every message, nested ones included, of the files
// of package google.protobuf linked into the test: the well-known types,
// Empty, the type/api messages and descriptor.proto's.
func googleProtobuf(t *testing.T) []protoreflect.MessageDescriptor {
	var mds []protoreflect.MessageDescriptor
	var walk func(protoreflect.MessageDescriptors)
	walk = func(ms protoreflect.MessageDescriptors) {
		for i := range ms.Len() {
			mds = append(mds, ms.Get(i))
			walk(ms.Get(i).Messages())
		}
	}
	protoregistry.GlobalFiles.RangeFilesByPackage("google.protobuf", func(fd protoreflect.FileDescriptor) bool {
		walk(fd.Messages())
		return true
	})
	if len(mds) < len(special)+10 {
		t.Fatalf("found only %d messages in package google.protobuf", len(mds))
	}
	return mds
}

// copyOf rebuilds md's file from its descriptor proto, as server reflection
// does: the copy is not the generated descriptor, but has the same names.
func copyOf(t *testing.T, md protoreflect.MessageDescriptor) protoreflect.MessageDescriptor {
	t.Helper()
	if parent, nested := md.Parent().(protoreflect.MessageDescriptor); nested {
		return copyOf(t, parent).Messages().ByName(md.Name())
	}
	fdp := protodesc.ToFileDescriptorProto(md.ParentFile())
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatalf("copy %s: %v", fdp.GetName(), err)
	}
	return fd.Messages().ByName(md.Name())
}

// TestOf classifies every message of package google.protobuf, generated
// and rebuilt from its descriptor proto, and checks IsObject against what
// protojson writes for the message's zero value (a null for Value, whose
// zero value protojson refuses).
func TestOf(t *testing.T) {
	t.Parallel()
	seen := map[protoreflect.FullName]bool{}
	for _, md := range googleProtobuf(t) {
		want := special[md.FullName()]
		seen[md.FullName()] = true
		if got := wellknown.Of(md); got != want {
			t.Errorf("Of(%s) = %v, want %v", md.FullName(), got, want)
		}
		if got := wellknown.Of(copyOf(t, md)); got != want {
			t.Errorf("Of(copy of %s) = %v, want %v", md.FullName(), got, want)
		}
		m := dynamicpb.NewMessage(md)
		if want == wellknown.Value {
			proto.Merge(m, structpb.NewNullValue())
		}
		b, err := protojson.MarshalOptions{AllowPartial: true}.Marshal(m)
		if err != nil {
			t.Errorf("protojson.Marshal of a zero %s: %v", md.FullName(), err)
			continue
		}
		if got, protojsonObject := want.IsObject(), strings.HasPrefix(string(b), "{"); got != protojsonObject {
			t.Errorf("%v.IsObject() = %v, but protojson writes a zero %s as %s", want, got, md.FullName(), b)
		}
	}
	for name := range special {
		if !seen[name] {
			t.Errorf("%s is not linked into the test", name)
		}
	}
}

// TestOfOtherNames: a well-known type's short name elsewhere, in another
// package or nested in a google.protobuf message, is an ordinary message.
func TestOfOtherNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pkg, outer string
	}{
		{pkg: "example.v1"},
		{pkg: "google.protobuf.v2"},
		{pkg: "protobuf"},
		{pkg: "google.protobuf", outer: "Outer"},
	} {
		var msgs []*descriptorpb.DescriptorProto
		for name := range special {
			msgs = append(msgs, &descriptorpb.DescriptorProto{Name: proto.String(string(name.Name()))})
		}
		if tc.outer != "" {
			msgs = []*descriptorpb.DescriptorProto{{Name: proto.String(tc.outer), NestedType: msgs}}
		}
		fd, err := protodesc.NewFile(&descriptorpb.FileDescriptorProto{
			Name:        proto.String("other.proto"),
			Package:     proto.String(tc.pkg),
			Syntax:      proto.String("proto3"),
			MessageType: msgs,
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ms := fd.Messages()
		if tc.outer != "" {
			ms = ms.Get(0).Messages()
		}
		for i := range ms.Len() {
			if got := wellknown.Of(ms.Get(i)); got != wellknown.None {
				t.Errorf("Of(%s) = %v, want None", ms.Get(i).FullName(), got)
			}
		}
	}
}

func TestKindString(t *testing.T) {
	t.Parallel()
	for k, want := range map[wellknown.Kind]string{wellknown.None: "None", wellknown.Wrapper: "Wrapper", 42: "Kind(42)"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", k, got, want)
		}
	}
}
