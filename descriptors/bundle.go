package descriptors

import (
	"slices"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	// The bundle: these imports link the shared definitions into
	// protoregistry.GlobalFiles, so every source can fall back on them
	// whether or not the rest of the binary happens to use them.
	_ "google.golang.org/genproto/googleapis/api"
	_ "google.golang.org/genproto/googleapis/api/annotations"
	_ "google.golang.org/genproto/googleapis/api/httpbody"
	_ "google.golang.org/genproto/googleapis/rpc/code"
	_ "google.golang.org/genproto/googleapis/rpc/errdetails"
	_ "google.golang.org/genproto/googleapis/rpc/http"
	_ "google.golang.org/genproto/googleapis/rpc/status"
	_ "google.golang.org/protobuf/types/descriptorpb"
	_ "google.golang.org/protobuf/types/known/anypb"
	_ "google.golang.org/protobuf/types/known/apipb"
	_ "google.golang.org/protobuf/types/known/durationpb"
	_ "google.golang.org/protobuf/types/known/emptypb"
	_ "google.golang.org/protobuf/types/known/fieldmaskpb"
	_ "google.golang.org/protobuf/types/known/sourcecontextpb"
	_ "google.golang.org/protobuf/types/known/structpb"
	_ "google.golang.org/protobuf/types/known/timestamppb"
	_ "google.golang.org/protobuf/types/known/typepb"
	_ "google.golang.org/protobuf/types/known/wrapperspb"

	// Our own options, so that they are understood in any descriptor
	// that carries them (see options.go).
	_ "github.com/grpc-mcp-gateway/gateway/proto/mcpgateway/v1"
)

// bundledPrefixes are the files a source may take from the gateway's own
// compiled-in copies (protoregistry.GlobalFiles) when a backend or a
// descriptor set references but does not include them. These are shared
// definitions whose content does not vary between backends; a backend's own
// files are never substituted, since a stale copy would silently change its
// API.
var bundledPrefixes = []string{"google/protobuf/", "google/rpc/", "google/api/", "mcpgateway/"}

// bundledPackages are the proto packages of bundledPrefixes, for lookups by
// symbol.
var bundledPackages = []string{"google.protobuf.", "google.rpc.", "google.api.", "mcpgateway."}

// bundledFile returns the compiled-in copy of path, or nil when path is not
// one the bundle may stand in for.
func bundledFile(path string) protoreflect.FileDescriptor {
	if !hasAnyPrefix(path, bundledPrefixes) {
		return nil
	}
	fd, err := protoregistry.GlobalFiles.FindFileByPath(path)
	if err != nil {
		return nil
	}
	return fd
}

// bundledSymbol returns the compiled-in declaration of name, or nil.
func bundledSymbol(name protoreflect.FullName) protoreflect.Descriptor {
	if !hasAnyPrefix(string(name), bundledPackages) {
		return nil
	}
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(name)
	if err != nil {
		return nil
	}
	return d
}

func hasAnyPrefix(s string, prefixes []string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(s, p) })
}
