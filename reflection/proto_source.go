package reflection

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/reporter"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// ProtoSource compiles .proto files when it discovers, with comments kept,
// for backends whose owners ship sources rather than descriptor sets or
// reflection.
type ProtoSource struct {
	importPaths []string
	files       []string
	// Logger receives compiler warnings and bundle fallbacks. Nil discards
	// them. Set it before the first Discover.
	Logger *slog.Logger
}

// NewProtoSource returns a Source compiling files (github.com/bufbuild/
// protocompile, with source info) against importPaths, like protoc's -I.
// A file may be named relative to an import path or, as protoc also
// allows, by a path starting with one. Nothing is compiled until
// Discover, and each Discover compiles again, so a refresh picks up edits.
//
// Imports are searched in importPaths first; google/protobuf, google/api
// and google/rpc files not found there come from the gateway's bundle, so
// the usual imports need no copies on disk. The services reported are
// those the named files declare (not their imports'). Compile errors are
// all reported, each as file:line:col: message.
func NewProtoSource(importPaths []string, files []string) *ProtoSource {
	return &ProtoSource{importPaths: slices.Clone(importPaths), files: slices.Clone(files)}
}

// Discover implements Source.
func (s *ProtoSource) Discover(ctx context.Context) (*Result, error) {
	if len(s.files) == 0 {
		return nil, errors.New("proto files: no files given")
	}
	logger := s.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	names := make([]string, len(s.files))
	for i, f := range s.files {
		names[i] = s.relative(f)
	}

	var mu sync.Mutex
	var errs []error
	rep := reporter.NewReporter(
		func(err reporter.ErrorWithPos) error {
			mu.Lock()
			defer mu.Unlock()
			errs = append(errs, err)
			return nil // keep going: one run should show every error
		},
		func(w reporter.ErrorWithPos) {
			logger.Warn("proto files: compiler warning", "warning", w.Error())
		},
	)
	compiler := protocompile.Compiler{
		Resolver: protocompile.CompositeResolver{
			&protocompile.SourceResolver{ImportPaths: s.importPaths},
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
	compiled, err := compiler.Compile(ctx, names...)
	if len(errs) > 0 {
		return nil, fmt.Errorf("proto files: %w", errors.Join(errs...))
	}
	if err != nil {
		return nil, fmt.Errorf("proto files: %w", err)
	}

	// Rebuilt through the common path, so that every source returns the
	// same kind of descriptors sharing the bundle's.
	p := newPool(logger, "proto files")
	var add func(fd protoreflect.FileDescriptor)
	add = func(fd protoreflect.FileDescriptor) {
		if _, ok := p.files[fd.Path()]; ok || bundledFile(fd.Path()) == fd {
			return
		}
		p.add(protodesc.ToFileDescriptorProto(fd))
		imports := fd.Imports()
		for i := range imports.Len() {
			add(imports.Get(i).FileDescriptor)
		}
	}
	for _, fd := range compiled {
		add(fd)
	}
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
	res.Files = p.reg
	sortServices(res.Services)
	res.Services = slices.CompactFunc(res.Services, func(a, b protoreflect.ServiceDescriptor) bool { return a == b })
	return res, nil
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
