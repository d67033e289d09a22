// Package reflection discovers the services of a gRPC backend and returns
// them as protoreflect descriptors, together with every file they need.
//
// It knows nothing of MCP: it is the gateway's one way to learn a backend's
// API, and a Source can be any origin of descriptors (server reflection
// today; descriptor set files later).
package reflection

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
