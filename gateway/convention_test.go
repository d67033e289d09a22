package gateway_test

import (
	"context"
	"strings"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// TestOptionsThatCannotBeOff: New refuses Off for an option that must
// keep a bound, naming the option, instead of quietly using its default.
func TestOptionsThatCannotBeOff(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string]*gateway.Options{
		"Options.CallTimeout":        {CallTimeout: gateway.Off},
		"Options.StreamTimeout":      {StreamTimeout: gateway.Off},
		"Options.StreamMaxMessages":  {StreamMaxMessages: gateway.Off},
		"Options.StreamMaxBytes":     {StreamMaxBytes: -5},
		"Options.DiscoveryTimeout":   {DiscoveryTimeout: gateway.Off},
		"Options.ResultTTL":          {ResultTTL: gateway.Off},
		"Options.ResultStoreBytes":   {ResultStoreBytes: gateway.Off},
		"Options.ResultStoreEntries": {ResultStoreEntries: gateway.Off},
		// The MCP server's and the transports' options, checked by their
		// own Check.
		"Options.Server: mcp: ServerOptions.MaxBatch":                 {Server: &mcp.ServerOptions{MaxBatch: gateway.Off}},
		"Options.Server: mcp: ServerOptions.MaxMessageBytes":          {Server: &mcp.ServerOptions{MaxMessageBytes: gateway.Off}},
		"Options.Server: mcp: ServerOptions.MaxTaskPolls":             {Server: &mcp.ServerOptions{MaxTaskPolls: gateway.Off}},
		"Options.HTTP: mcp: StreamableHTTPOptions.SessionIdleTimeout": {HTTP: &mcp.StreamableHTTPOptions{SessionIdleTimeout: gateway.Off}},
		"Options.HTTP: mcp: StreamableHTTPOptions.MaxRequestBytes":    {HTTP: &mcp.StreamableHTTPOptions{MaxRequestBytes: gateway.Off}},
		"Options.WebSocket: mcp: WebSocketOptions.PongTimeout":        {WebSocket: &mcp.WebSocketOptions{PongTimeout: gateway.Off}},
		"Options.SSE: mcp: SSEOptions.MaxSessions":                    {SSE: &mcp.SSEOptions{MaxSessions: gateway.Off}},
	} {
		_, err := gateway.New(context.Background(), nil, opts)
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: Off: %v, want an error naming it", name, err)
		}
	}
}

// TestUnboundedOptionsStayAllowed: Off is still "no limit" for the
// transport options whose doc allows it; Check refuses only the bounded.
func TestUnboundedOptionsStayAllowed(t *testing.T) {
	t.Parallel()
	for name, err := range map[string]error{
		"StreamableHTTPOptions.MaxSessionsPerPrincipal": (&mcp.StreamableHTTPOptions{MaxSessionsPerPrincipal: gateway.Off}).Check(),
		"SSEOptions.MaxSessionsPerPrincipal":            (&mcp.SSEOptions{MaxSessionsPerPrincipal: gateway.Off}).Check(),
		"WebSocketOptions.MaxConnectionsPerPrincipal":   (&mcp.WebSocketOptions{MaxConnectionsPerPrincipal: gateway.Off}).Check(),
		"ServerOptions.MaxInFlight":                     (&mcp.ServerOptions{MaxInFlight: gateway.Off, MaxConcurrentCalls: gateway.Off}).Check(),
		"ServerOptions.MaxInFlightPerPrincipal":         (&mcp.ServerOptions{MaxInFlightPerPrincipal: gateway.Off}).Check(),
	} {
		if err != nil {
			t.Errorf("%s: Off refused: %v", name, err)
		}
	}
}

// TestShortSessionSecret: New refuses an Options.HTTP.SessionSecret too
// short to sign session tokens, naming it, before anything is served.
func TestShortSessionSecret(t *testing.T) {
	t.Parallel()
	_, err := gateway.New(context.Background(), nil, &gateway.Options{HTTP: &mcp.StreamableHTTPOptions{SessionSecret: []byte("short")}})
	if want := "gateway: Options.HTTP: mcp: StreamableHTTPOptions.SessionSecret: want at least 32 random bytes, got 5"; err == nil || err.Error() != want {
		t.Errorf("New = %v, want %q", err, want)
	}
}
