package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/grpc-mcp-gateway/gateway/internal/jsonscan"
)

// The protocol trace (ServerOptions.Trace) logs every JSON-RPC message a
// client sends and every reply, the way MCP Inspector shows an exchange,
// so an operator can debug an integration from the server's side. Each
// record carries the direction, transport, session, id and method (a
// reply repeats its request's, so the two pair by id), the size in bytes
// and the body.
//
// Arguments, results, resource bodies, task results and operation
// metadata may hold personal data, so unless ServerOptions.TraceBodies is
// set the members traceHidden names are replaced with
// "<redacted: N bytes>"; the envelope (id, method, tool name, URI, task
// id and status, isError, timestamps, error code and message) is kept,
// byte for byte, except the message of an error that repeats argument or
// result values (sensitiveError). The hooks are the two places every transport's messages pass:
// handleMessage and the connection loop (conn.go). Notifications the
// server sends on its own (list_changed, progress, and notifications/tasks
// on a subscriptions/listen stream, which carry a finished task's result)
// are not traced.

// memberPath names a member from the top of a message: each step is an
// object member's name, or arrayElements for every element of an array.
type memberPath []string

// arrayElements is the step of a memberPath that goes into every element
// of an array.
const arrayElements = "[]"

// Keys of traceHidden that are not methods.
const (
	// everyMethod applies to every message, whatever its method.
	everyMethod = "*"
	// clientResponse is a response from the client, which has no method.
	clientResponse = ""
)

// traceHidden is what the trace hides without TraceBodies: per method,
// the members whose values it replaces. A request has params and its reply
// result or error, so one list serves both directions. A method's row
// applies on top of everyMethod's. The methods' rows come from the method
// table (methodInfo.traceHidden).
var traceHidden = func() map[string][]memberPath {
	h := map[string][]memberPath{
		// Arguments are the user's data whatever the method, even one
		// this server does not serve (prompts/get).
		everyMethod: {{"params", "arguments"}},
		// The server sends no requests, so a response answers nothing;
		// it could only be a sampling or elicitation answer, the user's
		// words.
		clientResponse: {{"result"}, {"error", "data"}},
	}
	for _, mi := range methodTable {
		if mi.traceHidden != nil {
			h[mi.name] = mi.traceHidden
		}
	}
	return h
}()

// sensitiveError is hidden, on top of the method's row, from the reply to
// a tools/call answered with an [Error] marked Sensitive: one whose
// message and data repeat argument or result values, as those of a
// task-augmented call that created no task (taskNotCreated) quote and
// hold the tool's result. The mark is carried on the call record, since
// the trace sees only the encoded reply.
var sensitiveError = []memberPath{{"error", "message"}, {"error", "data"}}

// tracer writes the protocol trace; a nil *tracer is off.
type tracer struct {
	log    *slog.Logger
	bodies bool
}

func newTracer(log *slog.Logger, bodies bool) *tracer {
	if log == nil {
		return nil
	}
	return &tracer{log: log, bodies: bodies}
}

// in traces a message received.
func (t *tracer) in(sc *scope, sess *session, m *message) {
	if t == nil || !t.log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	t.record("in", sc, sess, m, m.raw, false)
}

// out traces the reply to m; body nil means none was sent. c is m's call
// record, nil when m was answered without one.
func (t *tracer) out(sc *scope, sess *session, m *message, body []byte, c *call) {
	if t == nil || body == nil || !t.log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	t.record("out", sc, sess, m, body, c != nil && c.sensitiveError)
}

func (t *tracer) record(dir string, sc *scope, sess *session, m *message, body []byte, sensitive bool) {
	transport, sid := "", ""
	if sc != nil {
		transport = sc.transport
	}
	if sess != nil {
		sid = sess.logID
		if transport == "" {
			transport = sess.transport
		}
	}
	// The method as the server reads it: a client may spell "tools/call"
	// with escapes, and its arguments must be hidden all the same.
	method, ok := jsonscan.Unquote(m.Method)
	if !ok {
		method = strings.Trim(string(m.Method), `"`)
	}
	shown := body
	if !t.bodies {
		var extra []memberPath
		if sensitive {
			extra = sensitiveError
		}
		shown = hideMembers(body, traceHidden[everyMethod], traceHidden[method], extra)
	}
	t.log.Debug("mcp "+dir,
		"transport", transport,
		"session", sid,
		"id", string(m.ID),
		"method", method,
		"size", len(body),
		"body", string(shown))
}

// hideMembers returns msg with the value of every member on paths
// replaced by a placeholder, or msg itself when it has none of them;
// everything else is kept byte for byte. A member that appears more than
// once is hidden every time. A message that is not a JSON object is shown
// as its size only: it may hold anything.
func hideMembers(msg []byte, paths ...[]memberPath) []byte {
	if isObject, ok := jsonscan.Object(msg, nil); !isObject || !ok {
		return appendPlaceholder(nil, len(msg))
	}
	var spans [][2]int
	for _, list := range paths {
		for _, p := range list {
			findMember(msg, msg, p, &spans)
		}
	}
	if len(spans) == 0 {
		return msg
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	out := make([]byte, 0, len(msg))
	at := 0
	for _, s := range spans {
		if s[0] < at {
			continue // within a value already hidden
		}
		out = append(out, msg[at:s[0]]...)
		out = appendPlaceholder(out, s[1]-s[0])
		at = s[1]
	}
	return append(out, msg[at:]...)
}

// findMember appends the span in msg of each value at path p below val.
// val is a sub-slice of msg (the scanner hands out sub-slices, never
// copies), so its offset in msg is the difference of their capacities.
func findMember(msg, val []byte, p memberPath, spans *[][2]int) {
	if len(p) == 0 {
		start := cap(msg) - cap(val)
		*spans = append(*spans, [2]int{start, start + len(val)})
		return
	}
	if p[0] == arrayElements {
		jsonscan.Elements(val, func(el []byte) { findMember(msg, el, p[1:], spans) })
		return
	}
	jsonscan.Object(val, func(key, v []byte) {
		if string(key) == p[0] {
			findMember(msg, v, p[1:], spans)
		}
	})
}

// appendPlaceholder appends what the trace shows for a hidden value of n
// bytes.
func appendPlaceholder(b []byte, n int) []byte {
	return fmt.Appendf(b, `"<redacted: %d bytes>"`, n)
}
