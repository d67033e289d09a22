package main

import (
	"bytes"
	"os"
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// minSessionSecret is the shortest shared secret accepted for scale-out
// session tokens: HMAC-SHA256 wants at least its output size in entropy.
const minSessionSecret = 32

// transportFlags are the settings of the HTTP transports (/mcp, /ws, /sse)
// and the per-session limits they share.
type transportFlags struct {
	maxRequestBytes    int64
	wsMaxMessageBytes  int64
	maxConcurrentCalls int
	sessionSecretFile  string
	sessionTTL         time.Duration
	readTimeout        time.Duration
	maxInFlight        int
	maxInFlightPerPrin int
	maxTaskPolls       int
	maxBatch           int
	maxSessions        int
	maxSessionsPerPrin int
	sessionIdleTimeout time.Duration
	wsMaxConnections   int

	secret []byte // loaded by check
}

// check validates the settings and loads the session secret.
func (t *transportFlags) check() error {
	if t.maxInFlight > 0 && t.maxInFlightPerPrin > t.maxInFlight {
		return settingErrorf("%s: want at most %s (%d), 0 for half of it, or \"unlimited\", got %d", flagName("max-in-flight-per-principal"), flagName("max-in-flight"), t.maxInFlight, t.maxInFlightPerPrin)
	}
	t.secret = nil
	if t.sessionSecretFile == "" {
		return nil
	}
	b, err := os.ReadFile(t.sessionSecretFile)
	if err != nil {
		return settingErrorf("%s: %w", flagName("session-secret-file"), err)
	}
	// A trailing newline is an artefact of how the file was written, not
	// part of the secret; every replica must trim the same way.
	b = bytes.TrimRight(b, "\r\n")
	if len(b) < minSessionSecret {
		return settingErrorf("%s %s: want at least %d bytes of secret, got %d (e.g. head -c 48 /dev/urandom | base64 > %s)", flagName("session-secret-file"), t.sessionSecretFile, minSessionSecret, len(b), t.sessionSecretFile)
	}
	t.secret = b
	return nil
}

// options returns the transports' options; origins apply to all three.
func (t *transportFlags) options(origins []string) (*mcp.StreamableHTTPOptions, *mcp.WebSocketOptions, *mcp.SSEOptions) {
	return &mcp.StreamableHTTPOptions{
			AllowedOrigins:          origins,
			MaxRequestBytes:         t.maxRequestBytes,
			SessionSecret:           t.secret,
			SessionTTL:              t.sessionTTL,
			MaxSessions:             t.maxSessions,
			MaxSessionsPerPrincipal: t.maxSessionsPerPrin,
			SessionIdleTimeout:      t.sessionIdleTimeout,
		}, &mcp.WebSocketOptions{
			AllowedOrigins:             origins,
			MaxMessageBytes:            t.wsMaxMessageBytes,
			MaxConnections:             t.wsMaxConnections,
			MaxConnectionsPerPrincipal: t.maxSessionsPerPrin,
		}, &mcp.SSEOptions{
			AllowedOrigins:          origins,
			MaxRequestBytes:         t.maxRequestBytes,
			MaxSessions:             t.maxSessions,
			MaxSessionsPerPrincipal: t.maxSessionsPerPrin,
		}
}
