package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// call_tool, search mode's second tool (search_tools is in
// searchmode.go): a catalog tool called by name, down the one call path.

// callToolArgs are call_tool's arguments.
type callToolArgs struct {
	Name      *string         `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// runNamed serves call_tool: the tool of c it names is run with the
// given arguments as a tools/call of its own (same request ID, session,
// headers, _meta and progress token).
func (g *Gateway) runNamed(ctx context.Context, c *listing, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a callToolArgs
	if err := decodeMetaArgs(req.Arguments, &a); err != nil {
		return metaInputError(CallToolName, err), nil
	}
	if a.Name == nil || *a.Name == "" {
		return metaInputError(CallToolName, errors.New("name: required, the exact name of a tool found with "+SearchToolsName)), nil
	}
	t := c.byName[*a.Name]
	if t == nil {
		_, keep := g.viewOf(ctx, c)
		return c.unknownTool(*a.Name, keep), nil
	}
	target := *req
	target.Name, target.Tool = *a.Name, nil
	target.Arguments = a.Arguments
	return g.runTool(ctx, t, &target)
}

// maxSuggestions is how many close names an unknown name is answered with.
const maxSuggestions = 3

// unknownTool answers call_tool with a name the catalog does not have
// (never had, was hidden or excluded, or went away in a refresh): a tool
// execution error naming the closest tools, so the model corrects itself
// without another search; keep, when set, is the caller's view (a tool
// it may not see is never suggested).
func (c *listing) unknownTool(name string, keep func(int) bool) *mcp.CallToolResult {
	var b strings.Builder
	b.WriteString("unknown tool ")
	b.WriteString(quote(name))
	hits := c.search.index.SearchWithin(name, maxSuggestions, keep)
	for i, h := range hits {
		if i == 0 {
			b.WriteString("; the closest names are ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(c.search.tools[h.Doc].def.Name)
	}
	b.WriteString(". Find tools with " + SearchToolsName + ".")
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{{Type: mcp.ContentText, Text: b.String()}}}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
