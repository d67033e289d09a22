package mcp

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"
)

// StreamableHTTPOptions configures [Server.StreamableHTTPHandler]. A nil
// pointer, and every zero field, means the default.
type StreamableHTTPOptions struct {
	// MaxRequestBytes bounds a POST body; larger bodies get 413. Default 4 MiB.
	MaxRequestBytes int64
	// SessionIdleTimeout ends a session (handshake revisions) that has had
	// no request and no open stream for this long, so abandoned sessions do
	// not pile up. Default 10 minutes.
	SessionIdleTimeout time.Duration
	// MaxSessions bounds live sessions; initialize beyond it gets 503.
	// Default 10000.
	MaxSessions int
	// AllowedOrigins lists browser origins (scheme://host[:port]) allowed
	// besides the request's own host; see [OriginProtection].
	AllowedOrigins []string
}

const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerMethod          = "Mcp-Method"
)

// StreamableHTTPHandler returns the Streamable HTTP transport (the gateway
// mounts it at /mcp), wrapped in [OriginProtection]. Handshake revisions
// get Mcp-Session-Id sessions created by initialize; 2026-07-28 requests
// are stateless. A POST answers with JSON, switching to an SSE stream when
// the request emits a notification (progress) before its response.
func (s *Server) StreamableHTTPHandler(opts *StreamableHTTPOptions) http.Handler {
	var o StreamableHTTPOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = 4 << 20
	}
	if o.SessionIdleTimeout <= 0 {
		o.SessionIdleTimeout = 10 * time.Minute
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = 10000
	}
	h := &streamable{s: s, o: o, sessions: make(map[string]*httpSession)}
	s.mu.Lock()
	s.onShutdown = append(s.onShutdown, h.closeAll)
	s.mu.Unlock()
	return OriginProtection(o.AllowedOrigins, h)
}

type streamable struct {
	s *Server
	o StreamableHTTPOptions

	mu       sync.Mutex
	sessions map[string]*httpSession
	closed   bool
}

// httpSession is a session plus what Streamable HTTP needs to expire it.
type httpSession struct {
	*session
	timer    *time.Timer
	active   int       // requests and streams using it; guarded by streamable.mu
	lastUsed time.Time // guarded by streamable.mu
	hasGET   bool      // guarded by streamable.mu
	ended    bool      // guarded by streamable.mu
	closed   chan struct{}
}

func (h *streamable) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hv := r.Header.Get(headerProtocolVersion)
	switch r.Method {
	case http.MethodPost:
		h.post(w, r, hv)
	case http.MethodGet:
		h.get(w, r, hv)
	case http.MethodDelete:
		h.delete(w, r, hv)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeJSONError(w, http.StatusMethodNotAllowed, nil, errorf(CodeInvalidRequest, "method not allowed"))
	}
}

func (h *streamable) post(w http.ResponseWriter, r *http.Request, hv string) {
	if !accepts(r.Header, "application/json") || !accepts(r.Header, "text/event-stream") {
		writeJSONError(w, http.StatusNotAcceptable, nil, errorf(CodeInvalidRequest, "Accept must list application/json and text/event-stream"))
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			writeJSONError(w, http.StatusUnsupportedMediaType, nil, errorf(CodeInvalidRequest, "Content-Type must be application/json"))
			return
		}
	}
	bp := getBuf()
	defer putBuf(bp)
	body, err := readBody(w, r, h.o.MaxRequestBytes, *bp)
	*bp = body[:0]
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeJSONError(w, http.StatusRequestEntityTooLarge, nil, errorf(CodeInvalidRequest, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit)))
			return
		}
		writeJSONError(w, http.StatusBadRequest, nil, errorf(CodeParseError, "reading request body: "+err.Error()))
		return
	}
	if hv != "" && !isSupported(hv) {
		writeJSONError(w, http.StatusBadRequest, nil, unsupportedVersion(hv))
		return
	}

	if isBatch(body) {
		h.postBatch(w, r, hv, body)
		return
	}
	var m message
	if !decodeMessage(body, &m) {
		writeJSONError(w, http.StatusBadRequest, nil, errorf(CodeParseError, "parse error"))
		return
	}
	k := m.classify()
	sid := r.Header.Get(headerSessionID)
	if isStateless(hv) || (sid == "" && k == kindRequest && bytes.Contains(m.Params, []byte(`"io.modelcontextprotocol/protocolVersion"`))) {
		h.postStateless(w, r, hv, &m, k)
		return
	}

	if k == kindRequest && m.method == "initialize" {
		h.postInitialize(w, r, hv, &m)
		return
	}
	hs, status, e := h.acquire(sid)
	if e != nil {
		writeJSONError(w, status, m.ID, e)
		return
	}
	defer h.release(hs)
	sc := &scope{transport: "streamable-http", header: r.Header, headerVersion: hv}
	switch k {
	case kindInvalid:
		writeJSONError(w, http.StatusBadRequest, m.ID, errorf(CodeInvalidRequest, "invalid request"))
		return
	case kindNotification, kindResponse:
		h.s.handleMessage(r.Context(), hs.session, sc, &m, nil)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	st := &httpStream{w: w}
	sc.out = st
	rp := h.s.handleMessage(r.Context(), hs.session, sc, &m, *bp)
	if rp.body != nil {
		*bp = rp.body
	}
	st.finish(http.StatusOK, rp.body)
}

// postInitialize creates a session, unless initialize fails.
func (h *streamable) postInitialize(w http.ResponseWriter, r *http.Request, hv string, m *message) {
	hs, e := h.create()
	if e != nil {
		writeJSONError(w, http.StatusServiceUnavailable, m.ID, e)
		return
	}
	defer h.release(hs)
	bp := getBuf()
	defer putBuf(bp)
	st := &httpStream{w: w}
	sc := &scope{transport: "streamable-http", header: r.Header, headerVersion: hv, out: st}
	rp := h.s.handleMessage(r.Context(), hs.session, sc, m, *bp)
	*bp = rp.body
	if rp.code != 0 || rp.body == nil {
		h.end(hs)
		st.finish(http.StatusOK, rp.body)
		return
	}
	w.Header().Set(headerSessionID, hs.id)
	st.finish(http.StatusOK, rp.body)
}

// postStateless serves a 2026-07-28 POST: no session, the headers checked
// against the body, error classes mapped to HTTP statuses.
func (h *streamable) postStateless(w http.ResponseWriter, r *http.Request, hv string, m *message, k kind) {
	if k == kindInvalid {
		writeJSONError(w, http.StatusBadRequest, m.ID, errorf(CodeInvalidRequest, "invalid request"))
		return
	}
	if isStateless(hv) && k != kindResponse {
		switch mh := r.Header.Get(headerMethod); {
		case mh == "":
			writeJSONError(w, http.StatusBadRequest, m.ID, errorf(CodeHeaderMismatch, "missing required Mcp-Method header"))
			return
		case mh != m.method:
			writeJSONError(w, http.StatusBadRequest, m.ID, errorf(CodeHeaderMismatch, fmt.Sprintf("Mcp-Method header %q does not match method %q", mh, m.method)))
			return
		}
	}
	if k != kindRequest {
		w.WriteHeader(http.StatusAccepted) // no session: nothing to initialize or cancel
		return
	}
	bp := getBuf()
	defer putBuf(bp)
	st := &httpStream{w: w}
	sc := &scope{transport: "streamable-http", header: r.Header, headerVersion: hv, checkHeader: true, out: st}
	rp := h.s.handleMessage(r.Context(), nil, sc, m, *bp)
	if rp.body != nil {
		*bp = rp.body
	}
	st.finish(statelessStatus(rp.code), rp.body)
}

// statelessStatus is the HTTP status of a 2026-07-28 response (SEP-2575).
func statelessStatus(code int64) int {
	switch code {
	case CodeMethodNotFound:
		return http.StatusNotFound
	case CodeInvalidParams, CodeInvalidRequest, CodeHeaderMismatch, CodeUnsupportedProtocolVersion, CodeMissingRequiredClientCapabilities:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

func (h *streamable) postBatch(w http.ResponseWriter, r *http.Request, hv string, body []byte) {
	sid := r.Header.Get(headerSessionID)
	if isStateless(hv) || sid == "" {
		writeJSONError(w, http.StatusBadRequest, nil, errorf(CodeInvalidRequest, "batches are only allowed within a 2025-03-26 session"))
		return
	}
	hs, status, e := h.acquire(sid)
	if e != nil {
		writeJSONError(w, status, nil, e)
		return
	}
	defer h.release(hs)
	if !allowsBatch(hs.negotiated()) {
		writeJSONError(w, http.StatusBadRequest, nil, errorf(CodeInvalidRequest, "batches are not allowed at this protocol version"))
		return
	}
	bp := getBuf()
	defer putBuf(bp)
	st := &httpStream{w: w}
	sc := &scope{transport: "streamable-http", header: r.Header, headerVersion: hv, out: st}
	rp := h.s.handleBatch(r.Context(), hs.session, sc, body, *bp)
	if rp.body == nil {
		st.finish(http.StatusAccepted, nil)
		return
	}
	*bp = rp.body
	st.finish(http.StatusOK, rp.body)
}

// get opens the session's stream for server notifications.
func (h *streamable) get(w http.ResponseWriter, r *http.Request, hv string) {
	if isStateless(hv) {
		w.Header().Set("Allow", "POST")
		writeJSONError(w, http.StatusMethodNotAllowed, nil, errorf(CodeInvalidRequest, "GET is not supported at protocol version "+hv))
		return
	}
	if !accepts(r.Header, "text/event-stream") {
		writeJSONError(w, http.StatusNotAcceptable, nil, errorf(CodeInvalidRequest, "Accept must list text/event-stream"))
		return
	}
	hs, status, e := h.acquire(r.Header.Get(headerSessionID))
	if e != nil {
		writeJSONError(w, status, nil, e)
		return
	}
	defer h.release(hs)
	h.mu.Lock()
	if hs.hasGET {
		h.mu.Unlock()
		writeJSONError(w, http.StatusConflict, nil, errorf(CodeInvalidRequest, "the session already has a GET stream"))
		return
	}
	hs.hasGET = true
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		hs.hasGET = false
		h.mu.Unlock()
	}()

	l := newListener()
	h.s.addListener(l)
	defer h.s.removeListener(l)
	st := &httpStream{w: w}
	st.start()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-hs.closed:
			return
		case <-h.s.done:
			return
		case <-l.kick:
			if st.send(listChangedMsg) != nil {
				return
			}
		}
	}
}

func (h *streamable) delete(w http.ResponseWriter, r *http.Request, hv string) {
	if isStateless(hv) {
		w.Header().Set("Allow", "POST")
		writeJSONError(w, http.StatusMethodNotAllowed, nil, errorf(CodeInvalidRequest, "DELETE is not supported at protocol version "+hv))
		return
	}
	hs, status, e := h.acquire(r.Header.Get(headerSessionID))
	if e != nil {
		writeJSONError(w, status, nil, e)
		return
	}
	h.release(hs)
	h.end(hs)
	w.WriteHeader(http.StatusNoContent)
}

// create makes a session for initialize.
func (h *streamable) create() (*httpSession, *Error) {
	hs := &httpSession{session: newSession("streamable-http", rand.Text()), closed: make(chan struct{})}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errorf(CodeInternalError, "server is shutting down")
	}
	if len(h.sessions) >= h.o.MaxSessions {
		return nil, errorf(CodeInternalError, "too many sessions")
	}
	h.sessions[hs.id] = hs
	hs.active = 1
	hs.timer = time.AfterFunc(h.o.SessionIdleTimeout, func() { h.expire(hs) })
	return hs, nil
}

// acquire finds a live session and holds it against expiry until release.
func (h *streamable) acquire(sid string) (*httpSession, int, *Error) {
	if sid == "" {
		return nil, http.StatusBadRequest, errorf(CodeInvalidRequest, "missing Mcp-Session-Id header (send initialize first)")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	hs := h.sessions[sid]
	if hs == nil {
		return nil, http.StatusNotFound, errorf(CodeInvalidRequest, "session not found or expired")
	}
	hs.active++
	return hs, 0, nil
}

func (h *streamable) release(hs *httpSession) {
	h.mu.Lock()
	defer h.mu.Unlock()
	hs.active--
	hs.lastUsed = time.Now()
	if hs.active == 0 && !hs.ended {
		hs.timer.Reset(h.o.SessionIdleTimeout)
	}
}

// expire runs from the idle timer; a session in use is left alone (its
// last release re-arms the timer).
func (h *streamable) expire(hs *httpSession) {
	h.mu.Lock()
	if hs.ended || hs.active > 0 {
		h.mu.Unlock()
		return
	}
	if idle := time.Since(hs.lastUsed); idle < h.o.SessionIdleTimeout {
		hs.timer.Reset(h.o.SessionIdleTimeout - idle)
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	h.end(hs)
}

// end removes a session: later requests get 404, its GET stream ends and
// its calls are cancelled.
func (h *streamable) end(hs *httpSession) {
	h.mu.Lock()
	if hs.ended {
		h.mu.Unlock()
		return
	}
	hs.ended = true
	delete(h.sessions, hs.id)
	hs.timer.Stop()
	close(hs.closed)
	h.mu.Unlock()
	hs.cancelAll()
}

// closeAll runs at Shutdown: sessions are forgotten and their streams end;
// their calls in flight are left to Shutdown's deadline.
func (h *streamable) closeAll() {
	h.mu.Lock()
	h.closed = true
	all := make([]*httpSession, 0, len(h.sessions))
	for _, hs := range h.sessions {
		all = append(all, hs)
	}
	for _, hs := range all {
		hs.ended = true
		delete(h.sessions, hs.id)
		hs.timer.Stop()
		close(hs.closed)
	}
	h.mu.Unlock()
}

// httpStream is the response to one POST (or GET): plain JSON unless a
// notification must go out before the response, in which case it becomes
// an SSE stream and everything, the response included, is an event.
type httpStream struct {
	mu   sync.Mutex
	w    http.ResponseWriter
	sse  bool
	done bool
}

var errStreamDone = errors.New("mcp: response stream already finished")

func (st *httpStream) startLocked() {
	h := st.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("X-Accel-Buffering", "no")
	st.w.WriteHeader(http.StatusOK)
	st.sse = true
	if f, ok := st.w.(http.Flusher); ok {
		f.Flush()
	}
}

// start switches to SSE at once (GET streams).
func (st *httpStream) start() {
	st.mu.Lock()
	st.startLocked()
	st.mu.Unlock()
}

func (st *httpStream) send(msg []byte) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.done {
		return errStreamDone
	}
	if !st.sse {
		st.startLocked()
	}
	return st.eventLocked(msg)
}

func (st *httpStream) eventLocked(msg []byte) error {
	if _, err := io.WriteString(st.w, "event: message\ndata: "); err != nil {
		return fmt.Errorf("mcp: sse: %w", err)
	}
	st.w.Write(msg)
	if _, err := io.WriteString(st.w, "\n\n"); err != nil {
		return fmt.Errorf("mcp: sse: %w", err)
	}
	if f, ok := st.w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

// finish writes the response (nil: none, e.g. a cancelled request) and
// closes the stream to later notifications.
func (st *httpStream) finish(status int, body []byte) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.done = true
	if st.sse {
		if body != nil {
			_ = st.eventLocked(body)
		}
		return
	}
	if body == nil {
		st.w.WriteHeader(http.StatusAccepted)
		return
	}
	st.w.Header().Set("Content-Type", "application/json")
	st.w.WriteHeader(status)
	st.w.Write(body)
}

// writeJSONError answers with an HTTP status and a JSON-RPC error body.
func writeJSONError(w http.ResponseWriter, status int, id json.RawMessage, e *Error) {
	bp := getBuf()
	b := appendError(*bp, id, e)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
	*bp = b
	putBuf(bp)
}

// readBody reads the whole body into buf, enforcing limit.
func readBody(w http.ResponseWriter, r *http.Request, limit int64, buf []byte) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, limit)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// accepts reports whether the Accept header admits media type mt, exactly
// or through a wildcard.
func accepts(h http.Header, mt string) bool {
	major := mt[:strings.IndexByte(mt, '/')]
	for _, v := range h.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			if i := strings.IndexByte(part, ';'); i >= 0 {
				part = part[:i]
			}
			part = strings.TrimSpace(part)
			if strings.EqualFold(part, mt) || part == "*/*" || strings.EqualFold(part, major+"/*") {
				return true
			}
		}
	}
	return false
}
