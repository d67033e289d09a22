package gateway

import (
	"context"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/searchmode"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// call_tool, search mode's second tool: a catalog tool called by name,
// down the one call path. Its arguments and the answer to an unknown
// name are package searchmode's.

// runNamed serves call_tool: the tool of c it names is run with the
// given arguments as a tools/call of its own (same request ID, session,
// headers, _meta and progress token).
func (g *Gateway) runNamed(ctx context.Context, c *listing, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name, args, bad := searchmode.CallArgs(req.Arguments)
	if bad != nil {
		return bad, nil
	}
	t := c.byName[name]
	if t == nil {
		_, keep := g.viewOf(ctx, c)
		return c.search.UnknownTool(name, keep), nil
	}
	target := *req
	target.Name, target.Tool = name, nil
	target.Arguments = args
	return g.runTool(ctx, t, &target)
}
