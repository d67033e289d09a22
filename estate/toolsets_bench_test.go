package estate_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/grpc-mcp-gateway/gateway/estate"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// BenchmarkToolsetMemory measures what toolsets cost on the estate: the
// live heap of a gateway with one toolset per estate API (five, 1,450
// tools between them) minus that of the same gateway without toolsets,
// per toolset, after each toolset's endpoint served its first tools/list
// (which encodes its pages, kept when under 2 MiB). The catalog is typed;
// a typed toolset is a subset of its pre-encoded list, a search-mode
// toolset builds its own index.
//
//	cd estate && go test -run '^$' -bench BenchmarkToolsetMemory -benchtime 1x .
func BenchmarkToolsetMemory(b *testing.B) {
	var toolsets []gateway.Toolset
	for _, p := range estate.Packages {
		toolsets = append(toolsets, gateway.Toolset{Name: strings.ReplaceAll(string(p), ".", "-"), Include: []string{string(p) + ".*"}})
	}
	bk := estateBackend(b)
	for _, mode := range []gateway.ToolMode{gateway.ToolModeTyped, gateway.ToolModeSearch} {
		b.Run(mode.String(), func(b *testing.B) {
			// What the first gateway leaves behind for the process's life
			// (the connection's state, caches of the backend's answers)
			// is not a toolset's.
			gatewayHeap(b, bk, mode, toolsets)
			for b.Loop() {
				// The most of three: what an earlier gateway left for the
				// collector can be freed during a measurement and
				// make it read low, never high.
				var base, with float64
				for range 3 {
					base = max(base, gatewayHeap(b, bk, mode, nil))
					with = max(with, gatewayHeap(b, bk, mode, toolsets))
				}
				b.ReportMetric((with-base)/float64(len(toolsets)), "MiB/toolset")
				b.ReportMetric(base, "gateway-MiB")
			}
		})
	}
}

// gatewayHeap is the live heap, in MiB, that a gateway in front of the
// estate with toolsets holds once every toolset listed its tools: the
// heap then, less the heap before it started.
func gatewayHeap(b *testing.B, bk gateway.Backend, mode gateway.ToolMode, toolsets []gateway.Toolset) float64 {
	b.Helper()
	for i := range toolsets {
		toolsets[i].ToolMode = mode
	}
	before := liveHeap()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The catalog is typed in both cases: search mode's schema warm-up
	// runs in the background and would blur the reading.
	g, err := gateway.New(ctx, []gateway.Backend{bk}, &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeTyped}, FrontDoor: gateway.FrontDoorOptions{Toolsets: toolsets}, Catalog: gateway.CatalogOptions{Refresh: -1, RequireBackends: true}})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	srv := httptest.NewServer(g.Handler())
	defer srv.Close()
	for _, ts := range toolsets {
		c := &testkit.Client{URL: srv.URL + "/mcp/" + ts.Name, Header: testkit.MethodHeaders("tools/list", ""), Version: "2026-07-28"}
		r, err := c.Post(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
		if err != nil {
			b.Fatal(err)
		}
		if r.Status != http.StatusOK || !strings.Contains(r.Body, `"tools":[{`) {
			b.Fatalf("toolset %s: tools/list: %d %.200s", ts.Name, r.Status, r.Body)
		}
	}
	held := liveHeap() - before
	runtime.KeepAlive(g)
	return held
}

// liveHeap is the heap in use after a collection, in MiB.
func liveHeap() float64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc) / (1 << 20)
}
