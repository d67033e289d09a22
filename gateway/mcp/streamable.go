package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
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
	// MaxSessionsPerPrincipal bounds the live sessions of one
	// authenticated principal (see ServerOptions.PrincipalOf), so that
	// one credential cannot take every session of MaxSessions; initialize
	// beyond it gets 503. Anonymous sessions (no authentication) are
	// bounded by MaxSessions only. Default DefaultMaxSessionsPerPrincipal;
	// negative means no per-principal limit. Scale-out token sessions
	// hold nothing and are not counted.
	MaxSessionsPerPrincipal int
	// AllowedOrigins lists the browser origins (scheme://host[:port])
	// allowed to call, and answered with CORS headers; see
	// [OriginProtection].
	AllowedOrigins []string
	// AllowedHosts lists the Host header values accepted besides loopback
	// names (and, off loopback, IP literals); see [OriginProtection].
	AllowedHosts []string
	// WriteTimeout bounds each write of an SSE event (progress, a response
	// sent as an event, list_changed on a GET or subscriptions/listen
	// stream); a client that does not read within it is disconnected
	// instead of holding the stream, and its call, forever. Default 10s.
	WriteTimeout time.Duration

	// SessionSecret, when set, switches sessions to scale-out mode: the
	// Mcp-Session-Id is a self-contained token signed with this secret
	// (HMAC-SHA256 over the negotiated revision, a digest of the client's
	// capabilities, issue and expiry times), so every replica sharing the
	// secret serves every session and a round-robin load balancer needs no
	// stickiness. Idle sessions then cost no memory, and SessionIdleTimeout
	// and MaxSessions do not apply. What degrades: DELETE cannot revoke a
	// token before SessionTTL (it only ends this replica's streams and
	// calls of the session); notifications/cancelled reaches a call only if
	// it lands on the replica running it (closing the HTTP request cancels
	// anywhere); a GET stream receives the list_changed of the replica it
	// is connected to (every replica refreshes the same catalog). It must
	// be at least 32 random bytes; StreamableHTTPHandler returns an error
	// otherwise.
	SessionSecret []byte
	// PreviousSessionSecrets are still accepted (not used to sign), so the
	// secret can be rotated without ending sessions: deploy the new secret
	// with the old one here, then drop the old one after SessionTTL.
	PreviousSessionSecrets [][]byte
	// SessionTTL is how long a session token is valid (scale-out mode).
	// After it the client gets 404 and, as the spec requires, initializes
	// a new session. Default 24 hours.
	SessionTTL time.Duration
	// Endpoint names this handler's endpoint in its session tokens
	// (scale-out mode): their MAC covers it, so a token issued by one
	// handler is not a session at another holding the same secret, and
	// a request or DELETE there gets 404. The gateway gives each
	// toolset's /mcp/NAME its own; empty is its /mcp. At most 255 bytes.
	Endpoint string
	// Fleet, in scale-out mode, shares revocations and cancellations
	// among the replicas, which lifts the first two degradations that
	// SessionSecret lists: DELETE ends the session on every replica, and
	// notifications/cancelled reaches the call wherever it runs. It
	// requires SessionSecret; StreamableHTTPHandler returns an error
	// otherwise.
	Fleet Fleet
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
//
// It fails, naming the option, when opts.SessionSecret is set and shorter
// than 32 bytes; nothing is registered with s then.
func (s *Server) StreamableHTTPHandler(opts *StreamableHTTPOptions) (http.Handler, error) {
	var o StreamableHTTPOptions
	if opts != nil {
		o = *opts
	}
	orDefault(&o.MaxRequestBytes, DefaultMaxMessageBytes)
	orDefault(&o.SessionIdleTimeout, DefaultSessionIdleTimeout)
	orDefault(&o.MaxSessions, DefaultMaxSessions)
	if o.MaxSessionsPerPrincipal == 0 {
		o.MaxSessionsPerPrincipal = DefaultMaxSessionsPerPrincipal
	}
	orDefault(&o.SessionTTL, 24*time.Hour)
	orDefault(&o.WriteTimeout, DefaultWriteTimeout)
	h := &streamable{s: s, o: o, sessions: make(map[string]*httpSession), byFleetKey: make(map[string]*httpSession), perOwner: make(map[string]int)}
	if len(o.SessionSecret) > 0 {
		k, err := newTokenKeys(o.SessionSecret, o.PreviousSessionSecrets, o.SessionTTL, o.Endpoint)
		if err != nil {
			return nil, err
		}
		h.tokens = k
	}
	if o.Fleet != nil {
		if h.tokens == nil {
			return nil, errors.New("mcp: StreamableHTTPOptions.Fleet needs SessionSecret: without signed session tokens a session lives on one replica")
		}
		o.Fleet.Listen(h)
	}
	s.mu.Lock()
	s.onShutdown = append(s.onShutdown, h.closeAll)
	s.mu.Unlock()
	return OriginProtection(o.AllowedOrigins, o.AllowedHosts, h), nil
}

type streamable struct {
	s      *Server
	o      StreamableHTTPOptions
	tokens *tokenKeys // non-nil in token (scale-out) mode

	mu sync.RWMutex
	// sessions are the live sessions by Mcp-Session-Id. In token mode only
	// those with a request or stream in progress on this replica are here,
	// so that notifications/cancelled and DELETE can reach them; an idle
	// token session costs no memory.
	sessions map[string]*httpSession
	// byFleetKey are the sessions of sessions by FleetKey, which is all a
	// Fleet's messages name (token mode with a Fleet only).
	byFleetKey map[string]*httpSession
	perOwner   map[string]int // live sessions by owner, for MaxSessionsPerPrincipal
	closed     bool
}

// httpSession is a session plus what Streamable HTTP needs to expire it.
type httpSession struct {
	*session
	// timer expires an idle session; nil in token mode, where the token's
	// own expiry bounds the session and nothing is held while idle.
	timer    *time.Timer
	active   atomic.Int32 // requests and streams using it
	lastUsed atomic.Int64 // unix nanoseconds of the last release
	expires  time.Time    // token mode: when the token expires
	fleetKey string       // token mode with a Fleet: FleetKey(id)
	hasGET   bool         // guarded by streamable.mu
	ended    bool         // guarded by streamable.mu
	closed   chan struct{}
	// onEnd, when set, is called (under streamable.mu) as closed closes:
	// a detached GET stream has no goroutine waiting on closed.
	onEnd func()
}

func (h *streamable) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hv := headerValue(r.Header, headerProtocolVersion)
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
	if !acceptsBoth(r.Header) {
		writeJSONError(w, http.StatusNotAcceptable, nil, errorf(CodeInvalidRequest, "Accept must list application/json and text/event-stream"))
		return
	}
	if ct := headerValue(r.Header, "Content-Type"); ct != "" && !isJSONContentType(ct) {
		writeJSONError(w, http.StatusUnsupportedMediaType, nil, errorf(CodeInvalidRequest, "Content-Type must be application/json"))
		return
	}
	in := getBuf()
	defer putBuf(in)
	body, err := readBody(r, h.o.MaxRequestBytes, *in)
	*in = body[:0]
	if err != nil {
		h.s.writeBodyError(w, r, err)
		return
	}
	badVersion := hv != "" && !isSupported(hv)
	if isBatch(body) {
		if badVersion {
			writeJSONError(w, http.StatusBadRequest, nil, unsupportedVersion(hv))
			return
		}
		h.postBatch(w, r, hv, body)
		return
	}
	// m aliases body, which stays ours until post returns.
	var m message
	if !decodeMessage(body, &m) {
		writeJSONError(w, http.StatusBadRequest, nil, errorf(CodeParseError, "parse error"))
		return
	}
	if badVersion {
		// After decoding, so the error carries the request's id (as on stdio).
		writeJSONError(w, http.StatusBadRequest, m.ID, unsupportedVersion(hv))
		return
	}
	k := m.classify()
	sid := headerValue(r.Header, headerSessionID)
	if isStateless(hv) || (sid == "" && k == kindRequest && bytes.Contains(m.Params, []byte(`"io.modelcontextprotocol/protocolVersion"`))) {
		h.postStateless(w, r, hv, &m, k)
		return
	}

	if k == kindRequest && m.info != nil && m.info.handler == serveInitialize {
		h.postInitialize(w, r, hv, &m)
		return
	}
	hs, status, e := h.acquire(r.Context(), sid, h.s.principalOf(r.Context()).ID)
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
	out := getBuf()
	defer putBuf(out)
	st := &httpStream{w: w, writeTimeout: h.o.WriteTimeout, srv: h.s}
	sc.out = st
	sc.keepRefusal = true
	rp := h.s.handleMessage(r.Context(), hs.session, sc, &m, *out)
	if rp.body != nil {
		*out = rp.body
	}
	st.finishReply(http.StatusOK, rp.body, sc.refused)
}

// postInitialize creates a session, unless initialize fails. In token mode
// the session id is the signed token minted from the negotiated state.
func (h *streamable) postInitialize(w http.ResponseWriter, r *http.Request, hv string, m *message) {
	owner := h.s.principalOf(r.Context()).ID
	hs, e := h.create(owner)
	if e != nil {
		writeJSONError(w, http.StatusServiceUnavailable, m.ID, e)
		return
	}
	defer h.release(hs)
	bp := getBuf()
	defer putBuf(bp)
	st := &httpStream{w: w, writeTimeout: h.o.WriteTimeout, srv: h.s}
	sc := &scope{transport: "streamable-http", header: r.Header, headerVersion: hv, out: st}
	rp := h.s.handleMessage(r.Context(), hs.session, sc, m, *bp)
	*bp = rp.body
	if rp.code != 0 || rp.body == nil {
		h.end(hs)
		st.finish(http.StatusOK, rp.body)
		return
	}
	id := hs.id
	if h.tokens != nil {
		version, caps := hs.initInfo()
		id = h.tokens.mint(version, caps, owner, time.Now())
	}
	w.Header()[headerSessionID] = []string{id}
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
		switch mh := headerValue(r.Header, headerMethod); {
		case mh == "":
			writeJSONError(w, http.StatusBadRequest, m.ID, errorf(CodeHeaderMismatch, "missing required Mcp-Method header"))
			return
		case mh != m.method:
			writeJSONError(w, http.StatusBadRequest, m.ID, errorf(CodeHeaderMismatch, "Mcp-Method header %q does not match method %q", mh, m.method))
			return
		}
	}
	if k != kindRequest {
		w.WriteHeader(http.StatusAccepted) // no session: nothing to initialize or cancel
		return
	}
	bp := getBuf()
	defer putBuf(bp)
	st := &httpStream{w: w, writeTimeout: h.o.WriteTimeout, srv: h.s}
	sc := &scope{transport: "streamable-http", header: r.Header, headerVersion: hv, checkHeader: true, out: st, keepRefusal: true}
	rp := h.s.handleMessage(r.Context(), nil, sc, m, *bp)
	if rp.body != nil {
		*bp = rp.body
	}
	st.finishReply(statelessStatus(rp.code), rp.body, sc.refused)
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
	sid := headerValue(r.Header, headerSessionID)
	if isStateless(hv) || sid == "" {
		writeJSONError(w, http.StatusBadRequest, nil, errorf(CodeInvalidRequest, "batches are only allowed within a 2025-03-26 session"))
		return
	}
	hs, status, e := h.acquire(r.Context(), sid, h.s.principalOf(r.Context()).ID)
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
	st := &httpStream{w: w, writeTimeout: h.o.WriteTimeout, srv: h.s}
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
		writeJSONError(w, http.StatusMethodNotAllowed, nil, errorf(CodeInvalidRequest, "GET is not supported at protocol version %s", hv))
		return
	}
	if !accepts(r.Header, "text/event-stream") {
		writeJSONError(w, http.StatusNotAcceptable, nil, errorf(CodeInvalidRequest, "Accept must list text/event-stream"))
		return
	}
	who := h.s.principalOf(r.Context())
	hs, status, e := h.acquire(r.Context(), headerValue(r.Header, headerSessionID), who.ID)
	if e != nil {
		writeJSONError(w, status, nil, e)
		return
	}
	h.mu.Lock()
	if hs.hasGET {
		h.mu.Unlock()
		h.release(hs)
		writeJSONError(w, http.StatusConflict, nil, errorf(CodeInvalidRequest, "the session already has a GET stream"))
		return
	}
	hs.hasGET = true
	h.mu.Unlock()

	l := newListener()
	h.s.addListener(l)
	st := &httpStream{w: w, writeTimeout: h.o.WriteTimeout, srv: h.s}
	if r.ProtoMajor == 1 && r.ProtoMinor == 1 {
		// The stream is about to leave net/http (detach); when it ends the
		// connection closes rather than serving another request, and the
		// client is told so up front.
		w.Header()["Connection"] = hvClose
	}
	st.start()
	if st.detach() {
		h.holdDetached(hs, &who, l, st)
		return
	}
	cred := watchCredential(&who)
	defer func() {
		cred.stop()
		h.s.removeListener(l)
		h.mu.Lock()
		hs.hasGET = false
		h.mu.Unlock()
		h.release(hs)
	}()
	h.waitGET(hs, l, cred, st, r.Context().Done())
}

// holdDetached serves a detached GET stream with one goroutine, the one
// reading its connection to notice the client leaving, and the handler
// returns: net/http lets go of its per-connection buffers (10 KiB), its
// state and its serving goroutine. Everything else that may happen to
// the stream comes by callback: list_changed is written from a
// short-lived goroutine; the session's end, Shutdown, the credential's
// expiry (a timer) or revocation, and a failed write end it (the last
// chunk, then the connection closed), which ends the reader, which
// releases the session.
func (h *streamable) holdDetached(hs *httpSession, who *Principal, l *listener, st *httpStream) {
	n := &coalescer{write: func(msg []byte) {
		if st.send(msg) != nil {
			st.abort()
		}
	}}
	notify := func(_ []byte, resourceList bool) { n.post(resourceList) }
	abort := func() { go st.abort() } // callers hold locks
	closing := h.s.setCallbacks(l, notify, abort)
	// What came before the switch, through the channels.
	select {
	case <-l.kick:
		notify(listChangedMsg, false)
	default:
	}
	select {
	case <-l.resources:
		notify(resourceListChangedMsg, true)
	default:
	}
	if closing {
		abort()
	}
	// The client reopens the stream with a fresh token.
	stopCred := onCredentialEnd(who, func(connEnd) { st.abort() })
	h.mu.Lock()
	if hs.ended {
		abort()
	} else {
		hs.onEnd = abort
	}
	h.mu.Unlock()
	h.s.holdConn() // WaitConnections waits for its last chunk
	go func() {
		defer h.s.releaseConn()
		discardUntilClosed(st.conn)
		st.abort() // the client left, or the stream was ended
		h.s.removeListener(l)
		stopCred()
		h.mu.Lock()
		hs.onEnd = nil
		hs.hasGET = false
		h.mu.Unlock()
		h.release(hs)
	}()
}

// waitGET serves a GET stream until gone (the client has left) or the
// session, the server or the credential ends, or a write fails.
func (h *streamable) waitGET(hs *httpSession, l *listener, cred *credentialEnd, st *httpStream, gone <-chan struct{}) {
	for {
		select {
		case <-gone:
			return
		case <-hs.closed:
			return
		case <-h.s.done:
			return
		case <-cred.expired:
			return // the client reopens the stream with a fresh token
		case <-cred.revoked:
			return
		case <-l.kick:
			if st.send(listChangedMsg) != nil {
				return
			}
		case <-l.resources:
			if st.send(resourceListChangedMsg) != nil {
				return
			}
		}
	}
}

func (h *streamable) delete(w http.ResponseWriter, r *http.Request, hv string) {
	if isStateless(hv) {
		w.Header().Set("Allow", "POST")
		writeJSONError(w, http.StatusMethodNotAllowed, nil, errorf(CodeInvalidRequest, "DELETE is not supported at protocol version %s", hv))
		return
	}
	hs, status, e := h.acquire(r.Context(), headerValue(r.Header, headerSessionID), h.s.principalOf(r.Context()).ID)
	if e != nil {
		writeJSONError(w, status, nil, e)
		return
	}
	if f := h.o.Fleet; f != nil {
		// Revoked first: a fleet that keeps as many revocations as it may
		// refuses, and then the session is left whole rather than ended
		// here only, which would look deleted from this replica alone.
		err := f.Revoke(r.Context(), hs.fleetKey, hs.owner, hs.expires)
		var limit *RevocationLimitError
		if errors.As(err, &limit) {
			h.release(hs)
			h.refuseDelete(w, hs, limit)
			return
		}
		// The listener (SessionRevoked) has ended the session here
		// already when Revoke succeeded; end it anyway when the store is
		// away, so that this replica at least stops serving it.
		h.end(hs)
		h.release(hs)
		if err != nil {
			h.s.log.Warn("mcp: session not revoked across the fleet", "session", hs.logID, "err", err)
			writeJSONError(w, http.StatusServiceUnavailable, nil, errorf(CodeInternalError, "the session ended on this replica only, not on the others: %v; retry DELETE", ErrFleetUnavailable))
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	// end before release: in token mode the last release would otherwise
	// drop the transient session before its calls are cancelled.
	h.end(hs)
	h.release(hs)
	w.WriteHeader(http.StatusNoContent)
}

// refuseDelete answers a DELETE the fleet would not record: 429 when the
// principal holds its share of the fleet's revocations, 503 when the
// fleet holds all it may, with Retry-After when room comes at a known
// time. The message says that the session is still valid, and until when,
// so that a client that meant to end it for safety knows it did not.
func (h *streamable) refuseDelete(w http.ResponseWriter, hs *httpSession, limit *RevocationLimitError) {
	h.s.log.Warn("mcp: a DELETE was refused: the fleet keeps as many deleted sessions as it may", "session", hs.logID, "per_principal", limit.PerPrincipal, "limit", limit.Limit)
	status := http.StatusServiceUnavailable
	if limit.PerPrincipal {
		status = http.StatusTooManyRequests
	}
	retry := ""
	if wait := time.Until(limit.Free); wait > 0 {
		secs := int64(wait/time.Second) + 1
		w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
		retry = fmt.Sprintf(" or retry DELETE in %ds,", secs)
	}
	writeJSONError(w, status, nil, errorf(CodeInternalError, "the session was not deleted: %v. It stays valid until its token expires at %s: stop using it,%s or let it expire", limit, hs.expires.UTC().Format(time.RFC3339), retry))
}

// create makes a session of owner for initialize, held (active) until
// release. In token mode it is a transient session that is never
// registered: the client will present the token minted from it (see
// postInitialize).
func (h *streamable) create(owner string) (*httpSession, *Error) {
	if h.tokens != nil {
		hs := &httpSession{session: h.s.newSession("streamable-http", "", owner), closed: make(chan struct{})}
		hs.active.Store(1)
		return hs, nil
	}
	hs := &httpSession{session: h.s.newSession("streamable-http", rand.Text(), owner), closed: make(chan struct{})}
	hs.lastUsed.Store(time.Now().UnixNano())
	hs.active.Store(1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errorf(CodeInternalError, "server is shutting down")
	}
	if len(h.sessions) >= h.o.MaxSessions {
		return nil, errorf(CodeInternalError, "too many sessions (limit %d)", h.o.MaxSessions)
	}
	if owner != "" && h.o.MaxSessionsPerPrincipal > 0 && h.perOwner[owner] >= h.o.MaxSessionsPerPrincipal {
		return nil, errorf(CodeInternalError, "too many sessions for this principal (limit %d); end unused ones with DELETE", h.o.MaxSessionsPerPrincipal)
	}
	h.sessions[hs.id] = hs
	if owner != "" {
		h.perOwner[owner]++
	}
	h.s.observeSession("streamable-http", 1)
	// One timer for the session's whole life, never reset per request:
	// when it fires, expire looks at lastUsed and re-arms it if needed.
	hs.timer = time.AfterFunc(h.o.SessionIdleTimeout, func() { h.expire(hs) })
	return hs, nil
}

// acquire finds a live session of owner and holds it against expiry until
// release. Another principal's session is not found: the answer is the
// same 404 as for an unknown id, so holding someone's session id is worth
// nothing without their credentials (DELETE, notifications/cancelled, GET
// and every other request alike). The common case takes only a read lock
// and an atomic increment.
func (h *streamable) acquire(ctx context.Context, sid, owner string) (*httpSession, int, *Error) {
	if sid == "" {
		return nil, http.StatusBadRequest, errorf(CodeInvalidRequest, "missing Mcp-Session-Id header (send initialize first)")
	}
	if h.tokens != nil {
		return h.acquireToken(ctx, sid, owner)
	}
	h.mu.RLock()
	hs := h.sessions[sid]
	if hs != nil && hs.owner != owner {
		hs = nil
	}
	if hs != nil {
		// Under the read lock, so expire (which holds the write lock)
		// either sees this increment or has already unregistered hs.
		hs.active.Add(1)
	}
	h.mu.RUnlock()
	if hs == nil {
		return nil, http.StatusNotFound, errorf(CodeInvalidRequest, "session not found or expired")
	}
	return hs, 0, nil
}

func (h *streamable) release(hs *httpSession) {
	if hs.timer == nil { // token mode, or a failed create
		h.releaseToken(hs)
		return
	}
	// lastUsed before the decrement: expire, seeing active == 0, also
	// sees the time of the last use.
	hs.lastUsed.Store(time.Now().UnixNano())
	hs.active.Add(-1)
}

// expire runs from the idle timer; a session in use or used recently is
// left alone and the timer re-armed.
func (h *streamable) expire(hs *httpSession) {
	h.mu.Lock()
	if hs.ended {
		h.mu.Unlock()
		return
	}
	if hs.active.Load() > 0 {
		hs.timer.Reset(h.o.SessionIdleTimeout)
		h.mu.Unlock()
		return
	}
	if idle := time.Since(time.Unix(0, hs.lastUsed.Load())); idle < h.o.SessionIdleTimeout {
		hs.timer.Reset(h.o.SessionIdleTimeout - idle)
		h.mu.Unlock()
		return
	}
	h.endLocked(hs)
	h.mu.Unlock()
	hs.cancelAll()
}

// end removes a session: later requests get 404 (in token mode the token
// stays valid until it expires), its GET stream ends and its calls are
// cancelled.
func (h *streamable) end(hs *httpSession) {
	h.mu.Lock()
	if hs.ended {
		h.mu.Unlock()
		return
	}
	h.endLocked(hs)
	h.mu.Unlock()
	hs.cancelAll()
}

func (h *streamable) endLocked(hs *httpSession) {
	hs.ended = true
	if hs.fleetKey != "" && h.byFleetKey[hs.fleetKey] == hs {
		delete(h.byFleetKey, hs.fleetKey)
	}
	if h.sessions[hs.id] == hs {
		delete(h.sessions, hs.id)
		// A token session's transient entry (no timer) was never counted
		// as a held session.
		if hs.timer != nil {
			h.s.observeSession("streamable-http", -1)
			if hs.owner != "" {
				if h.perOwner[hs.owner]--; h.perOwner[hs.owner] <= 0 {
					delete(h.perOwner, hs.owner)
				}
			}
		}
	}
	if hs.timer != nil {
		hs.timer.Stop()
	}
	hs.closeLocked()
}

// closeLocked closes closed, and tells a detached GET stream.
func (hs *httpSession) closeLocked() {
	close(hs.closed)
	if hs.onEnd != nil {
		hs.onEnd()
	}
}

// closeAll runs at Shutdown: sessions are forgotten and their streams end;
// their calls in flight are left to Shutdown's deadline.
func (h *streamable) closeAll() {
	h.mu.Lock()
	h.closed = true
	for _, hs := range h.sessions {
		h.endLocked(hs)
	}
	h.mu.Unlock()
}

// sessionCount is the number of sessions held in memory (tests).
func (h *streamable) sessionCount() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.sessions)
}
