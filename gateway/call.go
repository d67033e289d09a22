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
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/schema"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
	"github.com/grpc-mcp-gateway/gateway/gateway/transcode"
)

// CallTool serves tools/call. In search mode it first answers the two
// search-mode tools: search_tools from the catalog's index, and call_tool
// by turning it into the call of the tool it names and sending that down
// the one call path of every typed call (call.go), so validation, errors,
// progress, cancellation, streaming, deadlines, metrics, logs and
// per-tool authorization are the target tool's, exactly as if it had
// been called directly. (The MCP layer answers a name tools/list does not
// show, such as a typed tool's in search mode, as an unknown tool before
// it gets here.)
func (g *Gateway) CallTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	c := g.catalog.Load()
	if c.search != nil {
		switch req.Name {
		case SearchToolsName:
			view, keep := g.viewOf(ctx, &c.listing)
			return c.search.searchTools(ctx, req.Arguments, g.semantic, view, keep), nil
		case CallToolName:
			return g.callNamed(ctx, &c.listing, req)
		}
	}
	return g.call(ctx, &c.listing, req)
}

// call is the one path of every tools/call of a catalog tool, typed or
// through call_tool (metacall.go). This is the gateway's hot path: find
// the precompiled tool, convert the arguments, invoke, convert the
// response. Which error becomes a protocol error and which a tool
// execution error is decided here and in status.go, and documented in
// docs/errors.md.
func (g *Gateway) call(ctx context.Context, c *listing, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
	t := c.byName[req.Name]
	if t == nil {
		return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", req.Name)}
	}
	return g.callTool(ctx, t, req)
}

// callTool runs the resolved tool t: the one path every call of a tool
// takes, whether the client named it in tools/call or another tool runs
// it by name, so that authorization and observation always apply to the
// tool that actually runs.
func (g *Gateway) callTool(ctx context.Context, t *tool, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
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
	ctx = g.md.outgoingContext(ctx, req.Header, t.md)
	if t.exchanger != nil {
		var failed *mcp.CallToolResult
		if ctx, failed = g.backendToken(ctx, t.backend, t.exchanger, t.tokenScopes); failed != nil {
			return failed, nil
		}
	}
	if res, err = g.invoke(ctx, req, t, args); err != nil || res == nil {
		return res, err
	}
	// Every result, of every call shape, within the result budget.
	return g.fitResult(ctx, req, t, res), nil
}

// invoke makes the call of the tool's shape: unary, long-running or
// streaming.
func (g *Gateway) invoke(ctx context.Context, req *mcp.CallToolRequest, t *tool, args []byte) (*mcp.CallToolResult, error) {
	if t.kind != kindUnary {
		return g.callStream(ctx, req, t, args)
	}

	in, warnings, err := t.decodeRequest(args)
	if err != nil {
		return g.inputError(ctx, t, err)
	}
	res, err := g.invokeUnary(ctx, req, t, in)
	return noteArguments(res, warnings), err
}

// invokeUnary calls a unary or long-running method with its converted
// request.
func (g *Gateway) invokeUnary(ctx context.Context, req *mcp.CallToolRequest, t *tool, in proto.Message) (*mcp.CallToolResult, error) {
	if t.lro != nil {
		return g.callLongRunning(ctx, req, t, in)
	}

	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	var out rawFrame
	defer out.release()
	var tries *backendconn.Attempts
	if t.retry && t.obs.metrics != nil {
		ctx, tries = backendconn.CountAttempts(ctx)
	}
	err := t.conn.Invoke(ctx, t.method, in, &out, callCodec)
	if tries != nil {
		t.obs.metrics.Retried(tries.Retries())
	}
	if err != nil {
		return g.callFailed(ctx, t, status.Convert(err)), nil
	}

	return t.responseResult(ctx, out.bytes())
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

// decodeRequest converts the arguments of a unary or server-streaming
// call into the request message, checking them as the input schema says;
// warnings are what converted but was probably not meant so.
func (t *tool) decodeRequest(args []byte) (proto.Message, schema.Warnings, error) {
	in := t.input.New().Interface()
	warnings, err := t.validator.DecodeInjected(args, in, t.injector())
	if err != nil {
		return nil, schema.Warnings{}, err
	}
	return in, warnings, nil
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
func (t *tool) responseResult(ctx context.Context, wire []byte) (*mcp.CallToolResult, error) {
	js, err := t.appendResponse(ctx, make([]byte, 0, 64+2*len(wire)), wire)
	var unknown *unknownTypeError
	if errors.As(err, &unknown) {
		return unshownResult(unknown, "The backend answered, but the gateway cannot show the answer: "+unknown.sentence("a value")+"."), nil
	}
	if err != nil {
		return nil, fmt.Errorf("encoding the response of %s: %w", t.method, err)
	}
	res := jsonResult(js)
	if t.paging != nil {
		t.notePage(res, wire)
	}
	return res, nil
}

// unshownResult is the tool execution error of an answer the gateway
// cannot show, for it holds an Any of a type nobody describes: text says
// so in words (unknownTypeError.sentence); the lookup's own error is
// recorded as the call's outcome, a fault of the gateway's, not the
// backend's status.
func unshownResult(unknown *unknownTypeError, text string) *mcp.CallToolResult {
	return withOutcome(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{{Type: mcp.ContentText, Text: text}}},
		telemetry.Outcome{Code: codes.Internal, Err: unknown})
}

// appendResponse appends the JSON of one response message (wire form) to
// b, transcoding directly (no dynamic message) and wrapping a non-object
// response as {"value": ...} in the same buffer. The streaming collector
// appends each message of a stream with it too. ctx bounds the lookup of
// an Any's type met for the first time (anytypes.go).
func (t *tool) appendResponse(ctx context.Context, b, wire []byte) ([]byte, error) {
	return t.types.appendWrapped(ctx, b, t.response, wire, t.wrapOutput)
}

// appendWrapped appends the JSON enc renders of the wire-form message to
// b, wrapped as {"value": ...} in the same buffer when wrap is set (the
// message's type is not a JSON object in protojson). Tool responses,
// operation responses and the messages in operations' Anys all go
// through it.
func appendWrapped(b []byte, enc *transcode.Encoder, wire []byte, wrap bool) ([]byte, error) {
	if wrap {
		b = append(b, `{"`+schema.WrapperProperty+`":`...)
	}
	b, err := enc.AppendJSON(b, wire)
	if err != nil {
		return nil, err
	}
	if wrap {
		b = append(b, '}')
	}
	return b, nil
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
func (g *Gateway) inputError(ctx context.Context, t *tool, cause error) (*mcp.CallToolResult, error) {
	msg := inputErrorPrefix + t.def.Name + ": " + cause.Error()
	if g.opts.InputErrors == InputErrorsProtocol {
		// The cause may quote the arguments back.
		return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: msg, Sensitive: true}
	}
	return withOutcome(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{{Type: mcp.ContentText, Text: msg}}},
		telemetry.Outcome{Rejected: true}), nil
}
