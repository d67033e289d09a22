package descriptors

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/linker"
	"github.com/bufbuild/protocompile/parser"
	"github.com/bufbuild/protocompile/reporter"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// ProtoSource compiles .proto files when it discovers, with comments kept,
// for backends whose owners ship sources rather than descriptor sets or
// reflection.
type ProtoSource struct {
	importPaths []string
	files       []string
	// Logger receives compiler warnings, bundle fallbacks and a record of
	// each compile. A compile that starts while it is nil keeps its
	// records (at most 1,000) for the first Discover that finds it set,
	// which logs them there: the gateway compiles once while it checks its
	// flags, before its logger exists. Set it between Discovers, not
	// while one runs.
	Logger *slog.Logger
	// CacheDir, when not empty, is a directory where each successful
	// compile is kept (proto_cache.go), so that the first Discover of
	// another process whose files did not change builds its Result from
	// there instead of compiling. It is created (0700) at the first write;
	// one that cannot be written logs a warning and the source works
	// without it. Set it before the first Discover.
	CacheDir string

	// compiling, when set (by tests), is called as each compile starts.
	compiling func()
	// compiled, when set (by tests), is called as each compile ends with
	// the file names it compiled from source and those it reused.
	compiled func(compiled, reused []string)

	mu sync.Mutex
	// last is the last finished compile (its result or its error, and
	// what it read); flight is the compile under way, if any; good is the
	// last compile that succeeded, whose descriptors the next compile
	// reuses for the files that did not change (proto_reuse.go).
	last, flight, good *compileRun
	// cacheWarned: a cache write failed and was logged.
	cacheWarned bool
	// held is the log of a compile that started without a Logger,
	// released to the Logger at the first Discover that finds one set
	// (the gateway compiles once before its logger exists).
	held *heldLog
	// cacheWrites are the cache writes under way (FlushCache), and
	// cacheErr the last one's error, nil once one succeeds; s.mu guards
	// cacheErr.
	cacheWrites sync.WaitGroup
	cacheErr    error
}

// FlushCache waits for the compile cache entries s is writing in the
// background, and returns the last write's error. A compile's entry is
// written after Discover returns, so a program that exits right after one
// (gateway --check-config, run when a container image is built so that
// its every start reads the cache) calls it to leave the entry for the
// next start, and to say so only when it is there.
func (s *ProtoSource) FlushCache() error {
	s.cacheWrites.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cacheErr
}

// compileRun is one compile: done is closed when res, err, in and
// resolved are set.
type compileRun struct {
	done    chan struct{}
	started time.Time
	res     *Result
	err     error
	in      *inputs
	// resolved says where each file name looked up was found.
	resolved map[string]resolution
}

// NewProtoSource returns a Source compiling files (github.com/bufbuild/
// protocompile, with source info) against importPaths, like protoc's -I.
// A file may be named relative to an import path or, as protoc also
// allows, by a path starting with one. Nothing is compiled until
// Discover.
//
// Each Discover first checks the files the last compile read, and the
// import paths where it looked for a file and found none (see inputs.go:
// a stat per file, and a read and hash of those whose size or time
// changed); when nothing changed it returns the last compile's Result,
// the very same one, or its error, without compiling. When anything
// changed it compiles the files that changed and those importing them,
// transitively, and reuses the last successful compile's descriptors for
// the others (proto_reuse.go). With CacheDir set, a source's first
// compile may come from another process's (proto_cache.go). The Result's
// Fingerprint is a hash of the content read.
//
// The compile runs on its own, not bounded by Discover's ctx, and at most
// one at a time: a Discover whose ctx ends first returns a
// *CompileTimeoutError, and the next Discover waits for the same compile
// (or takes its outcome) instead of starting again, so a compile longer
// than one discovery's deadline still finishes, and no finished work is
// redone. Concurrent Discovers share one compile.
//
// Imports are searched in importPaths first; google/protobuf, google/api
// and google/rpc files not found there come from the gateway's bundle, so
// the usual imports need no copies on disk. The services reported are
// those the named files declare (not their imports'). Compile errors are
// all reported, each as file:line:col: message; a file of an edition the
// compiler does not know is named with that edition.
func NewProtoSource(importPaths []string, files []string) *ProtoSource {
	return &ProtoSource{importPaths: slices.Clone(importPaths), files: slices.Clone(files)}
}

// CompileTimeoutError is Discover's error when its ctx's deadline passed
// while .proto files were still compiling: the files took longer than the
// caller allowed a discovery, and the backend was not the cause. The
// compile goes on; the next Discover takes its outcome.
type CompileTimeoutError struct {
	// Files is the number of files named to the source (their imports
	// come on top).
	Files int
	// Running is how long the compile had been running.
	Running time.Duration
	// Err is the context's error.
	Err error
}

func (e *CompileTimeoutError) Error() string {
	return fmt.Sprintf("proto files: compiling %s .proto files (and their imports) has run %s, past the discovery's deadline; it goes on, and the next discovery takes its result: %v",
		thousands(e.Files), e.Running.Round(100*time.Millisecond), e.Err)
}

// thousands writes n with commas between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func (e *CompileTimeoutError) Unwrap() error { return e.Err }

// Discover implements Source.
func (s *ProtoSource) Discover(ctx context.Context) (*Result, error) {
	if len(s.files) == 0 {
		return nil, errors.New("proto files: no files given")
	}
	run := s.join()
	select {
	case <-run.done:
		return run.res, run.err
	case <-ctx.Done():
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, &CompileTimeoutError{Files: len(s.files), Running: time.Since(run.started), Err: ctx.Err()}
	}
	return nil, fmt.Errorf("proto files: %w", ctx.Err())
}

// join returns the compile whose outcome Discover returns: the one under
// way, else the last one when nothing it read changed, else a new one.
func (s *ProtoSource) join() *compileRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held != nil && s.Logger != nil {
		s.held.release(s.Logger.Handler())
		s.held = nil
	}
	if s.flight != nil {
		return s.flight
	}
	if s.last != nil && s.last.in.unchanged() {
		return s.last
	}
	run := &compileRun{done: make(chan struct{}), started: time.Now()}
	s.flight = run
	logger := s.Logger
	if logger == nil {
		if s.held == nil {
			s.held = new(heldLog)
		}
		logger = s.held.logger()
	}
	go s.run(run, s.good, logger)
	return run
}

// run compiles, reusing what it can of prev (the last compile that
// succeeded, or nil), records the outcome as the last one, and ends the
// flight.
func (s *ProtoSource) run(run *compileRun, prev *compileRun, logger *slog.Logger) {
	if s.compiling != nil {
		s.compiling()
	}
	if prev == nil && s.CacheDir != "" {
		// No compile succeeded yet in this process: perhaps one did in
		// another.
		start := time.Now()
		if cached := s.loadCache(logger); cached != nil {
			if cached.in.unchanged() {
				cached.res.Fingerprint = cached.in.fingerprint(append([]string{"proto files"}, s.files...)...)
				logger.Info("proto files: loaded the last compile from the cache, no file changed", "files", len(s.files),
					"read", len(cached.in.files), "services", len(cached.res.Services), "duration", time.Since(start).Round(time.Millisecond))
				s.finish(run, cached.res, nil, cached.in, cached.resolved, true)
				return
			}
			logger.Info("proto files: files changed since the cached compile; compiling what changed", "duration", time.Since(start).Round(time.Millisecond))
			prev = cached
		}
	}
	var reuse map[string]protoreflect.FileDescriptor
	if prev != nil {
		// No other compile runs, and join checks s.last only when none
		// does: prev.in is this goroutine's.
		reuse = reusable(prev, prev.in.changes())
	}
	rec := newRecorder()
	c := compile{source: s, logger: logger, rec: rec, prev: prev, reuse: reuse, resolved: make(map[string]resolution)}
	res, err := c.run()
	in := rec.inputs()
	if res != nil {
		res.Fingerprint = in.fingerprint(append([]string{"proto files"}, s.files...)...)
		logger.Info("proto files: compiled", "files", len(s.files), "read", len(in.files),
			"compiled", len(c.fromSource), "reused", len(c.reused), "services", len(res.Services),
			"duration", time.Since(run.started).Round(time.Millisecond))
	}
	if s.compiled != nil {
		s.compiled(slices.Sorted(maps.Keys(c.fromSource)), slices.Sorted(maps.Keys(c.reused)))
	}
	if snap := s.finish(run, res, err, in, c.resolved, false); snap != nil {
		// After the Result is out: nobody waits for the cache.
		err := s.writeCache(logger, snap)
		if err != nil {
			s.cacheFailed(logger, err)
		}
		s.mu.Lock()
		s.cacheErr = err
		s.mu.Unlock()
		s.cacheWrites.Done()
	}
}

// finish records a compile's outcome as the last one, ends the flight and
// wakes the Discovers waiting. When the compile succeeded and a cache is
// set, and the outcome did not come from there, it returns what to write
// to the cache, taken before anyone else may check in
// (inputs.unchanged updates it), and counts the write in s.cacheWrites.
func (s *ProtoSource) finish(run *compileRun, res *Result, err error, in *inputs, resolved map[string]resolution, fromCache bool) *cacheSnapshot {
	s.mu.Lock()
	run.res, run.err, run.in, run.resolved = res, err, in, resolved
	s.last, s.flight = run, nil
	if err == nil {
		s.good = run
	}
	var snap *cacheSnapshot
	if err == nil && s.CacheDir != "" && !fromCache {
		snap = snapshot(run)
		s.cacheWrites.Add(1)
	}
	s.mu.Unlock()
	close(run.done)
	return snap
}

// cacheFailed logs, once per source, that the cache could not be
// written; later failures go to debug.
func (s *ProtoSource) cacheFailed(logger *slog.Logger, err error) {
	s.mu.Lock()
	warned := s.cacheWarned
	s.cacheWarned = true
	s.mu.Unlock()
	if warned {
		logger.Debug("proto files: cannot write the compile cache", "dir", s.CacheDir, "err", err)
		return
	}
	logger.Warn("proto files: cannot write the compile cache; going on without it (the next start compiles again)", "dir", s.CacheDir, "err", err)
}

// compile is one compile's state.
type compile struct {
	source *ProtoSource
	logger *slog.Logger
	rec    *recorder
	// prev is the last compile that succeeded, if any, and reuse the
	// descriptors of its files that can be reused, by name.
	prev  *compileRun
	reuse map[string]protoreflect.FileDescriptor

	mu       sync.Mutex
	resolved map[string]resolution
	wrapped  map[protoreflect.FileDescriptor]linker.File
	// fromSource and reused are the file names read and compiled, and
	// those given to the compiler as prev's descriptors.
	fromSource, reused map[string]bool
}

// resolve is protocompile.SourceResolver's search, with every file read
// or missed recorded, and the descriptors of reusable files given as they
// are.
func (c *compile) resolve(name string) (protocompile.SearchResult, error) {
	if fd, ok := c.reuse[name]; ok {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.carry(fd)
		lf, err := c.wrap(fd)
		if err != nil {
			return protocompile.SearchResult{}, err
		}
		return protocompile.SearchResult{Desc: lf}, nil
	}
	importPaths := c.source.importPaths
	if len(importPaths) == 0 {
		importPaths = []string{""} // the working directory
	}
	var r resolution
	defer func() {
		c.mu.Lock()
		c.resolved[name] = r
		if r.path != "" {
			c.fromSource[name] = true
		}
		c.mu.Unlock()
	}()
	var missing error
	for _, ip := range importPaths {
		path := filepath.Join(ip, name)
		b, err := c.rec.read(path)
		if errors.Is(err, fs.ErrNotExist) {
			missing = err
			r.missed = append(r.missed, path)
			continue
		}
		if err != nil {
			r.unreadable = true
			return protocompile.SearchResult{}, err
		}
		r.path = path
		return protocompile.SearchResult{Source: bytes.NewReader(b)}, nil
	}
	return protocompile.SearchResult{}, missing
}

// carry records fd, a reused file, and its imports, transitively, as
// read and found as the last compile found them: the compiler looks none
// of them up, yet a change to any of them is a change to fd. c.mu is
// held.
func (c *compile) carry(fd protoreflect.FileDescriptor) {
	name := fd.Path()
	if _, ok := c.resolved[name]; ok {
		return
	}
	r, ok := c.prev.resolved[name]
	if !ok {
		return // a bundled file's own import, never looked up
	}
	c.resolved[name] = r
	if f, ok := c.prev.in.file(r.path); ok {
		c.rec.reuse(f, r.missed)
		c.reused[name] = true
	} else {
		c.rec.reuse(inputFile{}, r.missed)
	}
	imports := fd.Imports()
	for i := range imports.Len() {
		c.carry(imports.Get(i).FileDescriptor)
	}
}

// wrap returns fd as protocompile's linker.File, its imports wrapped
// first, each file once per compile. Given a plain descriptor,
// protocompile wraps it and, afresh, every file it imports transitively
// (linker.NewFileRecursive, with a map of its own per search result): for
// thousands of reused files that was most of an edit's cost. The
// wrappers are garbage once the compile ends. c.mu is held.
func (c *compile) wrap(fd protoreflect.FileDescriptor) (linker.File, error) {
	if lf, ok := c.wrapped[fd]; ok {
		return lf, nil
	}
	imports := fd.Imports()
	deps := make(linker.Files, imports.Len())
	for i := range imports.Len() {
		dep, err := c.wrap(imports.Get(i).FileDescriptor)
		if err != nil {
			return nil, err
		}
		deps[i] = dep
	}
	lf, err := linker.NewFile(fd, deps)
	if err != nil {
		return nil, fmt.Errorf("reusing %s: %w", fd.Path(), err)
	}
	c.wrapped[fd] = lf
	return lf, nil
}

// run compiles the files.
func (c *compile) run() (*Result, error) {
	s, logger := c.source, c.logger
	c.fromSource, c.reused = make(map[string]bool), make(map[string]bool)
	c.wrapped = make(map[protoreflect.FileDescriptor]linker.File)
	names := s.names()

	var mu sync.Mutex
	var errs []error
	rep := reporter.NewReporter(
		func(err reporter.ErrorWithPos) error {
			c.mu.Lock()
			path := c.resolved[err.GetPosition().Filename].path
			c.mu.Unlock()
			mu.Lock()
			defer mu.Unlock()
			errs = append(errs, explainEdition(err, path))
			return nil // keep going: one run should show every error
		},
		func(w reporter.ErrorWithPos) {
			logger.Warn("proto files: compiler warning", "warning", w.Error())
		},
	)
	compiler := protocompile.Compiler{
		Resolver: protocompile.CompositeResolver{
			protocompile.ResolverFunc(c.resolve),
			protocompile.ResolverFunc(func(path string) (protocompile.SearchResult, error) {
				if fd := bundledFile(path); fd != nil {
					return protocompile.SearchResult{Desc: fd}, nil
				}
				return protocompile.SearchResult{}, protoregistry.NotFound
			}),
			// Standard files the binary does not link (go_features.proto,
			// plugin.proto...): protocompile's embedded copies.
			protocompile.WithStandardImports(protocompile.ResolverFunc(func(string) (protocompile.SearchResult, error) {
				return protocompile.SearchResult{}, protoregistry.NotFound
			})),
		},
		Reporter:       rep,
		SourceInfoMode: protocompile.SourceInfoStandard,
	}
	// Not cancellable: the compile outlives the Discover that started it.
	compiled, err := compiler.Compile(context.Background(), names...)
	if len(errs) > 0 {
		return nil, fmt.Errorf("proto files: %w", errors.Join(errs...))
	}
	if err != nil {
		return nil, fmt.Errorf("proto files: %w", err)
	}

	// Rebuilt through the common path, so that every source returns the
	// same kind of descriptors sharing the bundle's.
	// Reused files are registered as they are, with their imports.
	//
	// The compiled files are written out, slimmed, before the pool reads
	// them back: the compiler's syntax trees, descriptors and option
	// messages are then garbage, and one collection frees them before
	// the pool allocates the descriptors the catalog keeps. Built while
	// they were live, those descriptors were scattered over memory pages
	// that, once the compiler's values were collected, held little else
	// but could not be returned: on the googleapis catalog the heap in use
	// was 924 MiB for 390 MiB of descriptors, and 465 MiB this way (the
	// whole catalog: BenchmarkCatalog's heap-inuse-MiB). Written out and
	// read back,
	// the files are what a descriptor set or the compile cache gives
	// (options of extensions the binary has no Go type for stay unknown
	// fields, which the option readers decode), and what the pool built
	// from before.
	p := newPool(logger, "proto files")
	p.known = reusedFiles(c.reuse)
	if c.prev != nil {
		p.knownComments = c.prev.res.Comments
	}
	seen := make(map[string]bool)
	var wire [][]byte
	var add func(fd protoreflect.FileDescriptor) error
	add = func(fd protoreflect.FileDescriptor) error {
		if seen[fd.Path()] || c.reused[fd.Path()] || bundledFile(fd.Path()) == fd {
			return nil
		}
		seen[fd.Path()] = true
		fdp := protodesc.ToFileDescriptorProto(fd)
		slimSourceInfo(fdp.SourceCodeInfo)
		b, err := proto.MarshalOptions{AllowPartial: true}.Marshal(fdp)
		if err != nil {
			return fmt.Errorf("proto files: encoding %s: %w", fd.Path(), err)
		}
		wire = append(wire, b)
		imports := fd.Imports()
		for i := range imports.Len() {
			if err := add(imports.Get(i).FileDescriptor); err != nil {
				return err
			}
		}
		return nil
	}
	for _, fd := range compiled {
		if err := add(fd); err != nil {
			return nil, err
		}
	}
	compiled = nil
	runtime.GC()
	for i, b := range wire {
		fdp := new(descriptorpb.FileDescriptorProto)
		if err := unmarshalFile(b, fdp); err != nil {
			return nil, fmt.Errorf("proto files: decoding a compiled file: %w", err)
		}
		wire[i] = nil
		p.add(fdp)
	}
	return namedResult(p, names)
}

// namedResult builds names in p and returns them as a Result: the
// services the named files declare, and every file they need.
func namedResult(p *pool, names []string) (*Result, error) {
	res := &Result{}
	for _, name := range names {
		fd, err := p.build(name)
		if err != nil {
			return nil, fmt.Errorf("proto files: %w", err)
		}
		svcs := fd.Services()
		for i := range svcs.Len() {
			res.Services = append(res.Services, svcs.Get(i))
		}
	}
	if p.reg == nil {
		p.reg = new(protoregistry.Files)
	}
	res.Files = p.reg
	res.Comments = p.comments()
	sortServices(res.Services)
	res.Services = slices.CompactFunc(res.Services, func(a, b protoreflect.ServiceDescriptor) bool { return a == b })
	return res, nil
}

// explainEdition restates a compile error about a file's edition
// declaration (protocompile v0.14.1 knows editions up to 2023; the
// google/protobuf sources of newer protobuf releases declare 2024) as
// what the operator can do about it. Other errors, and errors in files
// not read from disk, are returned as they are. The error is recognised
// by its position, which is that of the file's edition value, not by its
// text.
func explainEdition(err reporter.ErrorWithPos, path string) error {
	if path == "" {
		return err
	}
	b, rerr := os.ReadFile(path)
	if rerr != nil {
		return err
	}
	pos := err.GetPosition()
	file, perr := parser.Parse(pos.Filename, bytes.NewReader(b), reporter.NewHandler(reporter.NewReporter(
		func(reporter.ErrorWithPos) error { return nil }, nil)))
	if perr != nil || file == nil || file.Edition == nil {
		return err
	}
	at := file.NodeInfo(file.Edition.Edition).Start()
	if at.Line != pos.Line || at.Col != pos.Col {
		return err
	}
	return fmt.Errorf("%s: edition %q is not supported by the gateway's .proto compiler (github.com/bufbuild/protocompile): give these files as a descriptor set built by buf or protoc instead (DescriptorSetSource; gateway: --descriptor-set), or leave out this file and those importing it: %w",
		pos, file.Edition.Edition.AsString(), err.Unwrap())
}

// names are the files named, relative to their import path.
func (s *ProtoSource) names() []string {
	names := make([]string, len(s.files))
	for i, f := range s.files {
		names[i] = s.relative(f)
	}
	return names
}

// relative turns a path that starts with an import path into one relative
// to it, as protoc does.
func (s *ProtoSource) relative(file string) string {
	clean := filepath.ToSlash(filepath.Clean(file))
	for _, ip := range s.importPaths {
		prefix := filepath.ToSlash(filepath.Clean(ip))
		if prefix == "." {
			continue
		}
		if rest, ok := strings.CutPrefix(clean, prefix+"/"); ok {
			return rest
		}
	}
	return file
}
