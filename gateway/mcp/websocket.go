package mcp

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// WebSocketOptions configures [Server.WebSocketHandler]. A nil pointer, and
// every zero field, means the default.
type WebSocketOptions struct {
	// AllowedOrigins lists the browser origins (scheme://host[:port])
	// allowed to call, and answered with CORS headers; see
	// [OriginProtection].
	AllowedOrigins []string
	// AllowedHosts lists the Host header values accepted besides loopback
	// names (and, off loopback, IP literals); see [OriginProtection].
	AllowedHosts []string
	// MaxMessageBytes bounds one inbound message. A larger one closes the
	// connection with 1009 (message too big) and a reason naming the
	// limit: the transport has no way to skip a message without reading it
	// all. Default 4 MiB.
	MaxMessageBytes int64
	// PingInterval is how often the server pings an otherwise quiet peer.
	// Default 30s.
	PingInterval time.Duration
	// PongTimeout is how long after a ping the peer may stay silent; with
	// no frame at all (pong or message) for PingInterval+PongTimeout the
	// peer is considered dead, the connection is closed and its calls are
	// cancelled. Default 30s.
	PongTimeout time.Duration
	// WriteTimeout bounds each write (a message, a ping, a close); a peer
	// that does not read within it is disconnected. Default 10s.
	WriteTimeout time.Duration
	// MaxConnections bounds the open WebSocket connections (each is a
	// session); an upgrade beyond it gets 503. Default DefaultMaxSessions.
	MaxConnections int
	// MaxConnectionsPerPrincipal bounds the open connections of one
	// authenticated principal (see ServerOptions.PrincipalOf); an upgrade
	// beyond it gets 503. Anonymous connections are bounded by
	// MaxConnections only. Default DefaultMaxSessionsPerPrincipal;
	// negative means none.
	MaxConnectionsPerPrincipal int
	// RequireSubprotocol refuses upgrades that offer no subprotocol. By
	// default they are accepted (and answered without one) so that generic
	// WebSocket tools can connect; an upgrade offering subprotocols none of
	// which is "mcp" is always refused with 400, since such a client
	// expects a protocol this endpoint does not speak.
	RequireSubprotocol bool
}

// wsSubprotocol is what the TypeScript SDK's WebSocketClientTransport
// offers: new WebSocket(url, "mcp").
const wsSubprotocol = "mcp"

// wsReadBufferSize is each connection's read buffer, held for its whole
// life (an idle connection's reader waits on it). Left at zero, the
// Upgrader would keep net/http's 4 KiB one; a frame's header and a small
// message fit in 1 KiB, and a larger message's payload is read straight
// into the message's own slice, so a bigger buffer would save a read
// call or two per large message at 3 KiB per connection.
const wsReadBufferSize = 1 << 10

// wsWriteBuffers is shared by every connection: a write buffer is held only
// while a message is being written, so idle connections hold none.
var wsWriteBuffers sync.Pool

// WebSocketHandler returns the WebSocket transport (the gateway mounts it
// at /ws). It is a thin adapter over the same connection code as stdio: one
// session per connection, one JSON-RPC message per text frame, requests
// served concurrently, writes serialized with deadlines. Every MCP
// behaviour (initialize, lists, calls, cancellation, progress,
// list_changed, batches at 2025-03-26) is the stdio one.
//
// Guarantees: binary frames close with 1003; oversized messages with 1009;
// the end of the opener's credential (expiry, revocation; see [Principal])
// with 1008 and a reason saying which;
// a dead peer is detected by ping/pong within PingInterval+PongTimeout;
// when the socket closes, for whatever reason, every call in flight on it
// is cancelled (so is the backend call, whose ctx it is) and the handler
// returns only after those calls have; [Server.Shutdown] lets calls finish
// until its deadline, then closes with 1001 (going away).
func (s *Server) WebSocketHandler(opts *WebSocketOptions) http.Handler {
	var o WebSocketOptions
	if opts != nil {
		o = *opts
	}
	orDefault(&o.MaxMessageBytes, DefaultMaxMessageBytes)
	orDefault(&o.PingInterval, DefaultKeepAlive)
	orDefault(&o.PongTimeout, DefaultKeepAlive)
	orDefault(&o.WriteTimeout, DefaultWriteTimeout)
	orDefault(&o.MaxConnections, DefaultMaxSessions)
	if o.MaxConnectionsPerPrincipal == 0 {
		o.MaxConnectionsPerPrincipal = DefaultMaxSessionsPerPrincipal
	}
	h := &wsHandler{s: s, o: o}
	h.up = websocket.Upgrader{
		Subprotocols:    []string{wsSubprotocol},
		WriteBufferPool: &wsWriteBuffers,
		ReadBufferSize:  wsReadBufferSize,
		// OriginProtection has already decided, with the same rules (and
		// allow-list) as the other HTTP transports.
		CheckOrigin: func(*http.Request) bool { return true },
		Error: func(w http.ResponseWriter, _ *http.Request, status int, reason error) {
			writeJSONError(w, status, nil, errorf(CodeInvalidRequest, "websocket: %v", reason))
		},
	}
	return OriginProtection(o.AllowedOrigins, o.AllowedHosts, h)
}

type wsHandler struct {
	s     *Server
	o     WebSocketOptions
	up    websocket.Upgrader
	conns atomic.Int64 // open connections, for MaxConnections

	mu       sync.Mutex
	perOwner map[string]int // open connections by owner, for MaxConnectionsPerPrincipal
}

func (h *wsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !websocket.IsWebSocketUpgrade(r) {
		w.Header().Set("Upgrade", "websocket")
		writeJSONError(w, http.StatusUpgradeRequired, nil, errorf(CodeInvalidRequest, `this endpoint speaks MCP over WebSocket (subprotocol "mcp"); send a WebSocket upgrade`))
		return
	}
	switch protos := websocket.Subprotocols(r); {
	case len(protos) > 0 && !slices.Contains(protos, wsSubprotocol):
		writeJSONError(w, http.StatusBadRequest, nil, errorf(CodeInvalidRequest, `unsupported WebSocket subprotocol %q: this endpoint speaks "mcp"`, protos))
		return
	case len(protos) == 0 && h.o.RequireSubprotocol:
		writeJSONError(w, http.StatusBadRequest, nil, errorf(CodeInvalidRequest, `missing WebSocket subprotocol: offer "mcp"`))
		return
	}
	if h.s.isClosing() {
		writeJSONError(w, http.StatusServiceUnavailable, nil, errorf(CodeInternalError, "server is shutting down"))
		return
	}
	if h.conns.Add(1) > int64(h.o.MaxConnections) {
		h.conns.Add(-1)
		writeJSONError(w, http.StatusServiceUnavailable, nil, errorf(CodeInternalError, "too many WebSocket connections (limit %d)", h.o.MaxConnections))
		return
	}
	owner := h.s.principalOf(r.Context()).ID
	if owner != "" && h.o.MaxConnectionsPerPrincipal > 0 {
		if !h.takeOwnerSlot(owner) {
			h.conns.Add(-1)
			writeJSONError(w, http.StatusServiceUnavailable, nil, errorf(CodeInternalError, "too many WebSocket connections for this principal (limit %d)", h.o.MaxConnectionsPerPrincipal))
			return
		}
	} else {
		owner = ""
	}
	conn, err := h.up.Upgrade(w, r, nil)
	if err != nil {
		h.releaseSlots(owner)
		return // Upgrade has answered
	}
	// The connection is served on a goroutine of its own and this handler
	// returns: net/http then lets go of what it holds per connection (its
	// 4 KiB write buffer, the request's state and the deep stack of its
	// serving goroutine), which an idle connection would otherwise keep
	// for its whole life. The request's values (the principal) stay; its
	// cancellation, which net/http fires when the handler returns, does
	// not: the socket's end ends the session, as before.
	ctx, header := context.WithoutCancel(r.Context()), r.Header
	h.s.holdConn()
	go func() {
		defer h.s.releaseConn()
		defer h.releaseSlots(owner)
		h.serve(ctx, header, conn)
	}()
}

// releaseSlots gives back what ServeHTTP took for a connection: its place
// under MaxConnections and, for a non-empty owner, its principal's.
func (h *wsHandler) releaseSlots(owner string) {
	if owner != "" {
		h.releaseOwnerSlot(owner)
	}
	h.conns.Add(-1)
}

func (h *wsHandler) takeOwnerSlot(owner string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.perOwner[owner] >= h.o.MaxConnectionsPerPrincipal {
		return false
	}
	if h.perOwner == nil {
		h.perOwner = map[string]int{}
	}
	h.perOwner[owner]++
	return true
}

func (h *wsHandler) releaseOwnerSlot(owner string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.perOwner[owner]--; h.perOwner[owner] <= 0 {
		delete(h.perOwner, owner)
	}
}

// serve runs one connection on one goroutine, the one reading it: an
// idle connection holds that goroutine (waiting on the socket, at a
// shallow depth) and nothing else. What else may happen to it comes by
// callback: a timer pings, another ends the session when the credential
// expires, list_changed is written by a short-lived goroutine, Shutdown
// starts the drain on one; each that ends the session wakes the reader (a read
// deadline in the past), which then ends it as serveConn would: calls
// cancelled (or, at Shutdown, finished) and the close frame sent.
func (h *wsHandler) serve(ctx context.Context, header http.Header, conn *websocket.Conn) {
	s := h.s
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	who := s.principalOf(ctx)
	sess := s.newSession("websocket", "", who.ID)
	// A connection is a session without an id on the wire; handlers still
	// need one to keep state per session.
	sess.key = rand.Text()
	s.observeSession("websocket", 1)
	defer s.observeSession("websocket", -1)
	ws := &wsConn{c: conn, writeTimeout: h.o.WriteTimeout, srv: s}
	sc := &scope{transport: "websocket", header: header, out: ws, backlog: new(replyBacklog)}
	e := &wsEnding{c: conn, silence: h.o.PingInterval + h.o.PongTimeout}
	e.connEnding = newConnEnding(func() { _ = conn.SetReadDeadline(time.Unix(1, 0)) })
	conn.SetReadDeadline(time.Now().Add(e.silence))
	conn.SetPongHandler(func(string) error { return e.alive() })

	ping := every(h.o.PingInterval, func() bool {
		if ws.ping() != nil {
			e.end(endWrite)
			return false
		}
		return true
	})
	defer onCredentialEnd(&who, e.end)()
	n := &coalescer{write: func(msg []byte) {
		if sess.negotiated() != "" {
			_ = ws.send(msg)
		}
	}}
	l := &listener{notify: func(_ []byte, resourceList bool) { n.post(resourceList) }, shutdown: func() { go e.drain() }}
	s.addListener(l)

	h.read(ws, e, func(msg []byte) {
		if who.expired(time.Now()) {
			// The timer may not have fired yet: nothing read after the
			// expiry is served.
			e.end(endExpired)
			return
		}
		// Not read further while answers pile up for a peer that does
		// not read them: the wait ends as their writes do.
		sc.backlog.wait()
		e.mu.Lock()
		s.connMessage(ctx, sess, sc, e.group(), msg)
		e.mu.Unlock()
	})

	s.removeListener(l)
	end, draining := e.over()
	ping.stop()
	end = e.settle(sess, cancel, end, draining)
	switch end {
	case endShutdown:
		ws.closeWith(websocket.CloseGoingAway, "server shutting down")
	case endExpired, endRevoked:
		// 1008: the client must reconnect with a valid token.
		ws.closeWith(websocket.ClosePolicyViolation, end.reason())
	default:
		ws.closeWith(websocket.CloseNormalClosure, "")
	}
	conn.Close()
}

// wsEnding is how a connection ends (connEnding), and how a frame
// proves its peer alive.
type wsEnding struct {
	*connEnding
	c       *websocket.Conn
	silence time.Duration
}

var errWSEnding = errors.New("mcp: websocket: connection ending")

// alive extends the read deadline after a frame, unless the connection is
// ending: the deadline in the past that woke the reader must stay.
func (e *wsEnding) alive() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.set {
		return errWSEnding
	}
	return e.c.SetReadDeadline(time.Now().Add(e.silence))
}

// read delivers each text message to deliver until the connection fails,
// the connection is ending, or a frame breaks the rules, which it answers
// with the matching close code.
func (h *wsHandler) read(ws *wsConn, e *wsEnding, deliver func([]byte)) {
	max := h.o.MaxMessageBytes
	for {
		typ, rd, err := ws.c.NextReader()
		if err != nil {
			return // closed by the peer, dead (read deadline), or ending
		}
		// Any frame proves the peer alive, not only pongs.
		if e.alive() != nil {
			return
		}
		if typ != websocket.TextMessage {
			ws.closeWith(websocket.CloseUnsupportedData, "binary messages are not supported: send each JSON-RPC message as one text frame")
			return
		}
		// A fresh slice per message: the request aliases it while it runs.
		msg, err := io.ReadAll(io.LimitReader(rd, max+1))
		if err != nil {
			return
		}
		if int64(len(msg)) > max {
			ws.closeWith(websocket.CloseMessageTooBig, fmt.Sprintf("message exceeds the limit of %d bytes", max))
			return
		}
		deliver(msg)
	}
}

// wsConn is the session's sink: whole messages, one writer at a time, each
// write bounded by a deadline. A failed write closes the connection, which
// ends the reader and so the session.
type wsConn struct {
	c            *websocket.Conn
	writeTimeout time.Duration
	srv          *Server     // told when a write times out
	told         atomic.Bool // srv was told: once per connection

	mu        sync.Mutex
	err       error
	closeSent bool
}

var errWSClosed = errors.New("mcp: websocket: connection closed")

func (w *wsConn) send(msg []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.c.SetWriteDeadline(time.Now().Add(w.writeTimeout))
	if err := w.c.WriteMessage(websocket.TextMessage, msg); err != nil {
		w.err = fmt.Errorf("mcp: websocket: writing: %w", err)
		w.writeFailed(err)
		w.c.Close()
		return w.err
	}
	return nil
}

// writeFailed tells the server, once, of a write that failed: the ping
// and a message's write fail together when the peer stops reading.
func (w *wsConn) writeFailed(err error) {
	if !w.told.Swap(true) {
		w.srv.observeWriteFailure("websocket", err)
	}
}

// ping is the keepalive; WriteControl may run alongside send.
func (w *wsConn) ping() error {
	if err := w.c.WriteControl(websocket.PingMessage, nil, time.Now().Add(w.writeTimeout)); err != nil {
		w.writeFailed(err)
		return fmt.Errorf("mcp: websocket: ping: %w", err)
	}
	return nil
}

// closeWith sends a close frame once; later sends fail.
func (w *wsConn) closeWith(code int, reason string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closeSent {
		return
	}
	w.closeSent = true
	if w.err == nil {
		w.err = errWSClosed
	}
	_ = w.c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(w.writeTimeout))
}
