package gateway

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"google.golang.org/grpc/metadata"

	"github.com/grpc-mcp-gateway/gateway/internal/grpcmeta"
)

// What reaches the backend besides the request message is decided here, by
// an allow-list: the inbound HTTP headers named in Options.ForwardHeaders
// and the static Options.Metadata. Nothing else is copied, in the manner
// of grpc-gateway's DefaultHeaderMatcher, so a client's credentials for the
// gateway never leak to the backend unless the operator names them.

// IsClientCredential reports whether the header named carries the client's
// credential for the gateway itself (Authorization). With front-door
// authentication on, forwarding it would pass the client's token through
// to the backend, which the MCP specification forbids: the token's
// audience is the gateway. [New] refuses that combination.
func IsClientCredential(name string) bool { return strings.EqualFold(name, "authorization") }

// ParseMetadata parses KEY=VALUE pairs into static metadata. Keys are
// lowercased and checked as gRPC metadata keys; a key ending in -bin
// carries binary data, so its value must be base64 (standard or URL
// alphabet, padded or not) and is stored decoded, as gRPC expects. Other
// values must be printable ASCII.
func ParseMetadata(pairs []string) (metadata.MD, error) {
	md := metadata.MD{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return nil, fmt.Errorf("want KEY=VALUE, got %q", p)
		}
		k = strings.ToLower(strings.TrimSpace(k))
		if err := grpcmeta.CheckKey(k); err != nil {
			return nil, err
		}
		if strings.HasSuffix(k, "-bin") {
			b, err := decodeBase64(v)
			if err != nil {
				return nil, fmt.Errorf("%s: a -bin key needs a base64 value: %w", k, err)
			}
			v = string(b)
		} else if !printableASCII(v) {
			return nil, fmt.Errorf("%s: value must be printable ASCII (use a -bin key for binary data)", k)
		}
		md[k] = append(md[k], v)
	}
	return md, nil
}

func decodeBase64(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	_, err := base64.StdEncoding.DecodeString(s)
	return nil, err
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// outgoingMD is the precomputed plan for per-call metadata.
type outgoingMD struct {
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

// newOutgoingMD validates and precomputes Options.ForwardHeaders and
// Options.Metadata.
func newOutgoingMD(names []string, static metadata.MD) (outgoingMD, error) {
	var o outgoingMD
	seen := map[string]bool{}
	for _, n := range names {
		if err := grpcmeta.CheckForwardHeader(n); err != nil {
			return o, fmt.Errorf("forward header: %w", err)
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
				return o, fmt.Errorf("metadata: %w", err)
			}
			if !strings.HasSuffix(lk, "-bin") {
				for _, v := range vs {
					if !printableASCII(v) {
						return o, fmt.Errorf("metadata: %s: value must be printable ASCII", lk)
					}
				}
			}
			o.static[lk] = append(o.static[lk], vs...)
		}
	}
	return o, nil
}

// outgoingContext returns ctx carrying the metadata for one call, or ctx
// itself when there is nothing to send: the static Options.Metadata, the
// forwarded headers, then backend (the tool's Backend.Metadata, nil for
// most backends), in that order, after whatever ctx already carries.
// header is the inbound HTTP request's header (nil on stdio, where only
// static metadata applies).
func (o *outgoingMD) outgoingContext(ctx context.Context, header http.Header, backend metadata.MD) context.Context {
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
			if f.binary || printableASCII(v) {
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
