package gateway

import (
	"net/http"

	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// protect puts an MCP transport's handler behind Options.Auth. Every MCP
// endpoint (/mcp, and /sse and /ws as they are mounted) goes through it,
// and nothing else does: health and metrics stay reachable without a token.
func (g *Gateway) protect(h http.Handler) http.Handler {
	if g.opts.Auth == nil {
		return h
	}
	return g.opts.Auth.Wrap(h)
}

// mountAuthMetadata serves the OAuth protected-resource metadata (RFC 9728)
// at the well-known path and its path-suffixed form
// (/.well-known/oauth-protected-resource/mcp), unauthenticated, since
// clients read it to learn how to get a token.
func (g *Gateway) mountAuthMetadata(mux *http.ServeMux) {
	if g.opts.Auth == nil {
		return
	}
	if h := g.opts.Auth.MetadataHandler(); h != nil {
		h = mcp.HostProtection(g.opts.AllowedHosts, h)
		mux.Handle(auth.MetadataPath, h)
		mux.Handle(auth.MetadataPath+"/", h)
	}
}
