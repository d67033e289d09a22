package estate_test

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
)

// BenchmarkProtoSourceEdit measures what an edit of one file costs a
// ProtoSource over every googleapis .proto file that defines a service
// (issue 22's big catalog), against a compile from nothing. The catalog
// is copied into a temp dir first, so the edits never touch the npm
// package. Sub-benchmarks, one iteration being one Discover:
//
//   - full: a fresh source's first Discover, the whole compile;
//   - edit-leaf: a Discover after an edit of a file nothing imports
//     (google/cloud/language/v2/language_service.proto): that file alone
//     is compiled, every other reused;
//   - edit-shared: the same after an edit of google/type/date.proto,
//     which 76 files import directly: it and its importers, transitively,
//     are compiled;
//   - restart-cache: a new source's first Discover over the cache
//     directory the first one wrote (ProtoSource.CacheDir), no file
//     changed: no compile; entry-MiB and write-ms are the entry's size
//     and the time its write took (after the Result, in the background);
//   - restart-cache-edit-leaf: the same after an edit of the leaf file:
//     the cached descriptors serve as the last compile's, and that file
//     alone is compiled.
//
// Each reports ms (wall time to the Result), cpu-s (the process's CPU),
// and compiled and reused (the files the last compile parsed and linked,
// and those it took from the compile before). With
// PROTOSOURCE_EDIT_CHECK set, each edit sub-benchmark, and
// restart-cache, ends by comparing its last Result, file by file, with a
// compile from nothing.
//
//	cd estate && go test -run '^$' -bench BenchmarkProtoSourceEdit -benchtime 3x .
func BenchmarkProtoSourceEdit(b *testing.B) {
	files := googleapisServiceProtos(b)
	dir := copyProtos(b, googleapisDir)
	pid := os.Getpid()

	b.Run("full", func(b *testing.B) {
		var st compileStats
		var elapsed time.Duration
		cpu0 := cpuSeconds(b, pid)
		for b.Loop() {
			src := descriptors.NewProtoSource([]string{dir}, files)
			src.Logger = st.logger()
			start := time.Now()
			discoverOrFatal(b, src)
			elapsed += time.Since(start)
		}
		b.ReportMetric((cpuSeconds(b, pid)-cpu0)/float64(b.N), "cpu-s")
		b.ReportMetric(float64(elapsed.Milliseconds())/float64(b.N), "ms")
		st.report(b)
	})
	for _, c := range []struct{ name, file string }{
		{"edit-leaf", "google/cloud/language/v2/language_service.proto"},
		{"edit-shared", "google/type/date.proto"},
	} {
		b.Run(c.name, func(b *testing.B) {
			var st compileStats
			src := descriptors.NewProtoSource([]string{dir}, files)
			src.Logger = st.logger()
			discoverOrFatal(b, src)
			runtime.GC() // the first compile's garbage is not the edit's cost
			var elapsed time.Duration
			n := 0
			cpu0 := cpuSeconds(b, pid)
			for b.Loop() {
				n++
				appendComment(b, filepath.Join(dir, c.file), fmt.Sprintf("// Edit %d.\n", n))
				start := time.Now()
				discoverOrFatal(b, src)
				elapsed += time.Since(start)
			}
			b.ReportMetric((cpuSeconds(b, pid)-cpu0)/float64(b.N), "cpu-s")
			b.ReportMetric(float64(elapsed.Milliseconds())/float64(b.N), "ms")
			st.report(b)
			if os.Getenv("PROTOSOURCE_EDIT_CHECK") != "" {
				// What reuse gave is what a compile from nothing gives.
				wantSameFiles(b, discoverOrFatal(b, src), discoverOrFatal(b, descriptors.NewProtoSource([]string{dir}, files)))
			}
		})
	}

	// A restart: a new source over the same cache directory.
	cacheDir := b.TempDir()
	cached := func(st *compileStats) *descriptors.ProtoSource {
		src := descriptors.NewProtoSource([]string{dir}, files)
		src.CacheDir = cacheDir
		src.Logger = st.logger()
		return src
	}
	b.Run("restart-cache", func(b *testing.B) {
		var st compileStats
		discoverOrFatal(b, cached(&st))
		st.waitWrite(b)
		runtime.GC()
		var elapsed time.Duration
		var res *descriptors.Result
		cpu0 := cpuSeconds(b, pid)
		for b.Loop() {
			var st compileStats
			src := cached(&st)
			start := time.Now()
			res = discoverOrFatal(b, src)
			elapsed += time.Since(start)
			if st.recorded {
				b.Fatal("a restart with unchanged files compiled")
			}
		}
		if os.Getenv("PROTOSOURCE_EDIT_CHECK") != "" {
			wantSameFiles(b, res, discoverOrFatal(b, descriptors.NewProtoSource([]string{dir}, files)))
		}
		b.ReportMetric((cpuSeconds(b, pid)-cpu0)/float64(b.N), "cpu-s")
		b.ReportMetric(float64(elapsed.Milliseconds())/float64(b.N), "ms")
		// Reported after the loop, which resets the metrics.
		b.ReportMetric(float64(st.writeBytes)/(1<<20), "entry-MiB")
		b.ReportMetric(float64(st.writeDuration.Milliseconds()), "write-ms")
	})
	b.Run("restart-cache-edit-leaf", func(b *testing.B) {
		var st compileStats
		// An entry to restart from, when restart-cache did not run.
		discoverOrFatal(b, cached(&st))
		if st.recorded {
			st.waitWrite(b)
		}
		var elapsed time.Duration
		n := 0
		cpu := 0.0
		for b.Loop() {
			n++
			appendComment(b, filepath.Join(dir, "google/cloud/language/v2/language_service.proto"), fmt.Sprintf("// Restart edit %d.\n", n))
			st = compileStats{}
			src := cached(&st)
			cpu0 := cpuSeconds(b, pid)
			start := time.Now()
			discoverOrFatal(b, src)
			elapsed += time.Since(start)
			cpu += cpuSeconds(b, pid) - cpu0
			b.StopTimer()
			st.waitWrite(b) // the next restart finds this compile's entry
			b.StartTimer()
		}
		b.ReportMetric(cpu/float64(b.N), "cpu-s")
		b.ReportMetric(float64(elapsed.Milliseconds())/float64(b.N), "ms")
		st.report(b)
	})
}

// wantSameFiles fails b unless got and want hold the same files, as
// FileDescriptorProtos.
func wantSameFiles(b *testing.B, got, want *descriptors.Result) {
	b.Helper()
	n := 0
	want.Files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		n++
		g, err := got.Files.FindFileByPath(fd.Path())
		if err != nil {
			b.Errorf("%s: missing", fd.Path())
			return true
		}
		if normalized(b, g) != normalized(b, fd) {
			b.Errorf("%s differs from a compile from nothing", fd.Path())
		}
		return true
	})
	if got.Files.NumFiles() != n || len(got.Services) != len(want.Services) {
		b.Errorf("%d files and %d services, want %d and %d", got.Files.NumFiles(), len(got.Services), n, len(want.Services))
	}
}

// normalized is fd as text, its options in one representation: proto.Equal
// tells two compiles from nothing apart, their custom options being of
// dynamic extension types of their own, and a Result built from the
// cache holds the options of an API's own extensions (those with no Go
// type in the binary) as unknown fields, as a descriptor set's would be.
func normalized(b *testing.B, fd protoreflect.FileDescriptor) string {
	b.Helper()
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(protodesc.ToFileDescriptorProto(fd))
	if err != nil {
		b.Fatal(err)
	}
	var fdp descriptorpb.FileDescriptorProto
	if err := proto.Unmarshal(raw, &fdp); err != nil {
		b.Fatal(err)
	}
	return prototext.Format(&fdp)
}

func discoverOrFatal(b *testing.B, src descriptors.Source) *descriptors.Result {
	b.Helper()
	res, err := src.Discover(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return res
}

// compileStats keeps the figures of a ProtoSource's last "compiled" log
// record.
type compileStats struct {
	mu               sync.Mutex
	compiled, reused int64
	recorded         bool
	// written is closed when the cache entry was written.
	written       chan struct{}
	writeBytes    int64
	writeDuration time.Duration
}

// waitWrite waits for the source's write of its cache entry.
func (s *compileStats) waitWrite(b *testing.B) {
	b.Helper()
	s.mu.Lock()
	if s.written == nil {
		s.written = make(chan struct{})
	}
	w := s.written
	s.mu.Unlock()
	<-w
}

func (s *compileStats) logger() *slog.Logger {
	return slog.New(statsHandler{s: s})
}

func (s *compileStats) report(b *testing.B) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.recorded {
		b.Fatal("no compile was logged")
	}
	b.ReportMetric(float64(s.compiled), "compiled")
	b.ReportMetric(float64(s.reused), "reused")
}

type statsHandler struct{ s *compileStats }

func (h statsHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h statsHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h statsHandler) WithGroup(string) slog.Handler            { return h }
func (h statsHandler) Handle(_ context.Context, r slog.Record) error {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	switch r.Message {
	case "proto files: wrote the compile cache":
		r.Attrs(func(a slog.Attr) bool {
			switch a.Key {
			case "bytes":
				h.s.writeBytes = a.Value.Int64()
			case "duration":
				h.s.writeDuration = a.Value.Duration()
			}
			return true
		})
		if h.s.written == nil {
			h.s.written = make(chan struct{})
		}
		close(h.s.written)
		return nil
	case "proto files: compiled":
	default:
		return nil
	}
	h.s.recorded = true
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "compiled":
			h.s.compiled = a.Value.Int64()
		case "reused":
			h.s.reused = a.Value.Int64()
		}
		return true
	})
	return nil
}

// copyProtos copies the .proto files under dir into a temp dir, which it
// returns.
func copyProtos(b *testing.B, dir string) string {
	b.Helper()
	out := b.TempDir()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".proto") {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		dst := filepath.Join(out, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		f, err := os.Create(dst)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, in); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// appendComment appends a comment line to path: an edit that changes its
// content, not its API.
func appendComment(b *testing.B, path, comment string) {
	b.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.WriteString(comment); err != nil {
		f.Close()
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}
