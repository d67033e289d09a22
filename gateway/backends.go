package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
	"github.com/grpc-mcp-gateway/gateway/gateway/exchange"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/compiled"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/searchmode"
)

// Defaults of Options.Catalog.Refresh and Options.Catalog.DiscoveryTimeout.
const (
	DefaultRefresh          = 30 * time.Second
	DefaultDiscoveryTimeout = 15 * time.Second
)

// Retry backoff of a backend whose discovery failed: doubling from
// retryMin up to retryMax (or the refresh interval, if shorter), with
// ±20% jitter so that gateways restarted together do not retry in step.
const (
	retryMin = 500 * time.Millisecond
	retryMax = 30 * time.Second
)

// Backend is one gRPC server the gateway fronts. Everything that may
// differ between backends lives here rather than in Options, so the
// config file (per-backend TLS, metadata, timeouts) can add fields without
// changing the API's shape: the connection (and with it TLS) is the
// caller's, made with backendconn.Dial.
type Backend struct {
	// Name identifies the backend in logs, errors, /readyz, resource URIs
	// (grpc://NAME/package.Service) and, where two backends' tool names
	// collide, as their prefix. It must satisfy ValidBackendName. A lone
	// backend may leave it empty: it is then named after Address.
	Name string
	// Address is HOST:PORT, for messages.
	Address string
	// Conn carries the calls and, unless Source says otherwise, server
	// reflection. When it is a *grpc.ClientConn (anything with GetState,
	// WaitForStateChange and Connect) the gateway watches its state for
	// /readyz and to discover again when it comes back after a failure.
	// When it is a *backendconn.Conn the gateway also reports its
	// replicas, retries the calls of methods safe to repeat, and names
	// the message size limit a refused call ran into.
	Conn grpc.ClientConnInterface
	// Source, when set, is the only descriptor source, used as is; Files
	// and NoReflection are then ignored.
	Source descriptors.Source
	// Files, when set, are descriptor files (descriptors.NewDescriptorSetSource
	// or NewProtoSource) for this backend: overlaid on server reflection
	// for their comments, and used instead of it when the backend answers
	// that it has no reflection service.
	Files descriptors.Source
	// NoReflection uses Files alone, never asking the backend.
	NoReflection bool

	// Metadata is added to every call to this backend, after
	// Options.Calls.Metadata (see [ParseMetadata] for the rules on keys and
	// values).
	Metadata metadata.MD
	// CallTimeout and StreamTimeout, when positive, replace Options'
	// deadlines for this backend's unary and streaming calls.
	CallTimeout, StreamTimeout time.Duration
	// Include and Exclude narrow this backend's methods, with the syntax
	// of Options.Catalog.Include; a method is exposed only when it passes both
	// these and Options' filters.
	Include, Exclude []string
	// Methods are per-method settings; for each method the first entry
	// whose Match matches applies, and wins over the backend's timeouts.
	Methods []MethodSettings
	// TokenExchange, when set, gives every call to this backend a token
	// of its own for the caller: the caller's OAuth access token is
	// exchanged for it (RFC 8693) and sent as "authorization: Bearer …",
	// replacing any authorization metadata; the caller's own token never
	// reaches the backend. It needs Options.Auth in OAuth mode. A call
	// whose exchange fails is a tool execution error saying why. The
	// caller owns the Exchanger.
	TokenExchange *exchange.Exchanger
}

// backendNameRE is compiled on first use, not at every start: a gateway
// with one unnamed backend never checks a name.
var backendNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9_-]{1,32}$`) })

// ValidBackendName reports whether name can name a backend: 1 to 32
// characters of [a-z0-9_-], so that it is safe in a tool name prefix, a
// URI host and a metrics label alike.
func ValidBackendName(name string) error {
	if !backendNameRE().MatchString(name) {
		return fmt.Errorf("backend name %q: want 1-32 characters of a-z, 0-9, '_' and '-'", name)
	}
	return nil
}

// stateConn is the part of *grpc.ClientConn that readiness and reconnect
// detection need.
type stateConn interface {
	GetState() connectivity.State
	WaitForStateChange(ctx context.Context, s connectivity.State) bool
	Connect()
}

// managedConn is what the gateway asks of a backend connection made by
// backendconn.Dial beyond carrying calls; it never sees the concrete
// type. backendconn's doc says what each method guarantees, and the one
// rule for the replica observer: it must not call the connection.
type managedConn interface {
	compiled.Limits
	// Replicas counts the addresses the target resolves to and those
	// serving, for /readyz.
	Replicas() (total, serving int)
	// ObserveReplicas makes f receive those counts now and after every
	// change, for the metrics.
	ObserveReplicas(f func(total, serving int))
	// SetDiscovered gives the connection what a discovery found: the
	// methods safe to repeat ("/package.Service/Method"), which it
	// retries, and whether the backend serves grpc.health.v1.Health.
	SetDiscovered(retried []string, health bool)
	// ResolveNow resolves the target again, to find new replicas.
	ResolveNow()
	// RetriesSafeMethods reports whether the methods given to
	// SetDiscovered are retried, and so whether a call's attempts are
	// worth counting (backendconn.CountAttempts).
	RetriesSafeMethods() bool
}

// Connections made by backendconn.Dial are what managedConn describes.
var _ managedConn = (*backendconn.Conn)(nil)

// backendState is one backend and what the gateway knows of it.
type backendState struct {
	b      Backend
	source descriptors.Source
	conn   stateConn // nil when Conn has no connectivity state
	// managed is Conn when it was made by backendconn.Dial, else nil.
	managed managedConn
	// settings are b's per-backend filters, timeouts and metadata,
	// compiled once (settings.go).
	settings *backendSettings
	// kick asks the backend's loop to discover now (the connection came
	// back); capacity 1, so reconnects coalesce.
	kick chan struct{}
	// ask asks watchAnswers whether the connection still answers (a
	// call timed out); capacity 1, so timeouts coalesce.
	ask chan struct{}

	mu sync.Mutex
	// tools is the last successful discovery, compiled; nil before one.
	tools   *compiled.Backend
	lastErr error // of the last attempt; nil after a success
	state   connectivity.State
	// unanswered says why the backend is not ready though its
	// connection is (answers.go); empty while it answers.
	unanswered string
}

func (b *backendState) snapshot() (tools *compiled.Backend, lastErr error, state connectivity.State, unanswered string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tools, b.lastErr, b.state, b.unanswered
}

// initBackends validates backends and prepares their descriptor sources.
func (g *Gateway) initBackends(backends []Backend) error {
	if len(backends) == 0 {
		return errors.New("no backends")
	}
	seen := make(map[string]bool, len(backends))
	for _, b := range backends {
		if b.Name == "" && len(backends) == 1 {
			b.Name = b.Address
			if b.Name == "" {
				b.Name = "backend"
			}
		} else if err := ValidBackendName(b.Name); err != nil {
			return err
		}
		if seen[b.Name] {
			return fmt.Errorf("backend name %q is used twice", b.Name)
		}
		seen[b.Name] = true
		if b.Conn == nil && (b.Source == nil || b.NoReflection) {
			return fmt.Errorf("backend %s: no connection", b.Name)
		}
		settings, err := newBackendSettings(b)
		if err != nil {
			return fmt.Errorf("backend %s: %w", b.Name, err)
		}
		if b.TokenExchange != nil && !g.opts.Auth.OAuth() {
			return fmt.Errorf("backend %s: TokenExchange needs Options.Auth in OAuth mode: it exchanges the caller's OAuth access token", b.Name)
		}
		bs := &backendState{b: b, kick: make(chan struct{}, 1), ask: make(chan struct{}, 1), source: b.Source, settings: settings}
		if sc, ok := b.Conn.(stateConn); ok {
			bs.conn = sc
			bs.state = sc.GetState()
		}
		if mc, ok := b.Conn.(managedConn); ok {
			bs.managed = mc
			if g.opts.Telemetry.Metrics != nil {
				name, m := b.Name, g.opts.Telemetry.Metrics
				mc.ObserveReplicas(func(total, serving int) { m.SetBackendReplicas(name, total, serving) })
			}
		}
		if bs.source == nil {
			src, err := g.backendSource(b)
			if err != nil {
				return fmt.Errorf("backend %s: %w", b.Name, err)
			}
			bs.source = src
		}
		g.backends = append(g.backends, bs)
	}
	return nil
}

// backendSource is a backend's descriptor source from its settings:
// reflection, reflection with Files' comments (falling back to Files when
// the backend has no reflection), or Files alone.
func (g *Gateway) backendSource(b Backend) (descriptors.Source, error) {
	if b.NoReflection {
		if b.Files == nil {
			return nil, errors.New("reflection disabled and no descriptor files given")
		}
		return b.Files, nil
	}
	refl := descriptors.NewServerReflection(b.Conn, &descriptors.ServerReflectionOptions{Logger: g.opts.Logger})
	if b.Files == nil {
		return refl, nil
	}
	return &fallbackSource{
		primary:  descriptors.Overlay(refl, b.Files, &descriptors.OverlayOptions{Logger: g.opts.Logger}),
		files:    b.Files,
		backend:  b.Name,
		gateway:  g,
		announce: &sync.Once{},
	}, nil
}

// fallbackSource is server reflection overlaid with descriptor files,
// falling back to the files alone when the backend has no reflection: the
// operator who gave files has said what the API is, so an Unimplemented
// reflection service is no reason to serve nothing.
type fallbackSource struct {
	primary, files descriptors.Source
	backend        string
	gateway        *Gateway
	announce       *sync.Once
}

func (s *fallbackSource) Discover(ctx context.Context) (*descriptors.Result, error) {
	res, err := s.primary.Discover(ctx)
	if !errors.Is(err, descriptors.ErrReflectionNotSupported) {
		return res, err
	}
	s.announce.Do(func() {
		s.gateway.opts.Logger.Warn("backend does not serve server reflection: using the descriptor files alone", "backend", s.backend)
	})
	return s.files.Discover(ctx)
}

// start runs the first discovery of every backend, concurrently, within
// ctx, assembles the first catalog, and starts the background loops.
func (g *Gateway) start(ctx context.Context) error {
	errs := make([]error, len(g.backends))
	var wg sync.WaitGroup
	for i, b := range g.backends {
		wg.Go(func() { _, errs[i] = g.discoverBackend(ctx, b) })
	}
	wg.Wait()
	for _, err := range errs {
		if errors.Is(err, ErrToolOverride) {
			// The operator's mistake, not the backend's: no retry mends it.
			return err
		}
	}
	if g.opts.Catalog.RequireBackends {
		if err := errors.Join(errs...); err != nil {
			return err
		}
	}
	for i, err := range errs {
		if err != nil {
			g.opts.Logger.Warn("backend not available at start; serving without its tools and retrying in the background",
				"backend", g.backends[i].b.Name, "err", err.Error())
		}
	}
	if _, err := g.rebuild(); err != nil {
		return err
	}

	lctx, cancel := context.WithCancel(context.Background())
	g.stop = cancel
	for _, b := range g.backends {
		g.wg.Go(func() { g.runBackend(lctx, b) })
		if b.b.Conn != nil {
			// The series exists, at 0, before anything can fail.
			g.opts.Telemetry.Metrics.SetBackendUnanswered(b.b.Name, false)
			g.wg.Go(func() { g.watchAnswers(lctx, b) })
		}
		if b.conn != nil {
			g.wg.Go(func() { g.watchConn(lctx, b) })
		}
	}
	if g.semantic != nil {
		g.wg.Go(func() {
			g.semantic.Run(lctx, func() []*searchmode.Catalog { return g.catalog.Load().searchCatalogs() })
		})
		g.semantic.Kick()
	}
	return nil
}

// Close stops background discovery and waits for it; it is idempotent
// and does not close the backends' connections, which are the caller's.
// Shutdown calls it.
func (g *Gateway) Close() {
	g.stopOnce.Do(func() {
		if g.stop != nil {
			g.stop()
		}
		if g.closed != nil {
			close(g.closed)
		}
	})
	g.wg.Wait()
}

// BeginShutdown marks the gateway not ready (/readyz answers 503) while it
// keeps serving, so a load balancer can stop sending new clients before
// the process stops. Call it on SIGTERM; Shutdown calls it too.
func (g *Gateway) BeginShutdown() { g.draining.Store(true) }

// runBackend discovers b again on every refresh tick, when its connection
// comes back (watchConn), and, after a failure, with backoff until it
// succeeds. A failed discovery keeps the backend's last known tools: a
// backend that is away answers calls with UNAVAILABLE, which the model
// sees as a tool error, and that is better than tools that come and go.
func (g *Gateway) runBackend(ctx context.Context, b *backendState) {
	var tick <-chan time.Time
	if g.opts.Catalog.Refresh > 0 {
		t := time.NewTicker(g.opts.Catalog.Refresh)
		defer t.Stop()
		tick = t.C
	}
	failures := 0
	if _, err, _, _ := b.snapshot(); err != nil {
		failures = 1
	}
	retry := time.NewTimer(0)
	defer retry.Stop()
	for {
		var retryC <-chan time.Time
		if failures > 0 {
			retry.Reset(g.backoff(failures))
			retryC = retry.C
		}
		select {
		case <-ctx.Done():
			return
		case <-tick:
		case <-retryC:
		case <-b.kick:
		}
		retry.Stop()
		// A refresh looks for new replicas as well as a new API.
		if b.managed != nil {
			b.managed.ResolveNow()
		}
		dctx, cancel := context.WithTimeout(ctx, g.opts.Catalog.DiscoveryTimeout)
		changed, err := g.discoverBackend(dctx, b)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			if failures == 0 {
				g.opts.Logger.Warn("backend discovery failed; keeping its last known tools and retrying", "backend", b.b.Name, "err", err.Error())
			} else {
				g.opts.Logger.Debug("backend discovery failed again", "backend", b.b.Name, "attempt", failures+1, "err", err.Error())
			}
			failures++
			continue
		}
		if failures > 0 {
			g.opts.Logger.Info("backend discovered again", "backend", b.b.Name, "after_failures", failures)
		}
		failures = 0
		// A backend whose last rebuild failed is not listed yet, though
		// its descriptors are unchanged: build again, so it is not left
		// out (and /readyz 503) until its API changes.
		if changed || !g.listed(b) {
			if _, err := g.rebuild(); err != nil {
				g.opts.Logger.Error("rebuilding the tool catalog failed; keeping the current one", "err", err)
			}
		}
	}
}

// listed reports whether the catalog being served holds b's tools.
func (g *Gateway) listed(b *backendState) bool {
	c := g.catalog.Load()
	return c != nil && c.listed[b.b.Name]
}

func (g *Gateway) backoff(failures int) time.Duration {
	limit := retryMax
	if g.opts.Catalog.Refresh > 0 && g.opts.Catalog.Refresh < limit {
		limit = g.opts.Catalog.Refresh
	}
	d := retryMin << min(failures-1, 16)
	d = min(d, limit)
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// watchConn follows b's connection state for /readyz and kicks a discovery
// when the connection becomes READY after a failure (a redeployed or
// restarted backend may serve a different API). It keeps an IDLE
// connection connecting: grpc-go parks a channel whose backend went away in
// IDLE until a call comes, which would hide both the outage and the return.
func (g *Gateway) watchConn(ctx context.Context, b *backendState) {
	sawFailure := false
	for {
		s := b.conn.GetState()
		b.mu.Lock()
		b.state = s
		b.mu.Unlock()
		g.opts.Telemetry.Metrics.SetBackendState(b.b.Name, s)
		switch s {
		case connectivity.Idle:
			b.conn.Connect()
		case connectivity.TransientFailure:
			sawFailure = true
		case connectivity.Ready:
			if sawFailure {
				sawFailure = false
				g.opts.Logger.Info("backend connection is back; discovering it again", "backend", b.b.Name)
				select {
				case b.kick <- struct{}{}:
				default:
				}
			}
		case connectivity.Shutdown:
			return
		}
		if !b.conn.WaitForStateChange(ctx, s) {
			return
		}
		if s == connectivity.Ready {
			sawFailure = true // the connection dropped, whatever comes next
		}
	}
}

// discoveryError phrases a discovery failure as one line an operator can
// act on.
func discoveryError(name, address string, err error) error {
	var slow *descriptors.CompileTimeoutError
	switch {
	case errors.As(err, &slow):
		// Checked before the deadline's usual meaning: the backend may
		// be READY while its .proto files are still compiling.
		return &OptionError{Option: "Options.Catalog.DiscoveryTimeout", Err: fmt.Errorf("backend %s: its descriptor files, not the backend, took longer than the discovery's deadline: raise it, or give a descriptor set built by buf or protoc, which needs no compiling: %w", name, err)}
	case errors.Is(err, descriptors.ErrReflectionNotSupported):
		return fmt.Errorf("backend %s does not serve gRPC server reflection (grpc.reflection.v1 or v1alpha): enable it on the server (grpc-go: descriptors.Register(server)) or give the gateway its descriptor files (a FileDescriptorSet or .proto files): %w", name, err)
	case status.Code(err) == codes.Unavailable || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("backend %s is unreachable%s: check the address, that the server is running, and whether it expects TLS or plaintext: %w", name, at(address, name), err)
	}
	return fmt.Errorf("backend %s: discovery failed: %w", name, err)
}

// at names the target in a message about backend name, unless the name
// already is the target (a lone unnamed backend).
func at(address, name string) string {
	if address == "" || address == name {
		return ""
	}
	return " at " + address
}

// BackendStatus is one backend's part of /readyz.
type BackendStatus struct {
	// Discovered is true once a discovery has succeeded.
	Discovered bool `json:"discovered"`
	// Listed is true once the catalog clients are served (typed
	// tools/list, and search mode's index) holds the backend's discovered
	// tools. It follows Discovered by the time the catalog takes to build
	// (seconds for a catalog of thousands of tools), and stays false while
	// that build fails.
	Listed bool `json:"listed"`
	// State is the connection's gRPC connectivity state (IDLE, CONNECTING,
	// READY, TRANSIENT_FAILURE, SHUTDOWN); empty when the connection does
	// not report one.
	State string `json:"state,omitempty"`
	// Error is the last discovery's error, if it failed.
	Error string `json:"error,omitempty"`
	// Tools is the number of the backend's tools being served.
	Tools int `json:"tools"`
	// Replicas counts the addresses the backend's target resolves to and
	// those serving (connected and, where the backend serves
	// grpc.health.v1.Health, SERVING); absent for a connection not made
	// by backendconn.Dial.
	Replicas *ReplicaStatus `json:"replicas,omitempty"`
	// Unanswered is set, with the reason, while a connection that looks
	// usable answers nothing: after a call ended at DEADLINE_EXCEEDED, a
	// health check on it got no answer of any kind (a half-open
	// connection, a stalled backend). The backend is not ready until one
	// is answered.
	Unanswered string `json:"unanswered,omitempty"`
	// Ready is this backend's part of the answer.
	Ready bool `json:"ready"`
}

// ReplicaStatus is a backend's replicas in /readyz.
type ReplicaStatus struct {
	Resolved int `json:"resolved"`
	Serving  int `json:"serving"`
}

// Readiness is the body of /readyz.
type Readiness struct {
	Ready bool `json:"ready"`
	// ShuttingDown is set after BeginShutdown.
	ShuttingDown bool                     `json:"shuttingDown,omitempty"`
	Backends     map[string]BackendStatus `json:"backends"`
	// State is the fleet's shared store (Options.State), when there is
	// one. Losing it does not make the gateway unready: calls go on, and
	// only what needs the store fails until it is back.
	State *StateStatus `json:"state,omitempty"`
}

// StateStatus is the shared state store's part of /readyz.
type StateStatus struct {
	// Up is false only after an error: a failed health check, or a
	// failed page of the read of the revocations. A read that is slow but
	// progressing leaves it true.
	Up    bool   `json:"up"`
	Error string `json:"error,omitempty"`
	// RevocationsLoaded says that this replica holds every deleted
	// session in memory. Until then it is still correct (each session
	// token is looked up in the store), only slower; it does not make the
	// gateway unready.
	RevocationsLoaded bool `json:"revocationsLoaded"`
}

// Ready reports whether the gateway should receive traffic: every backend
// has been discovered at least once, the catalog clients list holds its
// tools (so a client that connects once /readyz says 200 lists and finds
// them), its connection is usable (READY, or IDLE: connected on demand),
// and shutdown has not begun.
func (g *Gateway) Ready() Readiness {
	r := Readiness{Ready: !g.draining.Load(), ShuttingDown: g.draining.Load(), Backends: make(map[string]BackendStatus, len(g.backends))}
	counts := make(map[string]int, len(g.backends))
	c := g.catalog.Load()
	if c != nil {
		for _, t := range c.tools {
			counts[t.Backend]++
		}
	}
	for _, b := range g.backends {
		tools, err, state, unanswered := b.snapshot()
		st := BackendStatus{Discovered: tools != nil, Listed: c != nil && c.listed[b.b.Name], Tools: counts[b.b.Name]}
		if err != nil {
			st.Error = err.Error()
		}
		if b.managed != nil {
			total, serving := b.managed.Replicas()
			st.Replicas = &ReplicaStatus{Resolved: total, Serving: serving}
		}
		usable := true
		if b.conn != nil {
			st.State = stateName(state)
			usable = state == connectivity.Ready || state == connectivity.Idle
		}
		st.Unanswered = unanswered
		st.Ready = st.Discovered && st.Listed && usable && unanswered == ""
		r.Ready = r.Ready && st.Ready
		r.Backends[b.b.Name] = st
	}
	if g.opts.State != nil {
		up, why := g.opts.State.Up()
		r.State = &StateStatus{Up: up, Error: why, RevocationsLoaded: g.opts.State.RevocationsLoaded()}
	}
	return r
}

// stateName spells s as gRPC's connectivity documentation does.
func stateName(s connectivity.State) string {
	switch s {
	case connectivity.Idle:
		return "IDLE"
	case connectivity.Connecting:
		return "CONNECTING"
	case connectivity.Ready:
		return "READY"
	case connectivity.TransientFailure:
		return "TRANSIENT_FAILURE"
	case connectivity.Shutdown:
		return "SHUTDOWN"
	}
	return s.String()
}

// serveReadyz answers 200 when Ready, else 503, with the Readiness as JSON
// either way, so an operator reads what is missing from the probe itself.
func (g *Gateway) serveReadyz(w http.ResponseWriter, _ *http.Request) {
	r := g.Ready()
	body, _ := json.Marshal(r)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !r.Ready {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_, _ = w.Write(append(body, '\n'))
}
