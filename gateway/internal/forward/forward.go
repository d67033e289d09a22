// Package forward decides what reaches a backend besides the request
// message, by an allow-list: the inbound HTTP headers named in
// Options.Calls.ForwardHeaders and the static Options.Calls.Metadata, and a backend's
// own metadata. Nothing else is copied, in the manner of grpc-gateway's
// DefaultHeaderMatcher, so a client's credentials for the gateway never
// leak to the backend unless the operator names them.
package forward

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"google.golang.org/grpc/metadata"

	"github.com/grpc-mcp-gateway/gateway/internal/grpcmeta"
	"github.com/grpc-mcp-gateway/gateway/internal/option"
)

// Metadata is the precomputed plan for per-call metadata.
type Metadata struct {
	// forward maps canonical HTTP header names to metadata keys.
	forward []forwardHeader
	// static is shared by every call and never mutated after start; gRPC
	// only reads outgoing metadata.
	static metadata.MD
}

type forwardHeader struct {
	canonical string // http.CanonicalHeaderKey form, for a direct map lookup
	key       string // lowercased metadata key
	binary    bool
}

// New validates and precomputes Options.Calls.ForwardHeaders and
// Options.Calls.Metadata. A bad header name or metadata key or value is
// an *option.Error naming that option, whose Err names the header or key
// and says what was expected.
func New(names []string, static metadata.MD) (Metadata, error) {
	var o Metadata
	seen := map[string]bool{}
	for _, n := range names {
		if err := grpcmeta.CheckForwardHeader(n); err != nil {
			return o, &option.Error{Option: "Options.Calls.ForwardHeaders", Err: err}
		}
		k := strings.ToLower(n)
		if seen[k] {
			continue
		}
		seen[k] = true
		o.forward = append(o.forward, forwardHeader{canonical: http.CanonicalHeaderKey(k), key: k, binary: strings.HasSuffix(k, "-bin")})
	}
	if len(static) > 0 {
		o.static = metadata.MD{}
		for k, vs := range static {
			lk := strings.ToLower(k)
			if err := grpcmeta.CheckKey(lk); err != nil {
				return o, &option.Error{Option: "Options.Calls.Metadata", Err: err}
			}
			if !strings.HasSuffix(lk, "-bin") {
				for _, v := range vs {
					if !PrintableASCII(v) {
						return o, &option.Error{Option: "Options.Calls.Metadata", Err: fmt.Errorf("%s: want a value of printable ASCII (use a -bin key for binary data)", lk)}
					}
				}
			}
			o.static[lk] = append(o.static[lk], vs...)
		}
	}
	return o, nil
}

// Static is the static metadata, checked and with lowercased keys;
// shared, never to be written to.
func (o *Metadata) Static() metadata.MD { return o.static }

// Context returns ctx carrying the metadata for one call, or ctx
// itself when there is nothing to send: the static Options.Calls.Metadata, the
// forwarded headers, then backend (the tool's Backend.Metadata, nil for
// most backends), in that order, after whatever ctx already carries.
// header is the inbound HTTP request's header (nil on stdio, where only
// static metadata applies).
func (o *Metadata) Context(ctx context.Context, header http.Header, backend metadata.MD) context.Context {
	var md metadata.MD
	for _, f := range o.forward {
		vs := header[f.canonical]
		if len(vs) == 0 {
			continue
		}
		if md == nil {
			md = make(metadata.MD, len(o.static)+len(o.forward)+len(backend))
			for k, v := range o.static {
				// Clipped so appending a forwarded value under the same key
				// copies instead of writing into the shared static slice.
				md[k] = slices.Clip(v)
			}
		}
		for _, v := range vs {
			// gRPC refuses a call whose (non-binary) metadata holds bytes
			// outside printable ASCII; such a value is dropped rather than
			// failing the call over a header the client got wrong.
			if f.binary || PrintableASCII(v) {
				md[f.key] = append(md[f.key], v)
			}
		}
	}
	switch {
	case md != nil:
		for k, v := range backend {
			md[k] = append(md[k], v...)
		}
	case len(o.static) == 0 && len(backend) == 0:
		return ctx
	case len(backend) == 0:
		md = o.static
	case len(o.static) == 0:
		md = backend
	default:
		md = metadata.Join(o.static, backend)
	}
	if old, ok := metadata.FromOutgoingContext(ctx); ok {
		md = metadata.Join(old, md)
	}
	return metadata.NewOutgoingContext(ctx, md)
}

// PrintableASCII reports whether s is all printable ASCII, what a
// metadata value that is not binary must be.
func PrintableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
