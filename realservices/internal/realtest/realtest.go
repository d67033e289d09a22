// Package realtest puts a gateway in front of a real service and connects
// the official MCP Go SDK's client to it, as the tests of realservices
// (Temporal) and realservices/etcd both do. It lives in this module, not
// in the gateway's internal/testkit, because it needs the gateway itself:
// testkit imports nothing of the gateway, so that the gateway's own
// internal tests can use it. It is imported only by tests.
package realtest

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
)

// Serve starts a gateway in front of the backend b, which names its
// address (b.Conn is dialed here), with opts: its backends required, and
// no refresh unless opts sets one. It serves HTTP until the test ends
// and returns its MCP endpoint, http://HOST:PORT/mcp.
func Serve(t testing.TB, b gateway.Backend, opts *gateway.Options) string {
	t.Helper()
	conn, err := backendconn.Dial(b.Address, backendconn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if opts == nil {
		opts = &gateway.Options{}
	}
	opts.Catalog.RequireBackends = true
	if opts.Catalog.Refresh == 0 {
		opts.Catalog.Refresh = -1
	}
	// A bound on a hang, not a speed: a real server's catalog under -race
	// on a shared machine.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b.Conn = conn
	g, err := gateway.New(ctx, []gateway.Backend{b}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	srv := httptest.NewServer(g.Handler())
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// Connect connects the official MCP Go SDK's client, with opts (nil for
// none), to the MCP endpoint url. The session closes with the test.
func Connect(t testing.TB, url string, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := sdk.NewClient(&sdk.Implementation{Name: "realservices", Version: "1"}, opts)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}
