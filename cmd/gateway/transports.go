package main

import (
	"bytes"
	"flag"
	"fmt"
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

func (t *transportFlags) register(fs *flag.FlagSet) {
	limitVar(fs, &t.maxRequestBytes, "max-request-bytes", mcp.DefaultMaxMessageBytes, false, "largest request body accepted on /mcp and /sse (413 beyond)")
	limitVar(fs, &t.wsMaxMessageBytes, "ws-max-message-bytes", mcp.DefaultMaxMessageBytes, false, "largest WebSocket message accepted on /ws (closed with 1009 beyond)")
	limitVar(fs, &t.maxConcurrentCalls, "max-concurrent-calls", mcp.DefaultMaxConcurrentCalls, true, "requests one session may have in flight; more get a JSON-RPC error")
	fs.StringVar(&t.sessionSecretFile, "session-secret-file", "", "file holding a shared secret (at least 32 bytes) that signs Mcp-Session-Id tokens, so replicas behind a round-robin load balancer share sessions (scale-out mode)")
	limitVar(fs, &t.sessionTTL, "session-ttl", 24*time.Hour, false, "lifetime of a scale-out session token")
	limitVar(fs, &t.maxInFlight, "max-in-flight", mcp.DefaultMaxInFlight, true, "requests in flight on the whole gateway, every session and stateless request together; more get a JSON-RPC error")
	limitVar(fs, &t.maxInFlightPerPrin, "max-in-flight-per-principal", 0, true, "requests in flight of one authenticated principal (token), all its sessions and stateless requests together (with --state, on every replica together), so one cannot take every slot of --max-in-flight; more get the same error; 0: half of --max-in-flight (anonymous and stdio requests have no share of their own)")
	limitVar(fs, &t.maxTaskPolls, "max-task-polls", mcp.DefaultMaxTaskPolls, false, "backend polls per second that every subscriptions/listen stream together makes to follow its tasks; one principal's streams make at most half of them")
	limitVar(fs, &t.maxBatch, "max-batch", mcp.DefaultMaxBatch, false, "messages in one JSON-RPC batch (2025-03-26); a larger batch gets one error and none of it runs")
	limitVar(fs, &t.maxSessions, "max-sessions", mcp.DefaultMaxSessions, false, "sessions held on /mcp and on /sse (each); initialize or GET beyond it gets 503")
	limitVar(fs, &t.maxSessionsPerPrin, "max-sessions-per-principal", mcp.DefaultMaxSessionsPerPrincipal, true, "sessions one authenticated principal (token) may hold on /mcp, on /sse and as /ws connections (each); more get 503")
	limitVar(fs, &t.sessionIdleTimeout, "session-idle-timeout", mcp.DefaultSessionIdleTimeout, false, "a /mcp session with no request and no open stream for this long ends")
	limitVar(fs, &t.wsMaxConnections, "ws-max-connections", mcp.DefaultMaxSessions, false, "open WebSocket connections on /ws; an upgrade beyond it gets 503")
	limitVar(fs, &t.readTimeout, "read-timeout", mcp.DefaultReadTimeout, false, "how long a client may take to send a request body after its headers (which get 10s); slower senders are cut")
}

// check validates the settings and loads the session secret.
func (t *transportFlags) check() error {
	if t.maxRequestBytes <= 0 {
		return fmt.Errorf("--max-request-bytes: want a positive number of bytes, got %d", t.maxRequestBytes)
	}
	if t.wsMaxMessageBytes <= 0 {
		return fmt.Errorf("--ws-max-message-bytes: want a positive number of bytes, got %d", t.wsMaxMessageBytes)
	}
	if t.maxInFlight > 0 && t.maxInFlightPerPrin > t.maxInFlight {
		return fmt.Errorf("--max-in-flight-per-principal: want at most --max-in-flight (%d), 0 for half of it, or \"unlimited\", got %d", t.maxInFlight, t.maxInFlightPerPrin)
	}
	for name, v := range map[string]int{"--max-batch": t.maxBatch, "--max-sessions": t.maxSessions, "--ws-max-connections": t.wsMaxConnections, "--max-task-polls": t.maxTaskPolls} {
		if v <= 0 {
			return fmt.Errorf("%s: want a positive number, got %d", name, v)
		}
	}
	if t.sessionIdleTimeout <= 0 {
		return fmt.Errorf("--session-idle-timeout: want a positive duration, got %s", t.sessionIdleTimeout)
	}
	if t.readTimeout <= 0 {
		return fmt.Errorf("--read-timeout: want a positive duration, got %s", t.readTimeout)
	}
	if t.sessionTTL <= 0 {
		return fmt.Errorf("--session-ttl: want a positive duration, got %s", t.sessionTTL)
	}
	t.secret = nil
	if t.sessionSecretFile == "" {
		return nil
	}
	b, err := os.ReadFile(t.sessionSecretFile)
	if err != nil {
		return fmt.Errorf("--session-secret-file: %w", err)
	}
	// A trailing newline is an artefact of how the file was written, not
	// part of the secret; every replica must trim the same way.
	b = bytes.TrimRight(b, "\r\n")
	if len(b) < minSessionSecret {
		return fmt.Errorf("--session-secret-file %s: want at least %d bytes of secret, got %d (e.g. head -c 48 /dev/urandom | base64 > %s)",
			t.sessionSecretFile, minSessionSecret, len(b), t.sessionSecretFile)
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
