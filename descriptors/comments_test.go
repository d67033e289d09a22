package descriptors

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// everyElement declares every kind of element source info has a path for,
// nested, with leading, trailing and detached comments, and elements
// without any.
const everyElement = `syntax = "proto2";

// The package's detached comment.

package every.v1;

import "google/protobuf/descriptor.proto";

// Outer holds everything.
message Outer {
  // A nested message.
  message Inner {
    optional string deep = 1; // Trailing on deep.
    message Innermost {
      // Three levels down.
      optional int32 n = 1;
    }
  }
  // A nested enum.
  enum Kind {
    // The zero kind.
    KIND_UNSPECIFIED = 0;
    KIND_ONE = 1;
  }
  optional Inner inner = 1;
  // A oneof.
  oneof choice {
    // In the oneof.
    string a = 2;
    int64 b = 3;
  }
  map<string, Inner> by_name = 4; // A map.
  optional Kind kind = 5;
  extensions 100 to 200;
  // An extension declared in a message.
  extend Outer {
    optional string nested_ext = 100;
  }
}

message Bare {
  optional string x = 1;
}

// A top-level enum.
enum Level {
  LEVEL_UNSPECIFIED = 0;
  // High.
  LEVEL_HIGH = 1;
}

// A file-level extension.
extend Outer {
  // Its field.
  optional int32 file_ext = 101;
}

extend google.protobuf.MessageOptions {
  optional string tag = 50001;
}

// The service.
service Things {
  // Reads a thing.
  rpc Get(Outer) returns (Bare);

  rpc Put(Bare) returns (Outer); // Trailing on Put.
}
`

// TestCommentsLocation: Comments.Location finds, for every element of
// every kind, the location protobuf-go's own index finds in the same file
// built with its source info, and the discovered descriptors carry none.
func TestCommentsLocation(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "every.proto"), []byte(everyElement), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := NewProtoSource([]string{dir}, []string{"every.proto"}).Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	fd, err := res.Files.FindFileByPath("every.proto")
	if err != nil {
		t.Fatal(err)
	}
	if n := fd.SourceLocations().Len(); n != 0 {
		t.Errorf("the descriptors carry %d locations, want none (Comments holds them)", n)
	}
	fdp := ToFileDescriptorProto(fd, res.Comments)
	if len(fdp.GetSourceCodeInfo().GetLocation()) == 0 {
		t.Fatal("ToFileDescriptorProto gave no source info")
	}
	withInfo, err := protodesc.NewFile(fdp, res.Files)
	if err != nil {
		t.Fatal(err)
	}
	var own protoregistry.Files
	if err := own.RegisterFile(withInfo); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	commented := 0
	walk(fd, func(d protoreflect.Descriptor, path []int32) {
		kinds[protoreflectKind(d)]++
		ref, err := own.FindDescriptorByName(d.FullName())
		if err != nil {
			t.Errorf("%s: %v", d.FullName(), err)
			return
		}
		want := withInfo.SourceLocations().ByDescriptor(ref)
		got := res.Comments.Location(d)
		want.Next, got.Next = 0, 0
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (path %v): location (-protobuf-go +Comments):\n%s", d.FullName(), path, diff)
		}
		if got.LeadingComments != "" || got.TrailingComments != "" {
			commented++
		}
	})
	if commented < 15 {
		t.Errorf("%d elements with a comment, want every commented one of the file (15 or more)", commented)
	}
	if len(kinds) < 7 {
		t.Errorf("elements of %d kinds walked (%v), want every kind", len(kinds), kinds)
	}
	// A descriptor of no place in its file (the file itself) has none.
	if loc := res.Comments.Location(fd); len(loc.Path) != 0 || loc.LeadingComments != "" {
		t.Errorf("the file's own location: %+v", loc)
	}
}

func protoreflectKind(d protoreflect.Descriptor) string {
	switch d.(type) {
	case protoreflect.MessageDescriptor:
		return "message"
	case protoreflect.FieldDescriptor:
		return "field"
	case protoreflect.OneofDescriptor:
		return "oneof"
	case protoreflect.EnumDescriptor:
		return "enum"
	case protoreflect.EnumValueDescriptor:
		return "value"
	case protoreflect.ServiceDescriptor:
		return "service"
	case protoreflect.MethodDescriptor:
		return "method"
	}
	return "other"
}

// TestCommentsCacheRoundTrip: a restart over the compile cache gives the
// same comments as the compile that wrote it.
func TestCommentsCacheRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "every.proto"), []byte(everyElement), 0o600); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	src := NewProtoSource([]string{dir}, []string{"every.proto"})
	src.CacheDir = cache
	first, err := src.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	src.cacheWrites.Wait()
	restarted := NewProtoSource([]string{dir}, []string{"every.proto"})
	restarted.CacheDir = cache
	compiled := false
	restarted.compiled = func(_, _ []string) { compiled = true }
	res, err := restarted.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if compiled {
		t.Fatal("the restart compiled: the test reads nothing from the cache")
	}
	a, _ := first.Files.FindFileByPath("every.proto")
	b, _ := res.Files.FindFileByPath("every.proto")
	if !proto.Equal(first.Comments.SourceInfo(a), res.Comments.SourceInfo(b)) || first.Comments.SourceInfo(a) == nil {
		t.Error("the cached Result's source info differs from the compile's")
	}
	m := b.Services().Get(0).Methods().ByName("Get")
	if got := res.Comments.Location(m).LeadingComments; got != " Reads a thing.\n" {
		t.Errorf("Things.Get's comment after a restart: %q", got)
	}
}

// TestCommentsRefusesBadSpans: a location whose span is neither 3 nor 4
// numbers makes its file invalid, as protodesc.NewFile makes it when the
// descriptors carry their source info.
func TestCommentsRefusesBadSpans(t *testing.T) {
	fdp := &descriptorpb.FileDescriptorProto{
		Name:        proto.String("bad.proto"),
		Package:     proto.String("bad.v1"),
		Syntax:      proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("M")}},
		SourceCodeInfo: &descriptorpb.SourceCodeInfo{Location: []*descriptorpb.SourceCodeInfo_Location{
			{Path: []int32{4, 0}, Span: []int32{1, 2}, LeadingComments: proto.String(" M.\n")},
		}},
	}
	p := newPool(slog.New(slog.DiscardHandler), "test")
	p.add(fdp)
	_, err := p.build("bad.proto")
	var de *DescriptorError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "invalid span") {
		t.Fatalf("build: %v, want a DescriptorError naming the invalid span", err)
	}
	// The same file with a valid span builds, its comment found.
	fdp.SourceCodeInfo.Location[0].Span = []int32{1, 2, 9}
	p = newPool(slog.New(slog.DiscardHandler), "test")
	p.add(fdp)
	fd, err := p.build("bad.proto")
	if err != nil {
		t.Fatal(err)
	}
	if got := p.comments().Location(fd.Messages().Get(0)).LeadingComments; got != " M.\n" {
		t.Errorf("comment %q", got)
	}
}
