package mcp

import (
	"encoding/json"
	"sync"
)

// session is the transport-independent state of one MCP connection: the
// negotiated revision, the client's capabilities and the requests in
// flight (by id, for notifications/cancelled). stdio has one per
// connection, Streamable HTTP one per Mcp-Session-Id; 2026-07-28 requests
// over HTTP have none.
type session struct {
	id        string // Mcp-Session-Id; empty on stdio
	transport string

	mu          sync.Mutex
	version     string // negotiated revision, "" before initialize
	initialized bool   // notifications/initialized received
	caps        json.RawMessage
	inflight    map[string]*call
}

func newSession(transport, id string) *session {
	return &session{transport: transport, id: id}
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

func (s *session) markInitialized() {
	s.mu.Lock()
	s.initialized = true
	s.mu.Unlock()
}

func (s *session) addCall(id json.RawMessage, c *call) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inflight == nil {
		s.inflight = make(map[string]*call)
	}
	k := string(id)
	if _, dup := s.inflight[k]; dup {
		return false
	}
	s.inflight[k] = c
	return true
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
func (s *session) cancel(id json.RawMessage) {
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
