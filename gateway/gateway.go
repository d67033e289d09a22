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
// the protobuf to JSON Schema mapping in gateway/schema, and descriptor
// sources in the descriptors package.
//
// A Go program embeds the gateway with [New] (one [Backend] per gRPC
// server, nil [Options] for the defaults), then serves [Gateway.Handler]
// (Streamable HTTP, WebSocket, legacy SSE) or [Gateway.ServeStdio], or
// calls [Gateway.CallTool] in process, and ends with [Gateway.Shutdown]
// or [Gateway.Close]; the examples show each. The binary (cmd/gateway)
// is built on the same calls.
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
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/metadata"

	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/forward"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/taskid"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/results"
	"github.com/grpc-mcp-gateway/gateway/gateway/state"
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

// Options configure a Gateway. The zero value (or nil) means defaults.
type Options struct {
	// Logger receives the gateway's logs; nil discards them.
	Logger *slog.Logger
	// Version is reported as the server version; default "dev".
	Version string
	// CallTimeout is the gRPC deadline of each unary call; zero means
	// DefaultCallTimeout. It cannot be Off. (See convention.go for what
	// zero and Off mean for every option.) It also bounds every task
	// method (mcp.ServerOptions.TaskWaitTimeout): tasks/result continues
	// the wait of the call that started its task, and waits no longer.
	CallTimeout time.Duration
	// StreamTimeout is the gRPC deadline of each streaming call (server,
	// client or bidirectional), separate from CallTimeout because a stream
	// legitimately runs longer than a request; default 5m. A deadline hit
	// mid-stream returns the messages so far with a DEADLINE_EXCEEDED
	// error result.
	StreamTimeout time.Duration
	// MethodTimeouts give the methods they match a deadline of their
	// own, on every backend, unary or streaming: a long poll (Temporal's
	// PollWorkflowTaskQueue answers just before its deadline when no
	// task comes) bounded apart from the other calls. For each method the
	// first entry that matches applies; it wins over a backend's
	// CallTimeout and StreamTimeout, and a backend's own Methods entry
	// for the method wins over it.
	MethodTimeouts []MethodTimeout
	// StreamMaxMessages caps how many messages one streaming call collects;
	// default 10000. At the cap the gateway cancels the stream and returns
	// what it has, marked truncated, as a normal result.
	StreamMaxMessages int
	// StreamMaxBytes caps the JSON bytes of the messages one streaming call
	// collects; default 4 MiB. The result carries that JSON twice
	// (structuredContent and the text block), so the default keeps a full
	// result under the 16 MiB a message the official SDK clients accept.
	// At the cap the gateway cancels the stream and returns what it has,
	// marked truncated, as a normal result.
	StreamMaxBytes int64
	// Watch shapes the tools of open-ended streams (a Watch, a
	// Subscribe, a Tail): windows a call collects for, and which
	// streams are open-ended (watch.go, docs/streaming.md).
	Watch WatchOptions
	// OperationWait is how long tools/call of a long-running method
	// (AIP-151) waits for its operation before answering with the
	// unfinished operation's handle; never past the call's deadline.
	// Default DefaultOperationWait; negative does not wait. A method's
	// MethodSettings.OperationWait wins.
	OperationWait time.Duration
	// OperationCancel cancels the operation (CancelOperation) when the
	// client cancels a long-running tool's call or goes away. Off by
	// default: a closed client should not kill a job.
	OperationCancel bool
	// MaxResultBytes is the result budget: the most bytes of JSON a
	// tool result's structuredContent may carry (budget.go). A larger
	// result is cut to fit and kept whole for ResultTTL as a resource.
	// Zero means DefaultMaxResultBytes, Off no budget; otherwise at
	// least MinMaxResultBytes.
	MaxResultBytes int
	// ResultTTL is how long a result kept whole after a cut stays
	// readable; zero means results.DefaultTTL.
	ResultTTL time.Duration
	// ResultStoreBytes bounds the bytes of all results kept whole (the
	// oldest go first); zero means results.DefaultMaxBytes. A result
	// larger than it is cut but not kept.
	ResultStoreBytes int64
	// ResultStoreEntries bounds how many results are kept whole; zero
	// means results.DefaultMaxEntries.
	ResultStoreEntries int
	// ResultStoreBytesPerPrincipal and ResultStoreEntriesPerPrincipal
	// bound one authenticated principal's part of the store, all its
	// sessions together: over it, its own oldest results go first, and
	// when the whole store is full the principal holding the most pays,
	// so one principal cannot push another's results out within their
	// TTL (see results.Store). Zero means half of ResultStoreBytes and
	// of ResultStoreEntries; Off, no per-principal bound.
	ResultStoreBytesPerPrincipal   int64
	ResultStoreEntriesPerPrincipal int
	// InputErrors selects how invalid arguments are answered.
	InputErrors InputErrorMode
	// ExposeHealth exposes grpc.health.v1.Health as tools; hidden by
	// default. (grpc.reflection.* is never exposed.)
	ExposeHealth bool
	// ExposeInternal exposes the internal services ([InternalServices]:
	// gRPC's channelz, CSDS and ORCA, Temporal's AdminService), hidden by
	// default since they serve a server's operators and infrastructure,
	// not its users. When a backend serves one, discovery logs which it
	// hid. Include and Exclude apply to them as to any service once
	// exposed.
	ExposeInternal bool
	// Include and Exclude choose the methods exposed, by glob on
	// "package.Service/Method"; see filter.go for the syntax. Empty Include
	// means every method; Exclude wins over Include.
	Include, Exclude []string
	// Refresh is how often every backend is discovered again, and its
	// target resolved again (for new replicas behind a DNS name); zero
	// means DefaultRefresh, Off disables the timer (a backend is still
	// discovered again when its connection comes back after a failure, and
	// retried with backoff until its first discovery succeeds).
	Refresh time.Duration
	// DiscoveryTimeout bounds each background discovery of one backend;
	// default DefaultDiscoveryTimeout. The first discovery, in New, is
	// bounded by New's ctx instead.
	DiscoveryTimeout time.Duration
	// RequireBackends makes New fail when any backend cannot be discovered
	// at start, instead of starting without its tools and retrying.
	RequireBackends bool
	// UseProtoNames makes schemas and results use the original proto field
	// names instead of protojson's lowerCamel JSON names.
	UseProtoNames bool
	// State is the store a fleet of replicas shares (package state):
	// whole results kept after a cut live there instead of in this
	// process (the ResultStore* bounds above are then the store's, for
	// the whole fleet), it is HTTP's Fleet, so DELETE and
	// notifications/cancelled reach every replica, and the Server's
	// FleetSlots, so MaxInFlightPerPrincipal counts a principal's
	// requests on every replica together. It needs
	// HTTP.SessionSecret. Nil: one process, everything in memory. The
	// caller opens and closes it.
	State *state.Redis
	// HTTP configures the Streamable HTTP endpoint; nil means defaults.
	// Its SessionSecret (and PreviousSessionSecrets) also key the task
	// ids (gateway/internal/taskid), so replicas sharing it share tasks; without one,
	// task ids are valid only on the process that issued them.
	HTTP *mcp.StreamableHTTPOptions
	// WebSocket configures /ws; nil means defaults.
	WebSocket *mcp.WebSocketOptions
	// SSE configures the legacy HTTP+SSE transport at /sse; nil means
	// defaults.
	SSE *mcp.SSEOptions
	// AllowedHosts lists the Host header values the HTTP endpoints accept
	// besides loopback names (and, on a connection that did not arrive on
	// loopback, IP literals): the names clients use to reach the gateway,
	// e.g. "mcp.example.com" (any port) or "mcp.example.com:8443". It
	// applies to /mcp, /ws and /sse (added to their options' own lists),
	// to /metrics and /readyz, and to the OAuth metadata, so that a page
	// whose name was rebound to the gateway's address can use none of
	// them. See mcp.OriginProtection.
	AllowedHosts []string
	// ReadTimeout bounds how long a client may take to send a request
	// body after its headers (a slower sender is cut, see
	// mcp.RequestDeadlines); zero means mcp.DefaultReadTimeout, negative
	// no limit.
	ReadTimeout time.Duration
	// SeparateAdmin serves /metrics and /readyz only on AdminHandler (for
	// an admin listener of their own), not on Handler.
	SeparateAdmin bool
	// Server is the MCP server's limits: requests in flight per session
	// (MaxConcurrentCalls), on the whole gateway (MaxInFlight) and per
	// principal (MaxInFlightPerPrincipal), task polls per second
	// (MaxTaskPolls), a batch's messages (MaxBatch), a stdio line
	// (MaxMessageBytes) and the other mcp.ServerOptions limits, each
	// documented there; nil means their defaults. The gateway sets the
	// fields that are its own wiring (Logger, Trace, TraceBodies,
	// SessionObserver, PrincipalOf, TaskWaitTimeout: Options.CallTimeout)
	// over whatever is given.
	Server *mcp.ServerOptions
	// ExposeDebugInfo passes google.rpc.DebugInfo error details from the
	// backends on to clients; by default they are withheld (and logged
	// at debug level), since they hold stack traces and internals meant
	// for the service's developers.
	ExposeDebugInfo bool
	// Auth, when set, authenticates every request to the MCP endpoints
	// and serves the OAuth protected-resource metadata; health endpoints
	// stay open. The caller owns it and closes it after Shutdown. Nil
	// means no authentication. Its tool scope rules
	// (auth.OAuthConfig.ToolScopes: tool names or method patterns, see
	// [CheckScopeRule]) are checked by New and resolved to the tools of
	// every catalog the gateway builds.
	Auth *auth.Authenticator
	// StrictScopes makes New fail, with an error wrapping
	// [ErrUnmatchedScopeRule], when a tool scope rule of Auth matches no
	// tool of the catalog built at start. Without it such a rule is
	// logged as a warning. On a later rebuild an unmatched rule is logged
	// (at error level with StrictScopes) and stays in force: it applies
	// again as soon as a tool it matches is back.
	StrictScopes bool
	// ListVisibleOnly makes tools/list and search_tools show each caller
	// only the tools its token's scopes allow it to call (the scopes of
	// Auth's tool scope rules and of the methods' (mcpgateway.v1.tool)
	// options), so that an agent does not plan with tools it cannot use;
	// the typed list is then sent with cacheScope "private". A call of a
	// hidden tool is still refused with the scope it lacks (403 and the
	// step-up challenge), as without the option. Off by default: the MCP
	// authorization specification's step-up flow starts from a tool the
	// client can see, and a list that is the same for everyone can be
	// cached by anyone. No effect without Auth, or on stdio.
	ListVisibleOnly bool
	// Toolsets are named views of the catalog, each served at its own
	// endpoints (/mcp/NAME, /ws/NAME, /sse/NAME) with its own tools/list,
	// search index, instructions and list_changed, from the one
	// discovery; /mcp stays the whole catalog. See [Toolset]; New checks
	// their names, patterns and scopes.
	Toolsets []Toolset
	// Tools correct the tools of the methods they match without touching
	// the backend: name, title, description, hints, and arguments hidden,
	// fixed or given a default. Every rule that matches a method applies,
	// in order. See [ToolOverride]; New fails, with an error wrapping
	// [ErrToolOverride], on a rule that matches no method once every
	// backend is discovered, or that does not fit the method it matches.
	Tools []ToolOverride
	// ToolsetsOnly serves only the toolsets' endpoints: /mcp, /ws and
	// /sse (the whole catalog) answer 404, so every agent goes through a
	// curated view. It needs Toolsets. Stdio then serves StdioToolset.
	ToolsetsOnly bool
	// StdioToolset names the toolset ServeStdio serves; empty: the whole
	// catalog (refused with ToolsetsOnly).
	StdioToolset string
	// ForwardHeaders names inbound HTTP headers copied into the gRPC
	// metadata of each call (lowercased; every value kept). Nothing else
	// of the request is forwarded. New refuses a hop-by-hop header
	// (Connection, Keep-Alive, TE, Trailer, Transfer-Encoding, Upgrade,
	// Host, Proxy-*), a name that is not a legal gRPC metadata key, and the
	// keys gRPC reserves (grpc-*) or sets itself.
	ForwardHeaders []string
	// Metadata is added to every call; see [ParseMetadata].
	Metadata metadata.MD
	// Metrics records every tools/call and discovery, and is served at
	// /metrics by Handler; nil records nothing and serves no /metrics.
	Metrics *telemetry.Metrics
	// TracerProvider makes a span per tools/call, a child of the trace
	// context in the request's _meta or HTTP headers; nil or a no-op
	// provider makes none and reads no trace context. For the backend's
	// span to join the trace, dial the backend with
	// telemetry.GRPCDialOption of the same provider.
	TracerProvider trace.TracerProvider
	// LogArguments adds each call's argument values to the call log, on a
	// debug line; off by default because arguments may hold personal data.
	LogArguments bool
	// ToolMode says how the catalog is listed: ToolModeAuto (the zero
	// value), ToolModeTyped or ToolModeSearch; see toolmode.go.
	ToolMode ToolMode
	// ToolBudget is ToolModeAuto's limit, in estimated tokens (tools/list
	// JSON bytes / 4): typed up to it, search beyond. Zero means
	// DefaultToolBudget; Off means always typed.
	ToolBudget int
	// SearchEmbeddings, when set, fuses search_tools' lexical ranking with
	// an embedding model's (semantic.go); nil ranks lexically.
	SearchEmbeddings *SearchEmbeddings
	// ProtocolTrace logs every JSON-RPC message in and out at debug level
	// on Logger (mcp.ServerOptions.Trace), with argument values, results,
	// resource bodies and task status messages only when LogArguments is
	// set too (mcp.ServerOptions.TraceBodies).
	ProtocolTrace bool
	// PaceGC has the garbage collector run more often while a discovery's
	// tools and a catalog's schemas are built (debug.SetGCPercent, for the
	// whole process, from its default only, restored after): a large
	// catalog then keeps its memory in fewer pages, so the process holds
	// less once ready (memory.go). Off by default, as a library should
	// leave the collector alone; the gateway binary sets it unless GOGC
	// is set.
	PaceGC bool

	// noWarmSchemas leaves every schema of a search-mode catalog to its
	// first use (warmSchemas); tests set it (export_test.go).
	noWarmSchemas bool
}

// Gateway serves the methods of one or more gRPC backends as MCP tools,
// and their services as MCP resources. It is an mcp.Handler.
//
// Discovery runs in the background for the Gateway's whole life (see
// backends.go and refresh.go): every backend is re-discovered on
// Options.Refresh and when its connection comes back after a failure, and
// the catalog is swapped atomically when, and only when, what a client
// would see changed. Close or Shutdown stops it.
type Gateway struct {
	opts     Options
	backends []*backendState
	catalog  atomic.Pointer[catalog]
	// whole is the default endpoint, /mcp: the whole catalog (endpoint.go).
	whole endpoint
	// toolsets serve Options.Toolsets, in order (toolsets.go).
	toolsets []*toolsetServer
	server   *mcp.Server
	md       forward.Metadata
	filter   *methodFilter
	// methodTimeouts are Options.MethodTimeouts, compiled.
	methodTimeouts methodTimeouts
	// watch is Options.Watch, resolved.
	watch watchSettings
	// overrides are Options.Tools, compiled (overrides.go).
	overrides *overrideRules
	// scopeRules are Auth's tool scope rules, compiled once (scopes.go);
	// scopePins the methods their tool-name rules have matched so far.
	scopeRules scopeRules
	scopePins  scopePins
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
	// which ends it (toolschemas.go).
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
	// budget is the resolved Options.MaxResultBytes (Off: none); results
	// keeps whole the results cut to it (budget.go).
	budget  int
	results resultStore
	// semantic is the search reranking, nil without Options.SearchEmbeddings.
	semantic *semantic
	// taskKeys sign and verify task ids.
	taskKeys *taskid.Keys
	// streamable is the Streamable HTTP transport Handler mounts at /mcp,
	// made in New so that a bad Options.HTTP (a short SessionSecret) fails
	// there; every Handler serves its sessions.
	streamable http.Handler
	// draining is set at the start of shutdown: /readyz answers 503 so a
	// load balancer stops sending new clients while calls finish.
	draining atomic.Bool
}

// New starts serving backends. It validates them and the options, then
// discovers every backend once, concurrently, within ctx. A backend that
// cannot be discovered in time does not stop the gateway (unless
// Options.RequireBackends is set): its one-line error is logged as a
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
	for _, err := range []error{
		mustNotBeOff("Options.CallTimeout", g.opts.CallTimeout, "a call always has a deadline"),
		mustNotBeOff("Options.StreamTimeout", g.opts.StreamTimeout, "a stream always has a deadline"),
		mustNotBeOff("Options.StreamMaxMessages", g.opts.StreamMaxMessages, "a stream's result is always bounded"),
		mustNotBeOff("Options.StreamMaxBytes", g.opts.StreamMaxBytes, "a stream's result is always bounded"),
		mustNotBeOff("Options.DiscoveryTimeout", g.opts.DiscoveryTimeout, "a discovery always has a deadline"),
		mustNotBeOff("Options.ResultTTL", g.opts.ResultTTL, "a result kept whole always expires"),
		mustNotBeOff("Options.ResultStoreBytes", g.opts.ResultStoreBytes, "the result store is always bounded"),
		mustNotBeOff("Options.ResultStoreEntries", g.opts.ResultStoreEntries, "the result store is always bounded"),
		wrapOption("Options.Server", g.opts.Server.Check()),
		wrapOption("Options.HTTP", g.opts.HTTP.Check()),
		wrapOption("Options.WebSocket", g.opts.WebSocket.Check()),
		wrapOption("Options.SSE", g.opts.SSE.Check()),
	} {
		if err != nil {
			return nil, err
		}
	}
	g.opts.CallTimeout = limit.Or(g.opts.CallTimeout, DefaultCallTimeout)
	g.opts.StreamTimeout = limit.Or(g.opts.StreamTimeout, DefaultStreamTimeout)
	g.opts.StreamMaxMessages = limit.Or(g.opts.StreamMaxMessages, DefaultStreamMaxMessages)
	g.opts.StreamMaxBytes = limit.Or(g.opts.StreamMaxBytes, DefaultStreamMaxBytes)
	g.opts.OperationWait = limit.Or(g.opts.OperationWait, DefaultOperationWait)
	g.opts.Refresh = limit.Or(g.opts.Refresh, DefaultRefresh)
	g.opts.DiscoveryTimeout = limit.Or(g.opts.DiscoveryTimeout, DefaultDiscoveryTimeout)
	if g.opts.ToolMode < ToolModeAuto || g.opts.ToolMode > ToolModeSearch {
		return nil, fmt.Errorf("tool mode %d: want auto, typed or search", g.opts.ToolMode)
	}
	g.opts.ToolBudget = limit.Or(g.opts.ToolBudget, DefaultToolBudget)
	if g.opts.Auth != nil {
		for _, h := range g.opts.ForwardHeaders {
			if IsClientCredential(h) {
				return nil, fmt.Errorf("gateway: ForwardHeaders names %q while Auth is on: the client's token is for the gateway and must not be passed through to the backend; forward verified claims (auth.OAuthConfig.ForwardClaims) or set the backend's credential in Metadata", h)
			}
		}
	}
	var err error
	if g.budget, err = resultBudget(g.opts.MaxResultBytes); err != nil {
		return nil, err
	}
	if g.opts.State != nil {
		if g.opts.HTTP == nil || len(g.opts.HTTP.SessionSecret) == 0 {
			return nil, errors.New("gateway: Options.State needs Options.HTTP.SessionSecret: a fleet shares sessions through signed tokens")
		}
		g.results = g.opts.State
	} else {
		g.results = memoryResults{results.NewStore(g.resultStoreOptions())}
	}
	md, err := forward.New(g.opts.ForwardHeaders, g.opts.Metadata)
	if err != nil {
		return nil, err
	}
	g.md = md
	g.tracer = telemetry.NewTracer(g.opts.TracerProvider)
	g.observing = g.opts.Metrics != nil || g.tracer != nil || g.opts.Logger.Handler() != slog.DiscardHandler
	if g.filter, err = newMethodFilter("Options", g.opts.Include, g.opts.Exclude); err != nil {
		return nil, err
	}
	if g.methodTimeouts, err = newMethodTimeouts(g.opts.MethodTimeouts); err != nil {
		return nil, err
	}
	if g.watch, err = newWatchSettings(g.opts.Watch); err != nil {
		return nil, err
	}
	if g.overrides, err = compileOverrides("Options.Tools", g.opts.Tools); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrToolOverride, err)
	}
	if g.opts.Auth != nil {
		if g.scopeRules, err = compileScopeRules("OAuthConfig.ToolScopes", g.opts.Auth.ToolScopes()); err != nil {
			return nil, err
		}
	}
	var secret []byte
	var previous [][]byte
	if g.opts.HTTP != nil {
		secret, previous = g.opts.HTTP.SessionSecret, g.opts.HTTP.PreviousSessionSecrets
	}
	if g.taskKeys, err = taskid.NewKeys(secret, previous); err != nil {
		return nil, fmt.Errorf("gateway: task keys: %w", err)
	}
	if g.opts.SearchEmbeddings != nil {
		if g.semantic, err = newSemantic(g.opts.SearchEmbeddings, g.opts.Logger); err != nil {
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
	if g.opts.Server != nil {
		so = *g.opts.Server
	}
	so.Logger, so.Trace, so.TraceBodies = g.opts.Logger, g.traceLogger(), g.opts.LogArguments
	so.SessionObserver, so.PrincipalOf, so.TaskWaitTimeout = g.observeSessions(), who, g.opts.CallTimeout
	if m := g.opts.Metrics; m != nil {
		so.SlowClientObserver = m.SlowClientDropped
	}
	switch {
	case g.opts.State != nil:
		so.FleetSlots = g.opts.State
	case len(g.opts.Toolsets) > 0:
		// Each toolset has a server of its own: a principal's share of
		// in-flight requests is counted across all of them.
		so.FleetSlots = new(processSlots)
	}
	if len(g.opts.Toolsets) > 0 {
		// And so is the process's limit.
		so.InFlight = new(mcp.InFlight)
	}
	g.server = mcp.NewServer(mcp.Implementation{Name: "grpc-mcp-gateway", Title: "gRPC MCP Gateway", Version: g.opts.Version}, &g.whole, &so)
	httpOpts := withHosts(g.opts.HTTP, g.opts.AllowedHosts, func(o *mcp.StreamableHTTPOptions) *[]string { return &o.AllowedHosts })
	if g.opts.State != nil {
		httpOpts.Fleet = g.opts.State
		g.opts.Metrics.StateUp(func() bool { up, _ := g.opts.State.Up(); return up })
	}
	if g.streamable, err = g.server.StreamableHTTPHandler(httpOpts); err != nil {
		return nil, wrapOption("Options.HTTP", err)
	}
	if err := g.newToolsetServers(so, httpOpts); err != nil {
		return nil, err
	}
	if err := g.start(ctx); err != nil {
		return nil, err
	}
	return g, nil
}

// Server returns the MCP server, for transports the caller runs itself.
func (g *Gateway) Server() *mcp.Server { return g.server }

// ToolsetServer returns the MCP server of the toolset of that name (see
// Options.Toolsets), nil for none.
func (g *Gateway) ToolsetServer(name string) *mcp.Server {
	if ts := g.toolsetNamed(name); ts != nil {
		return ts.server
	}
	return nil
}

// ServeStdio serves MCP over newline-delimited JSON on in and out until in
// ends or ctx is done.
func (g *Gateway) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	if ts := g.toolsetNamed(g.opts.StdioToolset); ts != nil {
		return ts.server.ServeStdio(ctx, in, out)
	}
	if g.opts.ToolsetsOnly {
		return errors.New("gateway: Options.ToolsetsOnly: stdio serves no toolset: set Options.StdioToolset")
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

// traceLogger is the protocol trace's logger, nil when the trace is off.
func (g *Gateway) traceLogger() *slog.Logger {
	if !g.opts.ProtocolTrace {
		return nil
	}
	return g.opts.Logger.With("component", "mcp-trace")
}

// observeSessions feeds the sessions gauge, or is nil without metrics.
func (g *Gateway) observeSessions() func(transport string, delta int) {
	m := g.opts.Metrics
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
