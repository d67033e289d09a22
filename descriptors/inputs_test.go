package descriptors_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zootest"
)

// fileSource is a file source under test, over files in a temp dir it
// can edit.
type fileSource struct {
	src descriptors.Source
	// write writes the source's main file with a version of the API:
	// another v gives another API of the same byte size.
	write func(v int)
	// compiles counts the compiles (ProtoSource only; -1 elsewhere).
	compiles func() int
	// path is the main file.
	path string
}

func newProtoFileSource(t *testing.T) fileSource {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "api.proto")
	write := func(v int) {
		text := "syntax = \"proto3\";\npackage api.v1;\nimport \"common.proto\";\n// Version " + string(rune('0'+v)) + ".\nservice S {\n  rpc Get(common.M) returns (common.M);\n}\n"
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(1)
	if err := os.WriteFile(filepath.Join(dir, "common.proto"), []byte("syntax = \"proto3\";\npackage common;\nmessage M { string name = 1; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := descriptors.NewProtoSource([]string{dir}, []string{"api.proto"})
	var n atomic.Int32
	descriptors.SetCompileHook(src, func() { n.Add(1) })
	return fileSource{src: src, write: write, compiles: func() int { return int(n.Load()) }, path: path}
}

func newSetFileSource(t *testing.T) fileSource {
	t.Helper()
	path := filepath.Join(t.TempDir(), "api.binpb")
	write := func(v int) {
		fd := &descriptorpb.FileDescriptorProto{
			Name:    proto.String("api.proto"),
			Package: proto.String("api.v1"),
			Syntax:  proto.String("proto3"),
			MessageType: []*descriptorpb.DescriptorProto{{
				Name: proto.String("M"),
				Field: []*descriptorpb.FieldDescriptorProto{{
					Name: proto.String("name"), Number: proto.Int32(int32(v)), JsonName: proto.String("name"),
					Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
				}},
			}},
			Service: []*descriptorpb.ServiceDescriptorProto{{
				Name:   proto.String("S"),
				Method: []*descriptorpb.MethodDescriptorProto{{Name: proto.String("Get"), InputType: proto.String(".api.v1.M"), OutputType: proto.String(".api.v1.M")}},
			}},
		}
		b, err := proto.Marshal(&descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{fd}})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(1)
	return fileSource{src: descriptors.NewDescriptorSetSource(path), write: write, compiles: func() int { return -1 }, path: path}
}

// setMtime sets path's modification time.
func setMtime(t *testing.T, path string, mtime time.Time) {
	t.Helper()
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// TestFileSourcesSkipUnchanged: a file source whose files did not change
// returns its last Result, the same one (so the gateway rebuilds
// nothing), without compiling; a touched file with the same content is no
// change; an edited one is, even when it keeps its size and time, within
// the rules of inputs.go: at once when the file was written just before
// it was read (racy), and at the periodic full check otherwise.
func TestFileSourcesSkipUnchanged(t *testing.T) {
	t.Parallel()
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	for _, tc := range []struct {
		name string
		// change edits the files after the first Discover; checks is how
		// many Discovers it takes to see a change (0: none is seen
		// within RehashEvery).
		change func(t *testing.T, fs fileSource)
		checks int
	}{
		{"nothing", func(*testing.T, fileSource) {}, 0},
		{"touched", func(t *testing.T, fs fileSource) { setMtime(t, fs.path, old.Add(time.Minute)) }, 0},
		{"edited", func(t *testing.T, fs fileSource) { fs.write(2) }, 1},
		{"edited, same size and time, racy", func(t *testing.T, fs fileSource) {
			fi, _ := os.Stat(fs.path)
			fs.write(2)
			setMtime(t, fs.path, fi.ModTime())
		}, 1},
		{"edited, same size and time restored", func(t *testing.T, fs fileSource) {
			fs.write(2)
			setMtime(t, fs.path, old)
		}, descriptors.RehashEvery},
	} {
		for _, kind := range []struct {
			name string
			make func(t *testing.T) fileSource
		}{{"proto", newProtoFileSource}, {"descriptor set", newSetFileSource}} {
			t.Run(kind.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				fs := kind.make(t)
				racy := tc.name == "edited, same size and time, racy"
				if !racy {
					setMtime(t, fs.path, old) // read long after it was written
				}
				first := discoverSource(t, fs.src)
				if first.Fingerprint == ([32]byte{}) {
					t.Fatal("a file source's Result has no Fingerprint")
				}
				tc.change(t, fs)
				for i := 1; i <= descriptors.RehashEvery; i++ {
					res := discoverSource(t, fs.src)
					changed := res != first
					if want := i == tc.checks; changed != want {
						t.Fatalf("Discover %d after the change: new Result %v, want %v", i, changed, want)
					}
					if changed {
						if res.Fingerprint == first.Fingerprint {
							t.Error("a new API kept the Fingerprint")
						}
						break
					}
				}
				if n := fs.compiles(); n >= 0 {
					want := 1
					if tc.checks > 0 {
						want = 2
					}
					if n != want {
						t.Errorf("%d compiles, want %d", n, want)
					}
				}
			})
		}
	}
}

// TestProtoSourceSeesShadowingImport: an import found in the second
// import path is looked for in the first one too; a file appearing there
// would be compiled instead, so it is a change.
func TestProtoSourceSeesShadowingImport(t *testing.T) {
	t.Parallel()
	first, second := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(second, "api.proto"), []byte("syntax = \"proto3\";\npackage api.v1;\nimport \"common.proto\";\nservice S {\n  rpc Get(common.M) returns (common.M);\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(second, "common.proto"), []byte("syntax = \"proto3\";\npackage common;\nmessage M { string name = 1; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := descriptors.NewProtoSource([]string{first, second}, []string{"api.proto"})
	a := discoverSource(t, src)
	if b := discoverSource(t, src); b != a {
		t.Fatal("unchanged files gave a new Result")
	}
	if err := os.WriteFile(filepath.Join(first, "common.proto"), []byte("syntax = \"proto3\";\npackage common;\nmessage M { int64 id = 1; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := discoverSource(t, src)
	if b == a {
		t.Fatal("a file shadowing an import gave the last Result")
	}
	if f := b.Services[0].Methods().Get(0).Input().Fields().Get(0); f.Name() != "id" {
		t.Errorf("common.M's field is %s, want the shadowing file's id", f.Name())
	}
}

// TestProtoSourceCompileOutlivesDeadline: a compile longer than a
// discovery's deadline is reported as such, goes on, and is the one the
// next discoveries wait for and take: it is never started again, and
// concurrent discoveries share it.
func TestProtoSourceCompileOutlivesDeadline(t *testing.T) {
	t.Parallel()
	fs := newProtoFileSource(t)
	src := fs.src.(*descriptors.ProtoSource)
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	var compiles atomic.Int32
	descriptors.SetCompileHook(src, func() {
		compiles.Add(1)
		started <- struct{}{}
		<-release
	})

	expired, cancel := context.WithDeadline(context.Background(), time.Now())
	defer cancel()
	for i := range 3 {
		_, err := src.Discover(expired)
		var cte *descriptors.CompileTimeoutError
		if !errors.As(err, &cte) || !errors.Is(err, context.DeadlineExceeded) || cte.Files != 1 {
			t.Fatalf("attempt %d: err = %v, want a *CompileTimeoutError for 1 file wrapping the deadline", i, err)
		}
		wantError(t, err, "compiling 1 .proto files", "past the discovery's deadline; it goes on")
	}
	<-started // the first attempt's compile, held by the hook

	results := make([]any, 4)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			res, err := src.Discover(context.Background())
			if err != nil {
				results[i] = err
				return
			}
			results[i] = res
		})
	}
	close(release)
	wg.Wait()
	for i, r := range results {
		if r != results[0] {
			t.Errorf("discovery %d got %v, discovery 0 %v: want the same Result", i, r, results[0])
		}
	}
	if n := compiles.Load(); n != 1 {
		t.Errorf("%d compiles, want 1", n)
	}
}

// TestProtoSourceCancelled: a Discover cancelled (not timed out) while the
// compile runs says so, without a CompileTimeoutError.
func TestProtoSourceCancelled(t *testing.T) {
	t.Parallel()
	fs := newProtoFileSource(t)
	src := fs.src.(*descriptors.ProtoSource)
	release := make(chan struct{})
	descriptors.SetCompileHook(src, func() { <-release })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := src.Discover(ctx)
	var cte *descriptors.CompileTimeoutError
	if errors.As(err, &cte) || !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled and no *CompileTimeoutError", err)
	}
	close(release)
	discoverSource(t, src) // the compile ends before the test does
}

// TestProtoSourceEditionNotSupported: a file of an edition the compiler
// does not know (the google/protobuf sources of recent protobuf releases
// are edition 2024) is named, with the edition and what to do instead.
func TestProtoSourceEditionNotSupported(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "google", "protobuf"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "google", "protobuf", "cpp_features.proto"), []byte("edition = \"2024\";\npackage pb;\nmessage M {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "api.proto"), []byte("syntax = \"proto3\";\npackage api.v1;\nimport \"google/protobuf/cpp_features.proto\";\nservice S {\n  rpc Get(pb.M) returns (pb.M);\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := descriptors.NewProtoSource([]string{dir}, []string{"api.proto"}).Discover(t.Context())
	wantError(t, err, "google/protobuf/cpp_features.proto:1:11", `edition "2024" is not supported by the gateway's .proto compiler`, "descriptor set built by buf or protoc")
}

// TestOverlayUnchanged: the overlay of unchanged reflection and unchanged
// files returns its last Result, grafting and compiling nothing.
func TestOverlayUnchanged(t *testing.T) {
	t.Parallel()
	files := descriptors.NewProtoSource([]string{"../examples/zoo/proto", "../proto"}, []string{"zoo/v1/zoo.proto"})
	var compiles atomic.Int32
	descriptors.SetCompileHook(files, func() { compiles.Add(1) })
	base := descriptors.NewServerReflection(zootest.Dial(t, zootest.Start(t)), nil)
	src := descriptors.Overlay(base, files, nil)
	first := discoverSource(t, src)
	if first.Fingerprint == ([32]byte{}) {
		t.Fatal("the overlay's Result has no Fingerprint")
	}
	for range 3 {
		if res := discoverSource(t, src); res != first {
			t.Fatal("an unchanged overlay gave a new Result")
		}
	}
	if n := compiles.Load(); n != 1 {
		t.Errorf("%d compiles, want 1", n)
	}
	// The comments arrived: the overlay is not trivially the base.
	if m := zooService(t, first).Methods().ByName("GetAnimal"); first.Comments.Location(m).LeadingComments == "" {
		t.Error("GetAnimal took no comment")
	}
}

// TestFileSourcesRetryUnreadableFiles: a file that could not be read (here
// a directory where the file should be) is not remembered as an outcome:
// once it can be read, the next Discover reads it.
func TestFileSourcesRetryUnreadableFiles(t *testing.T) {
	t.Parallel()
	for _, kind := range []struct {
		name string
		make func(t *testing.T) fileSource
	}{{"proto", newProtoFileSource}, {"descriptor set", newSetFileSource}} {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			fs := kind.make(t)
			text, err := os.ReadFile(fs.path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(fs.path); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(fs.path, 0o755); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if _, err := fs.src.Discover(t.Context()); err == nil {
					t.Fatal("a directory in place of the file was read")
				}
			}
			if err := os.Remove(fs.path); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(fs.path, text, 0o644); err != nil {
				t.Fatal(err)
			}
			discoverSource(t, fs.src)
		})
	}
}
