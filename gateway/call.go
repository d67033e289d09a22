package gateway

import (
	"context"
	"fmt"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/call"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/compiled"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// serveCall serves a tools/call of the endpoint whose list is l. The MCP
// layer resolved the name once, against the very list the handle it hands
// down (req.Tool) came from, so the tool that runs is the one that list
// named, whatever a refresh swapped in since; l is used only when the
// call did not come through the MCP layer.
//
// In search mode the two search-mode tools are answered here:
// search_tools from the list's index, and call_tool by running the tool
// it names on the one path of every typed call (runTool), so validation,
// errors, progress, cancellation, streaming, deadlines, metrics, logs and
// per-tool authorization are the target tool's, exactly as if it had
// been called directly.
func (g *Gateway) serveCall(ctx context.Context, l *listing, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	switch h := l.handleOf(req).(type) {
	case *compiled.Tool:
		return g.runTool(ctx, h, req)
	case *metaTool:
		if h.name == SearchToolsName {
			view, keep := g.viewOf(ctx, h.in)
			return h.in.search.Search(ctx, req.Arguments, g.semantic, view, keep), nil
		}
		return g.runNamed(ctx, h.in, req)
	}
	return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", req.Name)}
}

// metaTool is the handle of a search-mode tool (search_tools or
// call_tool) in the list of in, the listing it searches and calls into.
type metaTool struct {
	in   *listing
	name string
}

// handleOf is what req runs: the handle the MCP layer resolved, else
// (a call made directly, not through the MCP layer) the tool of that
// name in l; nil when there is none.
func (l *listing) handleOf(req *mcp.CallToolRequest) any {
	if req.Tool != nil && req.Tool.Handle != nil {
		return req.Tool.Handle
	}
	if l.search != nil && (req.Name == SearchToolsName || req.Name == CallToolName) {
		return &metaTool{in: l, name: req.Name}
	}
	if t := l.byName[req.Name]; t != nil {
		return t
	}
	return nil
}

// runTool runs the resolved tool t: the one path every call of a tool
// takes, whether the client named it in tools/call or call_tool runs it
// by name, so that authorization and observation always apply to the
// tool that actually runs. This is the gateway's hot path. Which error
// becomes a protocol error and which a tool execution error is decided
// here and in gateway/internal/call (status.go), and documented in
// docs/errors.md.
func (g *Gateway) runTool(ctx context.Context, t *compiled.Tool, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
	// Metrics, span and call log (observe.go); a no-op when none is on.
	ctx, ob := g.startCall(ctx, t, req)
	defer g.endCall(ctx, t, req, ob, &res, &err)
	// Before anything reaches the backend: scopes, expiry, revocation.
	if err := g.authorize(ctx, t, req); err != nil {
		return nil, err
	}
	args, err := call.ObjectArguments(req.Arguments)
	if err != nil {
		return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: err.Error()}
	}
	// Forwarded headers and static metadata, for unary and streaming calls alike.
	ctx = g.md.Context(ctx, req.Header, t.Call.MD)
	if t.Access.Exchanger != nil {
		var failed *mcp.CallToolResult
		if ctx, failed = g.backendToken(ctx, t.Backend, t.Access.Exchanger, t.Access.TokenScopes); failed != nil {
			return failed, nil
		}
	}
	if res, err = t.Call.Invoke(ctx, req, t, args); err != nil || res == nil {
		return res, err
	}
	// Every result, of every call shape, within the result budget.
	return g.fitResult(ctx, req.Session, t, res), nil
}

// invokers are g's invoker of each tool shape, bound once (New), so that
// compiling a tool makes no closure: call.Env's for every shape but the
// long-running one, which needs the gateway's tasks.
type invokers struct {
	unary, serverStream, requestStream, watch, longRunning compiled.Invoker
}

// bindInvokers binds g's invokers, once g.calls is set.
func (g *Gateway) bindInvokers() {
	g.invokers = invokers{
		unary:         g.calls.Unary,
		serverStream:  g.calls.ServerStream,
		requestStream: g.calls.RequestStream,
		watch:         g.calls.Watch,
		longRunning:   g.invokeLongRunning,
	}
}

// chooseInvoker is the invoker of t's shape, once compilation has
// settled it (compiled.Options.Invoker): a watch, a stream of each
// direction, a long-running method, or a plain unary one.
func (g *Gateway) chooseInvoker(t *compiled.Tool) compiled.Invoker {
	switch {
	case t.Watch != nil:
		return g.invokers.watch
	case t.Call.Kind == compiled.KindServerStream:
		return g.invokers.serverStream
	case t.Call.Kind != compiled.KindUnary:
		return g.invokers.requestStream
	case t.LRO != nil:
		return g.invokers.longRunning
	}
	return g.invokers.unary
}

// invokeLongRunning calls a method that answers with an operation
// (operation_call.go).
func (g *Gateway) invokeLongRunning(ctx context.Context, req *mcp.CallToolRequest, t *compiled.Tool, args []byte) (*mcp.CallToolResult, error) {
	in, warnings, err := t.DecodeRequest(args)
	if err != nil {
		return g.calls.InputError(ctx, t, err)
	}
	res, err := g.callLongRunning(ctx, req, t, in)
	return call.NoteArguments(res, warnings), err
}
