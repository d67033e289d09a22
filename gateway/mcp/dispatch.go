package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/grpc-mcp-gateway/gateway/internal/jsonscan"
)

// sink is where a transport takes the notifications a request emits while
// it runs (progress, subscription events). send must be safe for concurrent
// use and fail, not block forever, once the stream is gone.
type sink interface {
	send(msg []byte) error
}

// scope is what a transport knows about the message it hands to dispatch.
type scope struct {
	transport string
	header    http.Header // HTTP request headers; nil on stdio
	// headerVersion is MCP-Protocol-Version (HTTP only). When checkHeader
	// is set, a 2026-07-28 request's _meta version must equal it.
	headerVersion string
	checkHeader   bool
	out           sink
	// backlog, on a WebSocket or legacy SSE session, counts the answers
	// waiting for out; its transport waits on it before taking a message
	// (conn.go). nil elsewhere.
	backlog *replyBacklog
	// keepRefusal asks for the [Refusal] a handler answered with in
	// refused, so the transport can answer with its HTTP status and
	// headers. Only transports that give each request a scope of its own
	// set it (the others share one scope between concurrent requests).
	keepRefusal bool
	refused     *Refusal
}

// reply is the outcome of one message.
type reply struct {
	body []byte // the encoded response; nil means no response
	code int64  // the JSON-RPC error code, 0 on success
}

// params is the union of the params fields any method reads. One scan
// serves every method; unknown fields are skipped, and keys match exactly
// (a "Name" member is not "name"). The fields alias the message bytes.
type params struct {
	Name            json.RawMessage
	Arguments       json.RawMessage
	Cursor          json.RawMessage
	URI             json.RawMessage
	ProtocolVersion json.RawMessage
	Capabilities    json.RawMessage
	RequestID       json.RawMessage
	Notifications   json.RawMessage
	Meta            json.RawMessage
	TaskID          json.RawMessage // tasks/*: params.taskId
	Task            json.RawMessage // tools/call at 2025-11-25: params.task

	meta metaFields
}

// metaFields are the members of params._meta the server reads.
type metaFields struct {
	ProgressToken      json.RawMessage
	ProtocolVersion    json.RawMessage // io.modelcontextprotocol/protocolVersion
	ClientCapabilities json.RawMessage // io.modelcontextprotocol/clientCapabilities
}

func (p *params) decode(raw json.RawMessage) *Error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] != '{' {
		return errorf(CodeInvalidParams, "params must be an object")
	}
	// raw was validated with the whole message; scanning again only picks
	// out the members.
	if _, ok := jsonscan.Object(raw, func(key, val []byte) {
		switch string(key) {
		case "name":
			p.Name = val
		case "arguments":
			p.Arguments = val
		case "cursor":
			p.Cursor = val
		case "uri":
			p.URI = val
		case "protocolVersion":
			p.ProtocolVersion = val
		case "capabilities":
			p.Capabilities = val
		case "requestId":
			p.RequestID = val
		case "notifications":
			p.Notifications = val
		case "_meta":
			p.Meta = val
		case "taskId":
			p.TaskID = val
		case "task":
			p.Task = val
		}
	}); !ok {
		return errorf(CodeInvalidParams, "invalid params: not valid JSON")
	}
	if len(p.Meta) > 0 && string(p.Meta) != "null" {
		if p.Meta[0] != '{' {
			return errorf(CodeInvalidParams, "params._meta must be an object")
		}
		jsonscan.Object(p.Meta, func(key, val []byte) {
			switch string(key) {
			case "progressToken":
				p.meta.ProgressToken = val
			case "io.modelcontextprotocol/protocolVersion":
				p.meta.ProtocolVersion = val
			case "io.modelcontextprotocol/clientCapabilities":
				p.meta.ClientCapabilities = val
			}
		})
	} else {
		p.Meta = nil
	}
	return nil
}

// handleMessage is the whole life of one decoded message outside a batch.
// Requests are registered in flight, served, and unregistered; the reply
// body is appended to b.
func (s *Server) handleMessage(ctx context.Context, sess *session, sc *scope, m *message, b []byte) reply {
	s.trace.in(sc, sess, m)
	cctx, c, r, done := s.accept(ctx, sess, m, b)
	if done {
		s.trace.out(sc, sess, m, r.body, nil)
		return r
	}
	r = s.finish(cctx, sess, sc, m, c, b)
	s.trace.out(sc, sess, m, r.body, c)
	return r
}

// accept classifies m. Notifications and responses are handled at once and
// invalid messages answered (done is true). A request is registered in
// flight and must be completed with finish; transports that serve requests
// concurrently call accept in their read loop, so that a
// notifications/cancelled read next always finds the request.
func (s *Server) accept(ctx context.Context, sess *session, m *message, b []byte) (context.Context, *call, reply, bool) {
	switch m.classify() {
	case kindInvalid:
		return nil, nil, reply{appendError(b, m.ID, errorf(CodeInvalidRequest, "invalid request")), CodeInvalidRequest}, true
	case kindResponse:
		return nil, nil, reply{}, true // we never send requests; stray responses are ignored
	case kindNotification:
		s.notification(ctx, sess, m)
		return nil, nil, reply{}, true
	}
	cctx, c, err := s.startCall(ctx, sess, m.ID)
	if err != nil {
		return nil, nil, reply{appendError(b, m.ID, err), err.Code}, true
	}
	return cctx, c, reply{}, false
}

// finish serves an accepted request and unregisters it. A request the
// client cancelled gets no reply.
func (s *Server) finish(ctx context.Context, sess *session, sc *scope, m *message, c *call, b []byte) reply {
	r := s.serveRequest(ctx, sess, sc, m, c, b)
	if s.endCall(sess, m.ID, c) {
		return reply{}
	}
	return r
}

// notification handles a client notification. Nothing ever answers one, so
// malformed ones are dropped silently.
func (s *Server) notification(ctx context.Context, sess *session, m *message) {
	if sess == nil {
		return // stateless: no session to initialize, no calls to cancel
	}
	if m.info == nil {
		return
	}
	switch m.info.handler {
	case onInitialized:
		sess.markInitialized()
	case onCancelled:
		var p params
		if p.decode(m.Params) != nil || !validID(p.RequestID) {
			return
		}
		if !sess.cancel(p.RequestID) && sess.relay != nil {
			sess.relay(ctx, p.RequestID)
		}
	}
}

// serveRequest answers one request at a handshake revision (or hands it
// to serveStateless). It decides every protocol error class from the
// request's row of the method table (methods.go): unknown, not served,
// of a later revision, before initialize.
func (s *Server) serveRequest(ctx context.Context, sess *session, sc *scope, m *message, c *call, b []byte) (r reply) {
	mark := len(b)
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("mcp: panic serving request", "id", string(m.ID), "method", m.method, "panic", v, "stack", string(debug.Stack()))
			e := errorf(CodeInternalError, "internal error")
			r = reply{appendError(b[:mark], m.ID, e), e.Code}
		}
	}()
	fail := func(e *Error) reply { return reply{appendError(b, m.ID, e), e.Code} }

	var p params
	if e := p.decode(m.Params); e != nil {
		return fail(e)
	}

	metaVersion, _ := unquoteIntern(p.meta.ProtocolVersion, supportedVersions)
	if isStateless(sc.headerVersion) || isStateless(metaVersion) {
		return s.serveStateless(ctx, sess, sc, m, c, &p, metaVersion, b)
	}

	info := m.info
	if info == nil || info.notification || info.handler == notServed {
		return fail(methodNotFound(m.method))
	}
	if info.revisions&handshakeRevisions == 0 {
		if info.task {
			return fail(methodNotFound(m.method))
		}
		return fail(errorf(CodeMethodNotFound, "method %q requires protocol version %s", m.method, info.revisions.first()))
	}
	if info.task && s.taskHandler() == nil {
		return fail(methodNotFound(m.method))
	}
	version := ""
	if info.session {
		if sess != nil {
			version = sess.negotiated()
		}
		if version == "" {
			return fail(errorf(CodeInvalidRequest, "method %q before initialize", m.method))
		}
		if !info.revisions.has(version) {
			return fail(errorf(CodeMethodNotFound, "method %q requires protocol version %s or later", m.method, info.revisions.first()))
		}
	}
	return s.serveMethod(ctx, sess, sc, m, c, &p, version, b)
}

var emptyObject = json.RawMessage("{}")

// serveStateless answers a 2026-07-28 request: the revision and client
// capabilities come with every request, there is no handshake.
func (s *Server) serveStateless(ctx context.Context, sess *session, sc *scope, m *message, c *call, p *params, version string, b []byte) reply {
	fail := func(e *Error) reply { return reply{appendError(b, m.ID, e), e.Code} }
	if version == "" {
		return fail(errorf(CodeInvalidParams, "missing or invalid _meta field \"io.modelcontextprotocol/protocolVersion\""))
	}
	if sc.checkHeader && sc.headerVersion != version {
		if sc.headerVersion == "" {
			return fail(errorf(CodeHeaderMismatch, "MCP-Protocol-Version header is required for requests carrying _meta io.modelcontextprotocol/protocolVersion"))
		}
		return fail(errorf(CodeHeaderMismatch, "MCP-Protocol-Version header %q does not match _meta io.modelcontextprotocol/protocolVersion %q", sc.headerVersion, version))
	}
	if !isSupported(version) {
		return fail(unsupportedVersion(version))
	}
	if len(p.meta.ClientCapabilities) == 0 || p.meta.ClientCapabilities[0] != '{' {
		return fail(errorf(CodeInvalidParams, "missing or invalid _meta field \"io.modelcontextprotocol/clientCapabilities\""))
	}
	info := m.info
	if info == nil || info.notification {
		return fail(methodNotFound(m.method))
	}
	if !info.revisions.has(version) {
		if info.task {
			return fail(methodNotFound(m.method))
		}
		return fail(errorf(CodeMethodNotFound, "method %q is not part of protocol version %s", m.method, version))
	}
	if info.handler == notServed {
		return fail(methodNotFound(m.method))
	}
	if info.task {
		if s.taskHandler() == nil {
			return fail(methodNotFound(m.method))
		}
		if !hasTasksExtension(p.meta.ClientCapabilities) {
			return fail(missingTasksExtension())
		}
	}
	return s.serveMethod(ctx, sess, sc, m, c, p, version, b)
}

// unsupportedVersion is the -32022 error; its data lets the client pick a
// revision we speak and retry.
func unsupportedVersion(requested string) *Error {
	b := []byte(`{"supported":[`)
	for i, v := range supportedVersions {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, v)
	}
	b = append(b, `],"requested":`...)
	b = appendString(b, requested)
	b = append(b, '}')
	return &Error{Code: CodeUnsupportedProtocolVersion, Message: fmt.Sprintf("unsupported protocol version %q", requested), Data: b}
}

// appendWithMeta appends the object obj with the extra member meta spliced
// in before its closing brace.
func appendWithMeta(b, obj, meta []byte) []byte {
	b = append(b, obj[:len(obj)-1]...)
	if len(obj) > 2 {
		b = append(b, ',')
	}
	b = append(b, meta...)
	return append(b, '}')
}

func (s *Server) initialize(sess *session, m *message, p *params, b []byte) reply {
	fail := func(e *Error) reply { return reply{appendError(b, m.ID, e), e.Code} }
	requested, ok := jsonscan.Unquote(p.ProtocolVersion)
	if !ok {
		return fail(errorf(CodeInvalidParams, "initialize: params.protocolVersion must be a string"))
	}
	if p.Capabilities != nil && (len(p.Capabilities) == 0 || p.Capabilities[0] != '{') {
		return fail(errorf(CodeInvalidParams, "initialize: params.capabilities must be an object"))
	}
	version := requested
	if !isHandshakeVersion(version) {
		version = fallbackVersion
	}
	if sess == nil || !sess.setInitialize(version, p.Capabilities) {
		return fail(errorf(CodeInvalidRequest, "initialize: session already initialized"))
	}
	b = appendResultHead(b, m.ID)
	b = append(b, `{"protocolVersion":`...)
	b = appendString(b, version)
	b = append(b, `,"capabilities":`...)
	b = append(b, s.capsFor(version)...)
	b = append(b, `,"serverInfo":`...)
	if version >= Version20250618 {
		b = append(b, s.implJSON...)
	} else {
		b = append(b, s.implJSONOld...)
	}
	if s.instructions != "" {
		b = append(b, `,"instructions":`...)
		b = appendString(b, s.instructions)
	}
	return reply{append(b, "}}"...), 0}
}

func (s *Server) toolsList(ctx context.Context, m *message, p *params, version string, b []byte) reply {
	cursor := ""
	if p.Cursor != nil && string(p.Cursor) != "null" {
		var ok bool
		if cursor, ok = jsonscan.Unquote(p.Cursor); !ok {
			e := errorf(CodeInvalidParams, "%s: params.cursor must be a string", m.method)
			return reply{appendError(b, m.ID, e), e.Code}
		}
	}
	f := familyOf(version)
	set := s.listed(ctx)
	page, ok := set.page(f, cursor)
	if !ok {
		e := errorf(CodeInvalidParams, "%s: invalid or expired cursor", m.method)
		return reply{appendError(b, m.ID, e), e.Code}
	}
	b = appendResultHead(b, m.ID)
	if f == family20260728 {
		b = appendWithMeta(b, page, s.serverInfo)
	} else {
		b = append(b, page...)
	}
	return reply{append(b, '}'), 0}
}

// listed is the tool set tools/list shows the caller of ctx.
func (s *Server) listed(ctx context.Context) *ToolList {
	if l, ok := s.h.(CallerLister); ok {
		return l.ListedTools(ctx)
	}
	return s.h.Tools()
}

// toolsCall is the hot path: decode name, arguments and progress token,
// invoke the handler, encode the result with append.
func (s *Server) toolsCall(ctx context.Context, sess *session, sc *scope, m *message, c *call, p *params, version string, b []byte) reply {
	fail := func(e *Error) reply {
		c.sensitiveError = e.Sensitive
		return reply{appendError(b, m.ID, e), e.Code}
	}
	// The one resolution of the call: the header check, the task mode and
	// the handler all see the tool of this one snapshot, so a refresh
	// meanwhile cannot make a listed tool unknown halfway.
	tool, name, ok := s.h.Tools().resolve(p.Name)
	if isStateless(version) {
		if e := s.checkNameHeader(sc, name); e != nil {
			return fail(e)
		}
	}
	switch {
	case p.Name == nil:
		return fail(errorf(CodeInvalidParams, "%s: missing params.name", m.method))
	case !ok:
		return fail(errorf(CodeInvalidParams, "%s: params.name must be a string", m.method))
	case tool == nil:
		return fail(errorf(CodeInvalidParams, "%s: unknown tool %q", m.method, name))
	}
	// The request lives in the call record, which exists anyway: one
	// allocation less per call.
	req := &c.req
	*req = CallToolRequest{
		Name:      name,
		Tool:      tool,
		Arguments: p.Arguments,
		Meta:      p.Meta,
		RequestID: m.ID,
		Header:    sc.header,
		Session:   SessionInfo{Transport: sc.transport, ProtocolVersion: version},
	}
	if sess != nil && !isStateless(version) {
		req.Session.ID, req.Session.Key, req.Session.LogID = sess.id, sess.key, sess.logID
	}
	if e := s.taskMode(req, p, version); e != nil {
		return fail(e)
	}
	if tok := p.meta.ProgressToken; tok != nil && string(tok) != "null" {
		if tok[0] != '"' && !validID(tok) {
			return fail(errorf(CodeInvalidParams, "%s: _meta.progressToken must be a string or an integer", m.method))
		}
		req.ProgressToken = tok
		if sc.out != nil {
			out := sc.out
			req.progress = func(ctx context.Context, progress, total float64, message string) error {
				return sendProgress(ctx, out, tok, version, progress, total, message)
			}
		}
	}
	res, err := s.h.CallTool(ctx, req)
	if d, ok := ctx.Deadline(); ok && ctx.Err() == nil && !time.Now().Before(d) {
		// The backend's own timer (gRPC's, from the same deadline) may
		// end the call a moment before ctx's: the deadline has passed,
		// so ctx is about to end, and its cause says why.
		<-ctx.Done()
	}
	if cause := context.Cause(ctx); ctx.Err() != nil && (cause == errCredentialExpired || cause == errCredentialRevoked) && (res == nil || res.Task == nil) {
		// Whatever the handler made of its deadline (a DEADLINE_EXCEEDED
		// tool error, a stream's partial result), the caller is told why
		// the call ended and what to do. A task it created is answered
		// still: the task runs on, and its id is the client's to keep.
		return fail(errorf(CodeInternalError, "%s: %s while the call ran; authenticate again and repeat the request", m.method, cause))
	}
	if err != nil {
		var rf *Refusal
		if errors.As(err, &rf) && rf.Err != nil {
			if sc.keepRefusal {
				sc.refused = rf
			}
			return fail(rf.Err)
		}
		var e *Error
		if errors.As(err, &e) {
			return fail(e)
		}
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			s.log.Debug("mcp: tool call cancelled", "id", string(m.ID), "tool", name, "err", err)
			return fail(errorf(CodeInternalError, "request cancelled"))
		}
		s.log.Error("mcp: tool call failed", "id", string(m.ID), "tool", name, "err", err)
		return fail(errorf(CodeInternalError, "internal error"))
	}
	if res == nil {
		s.log.Error("mcp: tool call returned no result", "id", string(m.ID), "tool", name)
		return fail(errorf(CodeInternalError, "internal error"))
	}
	switch {
	case res.Task != nil && req.Task == TaskNone:
		s.log.Error("mcp: tool call answered with a task the client cannot take", "id", string(m.ID), "tool", name)
		return fail(errorf(CodeInternalError, "internal error"))
	case res.Task != nil:
		b = appendResultHead(b, m.ID)
		b = s.appendCreateTaskResult(b, res.Task, version)
		return reply{append(b, '}'), 0}
	case req.Task == TaskRequested:
		return fail(s.taskNotCreated(res, version))
	}
	b = appendResultHead(b, m.ID)
	b = s.appendCallResult(b, res, version)
	return reply{append(b, '}'), 0}
}

// appendCallResult encodes a CallToolResult for the given revision.
func (s *Server) appendCallResult(b []byte, r *CallToolResult, version string) []byte {
	b = append(b, `{"content":[`...)
	n := 0
	for _, c := range r.Content {
		if c.Type == ContentResourceLink && version < Version20250618 {
			continue // unknown before 2025-06-18; the text says the same
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		if c.Structured {
			// The JSON escaped as the block's text, from its bytes.
			b = append(b, `{"type":"text","text":`...)
			b = appendString(b, unsafe.String(unsafe.SliceData(r.StructuredContent), len(r.StructuredContent)))
			b = append(b, '}')
			continue
		}
		b = appendContent(b, c)
	}
	b = append(b, ']')
	if len(r.StructuredContent) > 0 && hasStructuredContent(version) && (isStateless(version) || isJSONObject(r.StructuredContent)) {
		b = append(b, `,"structuredContent":`...)
		b = appendRawCompact(b, r.StructuredContent)
	}
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	if isStateless(version) {
		b = append(b, `,"resultType":"complete",`...)
		b = append(b, s.serverInfo...)
	}
	return append(b, '}')
}

// appendContent encodes one content block.
func appendContent(b []byte, c Content) []byte {
	if c.Type == ContentResourceLink {
		b = append(b, `{"type":"resource_link","uri":`...)
		b = appendString(b, c.URI)
		b = append(b, `,"name":`...)
		b = appendString(b, c.Name)
		if c.MIMEType != "" {
			b = append(b, `,"mimeType":`...)
			b = appendString(b, c.MIMEType)
		}
		if c.Description != "" {
			b = append(b, `,"description":`...)
			b = appendString(b, c.Description)
		}
		if c.Size > 0 {
			b = append(b, `,"size":`...)
			b = strconv.AppendInt(b, c.Size, 10)
		}
		return append(b, '}')
	}
	t := c.Type
	if t == "" {
		t = ContentText
	}
	b = append(b, `{"type":`...)
	b = appendString(b, string(t))
	b = append(b, `,"text":`...)
	b = appendString(b, c.Text)
	return append(b, '}')
}

// isJSONObject reports whether raw JSON is an object: before 2026-07-28,
// structuredContent must be one, so any other value is not sent.
func isJSONObject(raw []byte) bool {
	i := jsonscan.SpaceEnd(raw, 0)
	return i < len(raw) && raw[i] == '{'
}

// appendRawCompact appends raw JSON, compacting it only when it contains a
// line break: stdio frames messages by newline.
func appendRawCompact(b []byte, raw []byte) []byte {
	if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return append(b, raw...)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return append(b, "null"...)
	}
	return append(b, buf.Bytes()...)
}

func sendProgress(_ context.Context, out sink, token json.RawMessage, version string, progress, total float64, message string) error {
	if math.IsNaN(progress) || math.IsInf(progress, 0) || math.IsNaN(total) || math.IsInf(total, 0) {
		return errors.New("mcp: progress: not a finite number")
	}
	bp := getBuf()
	defer putBuf(bp)
	b := append(*bp, notificationHead+notificationProgress+`","params":{"progressToken":`...)
	b = append(b, token...)
	b = append(b, `,"progress":`...)
	b = strconv.AppendFloat(b, progress, 'g', -1, 64)
	if total > 0 {
		b = append(b, `,"total":`...)
		b = strconv.AppendFloat(b, total, 'g', -1, 64)
	}
	if message != "" && hasProgressMessage(version) {
		b = append(b, `,"message":`...)
		b = appendString(b, message)
	}
	b = append(b, "}}"...)
	*bp = b
	if err := out.send(b); err != nil {
		return fmt.Errorf("mcp: progress: %w", err)
	}
	return nil
}

// listen serves subscriptions/listen (2026-07-28): the acknowledgement,
// then one notification per change, until the client goes away (no
// response) or the server shuts down (a complete result).
func (s *Server) listen(ctx context.Context, sc *scope, m *message, p *params, b []byte) reply {
	fail := func(e *Error) reply { return reply{appendError(b, m.ID, e), e.Code} }
	if len(p.Notifications) == 0 || p.Notifications[0] != '{' {
		return fail(errorf(CodeInvalidParams, "subscriptions/listen: params.notifications must be an object"))
	}
	var want struct{ ToolsListChanged, ResourcesListChanged bool }
	var bad string
	var taskIDs []string
	jsonscan.Object(p.Notifications, func(key, val []byte) {
		var dst *bool
		switch string(key) {
		case "toolsListChanged":
			dst = &want.ToolsListChanged
		case "resourcesListChanged":
			dst = &want.ResourcesListChanged
		case "taskIds":
			var err error
			if taskIDs, err = decodeTaskIDs(val); err != nil {
				bad = "subscriptions/listen: params.notifications.taskIds: " + err.Error()
			}
			return
		default:
			return
		}
		switch string(val) {
		case "true":
			*dst = true
		case "false":
			*dst = false
		default:
			bad = "subscriptions/listen: params.notifications." + string(key) + " must be a boolean"
		}
	})
	if bad != "" {
		return fail(errorf(CodeInvalidParams, "%s", bad))
	}
	// Only what the server advertises is acknowledged, and delivered.
	if _, ok := s.h.(ResourceHandler); !ok {
		want.ResourcesListChanged = false
	}
	if len(taskIDs) > 0 && !hasTasksExtension(p.meta.ClientCapabilities) {
		return fail(missingTasksExtension())
	}
	if s.taskHandler() == nil {
		taskIDs = nil
	}
	subMeta := append(append([]byte(`"_meta":{"io.modelcontextprotocol/subscriptionId":`), m.ID...), '}')
	ack := []byte(notificationHead + notificationSubscriptionsAcknowledged + `","params":{"notifications":{`)
	if want.ToolsListChanged {
		ack = append(ack, `"toolsListChanged":true`...)
	}
	if want.ResourcesListChanged {
		if want.ToolsListChanged {
			ack = append(ack, ',')
		}
		ack = append(ack, `"resourcesListChanged":true`...)
	}
	if len(taskIDs) > 0 {
		if want.ToolsListChanged || want.ResourcesListChanged {
			ack = append(ack, ',')
		}
		ack = append(ack, `"taskIds":[`...)
		for i, id := range taskIDs {
			if i > 0 {
				ack = append(ack, ',')
			}
			ack = appendString(ack, id)
		}
		ack = append(ack, ']')
	}
	ack = append(ack, "},"...)
	ack = append(append(ack, subMeta...), "}}"...)
	if sc.out == nil || sc.out.send(ack) != nil {
		return reply{}
	}
	// A stream lives no longer than ListenTimeout, nor than the
	// credential that opened it.
	ctx, stop := s.holdContext(ctx, s.listenTimeout)
	defer stop()
	var tasks <-chan []byte
	if len(taskIDs) > 0 {
		tctx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		defer func() { stop(); wg.Wait() }()
		tasks = s.watchTasks(tctx, &wg, sc, taskIDs, subMeta, s.principalOf(ctx).ID)
	}
	if want.ToolsListChanged || want.ResourcesListChanged || tasks != nil {
		toolsChanged := append(append([]byte(notificationHead+notificationToolsListChanged+`","params":{`), subMeta...), "}}"...)
		resourcesChanged := append(append([]byte(notificationHead+notificationResourcesListChanged+`","params":{`), subMeta...), "}}"...)
		l := newListener()
		s.addListener(l)
		defer s.removeListener(l)
	loop:
		for {
			var msg []byte
			select {
			case <-ctx.Done():
				if context.Cause(ctx) == errHeldTooLong {
					break loop // a complete result: the client listens again
				}
				// The client left or cancelled (nobody to answer), or its
				// credential ended (it listens again with a fresh one).
				return reply{}
			case <-s.done:
				break loop
			case <-l.kick:
				if !want.ToolsListChanged {
					continue
				}
				msg = toolsChanged
			case <-l.resources:
				if !want.ResourcesListChanged {
					continue
				}
				msg = resourcesChanged
			case msg = <-tasks:
			}
			if sc.out.send(msg) != nil {
				return reply{}
			}
		}
	}
	b = appendResultHead(b, m.ID)
	b = append(b, `{"resultType":"complete",`...)
	b = append(b, subMeta[:len(subMeta)-1]...)
	b = append(b, `,"io.modelcontextprotocol/serverInfo":`...)
	b = append(b, s.implJSON...)
	return reply{append(b, "}}}"...), 0}
}

// handleBatch answers a JSON-RPC batch (2025-03-26 only; the caller checks
// the revision). The elements run one after another; the replies form one
// array, or nothing when no element was a request.
func (s *Server) handleBatch(ctx context.Context, sess *session, sc *scope, data []byte, b []byte) reply {
	elems, ok := splitBatch(data, s.maxBatch)
	if !ok {
		return reply{appendError(b, nil, errorf(CodeParseError, "parse error")), CodeParseError}
	}
	if len(elems) == 0 {
		return reply{appendError(b, nil, errorf(CodeInvalidRequest, "empty batch")), CodeInvalidRequest}
	}
	if len(elems) > s.maxBatch {
		// Refused whole, before anything runs: a batch of a million tiny
		// requests would otherwise cost a million answers.
		e := errorf(CodeInvalidRequest, "batch exceeds the limit of %d messages", s.maxBatch)
		return reply{appendError(b, nil, e), e.Code}
	}
	mark := len(b)
	b = append(b, '[')
	n := 0
	for _, e := range elems {
		var m message
		if !decodeMessage(e, &m) {
			m = message{}
		}
		if n > 0 {
			b = append(b, ',')
		}
		before := len(b)
		r := s.handleMessage(ctx, sess, sc, &m, b)
		if r.body == nil {
			if n > 0 {
				b = b[:before-1]
			}
			continue
		}
		b = r.body
		n++
		if len(b)-mark > s.maxBatchResponse {
			// The requests already answered have run; what the client
			// gets is one error, not a response it said it cannot take.
			e := errorf(CodeInternalError, "batch response exceeds the limit of %d bytes; send fewer requests per batch", s.maxBatchResponse)
			return reply{appendError(b[:mark], nil, e), e.Code}
		}
	}
	if n == 0 {
		return reply{}
	}
	return reply{append(b, ']'), 0}
}
