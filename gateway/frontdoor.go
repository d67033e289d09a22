package gateway

import (
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// The HTTP front door: the MCP transports' endpoints behind the host
// check and Options.Auth, and the operational ones (health, readiness,
// metrics). It stays in this package rather than one of its own: it is a
// hundred lines that read the gateway's readiness, authenticator and MCP
// server, which a package would have to take through an interface as
// wide as what it does.

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
		h = mcp.HostProtection(g.opts.FrontDoor.AllowedHosts, h)
		mux.Handle(auth.MetadataPath, h)
		mux.Handle(auth.MetadataPath+"/", h)
	}
}

// Handler is the HTTP front door: Streamable HTTP at /mcp, WebSocket at
// /ws, legacy HTTP+SSE at /sse (posting to /sse/message), a liveness
// probe at /healthz (the process answers), a readiness probe at /readyz
// (see [Gateway.Ready]) and, with Options.Telemetry.Metrics, Prometheus at /metrics.
func (g *Gateway) Handler() http.Handler {
	mux := http.NewServeMux()
	hosts := g.opts.FrontDoor.AllowedHosts
	wsOpts := withHosts(g.opts.Transports.WebSocket, hosts, func(o *mcp.WebSocketOptions) *[]string { return &o.AllowedHosts })
	sseOpts := withHosts(g.opts.Transports.SSE, hosts, func(o *mcp.SSEOptions) *[]string { return &o.AllowedHosts })
	if !g.opts.FrontDoor.ToolsetsOnly {
		mux.Handle("/mcp", g.protect(g.streamable))
		mux.Handle("/ws", g.protect(g.server.WebSocketHandler(wsOpts)))
		sse := g.protect(g.server.SSEHandler(sseOpts))
		mux.Handle("/sse", sse)
		mux.Handle("/sse/message", sse)
	}
	for _, ts := range g.toolsets {
		ts.mount(mux, wsOpts, sseOpts)
	}
	g.mountAuthMetadata(mux)
	if !g.opts.FrontDoor.SeparateAdmin {
		g.mountAdmin(mux)
	} else {
		mux.HandleFunc("GET /healthz", serveHealthz)
	}
	return mcp.RequestDeadlines(g.readTimeout(), mux)
}

func (g *Gateway) readTimeout() time.Duration {
	if g.opts.Transports.ReadTimeout == 0 {
		return mcp.DefaultReadTimeout
	}
	return g.opts.Transports.ReadTimeout
}

// AdminHandler serves /metrics (with Options.Telemetry.Metrics), /readyz and
// /healthz, for an admin listener apart from the MCP one (see
// Options.FrontDoor.SeparateAdmin).
func (g *Gateway) AdminHandler() http.Handler {
	mux := http.NewServeMux()
	g.mountAdmin(mux)
	return mcp.RequestDeadlines(g.readTimeout(), mux)
}

// mountAdmin mounts the operational endpoints. /healthz (liveness) says
// nothing and stays open to any Host, for probes; /metrics and /readyz
// say something about the backends, and get the Host check.
func (g *Gateway) mountAdmin(mux *http.ServeMux) {
	if g.opts.Telemetry.Metrics != nil {
		mux.Handle("GET /metrics", mcp.HostProtection(g.opts.FrontDoor.AllowedHosts, g.opts.Telemetry.Metrics.Handler()))
	}
	mux.HandleFunc("GET /healthz", serveHealthz)
	mux.Handle("GET /readyz", mcp.HostProtection(g.opts.FrontDoor.AllowedHosts, http.HandlerFunc(g.serveReadyz)))
}

func serveHealthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, "ok\n")
}

// withHosts returns a copy of a transport's options (new when nil) with
// hosts added to its AllowedHosts; the caller's value is left alone.
func withHosts[T any](opts *T, hosts []string, field func(*T) *[]string) *T {
	var o T
	if opts != nil {
		o = *opts
	}
	f := field(&o)
	*f = append(slices.Clip(*f), hosts...)
	return &o
}
