package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/anytypes"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/callwire"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/compiled"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/schema"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
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
// here and in status.go, and documented in docs/errors.md.
func (g *Gateway) runTool(ctx context.Context, t *compiled.Tool, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
	// Metrics, span and call log (observe.go); a no-op when none is on.
	ctx, ob := g.startCall(ctx, t, req)
	defer g.endCall(ctx, t, req, ob, &res, &err)
	// Before anything reaches the backend: scopes, expiry, revocation.
	if err := g.authorize(ctx, t, req); err != nil {
		return nil, err
	}
	args, err := objectArguments(req.Arguments)
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

// invokers are g's invoker of each tool shape, bound to g once (New), so
// that compiling a tool makes no closure.
type invokers struct {
	unary, serverStream, requestStream, watch, longRunning compiled.Invoker
}

func (g *Gateway) bindInvokers() {
	g.invokers = invokers{
		unary:         g.invokeUnary,
		serverStream:  g.invokeServerStream,
		requestStream: g.invokeRequestStream,
		watch:         g.invokeWatch,
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

// invokeUnary calls a unary method: one request, one response.
func (g *Gateway) invokeUnary(ctx context.Context, req *mcp.CallToolRequest, t *compiled.Tool, args []byte) (*mcp.CallToolResult, error) {
	in, warnings, err := t.DecodeRequest(args)
	if err != nil {
		return g.inputError(ctx, t, err)
	}
	res, err := g.unaryCall(ctx, t, in)
	return noteArguments(res, warnings), err
}

// unaryCall sends the converted request of a unary method and converts
// its response.
func (g *Gateway) unaryCall(ctx context.Context, t *compiled.Tool, in proto.Message) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(ctx, t.Call.Timeout)
	defer cancel()
	var out callwire.Frame
	defer out.Release()
	var tries *backendconn.Attempts
	if t.Call.Retry && t.Obs.Metrics != nil {
		ctx, tries = backendconn.CountAttempts(ctx)
	}
	err := t.Call.Conn.Invoke(ctx, t.Call.Method, in, &out, callwire.Codec)
	if tries != nil {
		t.Obs.Metrics.Retried(tries.Retries())
	}
	if err != nil {
		return g.callFailed(ctx, t, status.Convert(err)), nil
	}

	return responseResult(ctx, t, out.Bytes())
}

// invokeLongRunning calls a method that answers with an operation
// (operation_call.go).
func (g *Gateway) invokeLongRunning(ctx context.Context, req *mcp.CallToolRequest, t *compiled.Tool, args []byte) (*mcp.CallToolResult, error) {
	in, warnings, err := t.DecodeRequest(args)
	if err != nil {
		return g.inputError(ctx, t, err)
	}
	res, err := g.callLongRunning(ctx, req, t, in)
	return noteArguments(res, warnings), err
}

// objectArguments returns the arguments as a JSON object. Absent or null
// arguments mean "no arguments", which MCP allows for tools whose fields are
// all optional.
func objectArguments(raw json.RawMessage) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return []byte("{}"), nil
	}
	if raw[0] != '{' {
		return nil, errors.New("invalid params: arguments must be a JSON object")
	}
	return raw, nil
}

// argumentsNote starts the text block of a result whose arguments drew
// warnings (schema.Warnings): the call was made, so the model reads the
// result and, in the same turn, what it probably sent by mistake.
const argumentsNote = "The call was made, but some arguments were probably not what you meant (a bytes field takes base64 of the raw bytes):\n"

// noteArguments adds the warnings about the arguments to the call's
// result, success or error alike: a backend that refused bytes it could
// not read is explained by them too. Most calls have none and cost a
// comparison.
func noteArguments(res *mcp.CallToolResult, warnings schema.Warnings) *mcp.CallToolResult {
	if res == nil || warnings.Len() == 0 {
		return res
	}
	res.Content = append(res.Content, mcp.Content{Type: mcp.ContentText, Text: argumentsNote + warnings.String()})
	return res
}

// responseResult is the result of a call answered with one response
// message (unary and client streaming): the response, still in wire form,
// transcoded to the JSON the output schema describes. A response holding
// an Any whose type the backend does not describe cannot be shown; the
// model reads why, as a tool execution error.
func responseResult(ctx context.Context, t *compiled.Tool, wire []byte) (*mcp.CallToolResult, error) {
	js, err := t.AppendResponse(ctx, make([]byte, 0, 64+2*len(wire)), wire)
	var unknown *anytypes.UnknownTypeError
	if errors.As(err, &unknown) {
		return unshownResult(unknown, "The backend answered, but the gateway cannot show the answer: "+unknown.Sentence("a value")+"."), nil
	}
	if err != nil {
		return nil, fmt.Errorf("encoding the response of %s: %w", t.Call.Method, err)
	}
	res := jsonResult(js)
	if t.Paging != nil {
		t.Paging.Note(res, t.Definition.Name, wire)
	}
	return res, nil
}

// unshownResult is the tool execution error of an answer the gateway
// cannot show, for it holds an Any of a type nobody describes: text says
// so in words (anytypes.UnknownTypeError.Sentence); the lookup's own error is
// recorded as the call's outcome, a fault of the gateway's, not the
// backend's status.
func unshownResult(unknown *anytypes.UnknownTypeError, text string) *mcp.CallToolResult {
	return withOutcome(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{{Type: mcp.ContentText, Text: text}}},
		telemetry.Outcome{Code: codes.Internal, Err: unknown})
}

// jsonResult is a successful result carrying js as structuredContent and,
// for clients that read only content, as its text block.
func jsonResult(js []byte) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content:           []mcp.Content{{Type: mcp.ContentText, Structured: true}},
		StructuredContent: js,
	}
}

// inputErrorPrefix starts every invalid-arguments message, so a model
// reads at once that the fault was in its arguments.
const inputErrorPrefix = "invalid arguments for "

// inputError answers arguments the request message cannot hold. By
// default that is a tool execution error (SEP-1303), so the model reads
// what was wrong and corrects itself; --input-errors=protocol makes it
// -32602 for clients that prefer that.
func (g *Gateway) inputError(ctx context.Context, t *compiled.Tool, cause error) (*mcp.CallToolResult, error) {
	msg := inputErrorPrefix + t.Definition.Name + ": " + cause.Error()
	if g.opts.Calls.InputErrors == InputErrorsProtocol {
		// The cause may quote the arguments back.
		return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: msg, Sensitive: true}
	}
	return withOutcome(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{{Type: mcp.ContentText, Text: msg}}},
		telemetry.Outcome{Rejected: true}), nil
}
