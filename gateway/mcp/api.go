// Package mcp is the gateway's Model Context Protocol server layer: JSON-RPC
// 2.0 framing, protocol revisions from 2024-11-05 to 2026-07-28, sessions and
// the transports (Streamable HTTP, with an optional scale-out mode of signed
// session tokens; stdio; WebSocket; the legacy 2024-11-05 HTTP+SSE). It
// knows nothing of gRPC or protobuf: a [Handler] supplies the tools and
// serves the calls. stdio, WebSocket and legacy SSE are thin framings over
// one connection loop (conn.go), so they behave identically.
//
// The hot path of tools/call is deliberately short: the envelope is decoded
// once by a small validating scanner (keys match exactly, as JSON-RPC
// requires; nothing is copied), the arguments stay raw JSON for the
// handler, and results are encoded with an append-based writer into pooled
// buffers. tools/list pages are encoded once per [ToolList], never per
// request.
//
// This package is library API: a Go program may serve tools of its own
// with it ([NewServer] with a [Handler], then [Server.ServeStdio] or
// [Server.StreamableHTTPHandler], as the examples show), and package
// gateway speaks its types (a gateway.Gateway is a [Handler]; [ToolList],
// [CallToolRequest] and the transports' options appear in gateway's API).
package mcp

import (
	"context"
	"encoding/json"
	"net/http"
)

// Protocol revisions this server speaks, oldest first.
const (
	Version20241105 = "2024-11-05"
	Version20250326 = "2025-03-26"
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"
	Version20260728 = "2026-07-28"

	// LatestVersion is the newest revision; clients asking for an unknown
	// revision in initialize are offered the newest handshake revision
	// (2025-11-25), since 2026-07-28 has no handshake.
	LatestVersion = Version20260728
)

// JSON-RPC and MCP error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603

	// 2026-07-28 (SEP-2575) error codes.
	CodeHeaderMismatch                    = -32020
	CodeMissingRequiredClientCapabilities = -32021
	CodeUnsupportedProtocolVersion        = -32022
)

// Implementation names the server in initialize and server/discover results.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// Tool describes one tool. The gateway builds these once at discovery; the
// schemas are already-encoded JSON objects.
type Tool struct {
	Name        string
	Title       string // sent from 2025-06-18 on
	Description string
	// InputSchema is a JSON Schema object with root "type": "object".
	InputSchema json.RawMessage
	// OutputSchema, when set, is a JSON Schema object with root
	// "type": "object"; sent from 2025-06-18 on.
	OutputSchema json.RawMessage
	// Annotations are sent from 2025-03-26 on; nil sends none.
	Annotations *ToolAnnotations
	// TaskSupport is the tool's execution.taskSupport at 2025-11-25
	// (TaskSupportOptional, TaskSupportRequired; "" is forbidden, the
	// default): whether a client may call it as a task. It takes effect
	// only when the Handler is a TaskHandler.
	TaskSupport string
	// Meta, when set, is the tool's _meta object (raw JSON), sent at every
	// revision: clients ignore members they do not know. The gateway uses
	// it for hints such as anthropic/maxResultSizeChars.
	Meta json.RawMessage
	// Handle is the handler's own value for the tool, never sent. A
	// tools/call is resolved once, against one Tools() snapshot, and the
	// resolved Tool, Handle included, is handed to CallTool as
	// CallToolRequest.Tool: the handler runs what that snapshot named
	// without looking the name up again in a catalog that may have
	// changed since.
	Handle any
}

// ToolAnnotations are the behaviour hints of a tool. A nil pointer leaves
// the hint at the protocol's default.
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// CallToolRequest is one tools/call as the handler sees it. It and the
// byte slices it holds (Arguments, ProgressToken, RequestID, Meta) alias the server's
// request buffers, which are reused once CallTool returns: a handler that
// needs any of them afterwards (say, in a goroutine it leaves running) must
// copy them.
type CallToolRequest struct {
	// Name is the requested tool name.
	Name string
	// Tool is the tool Name resolved to in the handler's Tools() snapshot
	// when the request came through a Server (read-only), nil when the
	// handler's CallTool is called directly.
	Tool *Tool
	// Arguments is the raw JSON value of params.arguments exactly as sent,
	// or nil when the client omitted it. The handler decides what a
	// non-object means.
	Arguments json.RawMessage
	// ProgressToken is the raw JSON of params._meta.progressToken, or nil.
	ProgressToken json.RawMessage
	// RequestID is the raw JSON of the JSON-RPC id, for logs and traces
	// that pair a call with the client's request.
	RequestID json.RawMessage
	// Meta is the raw JSON of params._meta, or nil.
	Meta json.RawMessage
	// Header holds the HTTP request headers (the POST for Streamable HTTP),
	// nil on stdio. Read-only.
	Header http.Header
	// Session describes the connection the call arrived on.
	Session SessionInfo
	// Task says whether the call may be answered with a task
	// (CallToolResult.Task); see tasks.go.
	Task TaskMode

	// progress sends notifications/progress on the caller's stream; set by
	// the server, nil when no progress token was sent.
	progress func(ctx context.Context, progress, total float64, message string) error
}

// NotifyProgress sends notifications/progress for this call when the client
// asked for progress (sent a progress token); otherwise it does nothing.
// total <= 0 omits the total.
func (r *CallToolRequest) NotifyProgress(ctx context.Context, progress, total float64, message string) error {
	if r.progress == nil {
		return nil
	}
	return r.progress(ctx, progress, total, message)
}

// SessionInfo describes the connection and revision of a request.
type SessionInfo struct {
	// Transport is "streamable-http", "stdio", "websocket" or "sse".
	Transport string
	// ID is the Mcp-Session-Id, empty for stateless requests and stdio.
	// It is a credential for the session: log LogID instead.
	ID string
	// Key identifies the session for state a handler keeps per session:
	// the Mcp-Session-Id where there is one, a random id per connection on
	// stdio, WebSocket and legacy SSE, and empty for stateless
	// (2026-07-28) requests, which belong to no session.
	Key string
	// LogID is [LogID](ID), computed once per session, for logs and
	// spans.
	LogID string
	// ProtocolVersion is the negotiated or per-request revision.
	ProtocolVersion string
}

// Content is one content block of a tool result: a text block (Type
// "text" or empty) or a resource link (Type ContentResourceLink, with URI,
// Name and optionally MIMEType, Description and Size).
//
// resource_link exists from 2025-06-18 on; older revisions do not know it,
// so the server leaves resource links out of their results. A handler that
// sends one says the same in a text block for those clients.
type Content struct {
	Type ContentType
	Text string
	// Structured makes a text block the result's StructuredContent as
	// text (Text is ignored): the encoder escapes those bytes straight
	// into the block, so a result whose text is its structured content
	// holds that JSON once, and whatever replaces StructuredContent
	// replaces the text too. Read a block's text with CallToolResult.Text.
	Structured bool

	URI         string
	Name        string
	MIMEType    string
	Description string
	Size        int64 // bytes; 0 omits it
}

// ContentType is the kind of a content block, as its "type" member
// spells it.
type ContentType string

const (
	// ContentText is a text block; an empty Type is written as text too.
	ContentText ContentType = "text"
	// ContentResourceLink is a resource link block.
	ContentResourceLink ContentType = "resource_link"
)

// CallToolResult is a tool's answer. IsError marks a tool execution error
// the model can act on; protocol errors are returned as *Error instead.
type CallToolResult struct {
	Content []Content
	// StructuredContent is raw JSON (or nil). It is sent from 2025-06-18
	// on, and before 2026-07-28 only when it is an object (as those
	// revisions require); older revisions get the content blocks only.
	StructuredContent json.RawMessage
	IsError           bool
	// Task, when set, answers the call with a task instead of a result;
	// allowed only when CallToolRequest.Task is not TaskNone.
	Task *Task
	// Outcome is the Handler's own account of how the call ended, for its
	// observers (metrics, spans, logs), set where the Handler decided it;
	// the server neither sends nor reads it.
	Outcome any
}

// Text is the text of r's content block i: its Text, or r's
// StructuredContent for a Structured block.
func (r *CallToolResult) Text(i int) string {
	if c := r.Content[i]; c.Structured {
		return string(r.StructuredContent)
	}
	return r.Content[i].Text
}

// Handler supplies the tools and serves the calls. Implementations must be
// safe for concurrent use.
type Handler interface {
	// Tools returns the current immutable tool set. It is called per
	// tools/list and must be cheap (an atomic load).
	Tools() *ToolList
	// CallTool serves tools/call. ctx is cancelled when the client cancels
	// (notifications/cancelled, a closed HTTP request) or the server shuts
	// down; it descends from the context of the HTTP request that carried
	// the call (for WebSocket and legacy SSE, the request that opened the
	// connection), so whatever the front door put there (the
	// authenticated principal) is there on every transport. Returning an
	// *Error answers with that JSON-RPC error, a *[Refusal] with its
	// transport's refusal; any other error answers -32603 and is logged. A
	// panic is recovered and answered -32603.
	CallTool(ctx context.Context, req *CallToolRequest) (*CallToolResult, error)
}

// CallerLister is implemented by a Handler whose tools/list depends on
// who asks: a list showing only the tools the caller may call. The server
// then lists ListedTools(ctx) (ctx as for CallTool, with what the front
// door put there) instead of Tools(), and still resolves tools/call
// against Tools(), so that a call of a tool the list hides reaches the
// Handler, whose answer can say what the caller lacks. Like Tools, it is
// called per tools/list and must be cheap.
type CallerLister interface {
	ListedTools(ctx context.Context) *ToolList
}

// Error is a JSON-RPC error object. Handlers return it to answer with a
// protocol error.
type Error struct {
	Code    int64
	Message string
	Data    json.RawMessage // optional, raw JSON
	// Sensitive marks an error of tools/call whose Message or Data
	// repeat argument or result values (arguments quoted back, a tool's
	// result): the protocol trace hides both unless
	// ServerOptions.TraceBodies, as it hides the values themselves.
	Sensitive bool
}

func (e *Error) Error() string { return e.Message }
