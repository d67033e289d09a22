package descriptors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

// DescriptorSetSource reads services from FileDescriptorSet files, as
// written by `buf build -o api.binpb` or `protoc --include_imports
// --include_source_info -o api.binpb`. Built with source info, they carry
// the comments that server reflection usually lacks.
type DescriptorSetSource struct {
	paths []string
	// Logger receives repairs and bundle fallbacks. Nil discards them. Set
	// it before the first Discover.
	Logger *slog.Logger

	mu   sync.Mutex
	last *setRead // the last read, nil before one
}

// setRead is one read of the sets: its outcome and what it read.
type setRead struct {
	res *Result
	err error
	in  *inputs
}

// NewDescriptorSetSource returns a Source reading the given
// FileDescriptorSet files. Nothing is read until Discover. Each Discover
// checks the files first, as ProtoSource does (a stat each, and a read and
// hash of those whose size or time changed: see inputs.go); when none
// changed it returns the last read's Result, the very same one, or its
// error, and otherwise it reads them all again, so a refresh picks up a
// rebuilt set and costs next to nothing when there is none. The Result's
// Fingerprint is a hash of the files' content.
//
// The sets are merged; a path present in several must be the same file in
// each (source info aside: the first copy that has it gives the comments).
// Imports a set leaves out (built without --include_imports) are taken from
// the bundled google.protobuf, google.api and google.rpc files; any other
// missing import is an error naming the file that imports it. Every service
// of every file is reported except grpc.reflection.*; choosing among them is
// the caller's business.
func NewDescriptorSetSource(paths ...string) *DescriptorSetSource {
	return &DescriptorSetSource{paths: paths}
}

// Discover implements Source. ctx is only checked between files: reading a
// local file is not worth cancelling midway.
func (s *DescriptorSetSource) Discover(ctx context.Context) (*Result, error) {
	if len(s.paths) == 0 {
		return nil, errors.New("descriptor set: no files given")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last != nil && s.last.in.unchanged() {
		return s.last.res, s.last.err
	}
	rec := newRecorder()
	res, err := s.read(ctx, rec)
	if ctx.Err() != nil && err != nil {
		return nil, err // cut short: not an outcome to keep
	}
	in := rec.inputs()
	if res != nil {
		res.Fingerprint = in.fingerprint(append([]string{"descriptor sets"}, s.paths...)...)
	}
	s.last = &setRead{res: res, err: err, in: in}
	return res, err
}

// read reads and merges the sets through rec.
func (s *DescriptorSetSource) read(ctx context.Context, rec *recorder) (*Result, error) {
	logger := s.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	p := newPool(logger, "descriptor set")
	from := make(map[string]string) // file path -> set it came from
	for _, path := range s.paths {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("descriptor set %s: %w", path, err)
		}
		set, err := readDescriptorSet(rec, path)
		if err != nil {
			return nil, err
		}
		for _, fd := range set.GetFile() {
			if fd.GetName() == "" {
				return nil, fmt.Errorf("descriptor set %s: a file without a name", path)
			}
			slimSourceInfo(fd.SourceCodeInfo)
			if prev, ok := p.files[fd.GetName()]; ok {
				if !sameButComments(prev, fd) {
					return nil, fmt.Errorf("descriptor set %s: file %s differs from the copy in %s", path, fd.GetName(), from[fd.GetName()])
				}
				if prev.SourceCodeInfo == nil {
					prev.SourceCodeInfo = fd.SourceCodeInfo
				}
				continue
			}
			p.add(fd)
			from[fd.GetName()] = path
		}
	}
	p.repair()
	res, err := p.result()
	if err != nil {
		return nil, fmt.Errorf("descriptor set %s: %w", joinPaths(s.paths), err)
	}
	return res, nil
}

// sameButComments reports whether a and b are the same file, one perhaps
// built with source info and the other without.
func sameButComments(a, b *descriptorpb.FileDescriptorProto) bool {
	return proto.Equal(normalized(a), normalized(b))
}

// normalized is fd without source info or top-level unknown fields, re-decoded so that options are
// held the same way in every copy: as known extensions where this binary
// links them, as unknown fields elsewhere.
func normalized(fd *descriptorpb.FileDescriptorProto) *descriptorpb.FileDescriptorProto {
	fd = proto.CloneOf(fd)
	fd.SourceCodeInfo = nil
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(fd)
	if err != nil {
		return fd
	}
	out := new(descriptorpb.FileDescriptorProto)
	if proto.Unmarshal(b, out) != nil {
		return fd
	}
	// buf build adds a private field (8042, which files were imports) to
	// each file; it says nothing about the API.
	out.ProtoReflect().SetUnknown(nil)
	return out
}

func readDescriptorSet(rec *recorder, path string) (*descriptorpb.FileDescriptorSet, error) {
	b, err := rec.read(path)
	if err != nil {
		return nil, fmt.Errorf("descriptor set: %w", err)
	}
	set := new(descriptorpb.FileDescriptorSet)
	if err := unmarshalFile(b, set); err != nil {
		return nil, fmt.Errorf("descriptor set %s: not a binary FileDescriptorSet (build one with `buf build -o FILE` or `protoc --include_imports --include_source_info -o FILE`): %w", path, err)
	}
	if len(set.GetFile()) == 0 {
		return nil, fmt.Errorf("descriptor set %s: holds no files (is it a FileDescriptorSet?)", path)
	}
	return set, nil
}

func joinPaths(paths []string) string {
	if len(paths) == 1 {
		return paths[0]
	}
	return fmt.Sprint(paths)
}
