package descriptors_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// cachedSource returns a source over tr's files with the cache in dir,
// and a count of its compiles (those that did not come from the cache).
func (tr *reuseTree) cachedSource(dir string, logger *slog.Logger) (*descriptors.ProtoSource, func() (n int, compiled, reused []string)) {
	src := tr.newSource()
	src.CacheDir = dir
	src.Logger = logger
	var mu sync.Mutex
	n := 0
	var lastCompiled, lastReused []string
	descriptors.SetCompiledHook(src, func(compiled, reused []string) {
		mu.Lock()
		defer mu.Unlock()
		n++
		lastCompiled, lastReused = compiled, reused
	})
	return src, func() (int, []string, []string) {
		mu.Lock()
		defer mu.Unlock()
		return n, lastCompiled, lastReused
	}
}

// cacheEntries lists the entries in dir.
func cacheEntries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := filepath.Glob(filepath.Join(dir, "*.protocache"))
	if err != nil {
		t.Fatal(err)
	}
	return ents
}

// logBuffer is a logger whose records can be read back.
func logBuffer() (*slog.Logger, *testkit.SyncBuffer) {
	var b testkit.SyncBuffer
	return slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})), &b
}

// TestProtoSourceCacheSkipsCompileOnRestart: a source of a new process
// (a new ProtoSource) whose files did not change takes its Result from
// the cache the last one wrote, without compiling: the same files,
// services and fingerprint as the compile. After an edit it compiles
// only the edited file, reusing the cached descriptors of the others.
// The directory and the key beside it are private to the user, and the
// directory holds one entry per set of files.
func TestProtoSourceCacheSkipsCompileOnRestart(t *testing.T) {
	t.Parallel()
	tr := newReuseTree(t)
	dir := filepath.Join(t.TempDir(), "cache", "protos")

	src, compiles := tr.cachedSource(dir, nil)
	first := discoverSource(t, src)
	descriptors.WaitCacheWrites(src)
	if n, _, _ := compiles(); n != 1 {
		t.Fatalf("the first source compiled %d times, want 1", n)
	}
	entries := cacheEntries(t, dir)
	if len(entries) != 1 {
		t.Fatalf("cache entries %q, want one", entries)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, entries[0]: 0o600, dir + ".key": 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode() != want {
			t.Errorf("%s: mode %v (%v), want %v", path, fi.Mode(), err, want)
		}
	}

	restarted, compiles := tr.cachedSource(dir, nil)
	res := discoverSource(t, restarted)
	if n, _, _ := compiles(); n != 0 {
		t.Errorf("a restart with unchanged files compiled %d times, want 0", n)
	}
	wantSameResult(t, res, first)
	if res.Fingerprint != first.Fingerprint {
		t.Error("the cached Result has another fingerprint than the compile's")
	}
	if again := discoverSource(t, restarted); again != res {
		t.Error("a second Discover of unchanged files gave a new Result")
	}

	tr.edit("c.proto", "message At {", "// When.\nmessage At {")
	edited, compiles := tr.cachedSource(dir, nil)
	res = discoverSource(t, edited)
	descriptors.WaitCacheWrites(edited)
	n, compiled, reused := compiles()
	if n != 1 || strings.Join(compiled, " ") != "c.proto" || strings.Join(reused, " ") != "a.proto b.proto common.proto" {
		t.Errorf("a restart after an edit compiled %d times, the last %q reusing %q; want once, c.proto, reusing the others", n, compiled, reused)
	}
	wantSameResult(t, res, discoverSource(t, tr.newSource()))

	// The edit's compile was written back: the next start compiles nothing.
	again, compiles := tr.cachedSource(dir, nil)
	wantSameResult(t, discoverSource(t, again), res)
	if n, _, _ := compiles(); n != 0 {
		t.Errorf("a restart after the edit's compile compiled %d times, want 0", n)
	}
	if entries := cacheEntries(t, dir); len(entries) != 1 {
		t.Errorf("cache entries %q, want still one", entries)
	}
}

// TestProtoSourceCacheIgnoresBadEntries: an entry cut short, with a byte
// changed, emptied or of another kind is logged, compiled over and
// replaced; the source never fails or panics for it.
func TestProtoSourceCacheIgnoresBadEntries(t *testing.T) {
	t.Parallel()
	for name, spoil := range map[string]func([]byte) []byte{
		"truncated":    func(b []byte) []byte { return b[:len(b)/2] },
		"byte changed": func(b []byte) []byte { b[len(b)*2/3] ^= 0x55; return b },
		"empty":        func([]byte) []byte { return nil },
		"not an entry": func([]byte) []byte { return []byte("hello") },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tr := newReuseTree(t)
			dir := t.TempDir()
			src, _ := tr.cachedSource(dir, nil)
			want := discoverSource(t, src)
			descriptors.WaitCacheWrites(src)
			entry := cacheEntries(t, dir)[0]
			b, err := os.ReadFile(entry)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(entry, spoil(b), 0o600); err != nil {
				t.Fatal(err)
			}

			logger, logs := logBuffer()
			spoiled, compiles := tr.cachedSource(dir, logger)
			wantSameResult(t, discoverSource(t, spoiled), want)
			descriptors.WaitCacheWrites(spoiled)
			if n, _, _ := compiles(); n != 1 {
				t.Errorf("compiled %d times over a spoiled entry, want 1", n)
			}
			if !strings.Contains(logs.String(), "level=WARN msg=\"proto files: ignoring the compile cache entry; compiling\"") {
				t.Errorf("no warning about the spoiled entry in:\n%s", logs)
			}

			fresh, compiles := tr.cachedSource(dir, nil)
			discoverSource(t, fresh)
			if n, _, _ := compiles(); n != 0 {
				t.Errorf("the entry written over the spoiled one was not used: %d compiles", n)
			}
		})
	}
}

// TestProtoSourceCacheUnwritable: a cache directory that cannot be made
// is warned about once, through the Logger set after the first compile as
// the gateway sets it, and the source works without it.
func TestProtoSourceCacheUnwritable(t *testing.T) {
	t.Parallel()
	tr := newReuseTree(t)
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	src, compiles := tr.cachedSource(filepath.Join(blocker, "cache"), nil)
	discoverSource(t, src)
	descriptors.WaitCacheWrites(src)
	logger, logs := logBuffer()
	src.Logger = logger
	for i := range 2 {
		tr.edit("c.proto", "message At {", "// Edit.\nmessage At {")
		discoverSource(t, src)
		descriptors.WaitCacheWrites(src)
		if n, _, _ := compiles(); n != 2+i {
			t.Fatalf("compiles: %d, want %d", n, 2+i)
		}
	}
	if n := strings.Count(logs.String(), "level=WARN msg=\"proto files: cannot write the compile cache"); n != 1 {
		t.Errorf("%d warnings about the cache, want 1:\n%s", n, logs)
	}
}

// TestProtoSourceCacheBounded: a directory shared by many sets of files
// keeps the newest entries only.
func TestProtoSourceCacheBounded(t *testing.T) {
	t.Parallel()
	tr := newReuseTree(t)
	dir := t.TempDir()
	first := tr.dirs
	src, _ := tr.cachedSource(dir, nil)
	discoverSource(t, src)
	descriptors.WaitCacheWrites(src)
	for range 12 {
		// Another import path, another key.
		tr.dirs = append([]string{t.TempDir()}, tr.dirs...)
		src, _ := tr.cachedSource(dir, nil)
		discoverSource(t, src)
		descriptors.WaitCacheWrites(src)
		if entries := cacheEntries(t, dir); len(entries) > 8 {
			t.Fatalf("%d cache entries, want at most 8", len(entries))
		}
	}
	newest, compiles := tr.cachedSource(dir, nil)
	discoverSource(t, newest)
	if n, _, _ := compiles(); n != 0 {
		t.Errorf("the newest entry was not kept: %d compiles", n)
	}
	tr.dirs = first
	oldest, compiles := tr.cachedSource(dir, nil)
	discoverSource(t, oldest)
	if n, _, _ := compiles(); n != 1 {
		t.Errorf("the oldest entry was kept: %d compiles", n)
	}
}

// TestProtoSourceCacheKeepsOptions: the options the gateway reads (its
// own, google.api.http) are the same in a Result built from the cache as
// in the compile's, and in one that reused the cached file after an edit
// of another.
func TestProtoSourceCacheKeepsOptions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"api.proto": `syntax = "proto3";
package api.v1;
import "google/api/annotations.proto";
import "mcpgateway/v1/annotations.proto";
import "other.proto";
service S {
  option (mcpgateway.v1.service) = {name_prefix: "s"};
  rpc Get(other.M) returns (other.M) {
    option (google.api.http) = {get: "/v1/things/{name}"};
    option (mcpgateway.v1.tool) = {title: "Get a thing", read_only_hint: true};
  }
}
`,
		"other.proto": "syntax = \"proto3\";\npackage other;\nmessage M { string name = 1; }\n",
		"x.proto":     "syntax = \"proto3\";\npackage x;\nmessage X {}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cache := t.TempDir()
	source := func() *descriptors.ProtoSource {
		src := descriptors.NewProtoSource([]string{dir}, []string{"api.proto", "other.proto", "x.proto"})
		src.CacheDir = cache
		return src
	}
	options := func(res *descriptors.Result) string {
		m := res.Services[0].Methods().Get(0)
		return fmt.Sprint(descriptors.ToolOptions(m), "|", descriptors.HTTPRule(m), "|", descriptors.ServiceOptions(res.Services[0]))
	}
	compiled := source()
	want := options(discoverSource(t, compiled))
	descriptors.WaitCacheWrites(compiled)
	if !strings.Contains(want, "Get a thing") || !strings.Contains(want, "/v1/things/{name}") || !strings.Contains(want, `name_prefix:"s"`) {
		t.Fatalf("the compile's options are not all there: %s", want)
	}
	if got := options(discoverSource(t, source())); got != want {
		t.Errorf("options from the cache: %s, want %s", got, want)
	}
	if err := os.WriteFile(filepath.Join(dir, "x.proto"), []byte("syntax = \"proto3\";\npackage x;\n// Edited.\nmessage X {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	edited := source()
	var reused []string
	descriptors.SetCompiledHook(edited, func(_, r []string) { reused = r })
	if got := options(discoverSource(t, edited)); got != want {
		t.Errorf("options after an edit over the cache: %s, want %s", got, want)
	}
	if !slices.Contains(reused, "api.proto") {
		t.Errorf("api.proto was not reused from the cache (reused %q)", reused)
	}
}

// TestProtoSourceHoldsRecordsUntilLogger: the records of a compile that
// started without a Logger (the gateway's first, while it checks its
// flags) are logged at the first Discover that finds one, in order,
// with the cache write that ran in the background after; none is
// logged twice.
func TestProtoSourceHoldsRecordsUntilLogger(t *testing.T) {
	t.Parallel()
	tr := newReuseTree(t)
	src, compiles := tr.cachedSource(t.TempDir(), nil)
	discoverSource(t, src)
	descriptors.WaitCacheWrites(src)
	logger, logs := logBuffer()
	src.Logger = logger
	discoverSource(t, src) // unchanged: no compile, the held records logged
	if n, _, _ := compiles(); n != 1 {
		t.Fatalf("compiles: %d, want 1", n)
	}
	out := logs.String()
	compiled := strings.Index(out, `msg="proto files: compiled"`)
	wrote := strings.Index(out, `msg="proto files: wrote the compile cache"`)
	if compiled < 0 || wrote < compiled {
		t.Fatalf("held records: want the compile, then the cache write:\n%s", out)
	}
	discoverSource(t, src)
	if n := strings.Count(logs.String(), `msg="proto files: compiled"`); n != 1 {
		t.Errorf("the compile logged %d times, want once:\n%s", n, logs)
	}
}
