// Package gateway is the product: it discovers a gRPC backend's methods,
// compiles each into an MCP tool (names, descriptions, JSON Schemas,
// message types, all built once at discovery), serves tools/call by
// converting JSON arguments to protobuf, invoking the backend and turning
// the response or the gRPC status into an MCP result, and puts the MCP
// server behind the HTTP front door.
//
// The protocol itself lives in gateway/mcp (which knows nothing of gRPC),
// the protobuf to JSON Schema mapping in gateway/schema, and descriptor
// sources in the reflection package.
package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/reflection"
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

// Options configure a Gateway. The zero value (or nil) means defaults.
type Options struct {
	// Logger receives the gateway's logs; nil discards them.
	Logger *slog.Logger
	// Version is reported as the server version; default "dev".
	Version string
	// CallTimeout is the gRPC deadline of each unary call; default 30s.
	CallTimeout time.Duration
	// StreamTimeout is the gRPC deadline of each streaming call (server,
	// client or bidirectional), separate from CallTimeout because a stream
	// legitimately runs longer than a request; default 5m. A deadline hit
	// mid-stream returns the messages so far with a DEADLINE_EXCEEDED
	// error result.
	StreamTimeout time.Duration
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
	// InputErrors selects how invalid arguments are answered.
	InputErrors InputErrorMode
	// ExposeHealth exposes grpc.health.v1.Health as tools; hidden by
	// default.
	ExposeHealth bool
	// UseProtoNames makes schemas and results use the original proto field
	// names instead of protojson's lowerCamel JSON names.
	UseProtoNames bool
	// HTTP configures the Streamable HTTP endpoint; nil means defaults.
	HTTP *mcp.StreamableHTTPOptions
	// Auth, when set, authenticates every request to the MCP endpoints
	// and serves the OAuth protected-resource metadata; health endpoints
	// stay open. The caller owns it and closes it after Shutdown. Nil
	// means no authentication.
	Auth *auth.Authenticator
	// ForwardHeaders names inbound HTTP headers copied into the gRPC
	// metadata of each call (lowercased; every value kept). Nothing else
	// of the request is forwarded; see [CheckForwardHeader] for the names
	// refused.
	ForwardHeaders []string
	// Metadata is added to every call; see [ParseMetadata].
	Metadata metadata.MD
}

// Backend is the gRPC service the gateway fronts.
type Backend struct {
	// Name identifies the backend in logs and errors; default Address.
	Name string
	// Address is HOST:PORT, for messages.
	Address string
	// Conn carries the calls.
	Conn grpc.ClientConnInterface
	// Source discovers the services; nil means server reflection over Conn.
	Source reflection.Source
}

// Gateway serves one backend's methods as MCP tools. It is an mcp.Handler.
type Gateway struct {
	opts    Options
	backend Backend
	catalog atomic.Pointer[catalog]
	server  *mcp.Server
	md      outgoingMD
}

// New discovers the backend's services and compiles the tool catalog. A
// backend that cannot be discovered is an error that names it, the cause
// and what to do.
func New(ctx context.Context, b Backend, opts *Options) (*Gateway, error) {
	g := &Gateway{backend: b}
	if opts != nil {
		g.opts = *opts
	}
	if g.opts.Logger == nil {
		g.opts.Logger = slog.New(slog.DiscardHandler)
	}
	if g.opts.Version == "" {
		g.opts.Version = "dev"
	}
	if g.opts.CallTimeout <= 0 {
		g.opts.CallTimeout = 30 * time.Second
	}
	if g.opts.StreamTimeout <= 0 {
		g.opts.StreamTimeout = DefaultStreamTimeout
	}
	if g.opts.StreamMaxMessages <= 0 {
		g.opts.StreamMaxMessages = DefaultStreamMaxMessages
	}
	if g.opts.StreamMaxBytes <= 0 {
		g.opts.StreamMaxBytes = DefaultStreamMaxBytes
	}
	if g.backend.Name == "" {
		g.backend.Name = b.Address
	}
	md, err := newOutgoingMD(g.opts.ForwardHeaders, g.opts.Metadata)
	if err != nil {
		return nil, err
	}
	g.md = md
	if g.backend.Source == nil {
		g.backend.Source = reflection.NewServerReflection(b.Conn, &reflection.ServerReflectionOptions{Logger: g.opts.Logger})
	}
	if err := g.discover(ctx); err != nil {
		return nil, err
	}
	g.server = mcp.NewServer(mcp.Implementation{Name: "grpc-mcp-gateway", Title: "gRPC MCP Gateway", Version: g.opts.Version}, g,
		&mcp.ServerOptions{Logger: g.opts.Logger})
	return g, nil
}

// discover runs the descriptor source and swaps in a new catalog.
func (g *Gateway) discover(ctx context.Context) error {
	res, err := g.backend.Source.Discover(ctx)
	if err != nil {
		return g.discoveryError(err)
	}
	c, err := buildCatalog(res, g.backend.Conn, catalogOptions{
		exposeHealth:  g.opts.ExposeHealth,
		useProtoNames: g.opts.UseProtoNames,
		logger:        g.opts.Logger,
	})
	if err != nil {
		return fmt.Errorf("backend %s: %w", g.backend.Name, err)
	}
	g.catalog.Store(c)
	g.opts.Logger.Info("discovered backend", "backend", g.backend.Name, "services", len(res.Services), "tools", len(c.tools))
	return nil
}

// discoveryError phrases a discovery failure as one line an operator can
// act on.
func (g *Gateway) discoveryError(err error) error {
	name := g.backend.Name
	switch {
	case errors.Is(err, reflection.ErrReflectionNotSupported):
		return fmt.Errorf("backend %s does not serve gRPC server reflection (grpc.reflection.v1 or v1alpha): enable it on the server (grpc-go: reflection.Register(server)): %w", name, err)
	case status.Code(err) == codes.Unavailable || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("backend %s is unreachable: check the address, that the server is running, and --plaintext or the TLS flags: %w", name, err)
	}
	return fmt.Errorf("backend %s: discovery failed: %w", name, err)
}

// Tools returns the current tool set; it is part of mcp.Handler.
func (g *Gateway) Tools() *mcp.ToolSet { return g.catalog.Load().set }

// Server returns the MCP server, for transports the caller runs itself.
func (g *Gateway) Server() *mcp.Server { return g.server }

// ServeStdio serves MCP over newline-delimited JSON on in and out until in
// ends or ctx is done.
func (g *Gateway) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	return g.server.ServeStdio(ctx, in, out)
}

// Handler is the HTTP front door: Streamable HTTP at /mcp and a liveness
// probe at /healthz.
func (g *Gateway) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp", g.protect(g.server.StreamableHTTPHandler(g.opts.HTTP)))
	g.mountAuthMetadata(mux)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	})
	return mux
}

// Shutdown ends the MCP sessions and streams; in-flight calls are
// cancelled when ctx expires.
func (g *Gateway) Shutdown(ctx context.Context) error { return g.server.Shutdown(ctx) }
