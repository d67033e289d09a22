package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
)

// session is the transport-independent state of one MCP connection: the
// negotiated revision, the client's capabilities and the requests in
// flight (by id, for notifications/cancelled). stdio has one per
// connection, Streamable HTTP one per Mcp-Session-Id; 2026-07-28 requests
// over HTTP have none.
type session struct {
	id        string // Mcp-Session-Id; empty on stdio
	key       string // SessionInfo.Key
	logID     string // LogID(id), what logs and spans show
	transport string
	maxCalls  int // requests in flight at once; 0 means no limit
	// owner is the Principal.ID that opened the session; requests under
	// another ID do not find it.
	owner string
	// relay, when set, takes a notifications/cancelled whose request is
	// not in flight here: in a fleet it may run on another replica.
	relay func(ctx context.Context, id json.RawMessage)

	mu          sync.Mutex
	version     string // negotiated revision, "" before initialize
	initialized bool   // notifications/initialized received
	caps        json.RawMessage
	inflight    map[string]*call
}

// LogID is what logs, traces and spans show for a session id: the first
// 16 hex digits of its SHA-256. The id itself is a bearer credential for
// the session (whoever has it may use the session, within its owner's
// authorization), so it is never written where operators, log pipelines or
// trace backends keep it; the digest still ties a session's lines
// together. An empty id stays empty.
func LogID(id string) string {
	if id == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:8])
}

// newSession makes a session of owner, bound by the server's per-session
// limits.
func (s *Server) newSession(transport, id, owner string) *session {
	return &session{transport: transport, id: id, key: id, logID: LogID(id), owner: owner, maxCalls: s.maxCalls}
}

// negotiated returns the revision agreed by initialize, or "".
func (s *session) negotiated() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

// setInitialize records the result of a successful initialize. It fails if
// the session was already initialized.
func (s *session) setInitialize(version string, caps json.RawMessage) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.version != "" {
		return false
	}
	s.version = version
	s.caps = caps
	return true
}

// initInfo returns the negotiated revision and the client's capabilities.
func (s *session) initInfo() (string, json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version, s.caps
}

func (s *session) markInitialized() {
	s.mu.Lock()
	s.initialized = true
	s.mu.Unlock()
}

// addCall registers a request in flight. It fails for an id already in
// flight, and when the session is at its limit of concurrent requests.
func (s *session) addCall(id json.RawMessage, c *call) *Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inflight == nil {
		s.inflight = make(map[string]*call)
	}
	if _, dup := s.inflight[string(id)]; dup {
		return errorf(CodeInvalidRequest, "duplicate request id: a request with this id is still in flight")
	}
	if s.maxCalls > 0 && len(s.inflight) >= s.maxCalls {
		return tooManyCalls(s.maxCalls)
	}
	s.inflight[string(id)] = c
	return nil
}

// tooManyCalls answers a request over the session's concurrency limit. It
// is -32603 (a server-side condition, not a fault of the request) rather
// than an implementation-defined -32000..-32099 code, which clients could
// not tell apart from their own (the TypeScript SDK uses -32000 for a
// closed connection). The message names the limit; data carries it for
// programs. The connection stays open: the client may retry once one of
// its calls has finished.
func tooManyCalls(limit int) *Error {
	return &Error{
		Code:    CodeInternalError,
		Message: fmt.Sprintf("too many concurrent requests in this session: the limit (MaxConcurrentCalls) is %d; retry after one finishes", limit),
		Data:    json.RawMessage(fmt.Sprintf(`{"limit":"MaxConcurrentCalls","value":%d}`, limit)),
	}
}

// removeCall forgets a finished call and reports whether the client had
// cancelled it.
func (s *session) removeCall(id json.RawMessage, c *call) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := string(id)
	if s.inflight[k] == c {
		delete(s.inflight, k)
	}
	return c.byClient
}

// cancel handles notifications/cancelled: the call's ctx is cancelled, its
// response suppressed, and its id free for reuse at once. Unknown ids are
// ignored (the call may have just finished, which the spec allows for).
// It reports whether the call was in flight here.
func (s *session) cancel(id json.RawMessage) bool {
	s.mu.Lock()
	k := string(id)
	c := s.inflight[k]
	if c != nil {
		c.byClient = true
		delete(s.inflight, k)
	}
	s.mu.Unlock()
	if c != nil {
		c.cancel()
	}
	return c != nil
}

// cancelAll cancels every call in flight, when the session ends.
func (s *session) cancelAll() {
	s.mu.Lock()
	calls := make([]*call, 0, len(s.inflight))
	for _, c := range s.inflight {
		calls = append(calls, c)
	}
	s.mu.Unlock()
	for _, c := range calls {
		c.cancel()
	}
}
