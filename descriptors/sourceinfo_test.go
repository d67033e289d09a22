package descriptors

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// TestSlimSourceInfo: a compiled file keeps the locations of its
// declarations and its comments, each found by its declaration, and
// drops the locations of their parts (names, numbers, types).
func TestSlimSourceInfo(t *testing.T) {
	dir := t.TempDir()
	const src = `syntax = "proto3";
package slim.v1;

// Shelves keeps shelves.
service Shelves {
  // GetShelf reads a shelf.
  rpc GetShelf(GetShelfRequest) returns (Shelf);
}

message GetShelfRequest {
  // The shelf's name.
  string name = 1;
  int32 depth = 2; // How deep to read.
}

message Shelf {
  string name = 1;
  repeated string books = 2;
}
`
	if err := os.WriteFile(filepath.Join(dir, "slim.proto"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := NewProtoSource([]string{dir}, []string{"slim.proto"}).Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	fd, err := res.Files.FindFileByPath("slim.proto")
	if err != nil {
		t.Fatal(err)
	}
	svc := fd.Services().Get(0)
	req := fd.Messages().ByName("GetShelfRequest")
	shelf := fd.Messages().ByName("Shelf")
	for _, c := range []struct {
		d                 protoreflect.Descriptor
		leading, trailing string
	}{
		{svc, " Shelves keeps shelves.\n", ""},
		{svc.Methods().Get(0), " GetShelf reads a shelf.\n", ""},
		{req.Fields().ByName("name"), " The shelf's name.\n", ""},
		{req.Fields().ByName("depth"), "", " How deep to read.\n"},
	} {
		loc := res.Comments.Location(c.d)
		if loc.LeadingComments != c.leading || loc.TrailingComments != c.trailing {
			t.Errorf("%s: comments %q, %q; want %q, %q", c.d.FullName(), loc.LeadingComments, loc.TrailingComments, c.leading, c.trailing)
		}
	}
	// Declarations without a comment keep their location (a printed
	// resource orders declarations by it).
	for _, d := range []protoreflect.Descriptor{shelf, shelf.Fields().ByName("books")} {
		if loc := res.Comments.Location(d); loc.StartLine == 0 && loc.EndLine == 0 {
			t.Errorf("%s: no location", d.FullName())
		}
	}
	for _, loc := range res.Comments.SourceInfo(fd).GetLocation() {
		if len(loc.Path)%2 == 1 && loc.GetLeadingComments() == "" && loc.GetTrailingComments() == "" && len(loc.LeadingDetachedComments) == 0 {
			t.Errorf("a location of a declaration's part without a comment was kept: path %v", loc.Path)
		}
	}
}
