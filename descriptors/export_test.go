package descriptors

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// SetCompileHook has f called as each of s's compiles starts (before
// reading any file), so tests count compiles and hold one back.
func SetCompileHook(s *ProtoSource, f func()) { s.compiling = f }

// RehashEvery is how many checks of a file source's inputs pass between
// two that read and hash every file whatever its size and time say.
const RehashEvery = rehashEvery

// SetOnWait makes r call f whenever a Resolve starts waiting for another's
// lookup of the same type, so a test can tell that concurrent callers
// share one lookup rather than hope they overlapped.
func SetOnWait(r *TypeResolver, f func()) { r.onWait = f }

// HoldLookups makes r's next lookups wait as they would behind another
// lookup the backend holds, until release is called.
func HoldLookups(r *TypeResolver) (release func()) {
	r.sem <- struct{}{}
	return func() { <-r.sem }
}

// SetCompiledHook has f called as each of s's compiles ends, with the
// file names it compiled from source and those it reused from the last
// successful compile.
func SetCompiledHook(s *ProtoSource, f func(compiled, reused []string)) { s.compiled = f }

// WaitCacheWrites waits for s's cache writes under way.
func WaitCacheWrites(s *ProtoSource) { _ = s.FlushCache() }

// Decoded is fdp with its option extensions decoded against the types
// linked into the test binary. The package keeps them in wire form
// (unmarshalFile), and protocompile marshals option messages built with
// dynamicpb in no fixed field order, so two files must be compared by
// meaning: pass both sides through Decoded.
func Decoded(fdp *descriptorpb.FileDescriptorProto) *descriptorpb.FileDescriptorProto {
	b, err := proto.Marshal(fdp)
	if err != nil {
		panic(err)
	}
	out := new(descriptorpb.FileDescriptorProto)
	if err := (proto.UnmarshalOptions{Resolver: protoregistry.GlobalTypes}).Unmarshal(b, out); err != nil {
		panic(err)
	}
	return out
}
