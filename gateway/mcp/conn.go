package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"sync"
	"time"
)

// A connection transport (stdio, WebSocket, legacy HTTP+SSE) carries one
// session over a stream of whole messages in each direction. They share
// connMessage, the one place that registers a message's request and runs
// it concurrently. stdio, one session per process, is served by
// serveConn's loop; WebSocket and legacy SSE, of which a replica holds
// thousands, keep no goroutine of their own beside the one that reads
// (websocket.go, sse.go): what else may happen to them comes by timer or
// callback, and they end as serveConn does (connEnding).

// connConfig describes one connection to serveConn. Only stdio uses it
// now, which no HTTP request opens: its scope has no header.
type connConfig struct {
	transport string
	out       sink // serialized, whole-message writes
	// in carries the messages; its close lets the calls in flight
	// finish, since a client may close stdin and still read stdout.
	in <-chan []byte
}

// connEnd is why serveConn returned.
type connEnd uint8

const (
	endInput    connEnd = iota // in was closed (EOF, peer gone, read error)
	endContext                 // ctx was cancelled
	endShutdown                // Server.Shutdown
	endWrite                   // a write failed (the peer is unreachable)
	endExpired                 // the opener's credential expired
	endRevoked                 // the opener's credential was revoked
)

// reason is the WebSocket close reason of an end caused by the
// credential.
func (e connEnd) reason() string {
	if e == endRevoked {
		return reasonRevoked
	}
	return reasonExpired
}

// serveConn serves one connection until its input ends, ctx is cancelled,
// the server shuts down or the credential of the principal that opened it
// (ctx's) expires or is revoked. It returns only after every call it
// started has finished; on any end but endInput and endShutdown those
// calls are cancelled first, and on shutdown [Server.Shutdown] cancels
// them when its deadline passes.
func (s *Server) serveConn(ctx context.Context, cfg *connConfig) connEnd {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	who := s.principalOf(ctx)
	cred := watchCredential(&who)
	defer cred.stop()
	sess := s.newSession(cfg.transport, "", who.ID)
	// A connection is a session without an id on the wire; handlers still
	// need one to keep state per session.
	sess.key = rand.Text()
	s.observeSession(cfg.transport, 1)
	defer s.observeSession(cfg.transport, -1)
	sc := &scope{transport: cfg.transport, out: cfg.out}

	l := newListener()
	s.addListener(l)
	defer s.removeListener(l)

	var wg sync.WaitGroup
	abort := func() {
		sess.cancelAll()
		cancel()
		wg.Wait()
	}
	for {
		select {
		case msg, ok := <-cfg.in:
			if !ok {
				wg.Wait()
				return endInput
			}
			if who.expired(time.Now()) {
				// The timer may not have fired yet: nothing read after
				// the expiry is served.
				abort()
				return endExpired
			}
			s.connMessage(ctx, sess, sc, &wg, msg)
		case <-l.kick:
			if sess.negotiated() != "" {
				_ = cfg.out.send(listChangedMsg)
			}
		case <-l.resources:
			if sess.negotiated() != "" {
				_ = cfg.out.send(resourceListChangedMsg)
			}
		case <-cred.expired:
			abort()
			return endExpired
		case <-cred.revoked:
			abort()
			return endRevoked
		case <-ctx.Done():
			abort()
			return endContext
		case <-s.done:
			s.drainConn(ctx, sess, sc, cfg, &wg)
			return endShutdown
		}
	}
}

// drainConn waits, during Shutdown, for the connection's calls to finish
// (Shutdown cancels them when its deadline passes; ctx's end, at once).
// Messages still arriving meanwhile are answered (requests with "server
// is shutting down"; notifications/cancelled still cancels); the end of
// the input lets the calls finish, as outside the drain.
func (s *Server) drainConn(ctx context.Context, sess *session, sc *scope, cfg *connConfig, wg *sync.WaitGroup) {
	idle := make(chan struct{})
	go func() {
		wg.Wait()
		close(idle)
	}()
	var late sync.WaitGroup // a fresh group: wg may not grow while waited on
	defer late.Wait()
	in := cfg.in
	for {
		select {
		case <-idle:
			return
		case msg, ok := <-in:
			if !ok {
				in = nil
				continue
			}
			s.connMessage(ctx, sess, sc, &late, msg)
		case <-ctx.Done():
			sess.cancelAll()
			<-idle
			return
		}
	}
}

var listChangedMsg = []byte(notificationHead + notificationToolsListChanged + `"}`)

// connMessage handles one inbound message: synchronously up to registering
// a request (so a notifications/cancelled read next always finds it), then
// concurrently, so a slow tool call never holds up ping or cancellation.
// msg must not be reused by the caller: the request aliases it while it
// runs.
func (s *Server) connMessage(ctx context.Context, sess *session, sc *scope, wg *sync.WaitGroup, msg []byte) {
	msg = bytes.TrimSpace(msg)
	out := sc.out
	write := func(r reply, bp *[]byte) {
		if r.body != nil {
			sc.backlog.hold()
			_ = out.send(r.body)
			sc.backlog.release()
			*bp = r.body
		}
		putBuf(bp)
	}
	if isBatch(msg) {
		bp := getBuf()
		if !allowsBatch(sess.negotiated()) {
			write(reply{body: appendError(*bp, nil, errorf(CodeInvalidRequest, "batches are not allowed at this protocol version"))}, bp)
			return
		}
		wg.Go(func() { write(s.handleBatch(ctx, sess, sc, msg, *bp), bp) })
		return
	}
	m := new(message)
	if !decodeMessage(msg, m) {
		bp := getBuf()
		write(reply{body: appendError(*bp, nil, errorf(CodeParseError, "parse error"))}, bp)
		return
	}
	s.trace.in(sc, sess, m)
	bp := getBuf()
	cctx, c, r, done := s.accept(ctx, sess, m, *bp)
	if done {
		s.trace.out(sc, sess, m, r.body, nil)
		write(r, bp)
		return
	}
	wg.Go(func() {
		r := s.finish(cctx, sess, sc, m, c, *bp)
		s.trace.out(sc, sess, m, r.body, c)
		write(r, bp)
	})
}

// maxReplyBacklog bounds the answers of one WebSocket or legacy SSE
// session that are ready but not yet written (see replyBacklog). A
// client that reads has a few at most; as many as a session's default
// MaxConcurrentCalls, all ending at once, hold its next message only as
// long as their writes take.
const maxReplyBacklog = 64

// replyBacklog counts a session's answers that wait for its stream, and
// makes the next message wait while maxReplyBacklog of them do. A call's
// answer is written after its slot of MaxConcurrentCalls and MaxInFlight
// is given back, so without it a client that keeps sending calls and
// never reads would leave one goroutine per call, each holding its
// request and its answer, until the write deadline drops the session:
// as many as it could send meanwhile. With it, the WebSocket stops
// reading (the client's writes block, as TCP's flow control does) and a
// POST waits, so what one session holds is bounded by what it may have
// in flight and waiting. stdio does not wait: its output has no write
// deadline to end the wait, and a client may write all its requests
// before it reads.
type replyBacklog struct {
	mu    sync.Mutex
	n     int
	freed chan struct{} // closed when n falls below the bound; nil when nobody waits
}

// wait returns once fewer than maxReplyBacklog answers wait. Each
// waits only for its own write, which its deadline bounds. b may be nil
// (no bound).
func (b *replyBacklog) wait() {
	if b == nil {
		return
	}
	b.mu.Lock()
	for b.n >= maxReplyBacklog {
		if b.freed == nil {
			b.freed = make(chan struct{})
		}
		freed := b.freed
		b.mu.Unlock()
		<-freed
		b.mu.Lock()
	}
	b.mu.Unlock()
}

// hold counts an answer about to be written, until release.
func (b *replyBacklog) hold() {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.n++
	b.mu.Unlock()
}

func (b *replyBacklog) release() {
	if b == nil {
		return
	}
	b.mu.Lock()
	if b.n--; b.n < maxReplyBacklog && b.freed != nil {
		close(b.freed)
		b.freed = nil
	}
	b.mu.Unlock()
}

// repeat calls f every interval, counted from its last return, until
// stop or until f reports false: the keepalive (WebSocket ping, legacy
// SSE comment) of a connection that keeps no goroutine of its own, whose
// failure ends the connection.
type repeat struct {
	mu      sync.Mutex
	t       *time.Timer
	stopped bool
}

func every(interval time.Duration, f func() bool) *repeat {
	r := new(repeat)
	// t is set under the lock its callback reads it under: an interval
	// that runs out before AfterFunc returns still finds it.
	r.mu.Lock()
	defer r.mu.Unlock()
	r.t = time.AfterFunc(interval, func() {
		if !f() {
			return
		}
		r.mu.Lock()
		if !r.stopped {
			r.t.Reset(interval)
		}
		r.mu.Unlock()
	})
	return r
}

// stop ends the calls: none starts after it returns.
func (r *repeat) stop() {
	r.mu.Lock()
	r.stopped = true
	r.t.Stop()
	r.mu.Unlock()
}

// connEnding is how a connection that keeps no goroutine of its own
// (WebSocket, legacy SSE) ends, as serveConn's loop decides it for stdio:
// why (the first reason stays), whether Shutdown lets its calls finish,
// and those calls. What ends it (a timer, a callback, Shutdown's drain)
// calls end, which wakes whoever waits for the end; that one calls over
// and then settle.
type connEnding struct {
	wake    func()        // called once, under mu, when the end is set
	drained chan struct{} // closed when a Shutdown's drain is over

	mu       sync.Mutex // held while a message starts a call, and by the end
	wg, late sync.WaitGroup
	set      bool    // why is set: the connection is ending
	why      connEnd // meaningful when set
	draining bool    // Shutdown: calls may finish; later ones join late
	done     bool    // over was called: nothing more is set
}

func newConnEnding(wake func()) *connEnding {
	return &connEnding{wake: wake, drained: make(chan struct{})}
}

// end records why the connection ends and wakes whoever waits for it.
func (e *connEnding) end(why connEnd) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.set || e.done {
		return
	}
	e.set, e.why = true, why
	e.wake()
}

// group is the group a call started now joins: wg, or late while
// draining, since wg may not grow while drain waits on it. mu is held.
func (e *connEnding) group() *sync.WaitGroup {
	if e.draining {
		return &e.late
	}
	return &e.wg
}

// drain runs at Shutdown: the calls in flight may finish (Shutdown
// cancels them when its deadline passes) while messages are still
// served, as on every connection, then the connection ends.
func (e *connEnding) drain() {
	defer close(e.drained)
	e.mu.Lock()
	if e.done || e.set {
		e.mu.Unlock()
		return
	}
	e.draining = true
	e.mu.Unlock()
	e.wg.Wait()
	e.end(endShutdown)
}

// over marks the connection as ending for good, once whoever waited for
// its end has woken, and reports why it ends (endInput when nothing
// ended it but its peer) and whether it was draining.
func (e *connEnding) over() (end connEnd, draining bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.done = true
	end, draining = e.why, e.draining
	if !e.set {
		end = endInput
	}
	return end, draining
}

// settle waits for the calls of sess after over: cancelled at once (the
// peer left, cannot be written to, or its credential ended: the calls
// have no one to answer), or, when Shutdown drains, finished as the
// drain lets them (the end is then endShutdown). cancel ends the
// connection's context once no call needs it.
func (e *connEnding) settle(sess *session, cancel context.CancelFunc, end connEnd, draining bool) connEnd {
	if !draining {
		sess.cancelAll()
		cancel()
		e.wg.Wait()
		return end
	}
	if end != endShutdown {
		sess.cancelAll()
	}
	<-e.drained
	e.late.Wait()
	cancel()
	return endShutdown
}
