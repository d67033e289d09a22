package gateway

import (
	"context"

	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// endpoint serves one MCP endpoint: the whole catalog (/mcp, the
// gateway's default endpoint) or one toolset (/mcp/NAME). It is the
// mcp.Handler, and the resource, task and caller-listing handler, of that
// endpoint's mcp.Server. Every request reads the endpoint's list from the
// catalog current at that moment; what an endpoint may reach beyond its
// own tools (tasks, Operations methods, resources) is its listing's
// (listing.restricted).
type endpoint struct {
	g *Gateway
	// of picks the endpoint's listing out of a catalog.
	of func(*catalog) *listing
	// called notes a tools/call through the endpoint (a toolset's
	// metric; a no-op for the whole catalog).
	called func()
}

// wholeCatalog is the default endpoint's listing: every tool.
func wholeCatalog(c *catalog) *listing { return &c.listing }

// current is the current catalog and the endpoint's listing in it.
func (e *endpoint) current() (*catalog, *listing) {
	c := e.g.catalog.Load()
	return c, e.of(c)
}

// Tools is mcp.Handler: the endpoint's list, against which tools/call is
// resolved.
func (e *endpoint) Tools() *mcp.ToolList {
	_, l := e.current()
	return l.set
}

// ListedTools is mcp.CallerLister: the endpoint's list as the caller may
// see it (ListVisibleOnly).
func (e *endpoint) ListedTools(ctx context.Context) *mcp.ToolList {
	_, l := e.current()
	return e.g.listedTools(ctx, l)
}

// CallTool is mcp.Handler: a tool of the endpoint, or search mode's
// meta-tools over its tools only (serveCall).
func (e *endpoint) CallTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	_, l := e.current()
	e.called()
	return e.g.serveCall(ctx, l, req)
}

// Resources is mcp.ResourceHandler: the services of the endpoint's tools.
func (e *endpoint) Resources() *mcp.ResourceSet {
	_, l := e.current()
	return l.resources
}

// ReadResource is mcp.ResourceHandler (readResource).
func (e *endpoint) ReadResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ResourceContents, error) {
	c, l := e.current()
	return e.g.readResource(ctx, c.resources, l, req)
}

var (
	_ mcp.TaskHandler     = (*endpoint)(nil)
	_ mcp.ResourceHandler = (*endpoint)(nil)
	_ mcp.CallerLister    = (*endpoint)(nil)
)

// The Gateway's own handler methods are its default endpoint's, for
// programs that drive it without its servers (and so that a Gateway is
// an mcp.Handler itself). Only the endpoint serves resources, tasks and
// the caller's list: a program reaches them through Server or Handler,
// as a client does.

// CallTool serves tools/call for the whole catalog (/mcp).
func (g *Gateway) CallTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return g.whole.CallTool(ctx, req)
}

// Tools returns the current tool set; it is part of mcp.Handler.
func (g *Gateway) Tools() *mcp.ToolList { return g.whole.Tools() }
