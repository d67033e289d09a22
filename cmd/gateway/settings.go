package main

import (
	"encoding"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/results"
	"github.com/grpc-mcp-gateway/gateway/gateway/state"
	"github.com/grpc-mcp-gateway/gateway/internal/limit"
)

// A setting is declared once, here: its flag name, the field it sets,
// its default, whether it may be off, its help group and its text. The
// flag (and so -h and docs/configuration.md), its GATEWAY_* variable and
// config key (config_apply.go), and the check that a setting which may
// not be off is positive all come from the declaration. Checks that
// relate settings to one another, or read files, stay with the flags of
// their concern (transports.go, results.go...); their errors carry the
// settings they are about, as flagNames in a settingError or as the
// option a declaration names (about), never as "--name" in their text,
// so inSettingWords names each as the operator gave it.
//
// To add a setting: add its field to config (or to gateway.Options, in
// the group of its concept, bound through c.opts), declare it below in
// its group with the option's path as its field, and run
//
//	go test ./cmd/gateway -run TestConfigurationReference -update-reference
//
// then show it in examples/config/gateway.yaml.
type setting struct {
	// name is the flag's name; the config key is it in snake_case and
	// the variable GATEWAY_ and it upper-cased (flagKey, envName).
	name string
	// group is its section of -h and of docs/configuration.md; the
	// sections come in the order of their first setting.
	group string
	// field, when the setting sets a library option, is that option's
	// path, as a *gateway.OptionError names it ("Options.Calls.Timeout",
	// "OAuthConfig.JWKSURL", "TLS.CAFile"), so an error the library
	// raises about it names the setting as the operator gave it
	// (inSettingWords).
	field string
	// ptr is the setting's variable in c: a *bool, a *string, a
	// *time.Duration, *int or *int64 (numeric settings, internal/limit's
	// rule), a flag.Value (lists and values of their own) or an
	// encoding.TextUnmarshaler.
	ptr func(c *config) any
	// def is the default: a bool, a string, a number or an
	// encoding.TextMarshaler, as ptr is; nil is the zero value.
	def any
	// offOK says whether a numeric setting may be off ("off",
	// "unlimited"); one that may not is checked to be positive. For a
	// field of gateway.Options it must say what gateway.New does with
	// Off (its mustNotBeOff list): TestSettingsOffAgreesWithTheLibrary.
	offOK bool
	// cmdLineOnly is a setting that says what the program does rather
	// than how the gateway runs: no config key or variable sets it.
	cmdLineOnly bool
	// fileSection, when set, is the config file's section that stands for
	// the setting instead of a key of its own: backends: for --backend,
	// since a backend in the file has settings of its own.
	fileSection string
	usage       string
}

const (
	grpProgram                     = "Program"
	grpBackendsAndDiscovery        = "Backends and discovery"
	grpBackendConnections          = "Backend connections"
	grpCallsAndResults             = "Calls and results"
	grpSearchMode                  = "Search mode"
	grpMcpFrontDoor                = "MCP front door"
	grpFleet                       = "Fleet"
	grpAuthentication              = "Authentication"
	grpCallingBackendsAsTheEndUser = "Calling backends as the end user"
	grpObservability               = "Observability"
)

// settings are every setting of the gateway, in the order of -h.
var settings = []setting{
	// Program
	{name: "config", group: grpProgram, cmdLineOnly: true,
		ptr:   func(c *config) any { return &c.configFile },
		usage: "YAML config FILE (see examples/config/gateway.yaml); flags and GATEWAY_* variables override it, flags override both"},
	{name: "check-config", group: grpProgram, cmdLineOnly: true,
		ptr:   func(c *config) any { return &c.checkConfig },
		usage: "validate the config FILE (with the flags and GATEWAY_* variables given) and exit: 0 when valid, 1 when not; its .proto files are compiled and kept in --proto-cache, for the next start"},
	{name: "version", group: grpProgram, cmdLineOnly: true,
		ptr:   func(c *config) any { return &c.showVersion },
		usage: "print the version, commit and Go version, and exit"},
	{name: "probe", group: grpProgram, cmdLineOnly: true,
		ptr:   func(c *config) any { return &c.obs.probe },
		usage: "GET this URL and exit 0 if it answers 2xx, 1 otherwise; for container health checks, e.g. http://127.0.0.1:8080/healthz"},

	// Backends and discovery
	{name: "backend", group: grpBackendsAndDiscovery, fileSection: "backends",
		ptr:   func(c *config) any { return &c.backends.backends },
		usage: "gRPC backend NAME=TARGET (repeatable; NAME is 1-32 of a-z 0-9 _ -); TARGET is HOST:PORT, dns:///HOST:PORT, unix:///PATH, unix-abstract:NAME, passthrough:///ADDR or a list of replicas HOST:PORT,HOST:PORT; a single backend may be given as TARGET alone (default: start the bundled demo backend on a loopback port)"},
	{name: "demo", group: grpBackendsAndDiscovery,
		ptr:   func(c *config) any { return &c.demo },
		usage: "front the bundled demo backend (examples/zoo) on a loopback port; also what runs when nothing names a backend"},
	{name: "include", field: "Options.Catalog.Include", group: grpBackendsAndDiscovery,
		ptr:   func(c *config) any { return (*stringList)(&c.opts.Catalog.Include) },
		usage: "expose only methods matching this glob on package.Service/Method, e.g. 'zoo.v1.ZooService/*' ('*' does not cross '/'; a pattern without '/' means SERVICE/*; repeatable)"},
	{name: "exclude", field: "Options.Catalog.Exclude", group: grpBackendsAndDiscovery,
		ptr:   func(c *config) any { return (*stringList)(&c.opts.Catalog.Exclude) },
		usage: "hide methods matching this glob on package.Service/Method (repeatable; wins over --include)"},
	{name: "descriptor-set", group: grpBackendsAndDiscovery,
		ptr:   func(c *config) any { return &c.backends.descriptorSets },
		usage: "FileDescriptorSet FILE (buf build -o, protoc --include_imports --include_source_info -o): its comments are overlaid on server reflection, and it replaces reflection for a backend that has none (repeatable)"},
	{name: "proto", group: grpBackendsAndDiscovery,
		ptr:   func(c *config) any { return &c.backends.protos },
		usage: ".proto FILE compiled at start, used like --descriptor-set (repeatable)"},
	{name: "proto-path", group: grpBackendsAndDiscovery,
		ptr:   func(c *config) any { return &c.backends.protoPaths },
		usage: "import path DIR for --proto (repeatable; default .)"},
	{name: "proto-cache", group: grpBackendsAndDiscovery,
		ptr:   func(c *config) any { return &c.backends.protoCache },
		usage: "directory DIR where each compile of --proto files is kept, so a start whose files did not change compiles nothing and one after an edit compiles only what changed (default: the user cache directory's grpc-mcp-gateway/protos, e.g. ~/.cache/grpc-mcp-gateway/protos; off: no cache)"},
	{name: "no-reflection", group: grpBackendsAndDiscovery,
		ptr:   func(c *config) any { return &c.backends.noReflection },
		usage: "never ask the backend for server reflection: take its API from --descriptor-set or --proto alone (one backend only)"},
	{name: "refresh", field: "Options.Catalog.Refresh", group: grpBackendsAndDiscovery, def: gateway.DefaultRefresh, offOK: true,
		ptr:   func(c *config) any { return &c.opts.Catalog.Refresh },
		usage: "discover every backend again this often (its API, and its replicas behind a dns:/// name) and tell clients when tools change (off: never on a timer; a backend is also discovered again when its connection comes back)"},
	{name: "discovery-timeout", field: "Options.Catalog.DiscoveryTimeout", group: grpBackendsAndDiscovery, def: gateway.DefaultDiscoveryTimeout,
		ptr:   func(c *config) any { return &c.opts.Catalog.DiscoveryTimeout },
		usage: "how long one discovery of a backend may take (at start, and on each refresh)"},
	{name: "require-backends", field: "Options.Catalog.RequireBackends", group: grpBackendsAndDiscovery,
		ptr:   func(c *config) any { return &c.opts.Catalog.RequireBackends },
		usage: "exit with an error when a backend cannot be discovered at start, instead of serving the others and retrying it"},
	{name: "expose-health", field: "Options.Catalog.ExposeHealth", group: grpBackendsAndDiscovery,
		ptr:   func(c *config) any { return &c.opts.Catalog.ExposeHealth },
		usage: "expose grpc.health.v1.Health as tools"},
	{name: "expose-internal", field: "Options.Catalog.ExposeInternal", group: grpBackendsAndDiscovery,
		ptr: func(c *config) any { return &c.opts.Catalog.ExposeInternal },
		usage: "expose the services that serve a server's operators and infrastructure, not its users, hidden by default (each logged when hidden): " +
			strings.Join(gateway.InternalServices(), ", ")},

	// Backend connections
	{name: "plaintext", field: "TLS.Plaintext", group: grpBackendConnections,
		ptr:   func(c *config) any { return &c.tls.Plaintext },
		usage: "use plaintext to the backend (the default for loopback backends; others default to TLS)"},
	{name: "backend-ca", field: "TLS.CAFile", group: grpBackendConnections,
		ptr:   func(c *config) any { return &c.tls.CAFile },
		usage: "PEM file of CA certificates for the backend's TLS (default: system roots)"},
	{name: "backend-cert", field: "TLS.CertFile", group: grpBackendConnections,
		ptr:   func(c *config) any { return &c.tls.CertFile },
		usage: "PEM client certificate for mutual TLS to the backend (with --backend-key)"},
	{name: "backend-key", field: "TLS.KeyFile", group: grpBackendConnections,
		ptr:   func(c *config) any { return &c.tls.KeyFile },
		usage: "PEM private key for --backend-cert"},
	{name: "backend-server-name", field: "TLS.ServerName", group: grpBackendConnections,
		ptr:   func(c *config) any { return &c.tls.ServerName },
		usage: "server name to verify in the backend's certificate (and send as SNI)"},
	{name: "backend-lb", group: grpBackendConnections, def: backendconn.LBRoundRobin,
		ptr:   func(c *config) any { return &c.backends.conn.lb },
		usage: `how calls are spread over a backend's addresses (replicas): "round_robin" (each call to the next ready replica) or "pick_first" (all calls to one until it fails)`},
	{name: "backend-keepalive", group: grpBackendConnections, def: backendconn.DefaultKeepalive, offOK: true,
		ptr:   func(c *config) any { return &c.backends.conn.keepalive },
		usage: "ping a backend connection that has calls in flight after this much silence, to find a dead peer (off: no pings; grpc-go servers refuse pings more often than every 5m by default)"},
	{name: "backend-max-recv-bytes", group: grpBackendConnections, def: backendconn.DefaultMaxMessageBytes, offOK: true,
		ptr:   func(c *config) any { return &c.backends.conn.maxRecv },
		usage: "largest message accepted from a backend; a larger response is a RESOURCE_EXHAUSTED tool error"},
	{name: "backend-max-send-bytes", group: grpBackendConnections, def: backendconn.DefaultMaxMessageBytes, offOK: true,
		ptr:   func(c *config) any { return &c.backends.conn.maxSend },
		usage: "largest message sent to a backend"},
	{name: "retry", group: grpBackendConnections, def: "on",
		ptr:   func(c *config) any { return &c.backends.conn.retry },
		usage: `"on": calls to tools whose idempotentHint is true (NO_SIDE_EFFECTS, IDEMPOTENT, a GET/PUT/DELETE HTTP rule, a reading or deleting verb, or the tool option) are retried on UNAVAILABLE, on another replica where there is one; "off": never`},
	{name: "metadata", field: "Options.Calls.Metadata", group: grpBackendConnections,
		// The flag's KEY=VALUE values are parsed (gateway.ParseMetadata)
		// into the option's metadata.MD, so the flag has a list of its own.
		ptr:   func(c *config) any { return &c.front.metadata },
		usage: "KEY=VALUE gRPC metadata added to every call; -bin keys take base64 (repeatable)"},
	{name: "forward-header", field: "Options.Calls.ForwardHeaders", group: grpBackendConnections,
		// The option also holds the headers --forward-claim sends
		// (forwardHeaderNames), so the flag's own list is kept apart.
		ptr:   func(c *config) any { return &c.front.forwardHeaders },
		usage: "copy this inbound HTTP header into the gRPC metadata of each call (repeatable)"},

	// Calls and results
	{name: "call-timeout", field: "Options.Calls.Timeout", group: grpCallsAndResults, def: gateway.DefaultCallTimeout,
		ptr:   func(c *config) any { return &c.opts.Calls.Timeout },
		usage: "gRPC deadline of each tool call, and the longest a task method (tasks/result) waits"},
	{name: "stream-timeout", field: "Options.Calls.StreamTimeout", group: grpCallsAndResults, def: gateway.DefaultStreamTimeout,
		ptr:   func(c *config) any { return &c.opts.Calls.StreamTimeout },
		usage: "gRPC deadline of each streaming tool call (server, client or bidirectional streams)"},
	{name: "method-timeout", group: grpCallsAndResults,
		ptr: func(c *config) any { return &c.methodTimeouts },
		usage: "GLOB=DURATION: the gRPC deadline of the methods GLOB matches (package.Service/Method, as --include), unary or streaming, on every backend, e.g. " + methodTimeoutExample +
			" for long polls; the first that matches applies, over a config file backend's call_timeout and stream_timeout, under its methods: entries (repeatable)"},
	{name: "stream-max-messages", field: "Options.Calls.StreamMaxMessages", group: grpCallsAndResults, def: gateway.DefaultStreamMaxMessages,
		ptr:   func(c *config) any { return &c.opts.Calls.StreamMaxMessages },
		usage: "most messages one streaming call collects; past it the stream is cancelled and the result marked truncated"},
	{name: "stream-max-bytes", field: "Options.Calls.StreamMaxBytes", group: grpCallsAndResults, def: gateway.DefaultStreamMaxBytes,
		ptr:   func(c *config) any { return &c.opts.Calls.StreamMaxBytes },
		usage: "most bytes of message JSON one streaming call collects; past it the stream is cancelled and the result marked truncated"},
	{name: "watch-window", group: grpCallsAndResults, def: gateway.DefaultWatchWindow,
		ptr:   func(c *config) any { return &c.watch.window },
		usage: "how long a call of an open-ended stream (a watch, a subscription, a tail) collects messages when the model does not choose (its window-seconds argument); the call then returns them as a successful result"},
	{name: "watch-max-window", group: grpCallsAndResults, def: gateway.DefaultWatchMaxWindow,
		ptr:   func(c *config) any { return &c.watch.maxWindow },
		usage: "the longest window a call of an open-ended stream may choose; the stream's deadline (--stream-timeout, --method-timeout) bounds it too"},
	{name: "watch", group: grpCallsAndResults,
		ptr:   func(c *config) any { return &c.watch.methods },
		usage: "GLOB: also treat the server or bidirectional streams GLOB matches (package.Service/Method, as --include) as open-ended, whatever their names (repeatable)"},
	{name: "watch-ignore-names", group: grpCallsAndResults,
		ptr:   func(c *config) any { return &c.watch.ignoreNames },
		usage: "do not recognise open-ended streams by their methods' names (Watch, Subscribe, Tail, Follow, Listen, StreamingPull, LongPoll): only --watch and the (mcpgateway.v1.tool) watch option"},
	{name: "operation-wait", field: "Options.Calls.OperationWait", group: grpCallsAndResults, def: gateway.DefaultOperationWait, offOK: true,
		ptr:   func(c *config) any { return &c.opts.Calls.OperationWait },
		usage: "how long a call of a long-running method (google.longrunning operations) waits for its result before returning the unfinished operation's name; never past --call-timeout; off: return at once"},
	{name: "operation-cancel", field: "Options.Calls.OperationCancel", group: grpCallsAndResults,
		ptr:   func(c *config) any { return &c.opts.Calls.OperationCancel },
		usage: "cancel the backend operation (CancelOperation) when the client cancels a long-running call or goes away"},
	{name: "max-result-bytes", field: "Options.Results.MaxBytes", group: grpCallsAndResults, def: gateway.DefaultMaxResultBytes, offOK: true,
		ptr:   func(c *config) any { return &c.opts.Results.MaxBytes },
		usage: fmt.Sprintf("result budget: most bytes of JSON in one tool result; a larger result is cut to fit (long arrays keep their first elements, long strings are shortened, \"truncated\" lists the cuts) and kept whole as a resource for --result-ttl; at least %d; unlimited: no budget", gateway.MinMaxResultBytes)},
	{name: "result-ttl", field: "Options.Results.TTL", group: grpCallsAndResults, def: results.DefaultTTL,
		ptr:   func(c *config) any { return &c.opts.Results.TTL },
		usage: "how long a result cut to the budget stays readable whole (resources/read on its resource_link)"},
	{name: "result-store-bytes", field: "Options.Results.StoreBytes", group: grpCallsAndResults, def: results.DefaultMaxBytes,
		ptr:   func(c *config) any { return &c.opts.Results.StoreBytes },
		usage: "most bytes of whole results kept at once (the oldest go first); a larger result is cut but not kept"},
	{name: "result-store-entries", field: "Options.Results.StoreEntries", group: grpCallsAndResults, def: results.DefaultMaxEntries,
		ptr:   func(c *config) any { return &c.opts.Results.StoreEntries },
		usage: "most whole results kept at once (the oldest go first)"},
	{name: "result-store-bytes-per-principal", field: "Options.Results.StoreBytesPerPrincipal", group: grpCallsAndResults, def: 0, offOK: true,
		ptr:   func(c *config) any { return &c.opts.Results.StoreBytesPerPrincipal },
		usage: "most bytes of whole results one authenticated principal keeps, all its sessions together: past it its own oldest go first, so one cannot push out another's; 0: half of --result-store-bytes"},
	{name: "result-store-entries-per-principal", field: "Options.Results.StoreEntriesPerPrincipal", group: grpCallsAndResults, def: 0, offOK: true,
		ptr:   func(c *config) any { return &c.opts.Results.StoreEntriesPerPrincipal },
		usage: "most whole results one authenticated principal keeps, all its sessions together; 0: half of --result-store-entries"},
	{name: "input-errors", field: "Options.Calls.InputErrors", group: grpCallsAndResults, def: gateway.InputErrorsTool,
		ptr:   func(c *config) any { return &c.opts.Calls.InputErrors },
		usage: `how invalid arguments are answered: "tool" (isError result) or "protocol" (JSON-RPC -32602)`},
	{name: "json-names", group: grpCallsAndResults, def: "json",
		ptr:   func(c *config) any { return &c.jsonNames },
		usage: `field names in schemas and results: "json" (protojson lowerCamel) or "proto" (original names)`},
	{name: "tool-mode", field: "Options.Search.ToolMode", group: grpCallsAndResults, def: gateway.ToolModeAuto,
		ptr:   func(c *config) any { return &c.opts.Search.ToolMode },
		usage: `how tools are listed: "typed" (one tool per method), "search" (search_tools and call_tool) or "auto" (typed while tools/list is within --tool-budget)`},
	{name: "tool-budget", field: "Options.Search.ToolBudget", group: grpCallsAndResults, def: gateway.DefaultToolBudget, offOK: true,
		ptr:   func(c *config) any { return &c.opts.Search.ToolBudget },
		usage: "estimated tokens (tools/list JSON bytes / 4) up to which --tool-mode auto lists typed tools; unlimited: always typed"},
	{name: "expose-debug-info", field: "Options.Calls.ExposeDebugInfo", group: grpCallsAndResults,
		ptr:   func(c *config) any { return &c.opts.Calls.ExposeDebugInfo },
		usage: "pass google.rpc.DebugInfo error details from backends on to clients (withheld by default: stack traces and internals)"},

	// Search mode
	{name: "search-embeddings", group: grpSearchMode,
		ptr:   func(c *config) any { return &c.search.embeddingsURL },
		usage: "URL of an OpenAI-compatible embeddings endpoint (https, or http to loopback), e.g. http://127.0.0.1:11434/v1/embeddings: search_tools then fuses its lexical ranking with the model's (with --search-embeddings-model); queries are sent to it"},
	{name: "search-embeddings-model", group: grpSearchMode,
		ptr:   func(c *config) any { return &c.search.model },
		usage: "model name for --search-embeddings"},
	{name: "search-embeddings-key-file", group: grpSearchMode,
		ptr:   func(c *config) any { return &c.search.keyFile },
		usage: "file holding the API key for --search-embeddings, sent as a bearer token"},

	// MCP front door
	{name: "listen", group: grpMcpFrontDoor, def: "127.0.0.1:8080",
		ptr:   func(c *config) any { return &c.listen },
		usage: "address for MCP over HTTP: Streamable HTTP at /mcp, WebSocket at /ws, legacy SSE at /sse"},
	{name: "stdio", group: grpMcpFrontDoor,
		ptr:   func(c *config) any { return &c.stdio },
		usage: "serve MCP on stdin/stdout instead of HTTP (logs go to stderr)"},
	{name: "toolsets-only", field: "Options.FrontDoor.ToolsetsOnly", group: grpMcpFrontDoor,
		ptr:   func(c *config) any { return &c.opts.FrontDoor.ToolsetsOnly },
		usage: "serve only the toolsets' endpoints (/mcp/NAME...; see toolsets: in the config file): /mcp, /ws and /sse, the whole catalog, answer 404"},
	{name: "stdio-toolset", field: "Options.FrontDoor.StdioToolset", group: grpMcpFrontDoor,
		ptr:   func(c *config) any { return &c.opts.FrontDoor.StdioToolset },
		usage: "with --stdio, serve this toolset instead of the whole catalog"},
	{name: "admin-listen", group: grpMcpFrontDoor,
		ptr:   func(c *config) any { return &c.exposure.adminListen },
		usage: "HOST:PORT serving /metrics, /readyz and /healthz, which then leave --listen (which keeps /healthz)"},
	{name: "allowed-host", group: grpMcpFrontDoor,
		ptr:   func(c *config) any { return &c.exposure.allowedHosts },
		usage: "Host header name (optionally NAME:PORT) clients use to reach the gateway, e.g. mcp.example.com; loopback names, and IP addresses off loopback, are always accepted, other names only when listed (repeatable; the host of --oauth-resource is added)"},
	{name: "allow-origin", group: grpMcpFrontDoor,
		ptr:   func(c *config) any { return &c.allowOrigins },
		usage: "browser Origin allowed to call /mcp, /ws and /sse, e.g. https://app.example.com (repeatable)"},
	{name: "allow-unauthenticated", group: grpMcpFrontDoor,
		ptr:   func(c *config) any { return &c.exposure.allowUnauthenticated },
		usage: "serve a non-loopback --listen address without --bearer-tokens-file or --oauth-jwks-url (only behind something else that restricts who can connect)"},
	{name: "tls-cert", group: grpMcpFrontDoor,
		ptr:   func(c *config) any { return &c.front.tlsCert },
		usage: "PEM certificate (chain) to serve HTTPS on --listen (with --tls-key)"},
	{name: "tls-key", group: grpMcpFrontDoor,
		ptr:   func(c *config) any { return &c.front.tlsKey },
		usage: "PEM private key for --tls-cert"},
	{name: "max-request-bytes", group: grpMcpFrontDoor, def: mcp.DefaultMaxMessageBytes,
		ptr:   func(c *config) any { return &c.transports.maxRequestBytes },
		usage: "largest request body accepted on /mcp and /sse (413 beyond)"},
	{name: "ws-max-message-bytes", group: grpMcpFrontDoor, def: mcp.DefaultMaxMessageBytes,
		ptr:   func(c *config) any { return &c.transports.wsMaxMessageBytes },
		usage: "largest WebSocket message accepted on /ws (closed with 1009 beyond)"},
	{name: "ws-max-connections", group: grpMcpFrontDoor, def: mcp.DefaultMaxSessions,
		ptr:   func(c *config) any { return &c.transports.wsMaxConnections },
		usage: "open WebSocket connections on /ws; an upgrade beyond it gets 503"},
	{name: "max-concurrent-calls", group: grpMcpFrontDoor, def: mcp.DefaultMaxConcurrentCalls, offOK: true,
		ptr:   func(c *config) any { return &c.transports.maxConcurrentCalls },
		usage: "requests one session may have in flight; more get a JSON-RPC error"},
	{name: "max-in-flight", group: grpMcpFrontDoor, def: mcp.DefaultMaxInFlight, offOK: true,
		ptr:   func(c *config) any { return &c.transports.maxInFlight },
		usage: "requests in flight on the whole gateway, every session and stateless request together; more get a JSON-RPC error"},
	{name: "max-in-flight-per-principal", group: grpMcpFrontDoor, def: 0, offOK: true,
		ptr:   func(c *config) any { return &c.transports.maxInFlightPerPrin },
		usage: "requests in flight of one authenticated principal (token), all its sessions and stateless requests together (with --state, on every replica together), so one cannot take every slot of --max-in-flight; more get the same error; 0: half of --max-in-flight (anonymous and stdio requests have no share of their own)"},
	{name: "max-task-polls", group: grpMcpFrontDoor, def: mcp.DefaultMaxTaskPolls,
		ptr:   func(c *config) any { return &c.transports.maxTaskPolls },
		usage: "backend polls per second that every subscriptions/listen stream together makes to follow its tasks; one principal's streams make at most half of them"},
	{name: "max-batch", group: grpMcpFrontDoor, def: mcp.DefaultMaxBatch,
		ptr:   func(c *config) any { return &c.transports.maxBatch },
		usage: "messages in one JSON-RPC batch (2025-03-26); a larger batch gets one error and none of it runs"},
	{name: "max-sessions", group: grpMcpFrontDoor, def: mcp.DefaultMaxSessions,
		ptr:   func(c *config) any { return &c.transports.maxSessions },
		usage: "sessions held on /mcp and on /sse (each); initialize or GET beyond it gets 503"},
	{name: "max-sessions-per-principal", group: grpMcpFrontDoor, def: mcp.DefaultMaxSessionsPerPrincipal, offOK: true,
		ptr:   func(c *config) any { return &c.transports.maxSessionsPerPrin },
		usage: "sessions one authenticated principal (token) may hold on /mcp, on /sse and as /ws connections (each); more get 503"},
	{name: "session-idle-timeout", group: grpMcpFrontDoor, def: mcp.DefaultSessionIdleTimeout,
		ptr:   func(c *config) any { return &c.transports.sessionIdleTimeout },
		usage: "a /mcp session with no request and no open stream for this long ends"},
	{name: "read-timeout", group: grpMcpFrontDoor, def: mcp.DefaultReadTimeout,
		ptr:   func(c *config) any { return &c.transports.readTimeout },
		usage: "how long a client may take to send a request body after its headers (which get 10s); slower senders are cut"},
	{name: "session-secret-file", group: grpMcpFrontDoor,
		ptr:   func(c *config) any { return &c.transports.sessionSecretFile },
		usage: "file holding a shared secret (at least 32 bytes) that signs Mcp-Session-Id tokens, so replicas behind a round-robin load balancer share sessions (scale-out mode)"},
	{name: "session-ttl", group: grpMcpFrontDoor, def: 24 * time.Hour,
		ptr:   func(c *config) any { return &c.transports.sessionTTL },
		usage: "lifetime of a scale-out session token"},
	{name: "shutdown-grace", group: grpMcpFrontDoor, def: 15 * time.Second,
		ptr:   func(c *config) any { return &c.shutdownGrace },
		usage: "how long in-flight calls may finish after SIGTERM/SIGINT"},

	// Fleet
	{name: "state", group: grpFleet,
		ptr:   func(c *config) any { return &c.state.url },
		usage: "Redis or Valkey that the replicas of a fleet share (redis://HOST:PORT/DB, rediss://HOST:PORT/DB for TLS, unix:///PATH?db=N; with ?master_name=NAME the address is a Sentinel's): whole results behind resource links, revoked sessions, cancellations and each principal's requests in flight (--max-in-flight-per-principal) are shared through it, so any replica serves any request; needs --session-secret-file (default: none, one process keeps them in memory)"},
	{name: "state-password-file", group: grpFleet,
		ptr:   func(c *config) any { return &c.state.passwordFile },
		usage: "file holding the password for --state (instead of one in its URL)"},
	{name: "state-ca", group: grpFleet,
		ptr:   func(c *config) any { return &c.state.caFile },
		usage: "PEM file of the certificate authorities a rediss:// --state must chain to (default: the system's)"},
	{name: "state-prefix", group: grpFleet, def: state.DefaultPrefix,
		ptr:   func(c *config) any { return &c.state.prefix },
		usage: "namespace of this fleet's keys and channels in --state, so several fleets share one Redis (1-64 of a-z A-Z 0-9 _ - . :)"},
	{name: "state-max-revocations", group: grpFleet, def: state.DefaultMaxRevocations, offOK: true,
		ptr:   func(c *config) any { return &c.state.maxRevoked },
		usage: "deleted sessions the fleet keeps in --state (each until its token expires, read by every replica at start); a DELETE beyond it is refused with 503 and the session stays valid"},
	{name: "state-max-revocations-per-principal", group: grpFleet, def: state.DefaultMaxRevocationsPerPrincipal, offOK: true,
		ptr:   func(c *config) any { return &c.state.maxRevokedPerWho },
		usage: "deleted sessions of one authenticated principal the fleet keeps in --state; a DELETE beyond it is refused with 429 and the session stays valid (anonymous sessions count against --state-max-revocations only)"},
	{name: "require-state", group: grpFleet, def: true,
		ptr:   func(c *config) any { return &c.state.require },
		usage: "exit with an error when --state does not answer at start; false: start anyway, and serve everything that does not need the store until it answers"},

	// Authentication
	{name: "bearer-tokens-file", group: grpAuthentication,
		ptr:   func(c *config) any { return &c.front.bearerTokensFile },
		usage: "require one of the bearer tokens in FILE (one per line, # comments; re-read on change) on the MCP endpoints"},
	{name: "oauth-jwks-url", field: "OAuthConfig.JWKSURL", group: grpAuthentication,
		ptr:   func(c *config) any { return &c.front.oauthJWKSURL },
		usage: "require OAuth 2.1 JWT access tokens verified with the keys at this JWKS URL"},
	{name: "oauth-issuer", field: "OAuthConfig.Issuer", group: grpAuthentication,
		ptr:   func(c *config) any { return &c.front.oauthIssuer },
		usage: "the authorization server's issuer: tokens' iss must equal it (with --oauth-jwks-url)"},
	{name: "oauth-audience", field: "OAuthConfig.Audience", group: grpAuthentication,
		ptr:   func(c *config) any { return &c.front.oauthAudience },
		usage: "the aud tokens must carry (default --oauth-resource)"},
	{name: "oauth-resource", field: "OAuthConfig.Resource", group: grpAuthentication,
		ptr:   func(c *config) any { return &c.front.oauthResource },
		usage: "this server's canonical URI, e.g. https://mcp.example.com/mcp (default: derived from each request)"},
	{name: "oauth-required-scope", field: "OAuthConfig.RequiredScopes", group: grpAuthentication,
		ptr:   func(c *config) any { return &c.front.oauthRequiredScopes },
		usage: "a scope every token must grant (repeatable)"},
	{name: "oauth-tool-scope", field: "OAuthConfig.ToolScopes", group: grpAuthentication,
		ptr: func(c *config) any { return &c.front.oauthToolScopes },
		usage: "RULE=SCOPE: calling the tools RULE names also needs SCOPE; RULE is a tool name, or a method pattern that follows its methods " +
			"whatever their tools are named: zoo.v1.ZooService/DeleteAnimal, zoo.v1.ZooService/*, zoo.v1.* (repeatable)"},
	{name: "strict-scopes", field: "Options.Scopes.Strict", group: grpAuthentication,
		ptr:   func(c *config) any { return &c.opts.Scopes.Strict },
		usage: "refuse to start when an --oauth-tool-scope rule matches no tool (without it: a warning); on a later refresh such a rule is logged as an error and stays in force"},
	{name: "list-visible-only", field: "Options.Scopes.ListVisibleOnly", group: grpAuthentication,
		ptr:   func(c *config) any { return &c.opts.Scopes.ListVisibleOnly },
		usage: "tools/list and search_tools show each caller only the tools its token's scopes allow (--oauth-tool-scope rules and the methods' scopes options); a call of a hidden tool is still refused with the scope it lacks. Off by default: step-up starts from a tool the client can see, and a list that is the same for everyone can be cached"},
	{name: "forward-claim", group: grpAuthentication,
		ptr:   func(c *config) any { return &c.front.forwardClaims },
		usage: "CLAIM=HEADER: send the validated token's CLAIM to the backend as metadata HEADER (OAuth only; repeatable)"},

	// Calling backends as the end user
	{name: "backend-token-exchange", group: grpCallingBackendsAsTheEndUser,
		ptr:   func(c *config) any { return &c.exchange.s.TokenURL },
		usage: "call the backends as the end user: exchange each caller's OAuth token at this token endpoint URL (RFC 8693) for one meant for the backend, sent as its authorization; needs --oauth-jwks-url. With several backends each names its own audience or resource in its token_exchange in the config file (these flags' audience would be every backend's); a token_exchange with its own token_url replaces these flags for its backend"},
	{name: "backend-token-exchange-client-id", group: grpCallingBackendsAsTheEndUser,
		ptr:   func(c *config) any { return &c.exchange.s.ClientID },
		usage: "the gateway's client id at the authorization server"},
	{name: "backend-token-exchange-secret-file", group: grpCallingBackendsAsTheEndUser,
		ptr:   func(c *config) any { return &c.exchange.s.ClientSecretFile },
		usage: "FILE holding the client secret (client_secret_basic)"},
	{name: "backend-token-exchange-key-file", group: grpCallingBackendsAsTheEndUser,
		ptr:   func(c *config) any { return &c.exchange.s.PrivateKeyFile },
		usage: "PEM private key FILE signing a client assertion instead of a secret (private_key_jwt)"},
	{name: "backend-token-exchange-key-id", group: grpCallingBackendsAsTheEndUser,
		ptr:   func(c *config) any { return &c.exchange.s.KeyID },
		usage: "the kid of --backend-token-exchange-key-file's key"},
	{name: "backend-token-exchange-audience", group: grpCallingBackendsAsTheEndUser,
		ptr:   func(c *config) any { return &c.exchange.s.Audience },
		usage: "the backend's name at the authorization server (audience)"},
	{name: "backend-token-exchange-resource", group: grpCallingBackendsAsTheEndUser,
		ptr:   func(c *config) any { return &c.exchange.s.Resource },
		usage: "the backend's URI (resource, RFC 8707)"},
	{name: "backend-token-exchange-scope", group: grpCallingBackendsAsTheEndUser,
		ptr:   func(c *config) any { return &c.exchange.scope },
		usage: "a scope asked for the backend's token (repeatable)"},

	// Observability
	{name: "metrics", group: grpObservability, def: true,
		ptr:   func(c *config) any { return &c.obs.metrics },
		usage: "serve Prometheus metrics at /metrics on --listen"},
	{name: "log-level", group: grpObservability, def: "info",
		ptr:   func(c *config) any { return &c.logLevel },
		usage: "log level: debug, info, warn or error"},
	{name: "log-format", group: grpObservability, def: "text",
		ptr:   func(c *config) any { return &c.logFormat },
		usage: "log format: text or json"},
	{name: "log-arguments", field: "Options.Telemetry.LogArguments", group: grpObservability,
		ptr:   func(c *config) any { return &c.opts.Telemetry.LogArguments },
		usage: "log tool call argument values at debug level, and show in the --log-level debug protocol trace the values it otherwise redacts: arguments, tool and task results, resource bodies, task status messages (they may hold personal data)"},
}

// register adds s to fs as a flag bound to its variable in c, set to its
// default.
func (s *setting) register(fs *flag.FlagSet, c *config) {
	switch p := s.ptr(c).(type) {
	case *bool:
		def, _ := s.def.(bool)
		fs.BoolVar(p, s.name, def, s.usage)
	case *string:
		def, _ := s.def.(string)
		fs.StringVar(p, s.name, def, s.usage)
	case *time.Duration:
		limitVar(fs, p, s.name, number[time.Duration](s), s.offOK, s.usage)
	case *int:
		limitVar(fs, p, s.name, number[int](s), s.offOK, s.usage)
	case *int64:
		limitVar(fs, p, s.name, number[int64](s), s.offOK, s.usage)
	case flag.Value:
		fs.Var(p, s.name, s.usage)
	case encoding.TextUnmarshaler:
		fs.TextVar(p, s.name, s.def.(encoding.TextMarshaler), s.usage)
	default:
		panic(fmt.Sprintf("setting %s: variable of unsupported type %T", s.name, p))
	}
}

// number is s's numeric default, which its declaration may write as an
// untyped constant.
func number[T limit.Number](s *setting) T {
	switch d := s.def.(type) {
	case nil:
		return 0
	case int:
		return T(d)
	case int64:
		return T(d)
	case time.Duration:
		return T(d)
	}
	panic(fmt.Sprintf("setting %s: default %v (%T) is not a number", s.name, s.def, s.def))
}

// check refuses a numeric setting that may not be off but was given a
// negative value (the limit rule keeps it for this check to name), so
// the library's own check, in option words, never sees it. The error
// names the setting (inSettingWords names it as the operator gave it).
func (s *setting) check(c *config) error {
	if s.offOK {
		return nil
	}
	what := "number"
	if strings.HasSuffix(s.name, "-bytes") {
		what = "number of bytes"
	}
	var v any
	switch p := s.ptr(c).(type) {
	case *time.Duration:
		if *p > 0 {
			return nil
		}
		what, v = "duration", *p
	case *int:
		if *p > 0 {
			return nil
		}
		v = *p
	case *int64:
		if *p > 0 {
			return nil
		}
		v = *p
	default:
		return nil
	}
	return settingErrorf("%s: want a positive %s, got %v", flagName(s.name), what, v)
}

// checkSettings runs every setting's own check, in declaration order.
func (c *config) checkSettings() error {
	for i := range settings {
		if err := settings[i].check(c); err != nil {
			return err
		}
	}
	return nil
}

// declared is the declaration of the flag name, nil for none.
func declared(name string) *setting {
	for i := range settings {
		if settings[i].name == name {
			return &settings[i]
		}
	}
	return nil
}
