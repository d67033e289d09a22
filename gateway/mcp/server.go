package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// ServerOptions configures a [Server]. A nil *ServerOptions, and every zero
// field, means the default.
type ServerOptions struct {
	// Logger receives faults (handler errors, recovered panics) and
	// protocol anomalies. Default: a logger that discards everything, so
	// the library never writes anywhere on its own (stdout is the stdio
	// transport's wire).
	Logger *slog.Logger
	// Instructions is sent in the initialize and server/discover results
	// to tell the model how to use the server. Default: none.
	Instructions string
	// DiscoverTTL is the ttlMs of server/discover results (2026-07-28): how
	// long a client may reuse the discovery. Default 60s; negative sends 0.
	DiscoverTTL time.Duration
	// MaxConcurrentCalls bounds the requests one session may have in
	// flight at once, on every transport with sessions (stdio, WebSocket,
	// legacy SSE, Streamable HTTP sessions; in the scale-out token mode,
	// per replica). A request beyond it is answered at once with a -32603
	// error naming the limit, and the connection stays open. Stateless
	// 2026-07-28 requests have no session: bound them with the HTTP
	// server. Default DefaultMaxConcurrentCalls; negative means no limit.
	MaxConcurrentCalls int
	// MaxInFlight bounds the requests in flight on the whole server, all
	// sessions and stateless 2026-07-28 requests together, beside the
	// per-session MaxConcurrentCalls: a request beyond it is answered at
	// once with a -32603 error naming the limit. Default
	// DefaultMaxInFlight; negative means no limit.
	MaxInFlight int
	// MaxInFlightPerPrincipal bounds the requests one authenticated
	// principal (a non-empty [Principal].ID) may have in flight, all its
	// sessions and stateless requests together, so that one principal
	// cannot take the slots of MaxInFlight from every other: a request
	// beyond it is answered at once with the same -32603 "server busy"
	// error, saying it is the principal's share. Anonymous requests (no
	// PrincipalOf, which makes every request anonymous, and stdio, whose
	// single user is the process that started the server) are bounded by
	// MaxInFlight alone: without an identity there is nobody to share
	// among. Default: half of MaxInFlight (none when MaxInFlight is
	// none); negative means no per-principal limit.
	MaxInFlightPerPrincipal int
	// FleetSlots, when set, counts MaxInFlightPerPrincipal across the
	// replicas of a fleet as well as in this process: a principal has at
	// most that many requests in flight on all replicas together. Its
	// requests then make one exchange with the fleet's store as they
	// start; while the store is unavailable, only this process's count
	// applies.
	FleetSlots FleetSlots
	// InFlight, when set, is where MaxInFlight is counted, shared with the
	// other Servers given the same one: a process serving several
	// endpoints, each with its own Server (the gateway's toolsets), then
	// admits MaxInFlight requests in all. Nil: each Server counts its own.
	InFlight *InFlight
	// TaskWaitTimeout bounds every task method, and above all
	// tasks/result, which waits for its task to finish: past it the
	// request is answered with a -32603 error saying the task is still
	// working, and the client asks again. A task method also ends, with
	// an error saying so, when the caller's credential expires or is
	// revoked (see [Principal]). The gateway sets its call timeout.
	// Default DefaultTaskWaitTimeout; it cannot be off.
	TaskWaitTimeout time.Duration
	// ListenTimeout bounds one subscriptions/listen stream: at it the
	// stream ends with its complete result, as at shutdown, and the
	// client listens again. It also ends, without a result, when the
	// caller's credential expires or is revoked. Default
	// DefaultListenTimeout; it cannot be off.
	ListenTimeout time.Duration
	// MaxTaskPolls bounds the polls per second (GetTask calls, each a
	// backend's GetOperation in the gateway) that every
	// subscriptions/listen stream together makes to follow the tasks it
	// names; one authenticated principal's streams make at most half of
	// them, and a stream polls one task at a time. See pollbudget.go.
	// Default DefaultMaxTaskPolls; it cannot be off.
	MaxTaskPolls int
	// MaxBatch bounds the messages of one batch (2025-03-26); a larger
	// one gets a single -32600 error and none of it runs. Default
	// DefaultMaxBatch.
	MaxBatch int
	// MaxBatchResponseBytes bounds the response to one batch; past it the
	// client gets a single -32603 error instead. Default
	// DefaultMaxBatchResponseBytes.
	MaxBatchResponseBytes int
	// MaxMessageBytes bounds one stdio line; a longer line is answered
	// with a -32600 error naming the limit and skipped, and the session
	// goes on. (The HTTP transports have their own MaxRequestBytes.)
	// Default DefaultMaxMessageBytes.
	MaxMessageBytes int
	// SessionObserver, when set, is told each time a session that the
	// server holds opens (delta +1) or ends (delta -1), with its transport
	// ("stdio", "websocket", "sse", "streamable-http"), e.g. to keep a
	// sessions gauge. Stateless 2026-07-28 requests and scale-out token
	// sessions hold nothing and are not reported. It must not block.
	SessionObserver func(transport string, delta int)
	// SlowClientObserver, when set, is told (with the transport:
	// "websocket", "sse", "streamable-http") each time a client is dropped
	// because a write to it did not finish within the transport's
	// WriteTimeout: a client that stopped reading. Its WebSocket or legacy
	// SSE session ends, or its Streamable HTTP answer or GET stream is cut;
	// nothing it was sent is queued meanwhile. Once per connection or
	// stream. It must not block.
	SlowClientObserver func(transport string)
	// Trace, when set, receives the protocol trace: every JSON-RPC
	// message in and out, at debug level, with its transport, session, id,
	// method, size and body (see trace.go). Nil, the default, turns it off
	// at the cost of one nil check per message.
	Trace *slog.Logger
	// TraceBodies keeps in the trace the values it otherwise replaces by
	// their size, since they may hold personal data: arguments, tool and
	// task results, resource bodies and task status messages (which
	// carry the operation's metadata); trace.go's traceHidden lists them.
	TraceBodies bool
	// PrincipalOf tells who authenticated an HTTP request, from its
	// context (the front door's middleware has put it there). Sessions
	// are bound to the principal that opens them and connections end when
	// its credential does; see [Principal]. Nil, the default, makes every
	// request anonymous: no session binding, no expiry.
	PrincipalOf func(ctx context.Context) Principal
}

// Server is the MCP protocol engine: it answers JSON-RPC messages from any
// transport using one dispatch path and one Handler. It is safe for
// concurrent use; one Server may serve stdio and HTTP at the same time.
type Server struct {
	impl             Implementation
	h                Handler
	log              *slog.Logger
	trace            *tracer // nil when the protocol trace is off
	instructions     string
	maxCalls         int
	maxInFlight      int // 0: no limit
	inFlight         *InFlight
	maxPerPrincipal  int // 0: no limit
	fleetSlots       FleetSlots
	taskWait         time.Duration
	listenTimeout    time.Duration
	polls            *pollBudgets
	maxBatch         int
	maxBatchResponse int
	maxLine          int
	sessionObs       func(transport string, delta int) // nil: nobody watches
	slowObs          func(transport string)            // nil: nobody watches
	principal        func(ctx context.Context) Principal

	implJSON     []byte // Implementation as JSON, including title
	implJSONOld  []byte // without title, for revisions before 2025-06-18
	serverInfo   []byte // `"_meta":{"io.modelcontextprotocol/serverInfo":...}`
	discoverBody []byte // server/discover result (without _meta)
	caps         []byte // the capabilities object advertised
	capsTasks    []byte // caps with the 2025-11-25 tasks capability; nil without a TaskHandler

	mu    sync.Mutex
	calls map[*call]struct{} // every request in flight, for Shutdown
	// perPrincipal counts the requests in flight of each authenticated
	// principal; a principal with none has no entry.
	perPrincipal map[string]int
	listeners    map[*listener]struct{} // every stream that can receive list_changed
	closing      bool
	done         chan struct{} // closed by Shutdown
	drained      chan struct{} // closed when calls empties during Shutdown
	// onShutdown are the transports' hooks that end their sessions.
	onShutdown []func()
	// taken counts the sessions served on connections taken from net/http
	// (WebSockets, detached legacy SSE and Streamable HTTP GET streams),
	// which http.Server.Shutdown does not wait for; takenIdle are closed
	// when it falls to zero (WaitConnections).
	taken     int
	takenIdle []chan struct{}
}

// holdConn counts a session served on a connection taken from net/http,
// until releaseConn.
func (s *Server) holdConn() {
	s.mu.Lock()
	s.taken++
	s.mu.Unlock()
}

func (s *Server) releaseConn() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.taken--; s.taken == 0 {
		for _, ch := range s.takenIdle {
			close(ch)
		}
		s.takenIdle = nil
	}
}

// WaitConnections waits, after [Server.Shutdown], until the sessions
// served on connections taken from net/http (WebSockets, and legacy SSE
// and Streamable HTTP GET streams over HTTP/1.1) have ended, their last
// replies written and their connections closed, or until ctx ends (then
// it returns ctx's error).
// http.Server.Shutdown does not wait for them: it forgets the connections
// it hands over, so a server that exits after it alone may cut the replies
// of calls that ended during the drain.
func (s *Server) WaitConnections(ctx context.Context) error {
	s.mu.Lock()
	if s.taken == 0 {
		s.mu.Unlock()
		return nil
	}
	idle := make(chan struct{})
	s.takenIdle = append(s.takenIdle, idle)
	s.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// call is one request in flight.
type call struct {
	cancel context.CancelFunc
	// stopDeadline releases the deadline of the caller's token
	// (Principal.TokenExpires); nil when the call has none.
	stopDeadline context.CancelFunc
	// principal is the Principal.ID the request counts against; "" for
	// anonymous requests, which count against MaxInFlight only.
	principal string
	// releaseSlot gives back the principal's fleet-wide slot (FleetSlots);
	// nil when none was taken.
	releaseSlot func()
	// counted: the call is counted in the server's shared InFlight.
	counted bool
	// byClient is set when notifications/cancelled cancelled the call: the
	// spec says a cancelled request gets no response.
	byClient bool // guarded by the owning session's mu
	// req is the CallToolRequest of a tools/call, kept here to save an
	// allocation on the hot path.
	req CallToolRequest
	// sensitiveError is set by the request's goroutine when it answers
	// with a Sensitive error, for the protocol trace, which sees only the
	// encoded reply.
	sensitiveError bool
}

// listener is one outbound stream that wants notifications/tools/list_changed
// (kick) or notifications/resources/list_changed (resources). Each channel
// has capacity 1: changes are coalesced, never queued without bound.
type listener struct {
	kick      chan struct{}
	resources chan struct{}
	// notify, when set, is told instead of the channels (which are then
	// nil), for a stream that keeps no goroutine waiting on them. It is
	// called under Server.mu and must not block.
	notify func(msg []byte, resourceList bool)
	// shutdown, when set, is called when Shutdown begins (at once if it
	// has), under Server.mu: it must not block.
	shutdown func()
}

// coalescer writes one stream's list_changed notifications from a
// goroutine that runs only while some are pending, so that no goroutine of
// the stream's waits for them. They go out in the order they came, and
// one of a kind still pending absorbs the next of that kind, as a
// listener's channel of one does.
type coalescer struct {
	write func(msg []byte) // set before the first post

	mu      sync.Mutex
	pending []bool // kinds in order: resources list (true) or tools list
	running bool
}

func (n *coalescer) post(resourceList bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !slices.Contains(n.pending, resourceList) {
		n.pending = append(n.pending, resourceList)
	}
	if n.running {
		return
	}
	n.running = true
	go n.run()
}

func (n *coalescer) run() {
	for {
		n.mu.Lock()
		if len(n.pending) == 0 {
			n.running = false
			n.mu.Unlock()
			return
		}
		resourceList := n.pending[0]
		n.pending = append(n.pending[:0], n.pending[1:]...)
		n.mu.Unlock()
		if resourceList {
			n.write(resourceListChangedMsg)
		} else {
			n.write(listChangedMsg)
		}
	}
}

// setCallbacks switches l, registered with channels, to callbacks, and
// reports whether Shutdown has begun (shutdown is then not called).
// A notification its channels hold is the caller's to deliver.
func (s *Server) setCallbacks(l *listener, notify func(msg []byte, resourceList bool), shutdown func()) (closing bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l.notify, l.shutdown = notify, shutdown
	return s.closing
}

func newListener() *listener {
	return &listener{kick: make(chan struct{}, 1), resources: make(chan struct{}, 1)}
}

// NewServer returns a server for impl whose tools and calls come from h.
func NewServer(impl Implementation, h Handler, opts *ServerOptions) *Server {
	var o ServerOptions
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.DiscoverTTL == 0 {
		o.DiscoverTTL = time.Minute
	}
	switch {
	case o.MaxInFlight == 0:
		o.MaxInFlight = DefaultMaxInFlight
	case o.MaxInFlight < 0:
		o.MaxInFlight = 0
	}
	switch {
	case o.MaxInFlightPerPrincipal == 0 && o.MaxInFlight > 0:
		o.MaxInFlightPerPrincipal = max(1, o.MaxInFlight/DefaultPrincipalShare)
	case o.MaxInFlightPerPrincipal < 0:
		o.MaxInFlightPerPrincipal = 0
	}
	orDefault(&o.TaskWaitTimeout, DefaultTaskWaitTimeout)
	orDefault(&o.ListenTimeout, DefaultListenTimeout)
	orDefault(&o.MaxTaskPolls, DefaultMaxTaskPolls)
	orDefault(&o.MaxBatch, DefaultMaxBatch)
	orDefault(&o.MaxBatchResponseBytes, DefaultMaxBatchResponseBytes)
	orDefault(&o.MaxMessageBytes, DefaultMaxMessageBytes)
	switch {
	case o.MaxConcurrentCalls == 0:
		o.MaxConcurrentCalls = DefaultMaxConcurrentCalls
	case o.MaxConcurrentCalls < 0:
		o.MaxConcurrentCalls = 0
	}
	s := &Server{
		impl:             impl,
		h:                h,
		log:              o.Logger,
		trace:            newTracer(o.Trace, o.TraceBodies),
		instructions:     o.Instructions,
		maxCalls:         o.MaxConcurrentCalls,
		maxInFlight:      o.MaxInFlight,
		inFlight:         o.InFlight,
		maxPerPrincipal:  o.MaxInFlightPerPrincipal,
		fleetSlots:       o.FleetSlots,
		taskWait:         o.TaskWaitTimeout,
		listenTimeout:    o.ListenTimeout,
		polls:            newPollBudgets(o.MaxTaskPolls),
		maxBatch:         o.MaxBatch,
		maxBatchResponse: o.MaxBatchResponseBytes,
		maxLine:          o.MaxMessageBytes,
		sessionObs:       o.SessionObserver,
		slowObs:          o.SlowClientObserver,
		principal:        o.PrincipalOf,
		calls:            make(map[*call]struct{}),
		perPrincipal:     make(map[string]int),
		listeners:        make(map[*listener]struct{}),
		done:             make(chan struct{}),
	}
	s.implJSON, _ = json.Marshal(impl)
	old := impl
	old.Title = ""
	s.implJSONOld, _ = json.Marshal(old)
	s.serverInfo = append(append([]byte(`"_meta":{"io.modelcontextprotocol/serverInfo":`), s.implJSON...), '}')

	b := []byte(`{"supportedVersions":[`)
	for i, v := range supportedVersions {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, v)
	}
	b = append(b, `],"capabilities":`...)
	s.caps = capabilitiesJSON
	if _, ok := h.(ResourceHandler); ok {
		s.caps = capabilitiesWithResources
	}
	if _, ok := h.(TaskHandler); ok {
		tc := tasksCapability
		if _, ok := h.(TaskLister); ok {
			tc = listingTasksCapability
		}
		s.capsTasks = append(append(append([]byte(nil), s.caps[:len(s.caps)-1]...), ','), tc+"}"...)
		// At 2026-07-28 tasks are the extension's.
		b = append(b, s.caps[:len(s.caps)-1]...)
		b = append(b, `,"extensions":{"`+TasksExtension+`":{}}}`...)
	} else {
		b = append(b, s.caps...)
	}
	if s.instructions != "" {
		b = append(b, `,"instructions":`...)
		b = appendString(b, s.instructions)
	}
	ttl := max(o.DiscoverTTL.Milliseconds(), 0)
	b = append(b, fmt.Sprintf(`,"ttlMs":%d,"cacheScope":"public","resultType":"complete"}`, ttl)...)
	s.discoverBody = b
	return s
}

// capabilitiesJSON is what the server advertises: tools, with list change
// notifications (on the session stream for handshake revisions, through
// subscriptions/listen at 2026-07-28). Nothing else is implemented.
var capabilitiesJSON = []byte(`{"tools":{"listChanged":true}}`)

// capabilitiesWithResources adds resources (with list change notifications,
// no subscriptions) for a Handler that is a ResourceHandler.
var capabilitiesWithResources = []byte(`{"tools":{"listChanged":true},"resources":{"listChanged":true}}`)

// NotifyToolListChanged tells every live stream that can receive it (the
// stdio connection, the GET stream of a Streamable HTTP session, a
// 2026-07-28 subscriptions/listen stream that opted in) that tools/list
// changed. It never blocks: notifications are coalesced per stream, and a
// session without an open stream is not told (it will list again).
func (s *Server) NotifyToolListChanged() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for l := range s.listeners {
		if l.notify != nil {
			l.notify(listChangedMsg, false)
			continue
		}
		select {
		case l.kick <- struct{}{}:
		default:
		}
	}
}

// NotificationStreams reports how many streams are open now that would
// receive a list_changed notification: what a caller about to change the
// tools waits on when the notification must not be missed, as the tests
// do instead of sleeping.
func (s *Server) NotificationStreams() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.listeners)
}

func (s *Server) addListener(l *listener) {
	s.mu.Lock()
	s.listeners[l] = struct{}{}
	if s.closing && l.shutdown != nil {
		l.shutdown()
	}
	s.mu.Unlock()
}

func (s *Server) removeListener(l *listener) {
	s.mu.Lock()
	delete(s.listeners, l)
	s.mu.Unlock()
}

// Shutdown stops the server: streams that only wait for notifications (GET
// streams, subscriptions/listen) end at once, new requests are refused, and
// requests in flight may finish until ctx expires; then they are cancelled
// and Shutdown returns ctx's error. Transports return as their sessions end.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	var hooks []func()
	if !s.closing {
		s.closing = true
		close(s.done)
		for l := range s.listeners {
			if l.shutdown != nil {
				l.shutdown()
			}
		}
		hooks = s.onShutdown
	}
	var wait chan struct{}
	if len(s.calls) > 0 {
		if s.drained == nil {
			s.drained = make(chan struct{})
		}
		wait = s.drained
	}
	s.mu.Unlock()
	for _, f := range hooks {
		f()
	}
	if wait == nil {
		return nil
	}
	select {
	case <-wait:
		return nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	for c := range s.calls {
		c.cancel()
	}
	s.mu.Unlock()
	return fmt.Errorf("mcp: shutdown: %w", ctx.Err())
}

// startCall registers a request in flight: in the session (so
// notifications/cancelled can find it by id) and in the server (so Shutdown
// can wait for it). It fails for a duplicate id, a closing server, a full
// server, or a principal that holds its share of it.
func (s *Server) startCall(ctx context.Context, sess *session, id json.RawMessage) (context.Context, *call, *Error) {
	// The request's principal is looked up once: its ID is what the call
	// counts against (a session's owner, for a call in a session, which
	// another principal does not find), and its token's expiry ends the
	// call (the token of this request, which may be a refreshed one).
	var who string
	var end time.Time
	var revoked <-chan struct{}
	if s.principal != nil {
		p := s.principal(ctx)
		who, end, revoked = p.ID, p.callEnd(), p.Revoked
	}
	if sess != nil {
		who = sess.owner
	}
	ctx, cancel := context.WithCancel(ctx)
	c := &call{cancel: cancel, principal: who}
	if !end.IsZero() {
		// No call outlives its caller's token, on any transport: a
		// POST's call (its stream included) as much as a WebSocket's,
		// which its connection's end would cancel anyway.
		ctx, c.stopDeadline = context.WithDeadlineCause(ctx, end, errCredentialExpired)
	}
	if revoked != nil {
		// Nor its revocation: a POST's call ends as a WebSocket's does.
		// The watcher ends with the call (c.cancel ends ctx).
		var revoke context.CancelCauseFunc
		ctx, revoke = context.WithCancelCause(ctx)
		go func() {
			select {
			case <-revoked:
				revoke(errCredentialRevoked)
			case <-ctx.Done():
			}
		}()
	}
	if sess != nil {
		if e := sess.addCall(id, c); e != nil {
			cancel()
			return nil, nil, e
		}
	}
	s.mu.Lock()
	var e *Error
	switch {
	case s.closing:
		e = errorf(CodeInternalError, "server is shutting down")
	case who != "" && s.maxPerPrincipal > 0 && s.perPrincipal[who] >= s.maxPerPrincipal:
		e = errorf(CodeInternalError, "server busy: this principal has %d requests in flight, its share of the server's requests; retry when one of them ends", s.maxPerPrincipal)
	// Last: admitting counts the call in a shared InFlight.
	case s.maxInFlight > 0 && !s.admit(c):
		e = errorf(CodeInternalError, "server busy: %d requests in flight, the limit; retry shortly", s.maxInFlight)
	}
	if e != nil {
		s.mu.Unlock()
		if sess != nil {
			sess.removeCall(id, c)
		}
		cancel()
		return nil, nil, e
	}
	s.calls[c] = struct{}{}
	if who != "" {
		s.perPrincipal[who]++
	}
	s.mu.Unlock()
	if s.fleetSlots != nil && who != "" && s.maxPerPrincipal > 0 {
		release, err := s.fleetSlots.AcquireSlot(ctx, who, s.maxPerPrincipal)
		switch {
		case errors.Is(err, ErrNoSlot):
			s.endCall(sess, id, c)
			return nil, nil, errorf(CodeInternalError, "server busy: this principal has %d requests in flight across the gateway's endpoints and replicas, its share; retry when one of them ends", s.maxPerPrincipal)
		case err != nil:
			// The store is away: this process's count still holds.
			s.log.Debug("mcp: fleet-wide in-flight count unavailable", "err", err)
		default:
			c.releaseSlot = release
		}
	}
	return ctx, c, nil
}

// InFlight counts the requests in flight of several Servers (see
// ServerOptions.InFlight). The zero value is ready to use.
type InFlight struct{ n atomic.Int64 }

// admit reports whether c fits within MaxInFlight, and counts it in the
// shared InFlight when there is one. Called with s.mu held.
func (s *Server) admit(c *call) bool {
	if s.inFlight == nil {
		return len(s.calls) < s.maxInFlight
	}
	for {
		n := s.inFlight.n.Load()
		if n >= int64(s.maxInFlight) {
			return false
		}
		if s.inFlight.n.CompareAndSwap(n, n+1) {
			c.counted = true
			return true
		}
	}
}

// endCall undoes startCall and reports whether the client cancelled the
// call (then it gets no response).
func (s *Server) endCall(sess *session, id json.RawMessage, c *call) (cancelledByClient bool) {
	c.cancel()
	if c.stopDeadline != nil {
		c.stopDeadline()
	}
	if c.releaseSlot != nil {
		c.releaseSlot()
	}
	if sess != nil {
		cancelledByClient = sess.removeCall(id, c)
	}
	s.mu.Lock()
	delete(s.calls, c)
	if c.counted {
		s.inFlight.n.Add(-1)
	}
	if c.principal != "" {
		if n := s.perPrincipal[c.principal] - 1; n > 0 {
			s.perPrincipal[c.principal] = n
		} else {
			delete(s.perPrincipal, c.principal)
		}
	}
	if len(s.calls) == 0 && s.drained != nil {
		close(s.drained)
		s.drained = nil
	}
	s.mu.Unlock()
	return cancelledByClient
}

// isClosing reports whether Shutdown has begun; transports refuse new
// connections then.
func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// observeSession reports a held session opening (+1) or ending (-1).
// observeWriteFailure tells SlowClientObserver about a write to a client
// on transport that failed with err, when it failed because the client did
// not read within the write deadline. s may be nil.
func (s *Server) observeWriteFailure(transport string, err error) {
	if s == nil || s.slowObs == nil {
		return
	}
	// A write blocked past its deadline fails with os.ErrDeadlineExceeded;
	// gorilla/websocket's control frames waiting for the blocked writer
	// fail with its own net.Error whose Timeout is true.
	var ne net.Error
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		s.slowObs(transport)
	}
}

func (s *Server) observeSession(transport string, delta int) {
	if s.sessionObs != nil {
		s.sessionObs(transport, delta)
	}
}
