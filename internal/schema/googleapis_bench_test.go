package schema

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// googleapisDir holds the googleapis .proto sources with their comments,
// the npm package estate/ installs for its catalog benchmark (see
// estate/catalog_bench_test.go).
var googleapisDir = filepath.Join("..", "..", "estate", "testdata", "googleapis", "node_modules", "google-proto-files")

// haveGoogleapis reports whether the googleapis sources are installed.
func haveGoogleapis() bool {
	_, err := os.Stat(googleapisDir)
	return err == nil
}

// googleapisMethods compiles, with their comments, the .proto files of
// the Compute Engine v1 and Vertex AI v1 APIs that define a service (a
// wide API and a deep one, whose messages reach much of it), and returns
// their methods; it skips without the sources.
func googleapisMethods(tb testing.TB) []protoreflect.MethodDescriptor {
	tb.Helper()
	if !haveGoogleapis() {
		tb.Skipf("%s is missing: run `cd estate/testdata/googleapis && npm ci --no-audit --no-fund --ignore-scripts`", googleapisDir)
	}
	var names []string
	for _, dir := range []string{"google/cloud/compute/v1", "google/cloud/aiplatform/v1"} {
		err := filepath.WalkDir(filepath.Join(googleapisDir, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".proto") {
				return err
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if strings.Contains(string(raw), "\nservice ") {
				rel, err := filepath.Rel(googleapisDir, path)
				if err != nil {
					return err
				}
				names = append(names, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	slices.Sort(names)
	c := protocompile.Compiler{
		Resolver:       protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: []string{googleapisDir}}),
		SourceInfoMode: protocompile.SourceInfoStandard,
	}
	files, err := c.Compile(context.Background(), names...)
	if err != nil {
		tb.Fatal(err)
	}
	var methods []protoreflect.MethodDescriptor
	for _, f := range files {
		for i := range f.Services().Len() {
			ms := f.Services().Get(i).Methods()
			for j := range ms.Len() {
				methods = append(methods, ms.Get(j))
			}
		}
	}
	return methods
}

// BenchmarkGoogleapisSchemas is the schema work of one discovery of the
// Compute Engine v1 and Vertex AI v1 APIs, as the gateway's compile cache
// does it: each distinct request message's input schema, each distinct
// response message's output schema with ReadTruncation,
// and, for a schema over 32 KiB, its bounded form within 32 KiB (the
// bounded builds repeat the comments and field options of the same
// messages). Options, and their Memo, are new each iteration, as they are
// per discovery.
func BenchmarkGoogleapisSchemas(b *testing.B) {
	methods := googleapisMethods(b)
	var ins, outs []protoreflect.MessageDescriptor
	seenIn, seenOut := map[protoreflect.FullName]bool{}, map[protoreflect.FullName]bool{}
	for _, m := range methods {
		if !seenIn[m.Input().FullName()] {
			seenIn[m.Input().FullName()] = true
			ins = append(ins, m.Input())
		}
		if !seenOut[m.Output().FullName()] {
			seenOut[m.Output().FullName()] = true
			outs = append(outs, m.Output())
		}
	}
	const bound = 32 << 10
	b.Logf("%d methods, %d request and %d response messages", len(methods), len(ins), len(outs))
	b.ReportAllocs()
	for b.Loop() {
		opts := &Options{Memo: &Memo{}}
		for _, md := range ins {
			s, err := Input(md, opts)
			if err != nil {
				b.Fatal(err)
			}
			if len(s) > bound {
				if _, err := InputWithin(md, opts, Bound{MaxBytes: bound, WholeBytes: len(s)}); err != nil {
					b.Fatal(err)
				}
			}
		}
		for _, md := range outs {
			s, err := Output(md, opts)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := ReadTruncation(s); err != nil {
				b.Fatal(err)
			}
			if len(s) > bound {
				if _, err := OutputWithin(md, opts, Bound{MaxBytes: bound, WholeBytes: len(s), WholeRoot: true}); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}

// BenchmarkGoogleapisWithTruncated is WithTruncated and RootRequired on
// every distinct output schema of the Compute Engine v1 and Vertex AI v1
// APIs: ReadTruncation, as discovery calls it ("read-once"), the two
// functions it combines ("scanned"), and the decoding they replaced
// ("decoded", the oracle of truncated_oracle_test.go).
func BenchmarkGoogleapisWithTruncated(b *testing.B) {
	var schemas []json.RawMessage
	seen := map[protoreflect.FullName]bool{}
	for _, m := range googleapisMethods(b) {
		if md := m.Output(); !seen[md.FullName()] {
			seen[md.FullName()] = true
			s, err := Output(md, nil)
			if err != nil {
				b.Fatal(err)
			}
			schemas = append(schemas, s)
		}
	}
	readOnce := func(s json.RawMessage) (json.RawMessage, string, bool, error) {
		t, err := ReadTruncation(s)
		return t.Schema, t.Member, t.Merge, err
	}
	for _, c := range []struct {
		name      string
		truncated func(json.RawMessage) (json.RawMessage, string, bool, error)
		required  func(json.RawMessage) ([]string, error)
	}{
		{"read-once", readOnce, func(json.RawMessage) ([]string, error) { return nil, nil }},
		{"scanned", WithTruncated, RootRequired},
		{"decoded", decodedWithTruncated, decodedRootRequired},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, s := range schemas {
					if _, _, _, err := c.truncated(s); err != nil {
						b.Fatal(err)
					}
					if _, err := c.required(s); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
