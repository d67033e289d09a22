package estate_test

import (
	"context"
	"testing"
	"time"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	"github.com/grpc-mcp-gateway/gateway/estate"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
)

// estateBackend serves the estate and returns a gateway backend for it.
func estateBackend(tb testing.TB) gateway.Backend {
	tb.Helper()
	srv, err := estate.Serve(nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(srv.Stop)
	conn, err := backendconn.Dial(srv.Addr, backendconn.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	return gateway.Backend{Name: "estate", Address: srv.Addr, Conn: conn}
}

// newEstateGateway starts a gateway in front of the estate, without refresh.
func newEstateGateway(tb testing.TB, opts *gateway.Options) *gateway.Gateway {
	tb.Helper()
	if opts == nil {
		opts = &gateway.Options{}
	}
	if opts.Catalog.Refresh == 0 {
		opts.Catalog.Refresh = -1
	}
	opts.Catalog.RequireBackends = true
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	g, err := gateway.New(ctx, []gateway.Backend{estateBackend(tb)}, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(g.Close)
	return g
}

// BenchmarkDiscovery measures a cold start in front of the estate: the
// reflection round trips, assembly, and building the catalog.
func BenchmarkDiscovery(b *testing.B) {
	bk := estateBackend(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		g, err := gateway.New(ctx, []gateway.Backend{bk}, &gateway.Options{Catalog: gateway.CatalogOptions{Refresh: -1, RequireBackends: true}, Search: gateway.SearchOptions{ToolMode: gateway.ToolModeTyped}})
		if err != nil {
			b.Fatal(err)
		}
		if n := len(g.Tools().Tools()); n != estate.NumMethods {
			b.Fatalf("%d tools, want %d", n, estate.NumMethods)
		}
		g.Close()
	}
}

// BenchmarkRefreshUnchanged measures what a refresh of the unchanged estate
// costs the gateway's side of server reflection: the round trips, reading
// the answers and hashing them (the estate server's own work is in the
// profile too, under grpc's reflection package).
func BenchmarkRefreshUnchanged(b *testing.B) {
	bk := estateBackend(b)
	src := descriptors.NewServerReflection(bk.Conn, nil)
	ctx := context.Background()
	first, err := src.Discover(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		res, err := src.Discover(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if res != first {
			b.Fatal("the unchanged estate gave a new Result")
		}
	}
}

// googleapisBackend is the estate server's address as the backend of the
// whole googleapis catalog, given as .proto sources without reflection
// (as `--no-reflection --proto-path … --proto …` does), and the number
// of files named. The tests that build it skip with -short and -race.
func googleapisBackend(tb testing.TB) (gateway.Backend, int) {
	tb.Helper()
	if testing.Short() || raceEnabled {
		tb.Skip("the whole googleapis catalog; not with -short or -race (make unit-estate runs it without)")
	}
	files := googleapisServiceProtos(tb)
	b := estateBackend(tb)
	b.Name, b.NoReflection = "googleapis", true
	b.Files = descriptors.NewProtoSource([]string{googleapisDir}, files)
	return b, len(files)
}
