package gateway

import (
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/metadata"

	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/state"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
	"github.com/grpc-mcp-gateway/gateway/internal/option"
)

// OptionError is the error New returns for a bad option, and the one a
// running gateway reports about an option (a tool scope rule that
// matches no tool with Scopes.Strict, a discovery that outlasts
// Catalog.DiscoveryTimeout): Option is the option's path, as a Go
// program writes it ("Options.Calls.Timeout",
// "Options.FrontDoor.Toolsets[1].Name", "OAuthConfig.ToolScopes"), and
// Err, which names no other option, says what is wrong. Match it with
// errors.As; a program that sets options from names of its own (the
// gateway binary's flags) says Err under its own name for Option. The
// errors of package auth about an auth.OAuthConfig field are of this
// type too.
type OptionError = option.Error

// Options configure a Gateway. The zero value (or nil) means defaults,
// and so does each group's zero value: a program sets only the groups,
// and the fields within them, it cares about:
//
//	gateway.New(ctx, backends, &gateway.Options{
//		Calls:   gateway.CallOptions{Timeout: 10 * time.Second},
//		Catalog: gateway.CatalogOptions{Include: []string{"zoo.v1.*"}},
//	})
//
// Every numeric option follows one rule (convention.go): zero is the
// default, [Off] switches it off where its doc allows. An error New
// returns for a bad option is an [*OptionError] naming it by its path
// ("Options.Calls.Timeout").
//
// A new option goes in the group of its concept; its setting in
// cmd/gateway (settings.go) names the path, so the flag, its variable,
// its config key and the errors about it follow.
type Options struct {
	// Logger receives the gateway's logs; nil discards them.
	Logger *slog.Logger
	// Version is reported as the server version; default "dev".
	Version string
	// Auth, when set, authenticates every request to the MCP endpoints
	// and serves the OAuth protected-resource metadata; health endpoints
	// stay open. The caller owns it and closes it after Shutdown. Nil
	// means no authentication. Its tool scope rules
	// (auth.OAuthConfig.ToolScopes: tool names or method patterns, see
	// [CheckScopeRule]) are checked by New and resolved to the tools of
	// every catalog the gateway builds; Scopes says how.
	Auth *auth.Authenticator
	// State is the store a fleet of replicas shares (package state):
	// whole results kept after a cut live there instead of in this
	// process (the Results store bounds are then the store's, for the
	// whole fleet), it is Transports.HTTP's Fleet, so DELETE and
	// notifications/cancelled reach every replica, and the Server's
	// FleetSlots, so MaxInFlightPerPrincipal counts a principal's
	// requests on every replica together. It needs
	// Transports.HTTP.SessionSecret. Nil: one process, everything in
	// memory. The caller opens and closes it.
	State *state.Redis
	// PaceGC has the garbage collector run more often while a discovery's
	// tools and a catalog's schemas are built (debug.SetGCPercent, for the
	// whole process, from its default only, restored after): a large
	// catalog then keeps its memory in fewer pages, so the process holds
	// less once ready (memory.go). Off by default, as a library should
	// leave the collector alone; the gateway binary sets it unless GOGC
	// is set.
	PaceGC bool

	// Calls shape each tools/call: deadlines, stream bounds, long-running
	// operations, argument errors and the metadata sent to the backend.
	Calls CallOptions
	// Results bound a tool result and keep whole, as a resource, one cut
	// to fit.
	Results ResultOptions
	// Catalog chooses which methods become tools and how they are
	// discovered, named and corrected.
	Catalog CatalogOptions
	// Search chooses between listing typed tools and search mode
	// (search_tools and call_tool), and how search ranks.
	Search SearchOptions
	// Transports configure the MCP server and each transport it serves:
	// Streamable HTTP, WebSocket, legacy SSE.
	Transports TransportOptions
	// FrontDoor shapes what the HTTP handler serves and to whom: the
	// hosts it answers, the toolsets' endpoints, the admin endpoints.
	FrontDoor FrontDoorOptions
	// Scopes say how Auth's tool scope rules are held to the catalog and
	// shown in lists.
	Scopes ScopeOptions
	// Telemetry records calls, sessions and discoveries: metrics, traces,
	// and what the logs may show.
	Telemetry TelemetryOptions

	// noWarmSchemas leaves every schema of a search-mode catalog to its
	// first use (warmSchemas); tests set it (export_test.go).
	noWarmSchemas bool
}

// CallOptions shape each tools/call; the zero value means defaults.
type CallOptions struct {
	// Timeout is the gRPC deadline of each unary call; zero means
	// DefaultCallTimeout. It cannot be Off. (See convention.go for what
	// zero and Off mean for every option.) It also bounds every task
	// method (mcp.ServerOptions.TaskWaitTimeout): tasks/result continues
	// the wait of the call that started its task, and waits no longer.
	Timeout time.Duration
	// StreamTimeout is the gRPC deadline of each streaming call (server,
	// client or bidirectional), separate from Timeout because a stream
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
	// streams are open-ended (gateway/internal/watch, docs/streaming.md).
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
	// InputErrors selects how invalid arguments are answered.
	InputErrors InputErrorMode
	// ExposeDebugInfo passes google.rpc.DebugInfo error details from the
	// backends on to clients; by default they are withheld (and logged
	// at debug level), since they hold stack traces and internals meant
	// for the service's developers.
	ExposeDebugInfo bool
	// ForwardHeaders names inbound HTTP headers copied into the gRPC
	// metadata of each call (lowercased; every value kept). Nothing else
	// of the request is forwarded. New refuses a hop-by-hop header
	// (Connection, Keep-Alive, TE, Trailer, Transfer-Encoding, Upgrade,
	// Host, Proxy-*), a name that is not a legal gRPC metadata key, the
	// keys gRPC reserves (grpc-*) or sets itself, and, with Auth, a
	// header that carries the client's credential.
	ForwardHeaders []string
	// Metadata is added to every call; see [ParseMetadata].
	Metadata metadata.MD
}

// ResultOptions bound tool results; the zero value means defaults.
type ResultOptions struct {
	// MaxBytes is the result budget: the most bytes of JSON a tool
	// result's structuredContent may carry (budget.go). A larger result
	// is cut to fit and kept whole for TTL as a resource. Zero means
	// DefaultMaxResultBytes, Off no budget; otherwise at least
	// MinMaxResultBytes.
	MaxBytes int
	// TTL is how long a result kept whole after a cut stays readable;
	// zero means results.DefaultTTL.
	TTL time.Duration
	// StoreBytes bounds the bytes of all results kept whole (the oldest
	// go first); zero means results.DefaultMaxBytes. A result larger
	// than it is cut but not kept.
	StoreBytes int64
	// StoreEntries bounds how many results are kept whole; zero means
	// results.DefaultMaxEntries.
	StoreEntries int
	// StoreBytesPerPrincipal and StoreEntriesPerPrincipal bound one
	// authenticated principal's part of the store, all its sessions
	// together: over it, its own oldest results go first, and when the
	// whole store is full the principal holding the most pays, so one
	// principal cannot push another's results out within their TTL (see
	// results.Store). Zero means half of StoreBytes and of StoreEntries;
	// Off, no per-principal bound.
	StoreBytesPerPrincipal   int64
	StoreEntriesPerPrincipal int
}

// CatalogOptions choose and shape the tools; the zero value exposes
// every method a user calls, rediscovered every DefaultRefresh.
type CatalogOptions struct {
	// Include and Exclude choose the methods exposed, by glob on
	// "package.Service/Method"; see filter.go for the syntax. Empty Include
	// means every method; Exclude wins over Include.
	Include, Exclude []string
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
	// UseProtoNames makes schemas and results use the original proto field
	// names instead of protojson's lowerCamel JSON names.
	UseProtoNames bool
	// Tools correct the tools of the methods they match without touching
	// the backend: name, title, description, hints, and arguments hidden,
	// fixed or given a default. Every rule that matches a method applies,
	// in order. See [ToolOverride]; New fails, with an error wrapping
	// [ErrToolOverride], on a rule that matches no method once every
	// backend is discovered, or that does not fit the method it matches.
	Tools []ToolOverride
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
}

// SearchOptions choose how the catalog is listed; the zero value lists
// typed tools while they fit DefaultToolBudget, and ranks search
// lexically.
type SearchOptions struct {
	// ToolMode says how the catalog is listed: ToolModeAuto (the zero
	// value), ToolModeTyped or ToolModeSearch; see toolmode.go.
	ToolMode ToolMode
	// ToolBudget is ToolModeAuto's limit, in estimated tokens (tools/list
	// JSON bytes / 4): typed up to it, search beyond. Zero means
	// DefaultToolBudget; Off means always typed.
	ToolBudget int
	// Embeddings, when set, fuses search_tools' lexical ranking with
	// an embedding model's (see SearchEmbeddings); nil ranks lexically.
	Embeddings *SearchEmbeddings
}

// TransportOptions configure the MCP server and its transports; nil
// fields mean their defaults.
type TransportOptions struct {
	// Server is the MCP server's limits: requests in flight per session
	// (MaxConcurrentCalls), on the whole gateway (MaxInFlight) and per
	// principal (MaxInFlightPerPrincipal), task polls per second
	// (MaxTaskPolls), a batch's messages (MaxBatch), a stdio line
	// (MaxMessageBytes) and the other mcp.ServerOptions limits, each
	// documented there; nil means their defaults. The gateway sets the
	// fields that are its own wiring (Logger, Trace, TraceBodies,
	// SessionObserver, PrincipalOf, TaskWaitTimeout: Calls.Timeout)
	// over whatever is given.
	Server *mcp.ServerOptions
	// HTTP configures the Streamable HTTP endpoint; nil means defaults.
	// Its SessionSecret (and PreviousSessionSecrets) also key the task
	// ids (gateway/internal/taskid), so replicas sharing it share tasks;
	// without one, task ids are valid only on the process that issued
	// them.
	HTTP *mcp.StreamableHTTPOptions
	// WebSocket configures /ws; nil means defaults.
	WebSocket *mcp.WebSocketOptions
	// SSE configures the legacy HTTP+SSE transport at /sse; nil means
	// defaults.
	SSE *mcp.SSEOptions
	// ReadTimeout bounds how long a client may take to send a request
	// body after its headers (a slower sender is cut, see
	// mcp.RequestDeadlines); zero means mcp.DefaultReadTimeout, negative
	// no limit.
	ReadTimeout time.Duration
}

// FrontDoorOptions shape what Handler serves; the zero value serves the
// whole catalog at /mcp, /ws and /sse to loopback names.
type FrontDoorOptions struct {
	// AllowedHosts lists the Host header values the HTTP endpoints accept
	// besides loopback names (and, on a connection that did not arrive on
	// loopback, IP literals): the names clients use to reach the gateway,
	// e.g. "mcp.example.com" (any port) or "mcp.example.com:8443". It
	// applies to /mcp, /ws and /sse (added to their options' own lists),
	// to /metrics and /readyz, and to the OAuth metadata, so that a page
	// whose name was rebound to the gateway's address can use none of
	// them. See mcp.OriginProtection.
	AllowedHosts []string
	// SeparateAdmin serves /metrics and /readyz only on AdminHandler (for
	// an admin listener of their own), not on Handler.
	SeparateAdmin bool
	// Toolsets are named views of the catalog, each served at its own
	// endpoints (/mcp/NAME, /ws/NAME, /sse/NAME) with its own tools/list,
	// search index, instructions and list_changed, from the one
	// discovery; /mcp stays the whole catalog. See [Toolset]; New checks
	// their names, patterns and scopes.
	Toolsets []Toolset
	// ToolsetsOnly serves only the toolsets' endpoints: /mcp, /ws and
	// /sse (the whole catalog) answer 404, so every agent goes through a
	// curated view. It needs Toolsets. Stdio then serves StdioToolset.
	ToolsetsOnly bool
	// StdioToolset names the toolset ServeStdio serves; empty: the whole
	// catalog (refused with ToolsetsOnly).
	StdioToolset string
}

// ScopeOptions say how Options.Auth's tool scope rules apply; the zero
// value warns of a rule that matches nothing and lists every tool to
// everyone.
type ScopeOptions struct {
	// Strict makes New fail, with an error wrapping
	// [ErrUnmatchedScopeRule], when a tool scope rule of Auth matches no
	// tool of the catalog built at start. Without it such a rule is
	// logged as a warning. On a later rebuild an unmatched rule is logged
	// (at error level with Strict) and stays in force: it applies
	// again as soon as a tool it matches is back.
	Strict bool
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
}

// TelemetryOptions say what is recorded; the zero value records nothing
// but the Logger's lines.
type TelemetryOptions struct {
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
	// ProtocolTrace logs every JSON-RPC message in and out at debug level
	// on Logger (mcp.ServerOptions.Trace), with argument values, results,
	// resource bodies and task status messages only when LogArguments is
	// set too (mcp.ServerOptions.TraceBodies).
	ProtocolTrace bool
}
