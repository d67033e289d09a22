// Package gateway is the product: it discovers the methods of one or more
// gRPC backends, and keeps discovering them (backends.go, refresh.go),
// compiles each into an MCP tool (names, descriptions, JSON Schemas,
// message types, all built once per discovery), serves tools/call by
// converting JSON arguments to protobuf, invoking the backend and turning
// the response or the gRPC status into an MCP result, and puts the MCP
// server behind the HTTP front door.
//
// The protocol itself lives in gateway/mcp (which knows nothing of gRPC),
// the connection to each backend in gateway/backendconn (which knows
// nothing of MCP; the gateway sees it through managedConn, backends.go),
// the protobuf to JSON Schema mapping in internal/schema, and descriptor
// sources in the descriptors package.
//
// A Go program embeds the gateway with [New] (one [Backend] per gRPC
// server, nil [Options] for the defaults), then serves [Gateway.Handler]
// (Streamable HTTP, WebSocket, legacy SSE) or [Gateway.ServeStdio], or
// calls [Gateway.CallTool] in process, and ends with [Gateway.Shutdown]
// or [Gateway.Close]; the examples show each. The binary (cmd/gateway)
// is built on the same calls. [Gateway.Ready] is the readiness /readyz
// serves, for a program that reports it elsewhere. What a program hands
// to [Options] and [Backend] comes from the other public packages:
// gateway/mcp, gateway/auth, gateway/backendconn, gateway/exchange,
// gateway/state, gateway/telemetry, gateway/results and descriptors;
// everything else is internal.
//
// # The API of a front end
//
// The package also exports what cmd/gateway needs to check a
// configuration before it starts a gateway and to explain a catalog, so
// that its flags and files stay there while the rules stay here, and
// another front end (a config loader or operator of its own, a CI check
// of a tools file) gives the same answers: the checks [ValidBackendName],
// [ValidToolsetName], [CheckScopeRule], [CheckToolOverrides] and
// [CheckToolOverridesOffline] (errors wrapping [ErrUnmatchedScopeRule]
// and [ErrToolOverride]), [ParseMetadata] for KEY=VALUE metadata,
// [IsClientCredential] for the header New refuses to forward,
// [MinMaxResultBytes], [InternalServices] for help texts, and the
// catalog report of `gateway catalog`: [Gateway.Report] and
// [Gateway.SearchReport], whose [ToolReport] rows say where each part of
// a tool came from ([Source], [HintReport]).
package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/call"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/forward"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/overrides"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/scopes"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/searchmode"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/taskid"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/watch"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/results"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
	"github.com/grpc-mcp-gateway/gateway/internal/limit"
)

// InputErrorMode says how arguments that do not fit the request message
// are answered.
type InputErrorMode int

const (
	// InputErrorsTool answers with a tool execution error (isError: true),
	// as the MCP specification prefers since 2025-11-25 (SEP-1303): the
	// model sees what was wrong and can correct its call.
	InputErrorsTool InputErrorMode = iota
	// InputErrorsProtocol answers with JSON-RPC -32602, for clients that
	// expect the older convention.
	InputErrorsProtocol
)

// String is the mode's name as options spell it: "tool" or "protocol".
func (m InputErrorMode) String() string {
	switch m {
	case InputErrorsTool:
		return "tool"
	case InputErrorsProtocol:
		return "protocol"
	}
	return fmt.Sprintf("InputErrorMode(%d)", int(m))
}

// MarshalText is the mode's name, so a command line or a config file
// can bind an InputErrorMode directly (flag.TextVar).
func (m InputErrorMode) MarshalText() ([]byte, error) {
	if m != InputErrorsTool && m != InputErrorsProtocol {
		return nil, fmt.Errorf("input error mode %d: want tool or protocol", int(m))
	}
	return []byte(m.String()), nil
}

// UnmarshalText reads a mode's name: "tool" or "protocol".
func (m *InputErrorMode) UnmarshalText(b []byte) error {
	switch string(b) {
	case "tool":
		*m = InputErrorsTool
	case "protocol":
		*m = InputErrorsProtocol
	default:
		return errors.New(`want "tool" or "protocol"`)
	}
	return nil
}

// Gateway serves the methods of one or more gRPC backends as MCP tools,
// and their services as MCP resources. It is an mcp.Handler.
//
// Discovery runs in the background for the Gateway's whole life (see
// backends.go and refresh.go): every backend is re-discovered on
// Options.Catalog.Refresh and when its connection comes back after a failure, and
// the catalog is swapped atomically when, and only when, what a client
// would see changed. Close or Shutdown stops it.
type Gateway struct {
	// calls is what the call path needs of the gateway (gateway/internal/call);
	// invokers are the call paths of each tool shape (chooseInvoker).
	calls    call.Env
	invokers invokers
	opts     Options
	backends []*backendState
	catalog  atomic.Pointer[catalog]
	// whole is the default endpoint, /mcp: the whole catalog (endpoint.go).
	whole endpoint
	// toolsets serve Options.FrontDoor.Toolsets, in order (toolsets.go).
	toolsets []*toolsetServer
	server   *mcp.Server
	md       forward.Metadata
	filter   *methodFilter
	// methodTimeouts are Options.Calls.MethodTimeouts, compiled.
	methodTimeouts methodTimeouts
	// watch is Options.Calls.Watch, resolved.
	watch watch.Settings
	// overrides are Options.Catalog.Tools, compiled (overrides.go).
	overrides *overrides.Rules
	// scopeRules are Auth's tool scope rules, compiled once (package scopes);
	// scopePins the methods their tool-name rules have matched so far.
	scopeRules scopes.Rules
	scopePins  scopes.Pins
	// tracer is nil when tracing is off; observing is false when there is
	// nothing at all to record per call (no metrics, tracer or logger).
	tracer    *telemetry.Tracer
	observing bool

	// rebuildMu serialises catalog rebuilds, so two backends refreshed at
	// once cannot swap in catalogs built from each other's stale views.
	rebuildMu sync.Mutex
	// releasing is set while releaseMemory runs (memory.go).
	releasing atomic.Bool
	// warming is set while warmSchemas runs; closed is closed by Close,
	// which ends it (gateway/internal/compiled/schemas.go).
	warming, warmWanted atomic.Bool
	closed              chan struct{}
	// warmers counts the warm-ups running, for tests (export_test.go).
	warmers sync.WaitGroup
	// beforeSwap, when set (by tests, export_test.go), runs in rebuild
	// once a catalog is built and before it is swapped in: the moment
	// when a backend is discovered and clients do not list its tools yet.
	beforeSwap atomic.Pointer[func()]
	// stop ends the discovery goroutines; wg waits for them.
	stop     context.CancelFunc
	wg       sync.WaitGroup
	stopOnce sync.Once
	// budget is the resolved Options.Results.MaxBytes (Off: none); results
	// keeps whole the results cut to it (budget.go).
	budget  int
	results resultStore
	// semantic is the search reranking, nil without Options.Search.Embeddings.
	semantic *searchmode.Semantic
	// taskKeys sign and verify task ids.
	taskKeys *taskid.Keys
	// streamable is the Streamable HTTP transport Handler mounts at /mcp,
	// made in New so that a bad Options.Transports.HTTP (a short SessionSecret) fails
	// there; every Handler serves its sessions.
	streamable http.Handler
	// draining is set at the start of shutdown: /readyz answers 503 so a
	// load balancer stops sending new clients while calls finish.
	draining atomic.Bool
}

// New starts serving backends. It validates them and the options, then
// discovers every backend once, concurrently, within ctx. A backend that
// cannot be discovered in time does not stop the gateway (unless
// Options.Catalog.RequireBackends is set): its one-line error is logged as a
// warning, it is retried in the background with backoff, and its tools are
// added when it answers; meanwhile /readyz reports it. The background
// discovery runs until Close or Shutdown, which the caller must call.
//
// One backend with an empty Name is named after its Address, as before
// several backends existed; with several, every backend needs a distinct
// Name (see [ValidBackendName]).
func New(ctx context.Context, backends []Backend, opts *Options) (*Gateway, error) {
	g := &Gateway{closed: make(chan struct{})}
	g.whole = endpoint{g: g, of: wholeCatalog, called: func() {}}
	if opts != nil {
		g.opts = *opts
	}
	if g.opts.Logger == nil {
		g.opts.Logger = slog.New(slog.DiscardHandler)
	}
	if g.opts.Version == "" {
		g.opts.Version = "dev"
	}
	// cmd/gateway declares the same of each setting (offOK), held to
	// this list by its TestSettingsOffAgreesWithTheLibrary.
	for _, err := range []error{
		mustNotBeOff("Options.Calls.Timeout", g.opts.Calls.Timeout, "a call always has a deadline"),
		mustNotBeOff("Options.Calls.StreamTimeout", g.opts.Calls.StreamTimeout, "a stream always has a deadline"),
		mustNotBeOff("Options.Calls.StreamMaxMessages", g.opts.Calls.StreamMaxMessages, "a stream's result is always bounded"),
		mustNotBeOff("Options.Calls.StreamMaxBytes", g.opts.Calls.StreamMaxBytes, "a stream's result is always bounded"),
		mustNotBeOff("Options.Catalog.DiscoveryTimeout", g.opts.Catalog.DiscoveryTimeout, "a discovery always has a deadline"),
		mustNotBeOff("Options.Results.TTL", g.opts.Results.TTL, "a result kept whole always expires"),
		mustNotBeOff("Options.Results.StoreBytes", g.opts.Results.StoreBytes, "the result store is always bounded"),
		mustNotBeOff("Options.Results.StoreEntries", g.opts.Results.StoreEntries, "the result store is always bounded"),
		wrapOption("Options.Transports.Server", g.opts.Transports.Server.Check()),
		wrapOption("Options.Transports.HTTP", g.opts.Transports.HTTP.Check()),
		wrapOption("Options.Transports.WebSocket", g.opts.Transports.WebSocket.Check()),
		wrapOption("Options.Transports.SSE", g.opts.Transports.SSE.Check()),
	} {
		if err != nil {
			return nil, err
		}
	}
	g.opts.Calls.Timeout = limit.Or(g.opts.Calls.Timeout, DefaultCallTimeout)
	g.opts.Calls.StreamTimeout = limit.Or(g.opts.Calls.StreamTimeout, DefaultStreamTimeout)
	g.opts.Calls.StreamMaxMessages = limit.Or(g.opts.Calls.StreamMaxMessages, DefaultStreamMaxMessages)
	g.opts.Calls.StreamMaxBytes = limit.Or(g.opts.Calls.StreamMaxBytes, DefaultStreamMaxBytes)
	g.opts.Calls.OperationWait = limit.Or(g.opts.Calls.OperationWait, DefaultOperationWait)
	g.opts.Catalog.Refresh = limit.Or(g.opts.Catalog.Refresh, DefaultRefresh)
	g.opts.Catalog.DiscoveryTimeout = limit.Or(g.opts.Catalog.DiscoveryTimeout, DefaultDiscoveryTimeout)
	if g.opts.Search.ToolMode < ToolModeAuto || g.opts.Search.ToolMode > ToolModeSearch {
		return nil, &OptionError{Option: "Options.Search.ToolMode", Err: fmt.Errorf("%d: want auto, typed or search", g.opts.Search.ToolMode)}
	}
	g.opts.Search.ToolBudget = limit.Or(g.opts.Search.ToolBudget, DefaultToolBudget)
	if g.opts.Auth != nil {
		for _, h := range g.opts.Calls.ForwardHeaders {
			if IsClientCredential(h) {
				return nil, &OptionError{Option: "Options.Calls.ForwardHeaders", Err: fmt.Errorf("%q while Auth is on: the client's token is for the gateway and must not be passed through to the backend; forward verified claims (auth.OAuthConfig.ForwardClaims) or set the backend's credential in Calls.Metadata", h)}
			}
		}
	}
	var err error
	if g.budget, err = resultBudget(g.opts.Results.MaxBytes); err != nil {
		return nil, err
	}
	if g.opts.State != nil {
		if g.opts.Transports.HTTP == nil || len(g.opts.Transports.HTTP.SessionSecret) == 0 {
			return nil, &OptionError{Option: "Options.State", Err: errors.New("needs Transports.HTTP.SessionSecret: a fleet shares sessions through signed tokens")}
		}
		g.results = g.opts.State
	} else {
		g.results = memoryResults{results.NewStore(g.resultStoreOptions())}
	}
	md, err := forward.New(g.opts.Calls.ForwardHeaders, g.opts.Calls.Metadata)
	if err != nil {
		return nil, err
	}
	g.md = md
	g.calls = call.Env{
		Logger:              g.opts.Logger,
		InputErrorsProtocol: g.opts.Calls.InputErrors == InputErrorsProtocol,
		ExposeDebugInfo:     g.opts.Calls.ExposeDebugInfo,
		StreamMaxMessages:   g.opts.Calls.StreamMaxMessages,
		StreamMaxBytes:      g.opts.Calls.StreamMaxBytes,
		ResultBudget:        g.budget,
	}
	g.bindInvokers()
	g.tracer = telemetry.NewTracer(g.opts.Telemetry.TracerProvider)
	g.observing = g.opts.Telemetry.Metrics != nil || g.tracer != nil || g.opts.Logger.Handler() != slog.DiscardHandler
	if g.filter, err = newMethodFilter("Options.Catalog", g.opts.Catalog.Include, g.opts.Catalog.Exclude); err != nil {
		return nil, err
	}
	if g.methodTimeouts, err = newMethodTimeouts(g.opts.Calls.MethodTimeouts); err != nil {
		return nil, err
	}
	if g.watch, err = newWatchSettings(g.opts.Calls.Watch); err != nil {
		return nil, err
	}
	if g.overrides, err = overrides.Compile("Options.Catalog.Tools", g.opts.Catalog.Tools); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrToolOverride, err)
	}
	if g.opts.Auth != nil {
		if g.scopeRules, err = scopes.Compile(toolScopesOption, g.opts.Auth.ToolScopes()); err != nil {
			return nil, err
		}
	}
	var secret []byte
	var previous [][]byte
	if g.opts.Transports.HTTP != nil {
		secret, previous = g.opts.Transports.HTTP.SessionSecret, g.opts.Transports.HTTP.PreviousSessionSecrets
	}
	if g.taskKeys, err = taskid.NewKeys(secret, previous); err != nil {
		return nil, fmt.Errorf("gateway: task keys: %w", err)
	}
	if g.opts.Search.Embeddings != nil {
		if g.semantic, err = newSemantic(g.opts.Search.Embeddings, g.opts.Logger); err != nil {
			return nil, err
		}
	}
	if err := g.checkToolsets(); err != nil {
		return nil, err
	}
	if err := g.initBackends(backends); err != nil {
		return nil, err
	}
	// The server exists before the first discovery so that every later
	// catalog swap can notify it. Without Auth every request is anonymous:
	// no principal is looked up at all.
	var who func(context.Context) mcp.Principal
	if g.opts.Auth != nil {
		who = principalOf
	}
	var so mcp.ServerOptions
	if g.opts.Transports.Server != nil {
		so = *g.opts.Transports.Server
	}
	so.Logger, so.Trace, so.TraceBodies = g.opts.Logger, g.traceLogger(), g.opts.Telemetry.LogArguments
	so.SessionObserver, so.PrincipalOf, so.TaskWaitTimeout = g.observeSessions(), who, g.opts.Calls.Timeout
	if m := g.opts.Telemetry.Metrics; m != nil {
		so.SlowClientObserver = m.SlowClientDropped
	}
	switch {
	case g.opts.State != nil:
		so.FleetSlots = g.opts.State
	case len(g.opts.FrontDoor.Toolsets) > 0:
		// Each toolset has a server of its own: a principal's share of
		// in-flight requests is counted across all of them.
		so.FleetSlots = new(processSlots)
	}
	if len(g.opts.FrontDoor.Toolsets) > 0 {
		// And so is the process's limit.
		so.InFlight = new(mcp.InFlight)
	}
	g.server = mcp.NewServer(mcp.Implementation{Name: "grpc-mcp-gateway", Title: "gRPC MCP Gateway", Version: g.opts.Version}, &g.whole, &so)
	httpOpts := withHosts(g.opts.Transports.HTTP, g.opts.FrontDoor.AllowedHosts, func(o *mcp.StreamableHTTPOptions) *[]string { return &o.AllowedHosts })
	if g.opts.State != nil {
		httpOpts.Fleet = g.opts.State
		g.opts.Telemetry.Metrics.StateUp(func() bool { up, _ := g.opts.State.Up(); return up })
	}
	if g.streamable, err = g.server.StreamableHTTPHandler(httpOpts); err != nil {
		return nil, wrapOption("Options.Transports.HTTP", err)
	}
	if err := g.newToolsetServers(so, httpOpts); err != nil {
		return nil, err
	}
	if err := g.start(ctx); err != nil {
		return nil, err
	}
	return g, nil
}

// ServeStdio serves MCP over newline-delimited JSON on in and out until in
// ends or ctx is done.
func (g *Gateway) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	if ts := g.toolsetNamed(g.opts.FrontDoor.StdioToolset); ts != nil {
		return ts.server.ServeStdio(ctx, in, out)
	}
	if g.opts.FrontDoor.ToolsetsOnly {
		return &OptionError{Option: "Options.FrontDoor.ToolsetsOnly", Err: errors.New("stdio serves no toolset: set FrontDoor.StdioToolset")}
	}
	return g.server.ServeStdio(ctx, in, out)
}

// Shutdown marks the gateway not ready, refuses new sessions and ends
// the MCP sessions and streams (in-flight calls are cancelled when ctx
// expires), then stops background discovery and waits for it. Sessions
// come first: waiting for background work (a discovery under way, the
// memory returned after a new catalog) before refusing them left a
// window in which /readyz said 503 while new sessions were still
// accepted.
func (g *Gateway) Shutdown(ctx context.Context) error {
	g.BeginShutdown()
	errs := []error{g.server.Shutdown(ctx)}
	for _, ts := range g.toolsets {
		errs = append(errs, ts.server.Shutdown(ctx))
	}
	g.Close()
	return errors.Join(errs...)
}

// WaitConnections waits, after Shutdown, until the sessions served on
// connections taken from net/http (WebSockets, and legacy SSE and
// Streamable HTTP GET streams over HTTP/1.1) have written their last
// replies and closed, or until ctx ends
// (see mcp.Server.WaitConnections): http.Server.Shutdown does not wait
// for them.
func (g *Gateway) WaitConnections(ctx context.Context) error {
	errs := []error{g.server.WaitConnections(ctx)}
	for _, ts := range g.toolsets {
		errs = append(errs, ts.server.WaitConnections(ctx))
	}
	return errors.Join(errs...)
}

// traceLogger is the protocol trace's logger, nil when the trace is off.
func (g *Gateway) traceLogger() *slog.Logger {
	if !g.opts.Telemetry.ProtocolTrace {
		return nil
	}
	return g.opts.Logger.With("component", "mcp-trace")
}

// observeSessions feeds the sessions gauge, or is nil without metrics.
func (g *Gateway) observeSessions() func(transport string, delta int) {
	m := g.opts.Telemetry.Metrics
	if m == nil {
		return nil
	}
	return func(transport string, delta int) {
		if delta > 0 {
			m.SessionOpened(transport)
		} else {
			m.SessionClosed(transport)
		}
	}
}
