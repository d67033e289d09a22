package mcp

import (
	"context"
	"encoding/json"

	"github.com/grpc-mcp-gateway/gateway/internal/jsonscan"
)

// The method table is the one place an MCP method name is written down:
// the revisions it exists in, whether it needs an initialized session,
// whether it is a task method, which handler serves it and what the
// protocol trace hides of it. serveRequest, serveStateless, notification,
// the parser's interning and the trace all read it, so adding a method is
// adding a row (and, if it is served, its own handler constant and a case
// in serveMethod: code that must tell methods apart compares a message's
// row, m.info, never its name). The notifications the server sends are
// named once below the table.

// revisions is a set of revisions: bit i is supportedVersions[i]
// (TestMethodTable checks that they fit).
type revisions uint8

// revs returns the set of the given revisions.
func revs(vs ...string) revisions {
	var r revisions
	for _, v := range vs {
		for i, s := range supportedVersions {
			if s == v {
				r |= 1 << i
			}
		}
	}
	return r
}

// from returns the set of v and every later supported revision.
func from(v string) revisions {
	var r revisions
	for i, s := range supportedVersions {
		if s >= v {
			r |= 1 << i
		}
	}
	return r
}

// has reports whether v is in the set.
func (r revisions) has(v string) bool {
	for i, s := range supportedVersions {
		if s == v {
			return r&(1<<i) != 0
		}
	}
	return false
}

// first returns the oldest revision in the set.
func (r revisions) first() string {
	for i, s := range supportedVersions {
		if r&(1<<i) != 0 {
			return s
		}
	}
	return ""
}

var (
	allRevisions       = from(Version20241105)
	handshakeRevisions = revs(handshakeVersions...)
)

// handler names the code that serves a method. It is a number, not a
// func, so that serveMethod calls the handlers directly: a call through a
// func value would move every request's params to the heap.
type handler uint8

const (
	notServed handler = iota // known to the protocol (and the trace), not served
	serveInitialize
	servePing
	serveDiscover
	serveToolsList
	serveToolsCall
	serveListen
	serveResourcesList
	serveResourcesTemplatesList
	serveResourcesRead
	serveTasksGet
	serveTasksResult
	serveTasksList
	serveTasksCancel
	serveTasksUpdate
	onInitialized // notifications/initialized
	onCancelled   // notifications/cancelled
)

// methodInfo is one row of the method table.
type methodInfo struct {
	name string
	// revisions are the revisions the method exists in.
	revisions revisions
	// session: at a handshake revision, the method is answered only
	// once initialize has negotiated one (everything but initialize and
	// ping).
	session bool
	// task: served only when the handler is a TaskHandler; at 2026-07-28
	// the request's capabilities must declare the tasks extension. A task
	// method absent from a revision is not found rather than reported as
	// belonging to another revision, as the tasks capability (2025-11-25)
	// and extension (2026-07-28) are separate opt-ins.
	task bool
	// notification: a client notification, never answered.
	notification bool
	handler      handler
	// traceHidden are the members the protocol trace replaces without
	// TraceBodies, in requests and replies alike, on top of those it
	// replaces in every message (trace.go's traceHidden[everyMethod]).
	traceHidden []memberPath
}

// methodTable is every method the server knows, the most frequent first:
// the parser tries them in this order.
var methodTable = []methodInfo{
	{name: "tools/call", revisions: allRevisions, session: true, handler: serveToolsCall,
		traceHidden: []memberPath{
			{"result", "content"}, {"result", "structuredContent"},
			// A call answered with a task: its status message is the
			// operation's metadata, or its outcome, and the hint for the
			// model repeats it.
			{"result", "statusMessage"},         // 2026-07-28
			{"result", "task", "statusMessage"}, // 2025-11-25
			{"result", "_meta", "io.modelcontextprotocol/model-immediate-response"},
		}},
	{name: "tools/list", revisions: allRevisions, session: true, handler: serveToolsList},
	{name: "ping", revisions: handshakeRevisions, handler: servePing},
	{name: "initialize", revisions: handshakeRevisions, handler: serveInitialize},
	{name: "notifications/initialized", revisions: handshakeRevisions, notification: true, handler: onInitialized},
	{name: "notifications/cancelled", revisions: allRevisions, notification: true, handler: onCancelled},
	{name: "server/discover", revisions: revs(Version20260728), handler: serveDiscover},
	{name: "subscriptions/listen", revisions: revs(Version20260728), handler: serveListen},
	{name: "resources/list", revisions: allRevisions, session: true, handler: serveResourcesList},
	{name: "resources/read", revisions: allRevisions, session: true, handler: serveResourcesRead,
		traceHidden: []memberPath{{"result", "contents", arrayElements, "text"}, {"result", "contents", arrayElements, "blob"}}},
	{name: "resources/templates/list", revisions: allRevisions, session: true, handler: serveResourcesTemplatesList},
	{name: "tasks/get", revisions: revs(Version20251125, Version20260728), session: true, task: true, handler: serveTasksGet,
		traceHidden: []memberPath{
			{"result", "statusMessage"},
			{"result", "result"}, // 2026-07-28: the result, once terminal
		}},
	{name: "tasks/result", revisions: revs(Version20251125), session: true, task: true, handler: serveTasksResult,
		traceHidden: []memberPath{{"result", "content"}, {"result", "structuredContent"}}},
	{name: "tasks/list", revisions: revs(Version20251125), session: true, task: true, handler: serveTasksList,
		traceHidden: []memberPath{{"result", "tasks", arrayElements, "statusMessage"}}},
	{name: "tasks/cancel", revisions: revs(Version20251125, Version20260728), session: true, task: true, handler: serveTasksCancel,
		traceHidden: []memberPath{{"result", "statusMessage"}}},
	// The client's answers to a task's input requests.
	{name: "tasks/update", revisions: revs(Version20260728), session: true, task: true, handler: serveTasksUpdate,
		traceHidden: []memberPath{{"params", "inputResponses"}}},
	{name: "logging/setLevel", revisions: handshakeRevisions},
	{name: "resources/subscribe", revisions: handshakeRevisions},
	{name: "resources/unsubscribe", revisions: handshakeRevisions},
	// Not served, but what a client sends anyway is what its user typed.
	{name: "completion/complete", revisions: from(Version20250326),
		traceHidden: []memberPath{{"params", "argument"}, {"params", "context"}}},
}

// The notifications the server sends on its own: each name is written
// here once, and a message starts with notificationHead and its name.
// They are no rows of methodTable, which holds what a client may send.
const (
	notificationHead                      = `{"jsonrpc":"2.0","method":"`
	notificationToolsListChanged          = "notifications/tools/list_changed"
	notificationResourcesListChanged      = "notifications/resources/list_changed"
	notificationProgress                  = "notifications/progress"
	notificationSubscriptionsAcknowledged = "notifications/subscriptions/acknowledged"
	notificationTasks                     = "notifications/tasks" // 2026-07-28
)

// outgoingNotifications lists them, for TestMethodTable.
var outgoingNotifications = []string{
	notificationToolsListChanged,
	notificationResourcesListChanged,
	notificationProgress,
	notificationSubscriptionsAcknowledged,
	notificationTasks,
}

// methodsByName indexes methodTable, for names the parser had to unescape.
var methodsByName = func() map[string]*methodInfo {
	m := make(map[string]*methodInfo, len(methodTable))
	for i := range methodTable {
		m[methodTable[i].name] = &methodTable[i]
	}
	return m
}()

// lookupMethod unquotes a message's method member and finds its row (nil
// for a method the server does not know). A known name spelled without
// escapes, the usual case, is matched in place and costs no allocation.
func lookupMethod(raw json.RawMessage) (string, *methodInfo, bool) {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		inner := raw[1 : len(raw)-1]
		for i := range methodTable {
			if string(inner) == methodTable[i].name {
				return methodTable[i].name, &methodTable[i], true
			}
		}
	}
	name, ok := jsonscan.Unquote(raw)
	if !ok {
		return "", nil, false
	}
	return name, methodsByName[name], true
}

// serveMethod runs the handler of a request whose method, revision and
// session the caller has checked.
func (s *Server) serveMethod(ctx context.Context, sess *session, sc *scope, m *message, c *call, p *params, version string, b []byte) reply {
	switch m.info.handler {
	case serveInitialize:
		return s.initialize(sess, m, p, b)
	case servePing:
		return reply{appendResult(b, m.ID, emptyObject), 0}
	case serveDiscover:
		b = appendResultHead(b, m.ID)
		b = appendWithMeta(b, s.discoverBody, s.serverInfo)
		return reply{append(b, '}'), 0}
	case serveToolsList:
		return s.toolsList(ctx, m, p, version, b)
	case serveToolsCall:
		return s.toolsCall(ctx, sess, sc, m, c, p, version, b)
	case serveListen:
		return s.listen(ctx, sc, m, p, b)
	case serveResourcesList, serveResourcesTemplatesList, serveResourcesRead:
		if isStateless(version) {
			sess = nil // a stateless request belongs to no session
		}
		return s.resourceMethod(ctx, sess, sc, m, p, version, b)
	case serveTasksGet, serveTasksResult, serveTasksList, serveTasksCancel, serveTasksUpdate:
		return s.tasksMethod(ctx, sc, sess, m, p, version, b)
	}
	return reply{appendError(b, m.ID, methodNotFound(m.method)), CodeMethodNotFound}
}

// checkNameHeader checks a 2026-07-28 tools/call's Mcp-Name header
// against params.name, as resolved (HTTP only).
func (s *Server) checkNameHeader(sc *scope, name string) *Error {
	if !sc.checkHeader || sc.header == nil {
		return nil
	}
	switch hn := headerValue(sc.header, "Mcp-Name"); {
	case hn == "":
		return errorf(CodeHeaderMismatch, "missing required Mcp-Name header for tools/call")
	case hn != name:
		return errorf(CodeHeaderMismatch, "Mcp-Name header %q does not match params.name %q", hn, name)
	}
	return nil
}

func methodNotFound(method string) *Error {
	return errorf(CodeMethodNotFound, "method %q not found", method)
}
