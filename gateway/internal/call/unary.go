package call

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/anytypes"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/callwire"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/compiled"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
	"github.com/grpc-mcp-gateway/gateway/internal/schema"
)

// Unary calls a unary method: one request, one response.
func (e *Env) Unary(ctx context.Context, req *mcp.CallToolRequest, t *compiled.Tool, args []byte) (*mcp.CallToolResult, error) {
	in, warnings, err := request(t, args)
	if err != nil {
		return e.InputError(ctx, t, err)
	}
	res, err := e.unaryCall(ctx, t, in)
	return NoteArguments(res, warnings), err
}

// request converts the arguments of one request message for sending:
// straight to wire form (callwire.Encoded) when they convert without a
// warning, otherwise to a dynamic message, whose decoding explains
// whatever the arguments got wrong.
func request(t *compiled.Tool, args []byte) (any, schema.Warnings, error) {
	if wire, ok := t.EncodeRequest(args); ok {
		if hook := wireHook.Load(); hook != nil {
			(*hook)(t, wire)
		}
		return callwire.Encoded(wire), schema.Warnings{}, nil
	}
	m, warnings, err := t.DecodeRequest(args)
	if err != nil {
		return nil, warnings, err
	}
	return m, warnings, nil
}

// wireHook, when set (only by tests: export_test.go), is told of each
// request message that took the wire path.
var wireHook atomic.Pointer[func(t *compiled.Tool, wire []byte)]

// unaryCall sends the converted request of a unary method (a message, or
// callwire.Encoded) and converts its response.
func (e *Env) unaryCall(ctx context.Context, t *compiled.Tool, in any) (*mcp.CallToolResult, error) {
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
		return e.Failed(ctx, t, status.Convert(err)), nil
	}

	return ResponseResult(ctx, t, out.Bytes())
}

// ObjectArguments returns the arguments as a JSON object. Absent or null
// arguments mean "no arguments", which MCP allows for tools whose fields are
// all optional.
func ObjectArguments(raw json.RawMessage) ([]byte, error) {
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

// NoteArguments adds the warnings about the arguments to the call's
// result, success or error alike: a backend that refused bytes it could
// not read is explained by them too. Most calls have none and cost a
// comparison.
func NoteArguments(res *mcp.CallToolResult, warnings schema.Warnings) *mcp.CallToolResult {
	if res == nil || warnings.Len() == 0 {
		return res
	}
	res.Content = append(res.Content, mcp.Content{Type: mcp.ContentText, Text: argumentsNote + warnings.String()})
	return res
}

// ResponseResult is the result of a call answered with one response
// message (unary and client streaming): the response, still in wire form,
// transcoded to the JSON the output schema describes. A response holding
// an Any whose type the backend does not describe cannot be shown; the
// model reads why, as a tool execution error.
func ResponseResult(ctx context.Context, t *compiled.Tool, wire []byte) (*mcp.CallToolResult, error) {
	js, err := t.AppendResponse(ctx, make([]byte, 0, 64+2*len(wire)), wire)
	var unknown *anytypes.UnknownTypeError
	if errors.As(err, &unknown) {
		return UnshownResult(unknown, "The backend answered, but the gateway cannot show the answer: "+unknown.Sentence("a value")+"."), nil
	}
	if err != nil {
		return nil, fmt.Errorf("encoding the response of %s: %w", t.Call.Method, err)
	}
	res := JSONResult(js)
	if t.Paging != nil {
		t.Paging.Note(res, t.Definition.Name, wire)
	}
	return res, nil
}

// UnshownResult is the tool execution error of an answer the gateway
// cannot show, for it holds an Any of a type nobody describes: text says
// so in words (anytypes.UnknownTypeError.Sentence); the lookup's own error is
// recorded as the call's outcome, a fault of the gateway's, not the
// backend's status.
func UnshownResult(unknown *anytypes.UnknownTypeError, text string) *mcp.CallToolResult {
	return WithOutcome(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{{Type: mcp.ContentText, Text: text}}},
		telemetry.Outcome{Code: codes.Internal, Err: unknown})
}

// JSONResult is a successful result carrying js as structuredContent and,
// for clients that read only content, as its text block.
func JSONResult(js []byte) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content:           []mcp.Content{{Type: mcp.ContentText, Structured: true}},
		StructuredContent: js,
	}
}

// InputErrorPrefix starts every invalid-arguments message, so a model
// reads at once that the fault was in its arguments.
const InputErrorPrefix = "invalid arguments for "

// InputError answers arguments the request message cannot hold. By
// default that is a tool execution error (SEP-1303), so the model reads
// what was wrong and corrects itself; --input-errors=protocol makes it
// -32602 for clients that prefer that.
func (e *Env) InputError(ctx context.Context, t *compiled.Tool, cause error) (*mcp.CallToolResult, error) {
	msg := InputErrorPrefix + t.Definition.Name + ": " + cause.Error()
	if e.InputErrorsProtocol {
		// The cause may quote the arguments back.
		return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: msg, Sensitive: true}
	}
	return WithOutcome(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{{Type: mcp.ContentText, Text: msg}}},
		telemetry.Outcome{Rejected: true}), nil
}

// WithOutcome sets res's outcome and returns res.
func WithOutcome(res *mcp.CallToolResult, o telemetry.Outcome) *mcp.CallToolResult {
	res.Outcome = o
	return res
}
