package descriptors_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
)

// reuseTree is a set of .proto files in a temp dir, compiled by a
// ProtoSource that reports what each compile compiled and reused:
// common.proto is imported by a.proto and b.proto; c.proto imports only
// a bundled file.
type reuseTree struct {
	t     *testing.T
	dirs  []string // import paths; the files are in the last one
	names []string
	src   *descriptors.ProtoSource

	mu       sync.Mutex
	compiled []string
	reused   []string
}

var reuseFiles = map[string]string{
	"common.proto": "syntax = \"proto3\";\npackage common;\n// A thing.\nmessage M { string name = 1; }\n",
	"a.proto":      "syntax = \"proto3\";\npackage a;\nimport \"common.proto\";\n// Service A.\nservice A {\n  // Gets.\n  rpc Get(common.M) returns (common.M);\n}\n",
	"b.proto":      "syntax = \"proto3\";\npackage b;\nimport \"common.proto\";\nmessage Req { common.M m = 1; }\nservice B {\n  rpc Get(Req) returns (common.M);\n}\n",
	"c.proto":      "syntax = \"proto3\";\npackage c;\nimport \"google/protobuf/timestamp.proto\";\nmessage At { google.protobuf.Timestamp at = 1; }\nservice C {\n  rpc Get(At) returns (At);\n}\n",
}

func newReuseTree(t *testing.T) *reuseTree {
	t.Helper()
	tr := &reuseTree{t: t, dirs: []string{t.TempDir(), t.TempDir()}, names: []string{"a.proto", "b.proto", "c.proto"}}
	for name, text := range reuseFiles {
		tr.write(name, text)
	}
	tr.src = tr.newSource()
	descriptors.SetCompiledHook(tr.src, func(compiled, reused []string) {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		tr.compiled, tr.reused = compiled, reused
	})
	return tr
}

func (tr *reuseTree) newSource() *descriptors.ProtoSource {
	return descriptors.NewProtoSource(tr.dirs, tr.names)
}

// write writes a file of the tree (in the last import path).
func (tr *reuseTree) write(name, text string) {
	tr.t.Helper()
	if err := os.WriteFile(filepath.Join(tr.dirs[len(tr.dirs)-1], name), []byte(text), 0o644); err != nil {
		tr.t.Fatal(err)
	}
}

// edit replaces old by new in a file of the tree.
func (tr *reuseTree) edit(name, old, new string) {
	tr.t.Helper()
	b, err := os.ReadFile(filepath.Join(tr.dirs[len(tr.dirs)-1], name))
	if err != nil {
		tr.t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		tr.t.Fatalf("%s has no %q", name, old)
	}
	tr.write(name, strings.Replace(string(b), old, new, 1))
}

// last returns what the last compile compiled and reused.
func (tr *reuseTree) last() (compiled, reused []string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.compiled, tr.reused
}

// wantCompiled checks what the last compile compiled from source and
// reused, and that its Result is what a compile from nothing gives.
func (tr *reuseTree) wantCompiled(res *descriptors.Result, compiled, reused []string) {
	tr.t.Helper()
	gotCompiled, gotReused := tr.last()
	if !slices.Equal(gotCompiled, compiled) || !slices.Equal(gotReused, reused) {
		tr.t.Errorf("compiled %q and reused %q, want compiled %q and reused %q", gotCompiled, gotReused, compiled, reused)
	}
	wantSameResult(tr.t, res, discoverSource(tr.t, tr.newSource()))
}

// wantSameResult checks that got has the services and files of want, file
// by file as FileDescriptorProtos (comments included), and that got's
// registry is whole and shares its imports: every import of every file
// is the very descriptor the registry holds for that path, and the
// bundled files are the bundle's.
func wantSameResult(t *testing.T, got, want *descriptors.Result) {
	t.Helper()
	names := func(r *descriptors.Result) []string {
		var out []string
		for _, s := range r.Services {
			out = append(out, string(s.FullName()))
		}
		return out
	}
	if diff := cmp.Diff(names(want), names(got)); diff != "" {
		t.Errorf("services (-full compile +reusing):\n%s", diff)
	}
	if diff := cmp.Diff(fileProtos(want), fileProtos(got), protocmp.Transform()); diff != "" {
		t.Errorf("files (-full compile +reusing):\n%s", diff)
	}
	got.Files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		imports := fd.Imports()
		for i := range imports.Len() {
			imp := imports.Get(i).FileDescriptor
			reg, err := got.Files.FindFileByPath(imp.Path())
			if err != nil || reg != imp {
				t.Errorf("%s imports a %s that is not the registry's (%v)", fd.Path(), imp.Path(), err)
			}
		}
		if g, err := protoregistry.GlobalFiles.FindFileByPath(fd.Path()); err == nil && strings.HasPrefix(fd.Path(), "google/protobuf/") && g != fd {
			t.Errorf("%s is not the bundle's", fd.Path())
		}
		return true
	})
}

// fileProtos returns every file of res, by path, with its source info.
func fileProtos(res *descriptors.Result) map[string]*descriptorpb.FileDescriptorProto {
	out := make(map[string]*descriptorpb.FileDescriptorProto)
	res.Files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		out[fd.Path()] = descriptors.ToFileDescriptorProto(fd, res.Comments)
		return true
	})
	return out
}

// fileOf returns the descriptor res holds for path.
func fileOf(t *testing.T, res *descriptors.Result, path string) protoreflect.FileDescriptor {
	t.Helper()
	fd, err := res.Files.FindFileByPath(path)
	if err != nil {
		t.Fatal(err)
	}
	return fd
}

// TestProtoSourceRecompilesOnlyWhatChanged: after an edit, a compile
// parses and links only the edited file and those importing it,
// transitively; every other file is the last Result's descriptor itself;
// and the Result is what a compile from nothing gives.
func TestProtoSourceRecompilesOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	tr := newReuseTree(t)
	first := discoverSource(t, tr.src)
	tr.wantCompiled(first, []string{"a.proto", "b.proto", "c.proto", "common.proto"}, nil)

	// A file nothing imports: only it.
	tr.edit("c.proto", "message At {", "// When.\nmessage At {")
	second := discoverSource(t, tr.src)
	tr.wantCompiled(second, []string{"c.proto"}, []string{"a.proto", "b.proto", "common.proto"})
	for _, path := range []string{"a.proto", "b.proto", "common.proto"} {
		if fileOf(t, second, path) != fileOf(t, first, path) {
			t.Errorf("%s was not reused as it was", path)
		}
	}
	if got := fileOf(t, second, "c.proto").Messages().Get(0); second.Services[2].Methods().Get(0).Input() != got {
		t.Errorf("the service's input is not the registry's message")
	}

	// A file others import: it and its importers.
	tr.edit("common.proto", "string name = 1;", "string name = 1;\n  int64 id = 2;")
	third := discoverSource(t, tr.src)
	tr.wantCompiled(third, []string{"a.proto", "b.proto", "common.proto"}, []string{"c.proto"})
	if fileOf(t, third, "c.proto") != fileOf(t, second, "c.proto") {
		t.Error("c.proto was not reused as it was")
	}
	if f := third.Services[1].Methods().Get(0).Output().Fields(); f.Len() != 2 {
		t.Errorf("b's output has %d fields, want the edited common.M's 2", f.Len())
	}
}

// TestProtoSourceReuseAcrossErrors: a compile error after an edit is
// reported; once fixed, the next compile still reuses the last successful
// compile's files that did not change. A deleted import is an error too,
// and its return with the content it had compiles nothing.
func TestProtoSourceReuseAcrossErrors(t *testing.T) {
	t.Parallel()
	tr := newReuseTree(t)
	discoverSource(t, tr.src)

	tr.edit("b.proto", "message Req {", "message Req { oops")
	if _, err := tr.src.Discover(t.Context()); err == nil || !strings.Contains(err.Error(), "b.proto:") {
		t.Fatalf("Discover after a broken edit: got %v, want an error in b.proto", err)
	}
	if compiled, _ := tr.last(); !slices.Equal(compiled, []string{"b.proto"}) {
		t.Errorf("the broken compile compiled %q, want only b.proto", compiled)
	}
	// Fixed into another content than the last good compile's, which
	// would be reused as it was.
	tr.edit("b.proto", "message Req { oops", "// Fixed.\nmessage Req {")
	tr.wantCompiled(discoverSource(t, tr.src), []string{"b.proto"}, []string{"a.proto", "c.proto", "common.proto"})

	common := filepath.Join(tr.dirs[1], "common.proto")
	if err := os.Remove(common); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.src.Discover(t.Context()); err == nil || !strings.Contains(err.Error(), "common.proto") {
		t.Fatalf("Discover after deleting an import: got %v, want an error naming common.proto", err)
	}
	// Back as it was in the last good compile: nothing to compile.
	tr.write("common.proto", reuseFiles["common.proto"])
	tr.wantCompiled(discoverSource(t, tr.src), nil, []string{"a.proto", "b.proto", "c.proto", "common.proto"})
}

// TestProtoSourceReuseSeesAddedAndRemovedShadows: a file added earlier on
// the import paths than the one an import was found at recompiles that
// import and its importers from the new file; removing it again goes
// back to the first one, and the files that import neither are reused
// throughout.
func TestProtoSourceReuseSeesAddedAndRemovedShadows(t *testing.T) {
	t.Parallel()
	tr := newReuseTree(t)
	discoverSource(t, tr.src)

	shadow := filepath.Join(tr.dirs[0], "common.proto")
	if err := os.WriteFile(shadow, []byte("syntax = \"proto3\";\npackage common;\nmessage M { int64 id = 1; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := discoverSource(t, tr.src)
	tr.wantCompiled(res, []string{"a.proto", "b.proto", "common.proto"}, []string{"c.proto"})
	if f := fileOf(t, res, "common.proto").Messages().Get(0).Fields().Get(0); f.Name() != "id" {
		t.Errorf("common.M's field is %s, want the shadowing file's id", f.Name())
	}

	if err := os.Remove(shadow); err != nil {
		t.Fatal(err)
	}
	res = discoverSource(t, tr.src)
	tr.wantCompiled(res, []string{"a.proto", "b.proto", "common.proto"}, []string{"c.proto"})
	if f := fileOf(t, res, "common.proto").Messages().Get(0).Fields().Get(0); f.Name() != "name" {
		t.Errorf("common.M's field is %s, want the first file's name", f.Name())
	}
}
