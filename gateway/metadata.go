package gateway

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"google.golang.org/grpc/metadata"
)

// What reaches the backend besides the request message is decided here, by
// an allow-list: the inbound HTTP headers named in Options.ForwardHeaders
// and the static Options.Metadata. Nothing else is copied, in the manner
// of grpc-gateway's DefaultHeaderMatcher, so a client's credentials for the
// gateway never leak to the backend unless the operator names them.

// hopByHop are headers that describe one HTTP connection, not the request
// (RFC 9110 section 7.6.1, plus Host and the Proxy-* family): forwarding them
// would be meaningless at best and request smuggling at worst.
var hopByHop = map[string]bool{
	"connection": true, "keep-alive": true, "te": true, "trailer": true,
	"transfer-encoding": true, "upgrade": true, "host": true,
	"proxy-connection": true, "proxy-authorization": true, "proxy-authenticate": true,
}

// CheckForwardHeader reports whether name may be given to
// Options.ForwardHeaders: an HTTP header name that is also a legal gRPC
// metadata key once lowercased, not hop-by-hop, not a grpc- reserved key
// and not one gRPC sets itself.
func CheckForwardHeader(name string) error {
	k := strings.ToLower(name)
	if k == "" {
		return fmt.Errorf("empty header name")
	}
	if hopByHop[k] || strings.HasPrefix(k, "proxy-") {
		return fmt.Errorf("%q is a hop-by-hop header and is never forwarded", name)
	}
	return checkMetadataKey(k)
}

// IsClientCredential reports whether the header named carries the client's
// credential for the gateway itself (Authorization). With front-door
// authentication on, forwarding it would pass the client's token through
// to the backend, which the MCP specification forbids: the token's
// audience is the gateway. [New] refuses that combination.
func IsClientCredential(name string) bool { return strings.EqualFold(name, "authorization") }

// checkMetadataKey applies gRPC's rules for metadata keys (the HTTP/2
// header names gRPC allows: 0-9 a-z _ - .) and refuses the keys gRPC
// reserves or sets itself.
func checkMetadataKey(k string) error {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("%q is not a legal gRPC metadata key (want 0-9 a-z - _ .)", k)
		}
	}
	if k == "" {
		return fmt.Errorf("empty metadata key")
	}
	if strings.HasPrefix(k, "grpc-") {
		return fmt.Errorf("%q: grpc- keys are reserved for gRPC itself", k)
	}
	switch k {
	case "content-type", "te", "user-agent", "host", "connection":
		return fmt.Errorf("%q is set by gRPC itself", k)
	}
	return nil
}

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
		if err := checkMetadataKey(k); err != nil {
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
		if err := CheckForwardHeader(n); err != nil {
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
			if err := checkMetadataKey(lk); err != nil {
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
