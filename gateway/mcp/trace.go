package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
)

// The protocol trace (ServerOptions.Trace) logs every JSON-RPC message a
// client sends and every reply, the way MCP Inspector shows an exchange,
// so an operator can debug an integration from the server's side. Each
// record carries the direction, transport, session, id and method (a
// reply repeats its request's, so the two pair by id), the size in bytes
// and the body.
//
// Tool arguments and results may hold personal data, so unless
// ServerOptions.TraceBodies is set, params.arguments and the values of
// result.content and result.structuredContent are replaced with
// "<redacted: N bytes>"; the envelope (id, method, tool name, isError,
// error objects) is kept. The hooks are the two places every transport's
// messages pass: handleMessage and the connection loop (conn.go).
// Notifications the server sends on its own (list_changed, progress) are
// not traced.

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
	t.record("in", sc, sess, m, m.raw, redactRequest)
}

// out traces the reply to m; body nil means none was sent.
func (t *tracer) out(sc *scope, sess *session, m *message, body []byte) {
	if t == nil || body == nil || !t.log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	t.record("out", sc, sess, m, body, redactResult)
}

func (t *tracer) record(dir string, sc *scope, sess *session, m *message, body []byte, redact func([]byte) []byte) {
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
	shown := body
	if !t.bodies {
		shown = redact(body)
	}
	t.log.Debug("mcp "+dir,
		"transport", transport,
		"session", sid,
		"id", string(m.ID),
		"method", strings.Trim(string(m.Method), `"`),
		"size", len(body),
		"body", string(shown))
}

// redacted is the placeholder for a value left out of the trace.
func redacted(v json.RawMessage) json.RawMessage {
	return fmt.Appendf(nil, `"<redacted: %d bytes>"`, len(v))
}

// marshal is json.Marshal without HTML escaping, so the trace shows the
// placeholders and bodies as they are.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// redactRequest hides params.arguments (tools/call, prompts/get).
func redactRequest(msg []byte) []byte {
	return redactMember(msg, "params", "arguments")
}

// redactResult hides result.content and result.structuredContent.
func redactResult(msg []byte) []byte {
	return redactMember(msg, "result", "content", "structuredContent")
}

// redactMember returns msg with the named members of msg[outer] replaced
// by placeholders, or msg itself when there are none. A message that does
// not parse is shown as its size only: it may hold anything.
func redactMember(msg []byte, outer string, names ...string) []byte {
	var env map[string]json.RawMessage
	if json.Unmarshal(msg, &env) != nil {
		return redacted(msg)
	}
	var inner map[string]json.RawMessage
	if raw, ok := env[outer]; !ok || json.Unmarshal(raw, &inner) != nil {
		return msg
	}
	changed := false
	for _, n := range names {
		if v, ok := inner[n]; ok {
			inner[n] = redacted(v)
			changed = true
		}
	}
	if !changed {
		return msg
	}
	env[outer], _ = marshal(inner)
	out, err := marshal(env)
	if err != nil {
		return redacted(msg)
	}
	return out
}
