package mcp

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"sync"
	"time"

	"github.com/grpc-mcp-gateway/gateway/internal/jsonscan"
)

// SSEOptions configures [Server.SSEHandler]. A nil pointer, and every zero
// field, means the default.
type SSEOptions struct {
	// AllowedOrigins lists the browser origins (scheme://host[:port])
	// allowed to call, and answered with CORS headers; see
	// [OriginProtection].
	AllowedOrigins []string
	// AllowedHosts lists the Host header values accepted besides loopback
	// names (and, off loopback, IP literals); see [OriginProtection].
	AllowedHosts []string
	// MessagePath is the path announced in the endpoint event, to which
	// the client POSTs its messages (the session id is appended as the
	// query parameter sessionId). Default: the GET's path + "/message",
	// e.g. /sse/message. Set it when a proxy rewrites paths.
	MessagePath string
	// MaxRequestBytes bounds a POSTed message; larger ones get 413 with a
	// JSON-RPC error and the session stays open. Default 4 MiB.
	MaxRequestBytes int64
	// MaxSessions bounds the open streams; a GET beyond it gets 503.
	// Default 10000.
	MaxSessions int
	// MaxSessionsPerPrincipal bounds the open streams of one
	// authenticated principal; see StreamableHTTPOptions. Default
	// DefaultMaxSessionsPerPrincipal; negative means none.
	MaxSessionsPerPrincipal int
	// KeepAlive is the interval of the comment lines that keep proxies
	// from timing the stream out and reveal a vanished client (the write
	// fails, the session ends, its calls are cancelled). Default 30s.
	KeepAlive time.Duration
	// WriteTimeout bounds each write to the stream; a client that does not
	// read within it is disconnected. Default 10s.
	WriteTimeout time.Duration
}

// SSEHandler returns the legacy HTTP+SSE transport of revision 2024-11-05,
// for clients that predate Streamable HTTP. Mount it at both /sse and
// /sse/message (or at /sse and /sse/, it dispatches on the method):
//
//   - GET /sse opens the session's stream. Its first event is "endpoint",
//     whose data is the URL to POST to: /sse/message?sessionId=ID. Every
//     response and notification follows as an event "message".
//   - POST /sse/message?sessionId=ID sends one JSON-RPC message (or a
//     2025-03-26 batch); it answers 202 and the reply travels on the
//     stream. Unparsable JSON gets 400 and an oversized body 413, each with
//     a JSON-RPC error body, and the session stays open; an unknown or
//     closed session gets 404, and so does another principal's (see
//     [Principal]).
//
// A session lives exactly as long as its stream: closing the stream ends
// it and cancels its calls in flight, and so does the end of the opener's
// credential (the stream then ends with a comment saying why). Any revision may be negotiated by
// initialize, though clients of this transport ask for 2024-11-05. The
// stream's request headers are the session's (CallToolRequest.Header).
func (s *Server) SSEHandler(opts *SSEOptions) http.Handler {
	var o SSEOptions
	if opts != nil {
		o = *opts
	}
	orDefault(&o.MaxRequestBytes, DefaultMaxMessageBytes)
	orDefault(&o.MaxSessions, DefaultMaxSessions)
	if o.MaxSessionsPerPrincipal == 0 {
		o.MaxSessionsPerPrincipal = DefaultMaxSessionsPerPrincipal
	}
	orDefault(&o.KeepAlive, DefaultKeepAlive)
	orDefault(&o.WriteTimeout, DefaultWriteTimeout)
	h := &sseHandler{s: s, o: o, sessions: make(map[string]*sseSession), perOwner: make(map[string]int)}
	return OriginProtection(o.AllowedOrigins, o.AllowedHosts, h)
}

type sseHandler struct {
	s *Server
	o SSEOptions

	mu       sync.Mutex
	sessions map[string]*sseSession
	perOwner map[string]int // open streams by owner, for MaxSessionsPerPrincipal
}

// sseSession is what a POST needs to reach a stream.
type sseSession struct {
	in    chan []byte
	done  chan struct{} // closed when the stream ends
	owner string        // Principal.ID of the GET that opened it
}

func (h *sseHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		h.stream(w, r)
	case http.MethodPost:
		h.message(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		writeJSONError(w, http.StatusMethodNotAllowed, nil, errorf(CodeInvalidRequest, "method not allowed"))
	}
}

// stream serves GET: the session's lifetime is this request's.
func (h *sseHandler) stream(w http.ResponseWriter, r *http.Request) {
	if !accepts(r.Header, "text/event-stream") {
		writeJSONError(w, http.StatusNotAcceptable, nil, errorf(CodeInvalidRequest, "Accept must list text/event-stream"))
		return
	}
	if h.s.isClosing() {
		writeJSONError(w, http.StatusServiceUnavailable, nil, errorf(CodeInternalError, "server is shutting down"))
		return
	}
	id := rand.Text()
	ss := &sseSession{in: make(chan []byte), done: make(chan struct{}), owner: h.s.principalOf(r.Context()).ID}
	h.mu.Lock()
	if len(h.sessions) >= h.o.MaxSessions {
		h.mu.Unlock()
		writeJSONError(w, http.StatusServiceUnavailable, nil, errorf(CodeInternalError, "too many sessions (limit %d)", h.o.MaxSessions))
		return
	}
	if ss.owner != "" && h.o.MaxSessionsPerPrincipal > 0 && h.perOwner[ss.owner] >= h.o.MaxSessionsPerPrincipal {
		h.mu.Unlock()
		writeJSONError(w, http.StatusServiceUnavailable, nil, errorf(CodeInternalError, "too many sessions for this principal (limit %d)", h.o.MaxSessionsPerPrincipal))
		return
	}
	h.sessions[id] = ss
	if ss.owner != "" {
		h.perOwner[ss.owner]++
	}
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.sessions, id)
		if ss.owner != "" {
			if h.perOwner[ss.owner]--; h.perOwner[ss.owner] <= 0 {
				delete(h.perOwner, ss.owner)
			}
		}
		h.mu.Unlock()
		close(ss.done)
	}()

	endpoint := h.o.MessagePath
	if endpoint == "" {
		endpoint = path.Join(r.URL.Path, "message")
	}
	endpoint += "?sessionId=" + id

	out := &sseWriter{w: w, rc: http.NewResponseController(w), writeTimeout: h.o.WriteTimeout, srv: h.s}
	defer out.close()
	hd := w.Header()
	hd["Content-Type"] = hvEventStream
	hd["Cache-Control"] = hvNoCache
	hd["X-Accel-Buffering"] = hvNo
	w.WriteHeader(http.StatusOK)
	if out.event("endpoint", []byte(endpoint)) != nil {
		return
	}
	ticker := time.NewTicker(h.o.KeepAlive)
	defer ticker.Stop()
	end := h.s.serveConn(r.Context(), &connConfig{
		transport:   "sse",
		header:      r.Header,
		out:         out,
		in:          ss.in,
		cancelOnEOF: true,
		tick:        ticker.C,
		onTick:      out.keepAlive,
	})
	if end == endExpired || end == endRevoked {
		// SSE has no close code: a comment says why the stream ends, for
		// whoever reads the wire; clients reconnect with a fresh token.
		_ = out.comment(end.reason())
	}
}

// message serves POST: one message into the session's stream.
func (h *sseHandler) message(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id := q.Get("sessionId")
	if id == "" {
		id = q.Get("sessionid") // the spelling of the go-sdk's own server
	}
	if id == "" {
		writeJSONError(w, http.StatusBadRequest, nil, errorf(CodeInvalidRequest, "missing sessionId query parameter (open the stream with GET first)"))
		return
	}
	if ct := headerValue(r.Header, "Content-Type"); ct != "" && !isJSONContentType(ct) {
		writeJSONError(w, http.StatusUnsupportedMediaType, nil, errorf(CodeInvalidRequest, "Content-Type must be application/json"))
		return
	}
	h.mu.Lock()
	ss := h.sessions[id]
	h.mu.Unlock()
	// Another principal's session is answered exactly like a missing one,
	// so a session id says nothing to whoever holds it without its owner's
	// credentials.
	if ss == nil || ss.owner != h.s.principalOf(r.Context()).ID {
		writeJSONError(w, http.StatusNotFound, nil, errorf(CodeInvalidRequest, "session not found or closed"))
		return
	}
	// A fresh buffer per message: the request aliases it while it runs.
	body, err := readBody(r, h.o.MaxRequestBytes, nil)
	if err != nil {
		h.s.writeBodyError(w, r, err)
		return
	}
	// Unparsable JSON is refused here, where the client sees it at once,
	// rather than as an id-less error on the stream.
	if !jsonscan.Valid(body) {
		writeJSONError(w, http.StatusBadRequest, nil, errorf(CodeParseError, "parse error"))
		return
	}
	select {
	case ss.in <- body:
		w.WriteHeader(http.StatusAccepted)
	case <-ss.done:
		writeJSONError(w, http.StatusNotFound, nil, errorf(CodeInvalidRequest, "session not found or closed"))
	case <-r.Context().Done():
	}
}

// sseWriter is the session's sink: whole events, one writer at a time, each
// write bounded by a deadline. After close (the handler returned) writes
// fail instead of touching a finished ResponseWriter.
type sseWriter struct {
	w            http.ResponseWriter
	rc           *http.ResponseController
	writeTimeout time.Duration
	srv          *Server // told when a write times out

	mu  sync.Mutex
	err error
}

// failLocked records the stream's first write error.
func (s *sseWriter) failLocked(err error) error {
	s.err = fmt.Errorf("mcp: sse: %w", err)
	s.srv.observeWriteFailure("sse", err)
	return s.err
}

var errSSEClosed = errors.New("mcp: sse: stream closed")

func (s *sseWriter) send(msg []byte) error { return s.event("message", msg) }

func (s *sseWriter) event(name string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.writeTimeout))
	io.WriteString(s.w, "event: ")
	io.WriteString(s.w, name)
	io.WriteString(s.w, "\ndata: ")
	s.w.Write(data)
	if _, err := io.WriteString(s.w, "\n\n"); err != nil {
		return s.failLocked(err)
	}
	if err := s.rc.Flush(); err != nil {
		return s.failLocked(err)
	}
	return nil
}

func (s *sseWriter) keepAlive() error { return s.comment("keepalive") }

// comment writes an SSE comment line, which clients ignore.
func (s *sseWriter) comment(text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.writeTimeout))
	if _, err := io.WriteString(s.w, ": "+text+"\n\n"); err != nil {
		return s.failLocked(err)
	}
	if err := s.rc.Flush(); err != nil {
		return s.failLocked(err)
	}
	return nil
}

func (s *sseWriter) close() {
	s.mu.Lock()
	if s.err == nil {
		s.err = errSSEClosed
	}
	s.mu.Unlock()
}
