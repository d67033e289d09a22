package compiled

import (
	"context"
	"encoding/json"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/grpc-mcp-gateway/gateway/gateway/exchange"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/anytypes"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/longrunning"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/overrides"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/paging"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/searchdoc"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/transcode"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/watch"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
	"github.com/grpc-mcp-gateway/gateway/internal/schema"
)

// tool is one RPC compiled for calling: everything tools/call needs is
// resolved here, once, at discovery, so the per-call path does no
// descriptor work.
type Tool struct {
	// Definition is the tool's definition without its schemas, which
	// Schemas holds (WithSchemas joins them).
	Definition mcp.Tool
	Schemas    *Schemas
	// Backend is the name of the backend serving the tool, for logs,
	// metrics and resource URIs.
	Backend string
	// Call is what a call of the tool sends and how it reads the answer.
	Call Call
	// Obs is the tool's metrics and span settings, set by the gateway (observe.go).
	Obs Obs
	// Budget shapes the tool's results cut to the result budget (budget.go; the gateway fits results).
	Budget Budget
	// Paging is set for a method paged by token (gateway/internal/paging).
	Paging *paging.Paged
	// LRO is set for a long-running method (gateway/internal/longrunning),
	// nil otherwise.
	LRO *longrunning.Method
	// Watch is set for an open-ended stream (gateway/internal/watch), nil
	// otherwise.
	Watch *watch.Spec
	// Search is what search mode indexes beyond the definition.
	Search searchdoc.Facts
	// Access is who may call the tool and with which token.
	Access Access
	// Args are the operator's argument overrides (overrides.go), nil for
	// most; Origin says where the definition's parts came from, for the
	// catalog report (the gateway's report.go).
	Args   *overrides.Args
	Origin Origin
}

// Call is what a call of one tool needs of its method and backend.
type Call struct {
	// Method is "/package.Service/Method", as grpc.Invoke wants it.
	Method string
	Conn   grpc.ClientConnInterface
	// Input makes the request messages the arguments are decoded into.
	Input protoreflect.MessageType
	// WrapOutput: the response is not a JSON object in protojson
	// (Timestamp, Value, wrappers...), so it travels as {"value": ...}.
	// (The validator wraps and unwraps the input likewise.)
	WrapOutput bool
	// Validator converts and checks the arguments; compiled here so the
	// call path does only the conversion and the checks a type needs.
	Validator *schema.Validator
	// Response renders the response's wire bytes as protojson would,
	// without decoding them into a dynamic message.
	Response *transcode.Encoder
	// Types resolves the backend's own messages in google.rpc error
	// details (rpcstatus) and the Any values of responses (anytypes).
	Types *anytypes.Types
	// Kind is the tool's stream shape: unary, or one of those in
	// stream.go.
	Kind Kind
	// Invoke makes the call of the tool's shape (Options.Invoker).
	Invoke Invoker
	// ProgressLabel ends each progress message of a server or
	// bidirectional stream: " (package.Response)".
	ProgressLabel string
	// Timeout is the call's deadline, resolved at discovery: the method's
	// or backend's setting (Options.Settle), else Options.Calls.Timeout or
	// StreamTimeout by kind.
	Timeout time.Duration
	// MD is the backend's own metadata (Backend.Metadata), nil for most.
	MD metadata.MD
	// Repeatable: its owners declared the method safe to repeat
	// (safeToRepeat); Retry: so it is, and its backend's connection
	// retries such calls (gateway/backendconn), so the call path counts
	// attempts.
	Repeatable, Retry bool
	// Limits are the message size limits of the backend's connection, for
	// the error a message over them becomes (call.Env.Failed); nil for a
	// connection not made by backendconn.Dial.
	Limits Limits
	// Answers is told of a call that ended at DEADLINE_EXCEEDED
	// (Options.Answers), nil for none.
	Answers chan<- struct{}
}

// Access is what decides who may call a tool, and the token its
// calls carry to the backend.
type Access struct {
	// BaseName is the name the tool has when no other collides with it
	// (toolname.Base), which a tool scope rule naming it keeps applying to
	// whatever a collision renames the tool.
	BaseName string
	// Scopes are what a call needs beyond the globally required scopes:
	// the tool scope rules that match it, resolved by assemble for its
	// catalog (package scopes), and the scopes its API declares
	// (DeclaredScopes). Nil for most tools.
	Scopes []string
	// Exchanger is the backend's token exchanger (Backend.TokenExchange),
	// nil when its calls carry no exchanged token.
	Exchanger *exchange.Exchanger
	// TokenScopes are the method's own scopes for its backend's
	// exchanged token (MethodSettings.TokenScopes), sorted.
	TokenScopes []string
	// DeclaredScopes are the scopes of the method's and its service's
	// (mcpgateway.v1) options, sorted; assemble adds them to Scopes.
	DeclaredScopes []string
}

// Obs is what observing one tool needs, resolved at discovery so the
// call path does no label lookups.
type Obs struct {
	Metrics *telemetry.ToolMetrics
	Tracer  *telemetry.ToolTracer
}

// Limits is the part of a managedConn that a tool's error results
// need: which of the connection's message size limits a call ran into
// (limit 0: none).
type Limits interface {
	ExceededLimit(st *status.Status) (limit int, sent bool)
}

// Invoker makes the backend call of one tool shape with the call's
// arguments (a JSON object) and turns its outcome into the result. Each
// tool holds its own (Call.Invoke), chosen once at discovery
// (Options.Invoker), so no call decides its shape again.
type Invoker func(ctx context.Context, req *mcp.CallToolRequest, t *Tool, args []byte) (*mcp.CallToolResult, error)

// managed is a connection made by backendconn.Dial, as compilation sees
// it: its message size limits, and whether it retries the methods safe
// to repeat.
type managed interface {
	Limits
	RetriesSafeMethods() bool
}

// Def is t's definition, for search mode (searchmode.Tool).
func (t *Tool) Def() *mcp.Tool { return &t.Definition }

// Facts are what discovery read of t's method for search mode.
func (t *Tool) Facts() *searchdoc.Facts { return &t.Search }

// InputSchema is t's input schema, built on first use, and deflated
// when search mode holds it so (packSchemas), for search mode's answer
// entries to share.
func (t *Tool) InputSchema() (json.RawMessage, []byte, error) {
	b := t.Schemas.input()
	if b.err != nil {
		return nil, nil, b.err
	}
	in, err := b.inputSchema()
	return in, b.inZ, err
}

// decodeRequest converts the arguments of a unary or server-streaming
// call into the request message, checking them as the input schema says;
// warnings are what converted but was probably not meant so.
func (t *Tool) DecodeRequest(args []byte) (proto.Message, schema.Warnings, error) {
	in := t.Call.Input.New().Interface()
	warnings, err := t.Call.Validator.DecodeInjected(args, in, t.Injector())
	if err != nil {
		return nil, schema.Warnings{}, err
	}
	return in, warnings, nil
}

// EncodeRequest converts the arguments of a unary call straight to the
// request's wire form, without a dynamic message (schema.Validator
// AppendWire), when the tool's type allows it and nothing completes its
// requests (an injector works on a message); ok false means the caller
// uses DecodeRequest, which explains whatever the arguments got wrong.
// When ok, DecodeRequest would have accepted the arguments without a
// warning, and the bytes are the marshalled message it would have made.
func (t *Tool) EncodeRequest(args []byte) (wire []byte, ok bool) {
	v := t.Call.Validator
	if t.Args != nil || !v.Fast() {
		return nil, false
	}
	// The request is rarely larger than its JSON; the buffer is the
	// call's own, as grpc may still be writing it after Invoke returns.
	return v.AppendWire(make([]byte, 0, len(args)), args)
}

// appendResponse appends the JSON of one response message (wire form) to
// b, transcoding directly (no dynamic message) and wrapping a non-object
// response as {"value": ...} in the same buffer. The streaming collector
// (gateway/internal/collect) appends each message of a stream with it
// too. ctx bounds the lookup of an Any's type met for the first time
// (gateway/internal/anytypes).
func (t *Tool) AppendResponse(ctx context.Context, b, wire []byte) ([]byte, error) {
	return t.Call.Types.AppendWrapped(ctx, b, t.Call.Response, wire, t.Call.WrapOutput)
}
