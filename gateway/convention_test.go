package gateway_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc/metadata"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// TestOptionsThatCannotBeOff: New refuses Off for an option that must
// keep a bound, naming the option (an *OptionError whose Option is its
// path), instead of quietly using its default.
func TestOptionsThatCannotBeOff(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string]*gateway.Options{
		"Options.Calls.Timeout":            {Calls: gateway.CallOptions{Timeout: gateway.Off}},
		"Options.Calls.StreamTimeout":      {Calls: gateway.CallOptions{StreamTimeout: gateway.Off}},
		"Options.Calls.StreamMaxMessages":  {Calls: gateway.CallOptions{StreamMaxMessages: gateway.Off}},
		"Options.Calls.StreamMaxBytes":     {Calls: gateway.CallOptions{StreamMaxBytes: -5}},
		"Options.Catalog.DiscoveryTimeout": {Catalog: gateway.CatalogOptions{DiscoveryTimeout: gateway.Off}},
		"Options.Results.TTL":              {Results: gateway.ResultOptions{TTL: gateway.Off}},
		"Options.Results.StoreBytes":       {Results: gateway.ResultOptions{StoreBytes: gateway.Off}},
		"Options.Results.StoreEntries":     {Results: gateway.ResultOptions{StoreEntries: gateway.Off}},
		// The MCP server's and the transports' options, checked by their
		// own Check.
		"Options.Transports.Server: mcp: ServerOptions.MaxBatch":                 {Transports: gateway.TransportOptions{Server: &mcp.ServerOptions{MaxBatch: gateway.Off}}},
		"Options.Transports.Server: mcp: ServerOptions.MaxMessageBytes":          {Transports: gateway.TransportOptions{Server: &mcp.ServerOptions{MaxMessageBytes: gateway.Off}}},
		"Options.Transports.Server: mcp: ServerOptions.MaxTaskPolls":             {Transports: gateway.TransportOptions{Server: &mcp.ServerOptions{MaxTaskPolls: gateway.Off}}},
		"Options.Transports.HTTP: mcp: StreamableHTTPOptions.SessionIdleTimeout": {Transports: gateway.TransportOptions{HTTP: &mcp.StreamableHTTPOptions{SessionIdleTimeout: gateway.Off}}},
		"Options.Transports.HTTP: mcp: StreamableHTTPOptions.MaxRequestBytes":    {Transports: gateway.TransportOptions{HTTP: &mcp.StreamableHTTPOptions{MaxRequestBytes: gateway.Off}}},
		"Options.Transports.WebSocket: mcp: WebSocketOptions.PongTimeout":        {Transports: gateway.TransportOptions{WebSocket: &mcp.WebSocketOptions{PongTimeout: gateway.Off}}},
		"Options.Transports.SSE: mcp: SSEOptions.MaxSessions":                    {Transports: gateway.TransportOptions{SSE: &mcp.SSEOptions{MaxSessions: gateway.Off}}},
	} {
		_, err := gateway.New(context.Background(), nil, opts)
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: Off: %v, want an error naming it", name, err)
		}
		option, _, _ := strings.Cut(name, ":")
		if oe := (*gateway.OptionError)(nil); !errors.As(err, &oe) || oe.Option != option {
			t.Errorf("%s: Off: %#v, want an *OptionError naming %s", name, err, option)
		}
	}
}

// TestOptionSyntaxErrors: New refuses a value of the wrong shape (a
// method glob, a forwarded header, a metadata key or value) with an
// *OptionError whose Option is the option's path and whose Err names the
// value and what was expected, never the option again.
func TestOptionSyntaxErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		opts   gateway.Options
		option string
		err    string
	}{
		{gateway.Options{Catalog: gateway.CatalogOptions{Include: []string{"zoo.v1.[/*"}}}, "Options.Catalog.Include", `"zoo.v1.[/*": syntax error in pattern (want a glob`},
		{gateway.Options{Catalog: gateway.CatalogOptions{Exclude: []string{""}}}, "Options.Catalog.Exclude", "empty pattern (want a glob"},
		{gateway.Options{Calls: gateway.CallOptions{ForwardHeaders: []string{"Connection"}}}, "Options.Calls.ForwardHeaders", `"Connection" is a hop-by-hop header`},
		{gateway.Options{Calls: gateway.CallOptions{ForwardHeaders: []string{"grpc-timeout"}}}, "Options.Calls.ForwardHeaders", `"grpc-timeout": grpc- keys are reserved`},
		{gateway.Options{Calls: gateway.CallOptions{Metadata: metadata.Pairs("grpc-status", "0")}}, "Options.Calls.Metadata", `"grpc-status": grpc- keys are reserved`},
		{gateway.Options{Calls: gateway.CallOptions{Metadata: metadata.MD{"x-note": {"caf\u00e9"}}}}, "Options.Calls.Metadata", "x-note: want a value of printable ASCII"},
		{gateway.Options{Calls: gateway.CallOptions{Watch: gateway.WatchOptions{Methods: []string{"a.B/["}}}}, "Options.Calls.Watch.Methods", `"a.B/[": syntax error in pattern`},
		{gateway.Options{FrontDoor: gateway.FrontDoorOptions{Toolsets: []gateway.Toolset{{Name: "a", Include: []string{"["}}}}}, "Options.FrontDoor.Toolsets[0].Include", `"[/*": syntax error in pattern`},
	} {
		_, err := gateway.New(context.Background(), nil, &tc.opts)
		var oe *gateway.OptionError
		if !errors.As(err, &oe) || oe.Option != tc.option || !strings.HasPrefix(oe.Err.Error(), tc.err) || strings.Contains(oe.Err.Error(), "Options.") {
			t.Errorf("%s: %v, want an *OptionError on it saying %s", tc.option, err, tc.err)
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

// TestShortSessionSecret: New refuses an Options.Transports.HTTP.SessionSecret too
// short to sign session tokens, naming it, before anything is served.
func TestShortSessionSecret(t *testing.T) {
	t.Parallel()
	_, err := gateway.New(context.Background(), nil, &gateway.Options{Transports: gateway.TransportOptions{HTTP: &mcp.StreamableHTTPOptions{SessionSecret: []byte("short")}}})
	if want := "Options.Transports.HTTP: mcp: StreamableHTTPOptions.SessionSecret: want at least 32 random bytes, got 5"; err == nil || err.Error() != want {
		t.Errorf("New = %v, want %q", err, want)
	}
}
