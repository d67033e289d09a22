package gateway

import (
	"encoding/base64"
	"fmt"
	"strings"

	"google.golang.org/grpc/metadata"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/forward"
	"github.com/grpc-mcp-gateway/gateway/internal/grpcmeta"
)

// What reaches the backend besides the request message is decided by
// gateway/internal/forward, by an allow-list; here are the exported
// checks cmd/gateway makes of the settings it is given.

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
		} else if !forward.PrintableASCII(v) {
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
