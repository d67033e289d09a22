// Package descriptors discovers the services of a gRPC backend and returns
// them as protoreflect descriptors, together with every file they need.
//
// It knows nothing of MCP: it is the gateway's one way to learn a backend's
// API. A Source is any origin of descriptors, and every source returns the
// same Result:
//
//   - NewServerReflection asks the backend (grpc.reflection.v1, then
//     v1alpha);
//   - NewDescriptorSetSource reads FileDescriptorSet files (buf build -o,
//     protoc -o --include_imports --include_source_info);
//   - NewProtoSource compiles .proto files (github.com/bufbuild/protocompile);
//   - Overlay keeps one source's shape and takes another's comments.
//
// All of them pass the raw FileDescriptorProtos through the same assembly
// step, which completes them from the bundle (the google.protobuf,
// google.api, google.rpc and mcpgateway files linked into the binary) and
// repairs, where the intent is unambiguous, what reflection servers other
// than grpc-go get wrong: relative type names (resolved by protobuf's
// scoping rules), missing imports (inferred from the types used), map entry
// messages with names other than protoc's, fields with no type, extension
// fields copied into the message they extend, and shared types regrouped
// under other file names (grpc-js serves "google_protobuf.proto"). Each
// repair is logged at debug level; what cannot be repaired is reported as
// a *DescriptorError naming the file, the element and the problem.
//
// A Result of server reflection also carries a TypeResolver, which asks
// the same backend, once per type, for the message types of the Any
// values it sends that the discovered files do not declare.
//
// ToolOptions and ServiceOptions read the gateway's own proto options
// (proto/mcpgateway/v1/annotations.proto) from descriptors of any source;
// HTTPRule, Resource, Field and ResourceDefinitions read google.api's.
// The descriptors of a Result keep option extensions in their wire form,
// as unknown fields of the options messages (decoded, they took several
// times the memory on large APIs): read them with these readers, or
// decode the options' bytes with the extension types, not with
// proto.GetExtension.
//
// This package is library API: a program embedding the gateway may give a
// backend a [Source] of its own (gateway.Backend.Source and Files), and,
// since it knows nothing of MCP, any Go program may read a backend's API
// with it (see the example).
package descriptors

import (
	"context"
	"errors"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// Result is what a source discovered.
type Result struct {
	// Files holds every file the services need, with all their transitive
	// dependencies, so it can back resolvers (protojson's Any, dynamicpb
	// types) without asking the backend again.
	Files *protoregistry.Files
	// Services are sorted by full name. The reflection services
	// (grpc.reflection.*) are left out; the health service is not, so the
	// caller decides whether to expose it.
	Services []protoreflect.ServiceDescriptor
	// Fingerprint, when not zero, identifies what the source read: two
	// Results with the same non-zero Fingerprint describe the same API, so
	// a caller can skip recompiling. Sources that cannot tell cheaply leave
	// it zero. Server reflection returns the very same *Result again when
	// the backend's answers did not change, the file sources when their
	// files did not, and Overlay when neither of its sources' did; treat a
	// Result as read-only.
	Fingerprint [32]byte
	// Resolver, when not nil, looks up in the backend itself the message
	// types Files do not declare: those of google.protobuf.Any values
	// (error details, Any fields, operation metadata) whose files none of
	// the services' files imports. Server reflection sets it; sources of
	// descriptor files leave it nil, having nobody to ask.
	Resolver *TypeResolver
	// Comments holds the source info of Files (comments, and where each
	// declaration is), which the descriptors themselves do not carry:
	// read a descriptor's comments with Comments.Location. Nil when the
	// source read none.
	Comments *Comments
}

// Source discovers a backend's services.
type Source interface {
	// Discover returns the backend's services as they are now. ctx bounds
	// the whole discovery, including every round trip to the backend.
	Discover(ctx context.Context) (*Result, error)
}

// ErrReflectionNotSupported is returned, wrapped, when the backend answers
// Unimplemented to both server reflection v1 and v1alpha: the backend is
// reachable but cannot describe itself, so descriptors must come from
// elsewhere.
var ErrReflectionNotSupported = errors.New("server reflection not supported by the backend")
