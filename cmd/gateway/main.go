// Command gateway serves the methods of one or more gRPC backends as MCP
// tools, and their services as MCP resources.
//
// With --demo, or when nothing names a backend at all, it starts the
// bundled demo service (examples/zoo) on a loopback port and fronts that,
// so `go run ./cmd/gateway` shows the gateway working on a fresh machine. Flags and wiring live here; the
// behaviour lives in package gateway.
//
// Exit codes: 0 after a clean shutdown, 1 when the gateway cannot start or
// serve, 2 for invalid flags or configuration (a tool scope rule that
// matches no tool, with --strict-scopes, included).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/results"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
	"github.com/grpc-mcp-gateway/gateway/internal/loopback"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// config holds the parsed flags.
type config struct {
	// opts are the gateway's options that flags bind directly, each to
	// its field (--call-timeout to opts.Calls.Timeout): serve adds what is
	// derived or built at start.
	opts gateway.Options
	// from is where each setting not given on the command line came
	// from (the file's line and key, or its variable), so an error the
	// library raises later names it there (inSettingWords).
	from origins
	// demo runs the bundled demo backend: --demo, or set by checkDemo
	// when nothing names a backend.
	demo     bool
	backends backendFlags
	listen   string
	stdio    bool
	tls      backendconn.TLS
	// methodTimeouts are --method-timeout's GLOB=DURATION values, and
	// methodDeadlines what validate made of them.
	methodTimeouts  stringList
	methodDeadlines []gateway.MethodTimeout
	shutdownGrace   time.Duration
	jsonNames       string
	search          searchFlags
	watch           watchFlags
	allowOrigins    stringList
	transports      transportFlags
	state           stateFlags
	front           frontDoor
	exchange        exchangeFlags
	exposure        exposure
	obs             observability
	logLevel        string
	logFormat       string

	// configFile is --config; checkConfig is --check-config, which reads
	// its file as --config does and exits after validating.
	configFile  string
	checkConfig string
	showVersion bool
}

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// usageError is a command line that cannot be parsed, as opposed to one
// whose settings are invalid: --check-config exits 2 for the first, 1 for
// the second.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	return parseConfig(args, stderr, os.LookupEnv)
}

// parseConfig reads the command line, the config file it names and the
// GATEWAY_* environment (see config_apply.go for the precedence), and validates
// the result. A value that came from the file or the environment is named
// by its line or variable in the error. After a parsed command line, c is
// returned with the error too, so the caller knows which mode was asked.
func parseConfig(args []string, stderr io.Writer, getenv func(string) (string, bool)) (*config, error) {
	c := &config{}
	fs := c.flagSet(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, &usageError{err}
	}
	if fs.NArg() > 0 {
		return nil, &usageError{fmt.Errorf("unexpected argument %q: flags only (see -h)", fs.Arg(0))}
	}
	if c.showVersion {
		return c, nil
	}
	from, err := c.configure(context.Background(), fs, getenv)
	if err != nil {
		return c, err
	}
	c.from = from
	// The declarations' own checks name the setting as it was given:
	// the flag, the variable, or the file's line and key.
	if err := c.checkSettings(); err != nil {
		return c, c.inSettingWords(err)
	}
	if err := c.validate(); err != nil {
		return c, c.inSettingWords(err)
	}
	return c, nil
}

// flagSet registers every declared setting (settings.go) as a flag on c.
func (c *config) flagSet(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("gateway", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { printHelp(fs.Output(), fs) }
	for i := range settings {
		settings[i].register(fs, c)
	}
	return fs
}

// catalogOptions are the gateway options that decide which tools the
// catalog holds and what a model reads of them. Serving, `gateway
// catalog` and --check-config all start from them, so that the report
// shows what serving lists.
func (c *config) catalogOptions(logger *slog.Logger) gateway.Options {
	opts := c.opts
	opts.Logger = logger
	opts.Version = version
	opts.Calls.MethodTimeouts = c.methodDeadlines
	opts.Catalog.UseProtoNames = c.jsonNames == "proto"
	opts.Calls.Watch = c.watch.options()
	return opts
}

// validate checks the settings, wherever they came from, and loads what
// must be readable at start: what the declarations' own checks
// (checkSettings) cannot, since it relates settings to one another or
// reads files. Its errors carry the settings they are about: the
// library's *gateway.OptionError (or one made by about), or a
// settingError naming flags, which parseConfig names as the operator
// gave them (inSettingWords).
func (c *config) validate() error {
	if c.jsonNames != "json" && c.jsonNames != "proto" {
		return settingErrorf(`%s: want "json" or "proto", got %q`, flagName("json-names"), c.jsonNames)
	}
	var err error
	if c.methodDeadlines, err = parseMethodTimeouts(c.methodTimeouts); err != nil {
		return err
	}
	if err := c.checkToolsets(); err != nil {
		return err
	}
	xs, err := c.exchange.settings()
	if err != nil {
		return err
	}
	if xs != nil {
		if c.front.oauthJWKSURL == "" {
			return settingErrorf("%s needs %s: it exchanges the caller's OAuth token", flagName("backend-token-exchange"), flagName("oauth-jwks-url"))
		}
		if _, err := xs.client(flagName("backend-token-exchange")); err != nil {
			return err
		}
	}
	if err := checkResults(&c.opts.Results); err != nil {
		return err
	}
	if err := c.search.check(); err != nil {
		return err
	}
	if err := c.watch.check(); err != nil {
		return err
	}
	if err := c.backends.check(context.Background(), &c.opts.Catalog); err != nil {
		return err
	}
	// Which backend exchanges for which audience is known once both the
	// flags and the backends are.
	if _, err := resolveExchanges(c.backends.parsed, xs); err != nil {
		return err
	}
	if _, _, err := net.SplitHostPort(c.listen); err != nil && !c.stdio {
		return settingErrorf("%s: want HOST:PORT, got %q: %w", flagName("listen"), c.listen, err)
	}
	for _, o := range c.allowOrigins {
		if !strings.Contains(o, "://") {
			return settingErrorf("%s: want an origin such as https://app.example.com, got %q", flagName("allow-origin"), o)
		}
	}
	if err := c.front.check(c.stdio, &c.opts.Scopes); err != nil {
		return err
	}
	if err := c.transports.check(); err != nil {
		return err
	}
	if err := c.state.check(&c.transports, c.stdio); err != nil {
		return err
	}
	if err := c.exposure.check(c); err != nil {
		return err
	}
	// The log settings are checked here too, so their errors name the
	// file line or variable like every other setting's.
	if _, err := newLogger(c, io.Discard); err != nil {
		return err
	}
	// Last, so a file's own mistakes are reported before what it lacks.
	return c.checkDemo()
}

func newLogger(c *config, stderr io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); err != nil {
		return nil, settingErrorf("%s: want debug, info, warn or error, got %q", flagName("log-level"), c.logLevel)
	}
	hopts := &slog.HandlerOptions{Level: level}
	switch c.logFormat {
	case "text", "json":
		return telemetry.NewLogger(stderr, c.logFormat == "json", hopts), nil
	}
	return nil, settingErrorf("%s: want text or json, got %q", flagName("log-format"), c.logFormat)
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "catalog" {
		return runCatalog(args[1:], stdout, stderr)
	}
	c, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "gateway:", err)
		var usage *usageError
		if c != nil && c.checkConfig != "" && !errors.As(err, &usage) {
			return 1
		}
		return 2
	}
	if c.showVersion {
		fmt.Fprintln(stdout, versionString())
		return 0
	}
	if c.checkConfig != "" {
		return checkConfig(c, stdout, stderr)
	}
	if c.obs.probe != "" {
		return probe(context.Background(), c.obs.probe, stderr)
	}
	logger, err := newLogger(c, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "gateway:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, c, logger, stdin, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "gateway:", c.inSettingWords(err))
		// A rule that names nothing is a mistake in the configuration,
		// even though only discovery can tell.
		if errors.Is(err, gateway.ErrUnmatchedScopeRule) || errors.Is(err, gateway.ErrToolOverride) {
			return 2
		}
		return 1
	}
	return 0
}

func serve(ctx context.Context, c *config, logger *slog.Logger, stdin io.Reader, stdout, stderr io.Writer) error {
	c.backends.setLogger(logger)
	if c.demo {
		// The demo outlives the signal so calls in flight can finish during the
		// shutdown grace period; the deferred stop ends it last.
		demo, err := startDemo(context.WithoutCancel(ctx), logger)
		if err != nil {
			return err
		}
		defer func() { _ = demo.stop() }()
		c.backends.parsed = []backendAddr{{name: "zoo", addr: demo.addr}}
		logger.Info("started the bundled demo backend (examples/zoo): --demo, or no backend named", "address", demo.addr)
	}
	tel, err := c.obs.setup(ctx, logger, c.stdio)
	if err != nil {
		return err
	}
	defer tel.close(logger)
	backends, conns, err := c.backends.dial(c.tls, tel.dialOption())
	for _, conn := range conns {
		defer conn.Close()
	}
	if err != nil {
		return err
	}
	exchangeFlags, err := c.exchange.settings()
	if err != nil {
		return err
	}
	if err := attachExchangers(backends, c.backends.parsed, exchangeFlags, tel.metrics); err != nil {
		return err
	}

	// A listener that cannot be had is a start-up error, reported before
	// discovery so the operator sees it at once.
	var lis, adminLis net.Listener
	if !c.stdio {
		if lis, err = net.Listen("tcp", c.listen); err != nil {
			return settingErrorf("%s %s: %w", flagName("listen"), c.listen, err)
		}
		defer lis.Close()
		if c.exposure.adminListen != "" {
			if adminLis, err = net.Listen("tcp", c.exposure.adminListen); err != nil {
				return settingErrorf("%s %s: %w", flagName("admin-listen"), c.exposure.adminListen, err)
			}
			defer adminLis.Close()
		}
	}

	dctx, cancel := context.WithTimeout(ctx, c.opts.Catalog.DiscoveryTimeout)
	httpOpts, wsOpts, sseOpts := c.transports.options(c.allowOrigins)
	authn, err := c.front.authenticator(dctx, logger)
	if err != nil {
		cancel()
		return err
	}
	if authn != nil {
		defer authn.Close()
	}
	opts := c.catalogOptions(logger)
	opts.Search.Embeddings = c.search.options()
	opts.Transports.HTTP = httpOpts
	st, err := c.state.open(ctx, &results.StoreOptions{TTL: opts.Results.TTL, MaxBytes: opts.Results.StoreBytes, MaxEntries: opts.Results.StoreEntries,
		MaxBytesPerPrincipal: opts.Results.StoreBytesPerPrincipal, MaxEntriesPerPrincipal: opts.Results.StoreEntriesPerPrincipal}, logger)
	if err != nil {
		cancel()
		return err
	}
	if st != nil {
		defer st.Close() // after the gateway's Close, deferred below
		opts.State = st
	}
	opts.Transports.WebSocket = wsOpts
	opts.Transports.SSE = sseOpts
	opts.Transports.Server = &mcp.ServerOptions{
		MaxConcurrentCalls:      c.transports.maxConcurrentCalls,
		MaxInFlight:             c.transports.maxInFlight,
		MaxInFlightPerPrincipal: c.transports.maxInFlightPerPrin,
		MaxTaskPolls:            c.transports.maxTaskPolls,
		MaxBatch:                c.transports.maxBatch,
		MaxMessageBytes:         int(c.transports.maxRequestBytes),
	}
	opts.FrontDoor.AllowedHosts = c.exposure.hosts(c.front.oauthResource)
	opts.FrontDoor.SeparateAdmin = c.exposure.adminListen != ""
	opts.Transports.ReadTimeout = c.transports.readTimeout
	opts.Auth = authn
	opts.Calls.ForwardHeaders = c.front.forwardHeaderNames()
	opts.Calls.Metadata = c.front.md
	opts.Telemetry.Metrics = tel.metrics
	opts.Telemetry.TracerProvider = tel.tp
	// The protocol trace is what --log-level debug is for.
	opts.Telemetry.ProtocolTrace = c.logLevel == "debug"
	// An operator's GOGC is theirs; otherwise large catalogs are built
	// with the collector paced (gateway/memory.go).
	_, gogc := os.LookupEnv("GOGC")
	opts.PaceGC = !gogc
	g, err := gateway.New(dctx, backends, &opts)
	cancel()
	if err != nil {
		return err
	}
	// Background discovery ends before the connections close (deferred
	// above, so run after this).
	defer g.Close()

	if c.stdio {
		logger.Info("serving MCP on stdio", "tools", len(g.Tools().Tools()))
		return serveStdio(ctx, c, g, stdin, stdout, logger)
	}
	return serveHTTP(ctx, c, g, lis, adminLis, logger, stderr)
}

func serveHTTP(ctx context.Context, c *config, g *gateway.Gateway, lis, adminLis net.Listener, logger *slog.Logger, stderr io.Writer) error {
	srv := newHTTPServer(g.Handler(), logger)
	scheme := "http"
	if c.front.tls != nil {
		srv.TLSConfig, scheme = c.front.tls, "https"
	}
	url := scheme + "://" + lis.Addr().String() + "/mcp"
	if adminLis != nil {
		fmt.Fprintf(stderr, "Admin endpoints (/metrics, /readyz, /healthz) at http://%s\n", adminLis.Addr())
	}
	fmt.Fprintf(stderr, `
grpc-mcp-gateway %s: %d tools, MCP (Streamable HTTP) at %s

Connect a client:
  Claude Code:    claude mcp add --transport http grpc %s
  MCP Inspector:  npx @modelcontextprotocol/inspector   (transport "Streamable HTTP", URL %s)
  Health:         curl %s   (readiness: %s)

`, version, len(g.Tools().Tools()), url, url, url, strings.TrimSuffix(url, "/mcp")+"/healthz", strings.TrimSuffix(url, "/mcp")+"/readyz")
	if !loopback.Addr(c.listen) && len(c.exposure.hosts(c.front.oauthResource)) == 0 {
		logger.Warn("listening on a non-loopback address without --allowed-host: requests naming this server by a DNS name get 403 (IP addresses and localhost are accepted)", "listen", c.listen)
	}

	errc := make(chan error, 2)
	if adminLis != nil {
		admin := newHTTPServer(g.AdminHandler(), logger)
		go func() { errc <- admin.Serve(adminLis) }()
		defer admin.Close()
	}
	go func() {
		if srv.TLSConfig != nil {
			errc <- srv.ServeTLS(lis, "", "")
			return
		}
		errc <- srv.Serve(lis)
	}()
	select {
	case err := <-errc:
		return fmt.Errorf("serving HTTP: %w", err)
	case <-ctx.Done():
	}
	drainHTTP(srv, g, c.shutdownGrace, logger)
	return nil
}

// replyMargin is how long, after the grace period cancelled the calls
// still running, their handlers get to write the cancellation as a reply
// before the connections are closed under them.
const replyMargin = 2 * time.Second

// drainHTTP is the HTTP shutdown on SIGTERM/SIGINT. The guarantees, in
// order: /readyz answers 503 from the first moment; no new MCP session or
// request is taken (they are answered 503 / "server is shutting down", so
// a client retries elsewhere at once); sessions' GET and SSE streams end
// and WebSockets close with 1001 (going away), since they carry no call of
// their own; requests in flight, POSTs with their tool calls included, run
// to completion and write their replies, for up to grace; then the calls
// still running are cancelled (the backend sees CANCELLED) and their
// handlers, and the WebSocket and SSE sessions net/http no longer tracks,
// get replyMargin to write that; then the listener and the connections
// close.
//
// The listener stays open during the grace period on purpose: Go's
// http.Server drops every request it reads after Shutdown begins, so
// closing it first would make the 503 on /readyz unobservable, and turn a
// load balancer's last requests into refused connections, not fast errors.
// The MCP server therefore shuts down first, and the HTTP server after it
// with a deadline of its own: sharing the MCP server's, which has expired
// by then when calls were cancelled, cut those calls' replies.
func drainHTTP(srv *http.Server, g *gateway.Gateway, grace time.Duration, logger *slog.Logger) {
	g.BeginShutdown()
	logger.Info("shutting down: not ready, no new sessions or requests, in-flight calls may finish", "grace", grace)
	start := time.Now()
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := g.Shutdown(sctx); err != nil {
		logger.Warn("shutdown grace period over: cancelled the calls still running", "grace", grace)
	}
	hctx, hcancel := context.WithTimeout(context.Background(), replyMargin)
	defer hcancel()
	if err := srv.Shutdown(hctx); err != nil {
		_ = srv.Close()
	}
	// WebSockets and SSE streams left net/http, whose Shutdown does not
	// wait for them: their last replies get the same margin.
	if err := g.WaitConnections(hctx); err != nil {
		logger.Warn("shutdown: WebSocket or SSE sessions still writing when the reply margin ran out", "margin", replyMargin)
	}
	logger.Info("shut down", "took", time.Since(start).Round(time.Millisecond))
}

// serveStdio serves MCP on stdin/stdout until stdin ends or a signal
// comes. On a signal it stops taking requests (those still arriving are
// answered "server is shutting down"), lets the calls in flight finish and
// write their replies for up to --shutdown-grace, cancels the rest, and
// returns nil: a signal is a clean exit, not an error.
func serveStdio(ctx context.Context, c *config, g *gateway.Gateway, stdin io.Reader, stdout io.Writer, logger *slog.Logger) error {
	errc := make(chan error, 1)
	// The session must outlive the signal, or its calls would be
	// cancelled at once instead of after the grace period.
	go func() { errc <- g.ServeStdio(context.WithoutCancel(ctx), stdin, stdout) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down: in-flight calls may finish", "grace", c.shutdownGrace)
	sctx, cancel := context.WithTimeout(context.Background(), c.shutdownGrace)
	defer cancel()
	if err := g.Shutdown(sctx); err != nil {
		logger.Warn("shutdown grace period over: cancelled the calls still running", "grace", c.shutdownGrace)
	}
	select {
	case err := <-errc:
		return err
	case <-time.After(replyMargin):
		// A reply blocked on a stdout nobody reads must not hold the exit.
		return nil
	}
}
