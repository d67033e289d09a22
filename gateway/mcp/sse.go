package mcp

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
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

// An idle legacy SSE session holds one goroutine, as a Streamable HTTP GET
// stream and a WebSocket do: over HTTP/1.1 the stream leaves net/http once
// its endpoint event is out (its handler returns, and net/http lets go of
// its buffers and serving goroutine), and the goroutine that reads the
// connection to notice the client leaving is all that waits. Messages are
// handled on the goroutine of the POST that brings them, one at a time
// per session, as the session loop used to take them from the POSTs;
// keepalives, the credential's expiry and Shutdown come by timer or
// callback. Over HTTP/2 the stream stays with net/http and its handler
// waits for the end instead of a reader.

// sseSession is one stream's session: what a POST needs to deliver a
// message, and how the stream ends.
type sseSession struct {
	owner string // Principal.ID of the GET that opened it
	s     *Server
	who   Principal
	ctx   context.Context
	stop  context.CancelFunc
	sess  *session
	sc    *scope
	out   *sseWriter
	// woken is closed by end: it wakes the handler of a stream that
	// stayed with net/http (a detached one's reader is woken by its
	// connection).
	woken chan struct{}
	// What may write to the stream or end it meanwhile (set before its
	// end can be reached; finish stops them).
	listener  *listener
	keepAlive *repeat
	stopCred  func() // ends the credential's watch
	// How the stream ends; its lock serializes deliveries and the end.
	*connEnding
}

// stream serves GET: the session's lifetime is the stream's.
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
	who := h.s.principalOf(r.Context())
	ss := &sseSession{owner: who.ID}
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
	// Reserved now, so the limits hold; reachable by POSTs once begun.
	h.sessions[id] = nil
	if ss.owner != "" {
		h.perOwner[ss.owner]++
	}
	h.mu.Unlock()

	endpoint := h.o.MessagePath
	if endpoint == "" {
		endpoint = path.Join(r.URL.Path, "message")
	}
	endpoint += "?sessionId=" + id

	ss.out = &sseWriter{w: w, rc: http.NewResponseController(w), writeTimeout: h.o.WriteTimeout, srv: h.s}
	hd := w.Header()
	hd["Content-Type"] = hvEventStream
	hd["Cache-Control"] = hvNoCache
	hd["X-Accel-Buffering"] = hvNo
	if r.ProtoMajor == 1 && r.ProtoMinor == 1 {
		// The stream is about to leave net/http (detach); when it ends the
		// connection closes rather than serving another request, and the
		// client is told so up front.
		hd["Connection"] = hvClose
	}
	// The request's values (the principal) stay with the session; its
	// cancellation, which net/http fires when a detached stream's handler
	// returns, does not: the stream's end ends the session.
	h.begin(ss, context.WithoutCancel(r.Context()), who, r.Header)
	h.mu.Lock()
	h.sessions[id] = ss
	h.mu.Unlock()
	w.WriteHeader(http.StatusOK)
	if ss.out.event("endpoint", []byte(endpoint)) != nil {
		ss.end(endWrite)
	}
	// A comment every interval until the stream ends; one that fails ends
	// it (the client is unreachable).
	ss.keepAlive = every(h.o.KeepAlive, func() bool {
		if ss.out.keepAlive() != nil {
			ss.end(endWrite)
			return false
		}
		return true
	})
	if ss.out.detach() {
		// An end before the connection was the stream's could not wake
		// its reader; any later one will.
		ss.mu.Lock()
		ended := ss.set
		ss.mu.Unlock()
		if ended {
			ss.out.wakeReader()
		}
		go func() {
			discardUntilClosed(ss.out.conn)
			h.finish(id, ss)
		}()
		return
	}
	select {
	case <-r.Context().Done():
	case <-ss.woken:
	}
	h.finish(id, ss)
}

// begin starts ss's session: its state, and what may end it (the
// credential's expiry or revocation, Shutdown, a failed write) or
// write to it (list_changed) meanwhile.
func (h *sseHandler) begin(ss *sseSession, ctx context.Context, who Principal, header http.Header) {
	s := h.s
	ss.s, ss.who = s, who
	ss.ctx, ss.stop = context.WithCancel(ctx)
	ss.woken = make(chan struct{})
	ss.connEnding = newConnEnding(func() {
		close(ss.woken)
		ss.out.wakeReader()
	})
	ss.sess = s.newSession("sse", "", who.ID)
	// A stream is a session without an id in the protocol; handlers still
	// need one to keep state per session.
	ss.sess.key = rand.Text()
	s.observeSession("sse", 1)
	s.holdConn()
	ss.sc = &scope{transport: "sse", header: header, out: ss.out, backlog: new(replyBacklog)}
	ss.out.failed = func() { go ss.end(endWrite) } // the writer holds its lock
	ss.stopCred = onCredentialEnd(&who, ss.end)
	n := &coalescer{write: func(msg []byte) {
		if ss.sess.negotiated() != "" {
			_ = ss.out.send(msg)
		}
	}}
	ss.listener = &listener{notify: func(_ []byte, resourceList bool) { n.post(resourceList) }, shutdown: func() { go ss.drain() }}
	s.addListener(ss.listener)
}

// deliver handles one message POSTed to the session, synchronously up to
// registering a request (see connMessage). It reports false when the
// stream has ended or is ending for good: the POST then finds no session.
func (ss *sseSession) deliver(msg []byte) bool {
	if ss.who.expired(time.Now()) {
		// The timer may not have fired yet: nothing sent after the expiry
		// is served.
		ss.end(endExpired)
		return false
	}
	// The POST waits while answers pile up for a stream that is not read
	// (the wait ends as their writes do), outside the lock, so that the
	// stream's end is not held up: a stream dropped meanwhile is then
	// found ended. Each POST hands over at most one message past the
	// bound.
	ss.sc.backlog.wait()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.done || (ss.set && !ss.draining) {
		return false
	}
	ss.s.connMessage(ss.ctx, ss.sess, ss.sc, ss.group(), msg)
	return true
}

// finish ends session id once whoever waited for the stream's end has
// woken: its calls cancelled (or, at Shutdown, finished), a comment saying
// why when its credential ended it, the stream closed, the session
// forgotten.
func (h *sseHandler) finish(id string, ss *sseSession) {
	end, draining := ss.over()
	ss.keepAlive.stop()
	h.s.removeListener(ss.listener)
	ss.stopCred()
	end = ss.settle(ss.sess, ss.stop, end, draining)
	if end == endExpired || end == endRevoked {
		// SSE has no close code: a comment says why the stream ends, for
		// whoever reads the wire; clients reconnect with a fresh token.
		_ = ss.out.comment(end.reason())
	}
	ss.out.close()
	h.mu.Lock()
	delete(h.sessions, id)
	if ss.owner != "" {
		if h.perOwner[ss.owner]--; h.perOwner[ss.owner] <= 0 {
			delete(h.perOwner, ss.owner)
		}
	}
	h.mu.Unlock()
	h.s.observeSession("sse", -1)
	h.s.releaseConn()
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
	if !ss.deliver(body) {
		writeJSONError(w, http.StatusNotFound, nil, errorf(CodeInvalidRequest, "session not found or closed"))
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// sseWriter is the session's sink: whole events, one writer at a time, each
// write bounded by a deadline, written through net/http or, once
// detached, as chunks on the connection itself. After close writes fail
// instead of touching a finished response.
type sseWriter struct {
	w            http.ResponseWriter
	rc           *http.ResponseController
	writeTimeout time.Duration
	srv          *Server // told when a write times out
	// failed is called once, with the lock held, when a write fails.
	failed func()

	mu     sync.Mutex
	conn   net.Conn // set once detached from net/http
	err    error
	closed bool
}

// failLocked records the stream's first write error.
func (s *sseWriter) failLocked(err error) error {
	s.err = fmt.Errorf("mcp: sse: %w", err)
	s.srv.observeWriteFailure("sse", err)
	if s.failed != nil {
		s.failed()
	}
	return s.err
}

var errSSEClosed = errors.New("mcp: sse: stream closed")

func (s *sseWriter) send(msg []byte) error { return s.event("message", msg) }

func (s *sseWriter) event(name string, data []byte) error {
	bp := getBuf()
	defer putBuf(bp)
	b := append((*bp)[:0], "event: "...)
	b = append(b, name...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	b = append(b, "\n\n"...)
	*bp = b
	return s.write(b)
}

func (s *sseWriter) keepAlive() error { return s.comment("keepalive") }

// comment writes an SSE comment line, which clients ignore.
func (s *sseWriter) comment(text string) error {
	return s.write([]byte(": " + text + "\n\n"))
}

// write writes text, whole events, and sends it on at once.
func (s *sseWriter) write(text []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if s.conn != nil {
		if err := writeChunk(s.conn, s.writeTimeout, "", text, ""); err != nil {
			return s.failLocked(err)
		}
		return nil
	}
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.writeTimeout))
	if _, err := s.w.Write(text); err != nil {
		return s.failLocked(err)
	}
	if err := s.rc.Flush(); err != nil {
		return s.failLocked(err)
	}
	return nil
}

// detach takes the connection from net/http, as httpStream.detach does,
// and reports whether it could (HTTP/1.1 with "Connection: close"
// announced, nothing failed yet).
func (s *sseWriter) detach() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return false
	}
	conn, ok := takeConn(s.w, s.rc)
	if !ok {
		return false
	}
	s.conn = conn
	s.w, s.rc = nil, nil
	return true
}

// wakeReader ends a detached stream's reader (a read deadline in the
// past), which then finishes the session.
func (s *sseWriter) wakeReader() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil && !s.closed {
		_ = s.conn.SetReadDeadline(time.Unix(1, 0))
	}
}

// close ends the stream: later writes fail, and a detached stream gets its last chunk (unless a write has failed) and its
// connection closed.
func (s *sseWriter) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	failed := s.err != nil
	if !failed {
		s.err = errSSEClosed
	}
	if s.conn != nil {
		endChunked(s.conn, s.writeTimeout, failed)
	}
}
