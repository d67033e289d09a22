package main

import (
	"log/slog"
	"net/http"
	"time"
)

// What a slow or idle client may hold of the HTTP server. A request's
// headers must arrive within readHeaderTimeout, its body within
// --read-timeout after that (the gateway sets that deadline per request,
// see gateway.Options.Transports.ReadTimeout), and a keep-alive connection idle for
// idleTimeout is closed. There is deliberately no WriteTimeout: it would
// cut the long-lived GET and SSE streams and the WebSockets; the
// transports set a deadline on each write instead (mcp's WriteTimeout
// options).
const (
	readHeaderTimeout = 10 * time.Second
	idleTimeout       = 2 * time.Minute
	maxHeaderBytes    = 64 << 10
)

// newHTTPServer is the HTTP server of both listeners (MCP and admin).
func newHTTPServer(h http.Handler, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}
