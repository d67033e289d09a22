package descriptors_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	zoov1 "github.com/grpc-mcp-gateway/gateway/examples/zoo/gen/zoo/v1"
	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zootest"
)

// zooBinpb is the zoo API as a descriptor set with source info, built by
// `make generate` (go tool -modfile=tools/go.mod buf build
// examples/zoo/proto -o descriptors/testdata/zoo.binpb);
// TestZooDescriptorSetIsCurrent fails when it is stale.
const zooBinpb = "testdata/zoo.binpb"

// zooProtoSource compiles the zoo's .proto files from the repository.
func zooProtoSource() *descriptors.ProtoSource {
	return descriptors.NewProtoSource([]string{"../examples/zoo/proto", "../proto"}, []string{"zoo/v1/zoo.proto"})
}

type sourceCase struct {
	name string
	// source is built per test, since reflection needs a running server.
	source func(t *testing.T) descriptors.Source
	// comments: whether the source carries the .proto comments.
	comments bool
}

// allSources are the ways to learn the zoo API, each of which must give
// the same services and types (grpcurl's approach: one set of assertions,
// run once per source).
func allSources() []sourceCase {
	reflect := func(t *testing.T) descriptors.Source {
		return descriptors.NewServerReflection(zootest.Dial(t, zootest.Start(t)), nil)
	}
	return []sourceCase{
		{"reflection", reflect, false},
		{"descriptor set", func(*testing.T) descriptors.Source { return descriptors.NewDescriptorSetSource(zooBinpb) }, true},
		{"proto files", func(*testing.T) descriptors.Source { return zooProtoSource() }, true},
		{"reflection with descriptor set overlay", func(t *testing.T) descriptors.Source {
			return descriptors.Overlay(reflect(t), descriptors.NewDescriptorSetSource(zooBinpb), nil)
		}, true},
	}
}

func discoverSource(t *testing.T, src descriptors.Source) *descriptors.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	res, err := src.Discover(ctx)
	if ps, ok := src.(*descriptors.ProtoSource); ok {
		// A compile writes its cache entry in the background: the test's
		// temporary directories are removed only once it is written
		// (cleanups run last registered first).
		t.Cleanup(func() { descriptors.WaitCacheWrites(ps) })
	}
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func zooService(t *testing.T, res *descriptors.Result) protoreflect.ServiceDescriptor {
	t.Helper()
	i := slices.IndexFunc(res.Services, func(sd protoreflect.ServiceDescriptor) bool { return sd.FullName() == "zoo.v1.ZooService" })
	if i < 0 {
		t.Fatalf("no zoo.v1.ZooService in %v", serviceNames(res))
	}
	return res.Services[i]
}

func TestEverySource(t *testing.T) {
	t.Parallel()
	for _, sc := range allSources() {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			res := discoverSource(t, sc.source(t))
			sd := zooService(t, res)

			t.Run("methods", func(t *testing.T) {
				var got []string
				for i := range sd.Methods().Len() {
					m := sd.Methods().Get(i)
					kind := "unary"
					switch {
					case m.IsStreamingClient() && m.IsStreamingServer():
						kind = "bidi"
					case m.IsStreamingClient():
						kind = "client"
					case m.IsStreamingServer():
						kind = "server"
					}
					got = append(got, string(m.Name())+" "+kind+" "+string(m.Input().FullName())+" "+string(m.Output().FullName()))
				}
				want := []string{
					"GetAnimal unary zoo.v1.GetAnimalRequest zoo.v1.GetAnimalResponse",
					"ListAnimals unary zoo.v1.ListAnimalsRequest zoo.v1.ListAnimalsResponse",
					"CreateAnimal unary zoo.v1.CreateAnimalRequest zoo.v1.CreateAnimalResponse",
					"UpdateAnimal unary zoo.v1.UpdateAnimalRequest zoo.v1.UpdateAnimalResponse",
					"DeleteAnimal unary zoo.v1.DeleteAnimalRequest google.protobuf.Empty",
					"FeedAnimal unary zoo.v1.FeedAnimalRequest zoo.v1.FeedAnimalResponse",
					"GetNextFeedingTime unary zoo.v1.GetNextFeedingTimeRequest google.protobuf.Timestamp",
					"ListEnclosures unary zoo.v1.ListEnclosuresRequest zoo.v1.ListEnclosuresResponse",
					"GetTaxonomy unary zoo.v1.GetTaxonomyRequest zoo.v1.GetTaxonomyResponse",
					"WatchFeedings server zoo.v1.WatchFeedingsRequest zoo.v1.WatchFeedingsResponse",
					"RecordObservations client zoo.v1.RecordObservationsRequest zoo.v1.RecordObservationsResponse",
					"ChatWithKeeper bidi zoo.v1.ChatWithKeeperRequest zoo.v1.ChatWithKeeperResponse",
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("methods (-want +got):\n%s", diff)
				}
			})

			t.Run("message shapes match the compiled ones", func(t *testing.T) {
				got, err := res.Files.FindFileByPath("zoo/v1/zoo.proto")
				if err != nil {
					t.Fatal(err)
				}
				gotp := protodesc.ToFileDescriptorProto(got)
				gotp.SourceCodeInfo = nil
				if diff := cmp.Diff(descriptors.Decoded(protodesc.ToFileDescriptorProto(zoov1.File_zoo_v1_zoo_proto)), descriptors.Decoded(gotp), protocmp.Transform()); diff != "" {
					t.Errorf("zoo.proto differs from the generated code's (-want +got):\n%s", diff)
				}
				animal := mustMessage(t, res, "zoo.v1.Animal")
				if f := animal.Fields().ByName("weight_kg_by_year"); !f.IsMap() || f.MapKey().Kind() != protoreflect.Int32Kind || f.MapValue().Kind() != protoreflect.DoubleKind {
					t.Errorf("Animal.weight_kg_by_year: %v", f)
				}
				if f := animal.Fields().ByName("birth_time"); f.Message() == nil || f.Message().FullName() != "google.protobuf.Timestamp" || f.Message().IsPlaceholder() {
					t.Errorf("Animal.birth_time: %v", f)
				}
				feed := mustMessage(t, res, "zoo.v1.FeedAnimalRequest")
				if feed.Oneofs().Len() == 0 {
					t.Error("FeedAnimalRequest lost its oneof")
				}
				checkResolved(t, animal, map[protoreflect.FullName]bool{})
			})

			t.Run("comments", func(t *testing.T) {
				m := sd.Methods().ByName("GetAnimal")
				got := res.Comments.Location(m).LeadingComments
				want := ""
				if sc.comments {
					want = " Returns one animal by id, for example \"leo\".\n\n Fails with NOT_FOUND (and a ResourceInfo naming the animal) when no\n animal has that id.\n"
				}
				if got != want {
					t.Errorf("GetAnimal leading comment = %q, want %q", got, want)
				}
				if sc.comments {
					f := mustMessage(t, res, "zoo.v1.Animal").Fields().ByName("labels")
					if c := res.Comments.Location(f).LeadingComments; c == "" {
						t.Error("Animal.labels has no comment")
					}
				}
			})

			t.Run("gateway options", func(t *testing.T) {
				get := descriptors.ToolOptions(sd.Methods().ByName("GetAnimal"))
				if get.GetTitle() != "Look up an animal" || get.OpenWorldHint == nil || get.GetOpenWorldHint() || get.ReadOnlyHint != nil {
					t.Errorf("GetAnimal tool options = %v", get)
				}
				del := descriptors.ToolOptions(sd.Methods().ByName("DeleteAnimal"))
				if del.GetTitle() != "Remove an animal" || !del.GetDestructiveHint() {
					t.Errorf("DeleteAnimal tool options = %v", del)
				}
				if o := descriptors.ToolOptions(sd.Methods().ByName("ListAnimals")); o != nil {
					t.Errorf("ListAnimals tool options = %v, want nil", o)
				}
				if o := descriptors.ServiceOptions(sd); o != nil {
					t.Errorf("service options = %v, want nil", o)
				}
			})

			t.Run("one Timestamp", func(t *testing.T) {
				// Descriptor sets and reflection may carry their own
				// copies of well-known files, which is fine; what matters
				// is that the name resolves to the type the fields use.
				d, err := res.Files.FindDescriptorByName("google.protobuf.Timestamp")
				if err != nil {
					t.Fatal(err)
				}
				used := sd.Methods().ByName("GetNextFeedingTime").Output()
				if d != used {
					t.Errorf("google.protobuf.Timestamp in Files is not the one methods use")
				}
			})
		})
	}
}

// TestZooDescriptorSetIsCurrent fails when testdata/zoo.binpb no longer
// matches examples/zoo/proto: every file it shares with the .proto sources
// must have the same shape and the same comment on every element. (Source
// info is not compared as a whole: buf's compiler and the protocompile
// release linked here order and detail locations differently.)
func TestZooDescriptorSetIsCurrent(t *testing.T) {
	t.Parallel()
	const fix = "run `make generate` (or: go tool -modfile=tools/go.mod buf build examples/zoo/proto -o descriptors/testdata/zoo.binpb)"
	set := discoverSource(t, descriptors.NewDescriptorSetSource(zooBinpb))
	compiled := discoverSource(t, zooProtoSource())
	checked := 0
	compiled.Files.RangeFiles(func(want protoreflect.FileDescriptor) bool {
		if strings.HasPrefix(want.Path(), "google/") {
			return true // bundled: another version than buf's is fine
		}
		checked++
		got, err := set.Files.FindFileByPath(want.Path())
		if err != nil {
			t.Errorf("%s lacks %s; %s", zooBinpb, want.Path(), fix)
			return true
		}
		wantp, gotp := descriptors.Decoded(protodesc.ToFileDescriptorProto(want)), descriptors.Decoded(protodesc.ToFileDescriptorProto(got))
		wantp.SourceCodeInfo, gotp.SourceCodeInfo = nil, nil
		if diff := cmp.Diff(wantp, gotp, protocmp.Transform()); diff != "" {
			t.Errorf("%s in %s is stale; %s (-current +stale):\n%s", want.Path(), zooBinpb, fix, diff)
			return true
		}
		if diff := cmp.Diff(elementComments(want, compiled.Comments), elementComments(got, set.Comments)); diff != "" {
			t.Errorf("comments of %s in %s are stale; %s (-current +stale):\n%s", want.Path(), zooBinpb, fix, diff)
		}
		return true
	})
	if checked < 2 {
		t.Errorf("compared %d files, want zoo.proto and annotations.proto", checked)
	}
}

// elementComments maps each element of fd with a comment to its leading
// and trailing comments.
func elementComments(fd protoreflect.FileDescriptor, c *descriptors.Comments) map[protoreflect.FullName]string {
	out := make(map[protoreflect.FullName]string)
	var visit func(d protoreflect.Descriptor)
	add := func(d protoreflect.Descriptor) {
		loc := c.Location(d)
		if c := loc.LeadingComments + "|" + loc.TrailingComments; c != "|" {
			out[d.FullName()] = c
		}
	}
	visit = func(d protoreflect.Descriptor) {
		add(d)
		switch d := d.(type) {
		case protoreflect.MessageDescriptor:
			for i := range d.Fields().Len() {
				add(d.Fields().Get(i))
			}
			for i := range d.Oneofs().Len() {
				add(d.Oneofs().Get(i))
			}
			for i := range d.Messages().Len() {
				visit(d.Messages().Get(i))
			}
			for i := range d.Enums().Len() {
				visit(d.Enums().Get(i))
			}
		case protoreflect.EnumDescriptor:
			for i := range d.Values().Len() {
				add(d.Values().Get(i))
			}
		case protoreflect.ServiceDescriptor:
			for i := range d.Methods().Len() {
				add(d.Methods().Get(i))
			}
		}
	}
	for i := range fd.Messages().Len() {
		visit(fd.Messages().Get(i))
	}
	for i := range fd.Enums().Len() {
		visit(fd.Enums().Get(i))
	}
	for i := range fd.Services().Len() {
		visit(fd.Services().Get(i))
	}
	for i := range fd.Extensions().Len() {
		add(fd.Extensions().Get(i))
	}
	return out
}

func writeSet(t *testing.T, files ...protoreflect.FileDescriptor) string {
	t.Helper()
	set := &descriptorpb.FileDescriptorSet{}
	for _, fd := range files {
		set.File = append(set.File, protodesc.ToFileDescriptorProto(fd))
	}
	b, err := proto.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "api.binpb")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDescriptorSetErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.binpb")
	if err := os.WriteFile(garbage, []byte("syntax = \"proto3\";\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.binpb")

	// zoo.proto without its imports, and with an import of a file the
	// gateway cannot bundle.
	zoo := protodesc.ToFileDescriptorProto(zoov1.File_zoo_v1_zoo_proto)
	zoo.Dependency = append(zoo.Dependency, "acme/pets.proto")
	zoo.MessageType[0].Field[0].TypeName = proto.String(".acme.Pet")
	zoo.MessageType[0].Field[0].Type = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum()
	b, _ := proto.Marshal(&descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{zoo}})
	noImport := filepath.Join(dir, "noimport.binpb")
	if err := os.WriteFile(noImport, b, 0o644); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name  string
		path  string
		wants []string
	}{
		{"unreadable", missing, []string{missing, "no such file"}},
		{"not a descriptor set", garbage, []string{garbage}},
		{"missing import", noImport, []string{noImport, "file zoo/v1/zoo.proto", "imports acme/pets.proto"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := descriptors.NewDescriptorSetSource(tc.path).Discover(t.Context())
			wantError(t, err, tc.wants...)
		})
	}
}

func TestDescriptorSetWithoutImportsUsesBundle(t *testing.T) {
	t.Parallel()
	// Built without --include_imports: only zoo.proto, whose
	// google/protobuf and mcpgateway imports come from the bundle.
	res := discoverSource(t, descriptors.NewDescriptorSetSource(writeSet(t, zoov1.File_zoo_v1_zoo_proto)))
	sd := zooService(t, res)
	got := sd.Methods().ByName("GetNextFeedingTime").Output().ParentFile()
	want, _ := protoregistry.GlobalFiles.FindFileByPath("google/protobuf/timestamp.proto")
	if got != want {
		t.Errorf("Timestamp comes from %v, want the bundled file", got.Path())
	}
}

func TestDescriptorSetsMerge(t *testing.T) {
	t.Parallel()
	a := writeSet(t, zoov1.File_zoo_v1_zoo_proto)
	res := discoverSource(t, descriptors.NewDescriptorSetSource(zooBinpb, a))
	if diff := cmp.Diff([]string{"zoo.v1.ZooService"}, serviceNames(res)); diff != "" {
		t.Errorf("services (-want +got):\n%s", diff)
	}
}

func TestProtoSourceErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("bad.proto", "syntax = \"proto3\";\npackage bad.v1;\nmessage M {\n  strin name = 1;\n  Missing other = 2;\n}\n")
	write("imports.proto", "syntax = \"proto3\";\npackage imp.v1;\nimport \"nowhere/x.proto\";\n")
	for _, tc := range []struct {
		file  string
		wants []string
	}{
		{"bad.proto", []string{"bad.proto:4:3", "strin", "bad.proto:5:3", "Missing"}},
		{"imports.proto", []string{"imports.proto:3:8", "nowhere/x.proto"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			_, err := descriptors.NewProtoSource([]string{dir}, []string{tc.file}).Discover(t.Context())
			wantError(t, err, tc.wants...)
		})
	}
}

func TestProtoSourceAcceptsPathsUnderImportPath(t *testing.T) {
	t.Parallel()
	src := descriptors.NewProtoSource([]string{"../examples/zoo/proto", "../proto"}, []string{"../examples/zoo/proto/zoo/v1/zoo.proto"})
	res := discoverSource(t, src)
	if diff := cmp.Diff([]string{"zoo.v1.ZooService"}, serviceNames(res)); diff != "" {
		t.Errorf("services (-want +got):\n%s", diff)
	}
}

// TestOverlayTakesCommentsElementByElement: the overlay's zoo.proto is a
// newer version of the API than the backend runs (Animal gained a field,
// and one field changed its type). Every element that exists in both as
// such takes its comment; only the changed field goes without, and that
// is logged.
func TestOverlayTakesCommentsElementByElement(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(zooBinpb)
	if err != nil {
		t.Fatal(err)
	}
	set := new(descriptorpb.FileDescriptorSet)
	if err := proto.Unmarshal(b, set); err != nil {
		t.Fatal(err)
	}
	var changed string
	for _, f := range set.File {
		if f.GetName() == "zoo/v1/zoo.proto" {
			animal := f.MessageType[0]
			animal.Field = append(animal.Field, &descriptorpb.FieldDescriptorProto{
				Name: proto.String("extra"), JsonName: proto.String("extra"), Number: proto.Int32(999),
				Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(),
			})
			for _, fd := range animal.Field {
				if fd.GetType() == descriptorpb.FieldDescriptorProto_TYPE_STRING && fd.GetName() != "extra" && fd.GetOneofIndex() == 0 && fd.OneofIndex == nil {
					fd.Type = descriptorpb.FieldDescriptorProto_TYPE_BYTES.Enum()
					changed = f.GetPackage() + "." + animal.GetName() + "." + fd.GetName()
					break
				}
			}
		}
	}
	if changed == "" {
		t.Fatal("the zoo's Animal has no string field to change")
	}
	b, _ = proto.Marshal(set)
	path := filepath.Join(t.TempDir(), "newer.binpb")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	base := descriptors.NewServerReflection(zootest.Dial(t, zootest.Start(t)), nil)
	res := discoverSource(t, descriptors.Overlay(base, descriptors.NewDescriptorSetSource(path), &descriptors.OverlayOptions{Logger: logger}))
	m := zooService(t, res).Methods().ByName("GetAnimal")
	if c := res.Comments.Location(m).LeadingComments; c == "" {
		t.Error("GetAnimal took no comment from a newer version of its file")
	}
	animal := m.Output()
	commented := 0
	for i := range animal.Fields().Len() {
		fd := animal.Fields().Get(i)
		c := res.Comments.Location(fd).LeadingComments
		if string(fd.FullName()) == changed && c != "" {
			t.Errorf("%s took the comment of a field of another type: %q", changed, c)
		}
		if c != "" {
			commented++
		}
	}
	if commented == 0 {
		t.Error("no field of Animal took its comment")
	}
	if !strings.Contains(log.String(), "file=zoo/v1/zoo.proto") || !strings.Contains(log.String(), changed) {
		t.Errorf("the field without its comment is not logged:\n%s", log.String())
	}
}

// TestOverlayLogsFilesWithoutComments: a comments' source that lacks a
// service's file entirely (another API, or the wrong set) leaves its
// tools described from their names, and the operator is told at Info.
func TestOverlayLogsFilesWithoutComments(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo}))
	base := descriptors.NewServerReflection(zootest.Dial(t, zootest.Start(t)), nil)
	other := descriptors.NewDescriptorSetSource(writeSet(t, descriptorpb.File_google_protobuf_descriptor_proto))
	res := discoverSource(t, descriptors.Overlay(base, other, &descriptors.OverlayOptions{Logger: logger}))
	if m := zooService(t, res).Methods().ByName("GetAnimal"); res.Comments.Location(m).LeadingComments != "" {
		t.Error("GetAnimal took a comment from a set without its file")
	}
	if !strings.Contains(log.String(), "took no comment") || !strings.Contains(log.String(), "zoo/v1/zoo.proto") {
		t.Errorf("the file without comments is not logged at Info:\n%s", log.String())
	}
}

func TestOverlayPassesErrorsOn(t *testing.T) {
	t.Parallel()
	base := descriptors.NewDescriptorSetSource(zooBinpb)
	_, err := descriptors.Overlay(base, descriptors.NewDescriptorSetSource("nope.binpb"), nil).Discover(t.Context())
	if err == nil || !strings.Contains(err.Error(), "nope.binpb") {
		t.Errorf("err = %v, want one naming nope.binpb", err)
	}
	_, err = descriptors.Overlay(descriptors.NewDescriptorSetSource("nope.binpb"), base, nil).Discover(t.Context())
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v, want the base's", err)
	}
}

// wantError fails unless err is an error whose text holds every want.
func wantError(t *testing.T, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("Discover succeeded")
	}
	t.Logf("error: %v", err)
	for _, want := range wants {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}
