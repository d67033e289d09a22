package gateway

import (
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/compiled"
)

// SetSemanticPause sets how long queries skip the embeddings endpoint
// after it failed, for the gateways a test starts next; it returns the
// function that restores the default. Tests that call it do not run in
// parallel.
func SetSemanticPause(d time.Duration) (restore func()) {
	old := semanticPause
	semanticPause = d
	return func() { semanticPause = old }
}

// SetBeforeCatalogSwap makes every later catalog rebuild of g call f once
// the new catalog is built and before it is swapped in (nil: none), so a
// test can look at the gateway in that moment.
func (g *Gateway) SetBeforeCatalogSwap(f func()) {
	if f == nil {
		g.beforeSwap.Store(nil)
		return
	}
	g.beforeSwap.Store(&f)
}

// NoWarmSchemas makes a gateway leave a search-mode catalog's schemas to
// their first use, without the background warm-up.
func NoWarmSchemas(o *Options) *Options {
	o.noWarmSchemas = true
	return o
}

// WaitWarmSchemas waits for the background warm-up of schemas to end.
func (g *Gateway) WaitWarmSchemas() { g.warmers.Wait() }

// ForceSchemas builds the schemas of g's tools as the warm-up does, on
// one goroutine; with stopped, as after Close.
func (g *Gateway) ForceSchemas(stopped bool) {
	stop := make(chan struct{})
	if stopped {
		close(stop)
	}
	compiled.ForceSchemas(g.catalog.Load().tools, 1, stop, g.opts.Logger, false)
}

// SchemasBuilt counts the tools of g's current catalog whose schemas are
// built (gateway/internal/compiled/schemas.go), of all its tools.
func (g *Gateway) SchemasBuilt() (built, tools int) {
	c := g.catalog.Load()
	for _, t := range c.tools {
		if t.Schemas.Ready() {
			built++
		}
	}
	return built, len(c.tools)
}

// OutputSchemasHeld counts the tools of g's current catalog that hold a
// built output schema (search mode drops them: gateway/internal/compiled/schemas.go).
func (g *Gateway) OutputSchemasHeld() int {
	n := 0
	for _, t := range g.catalog.Load().tools {
		if t.Schemas.HoldsOutput() {
			n++
		}
	}
	return n
}

// NotificationStreams counts the notification streams open on the MCP
// server of the toolset of that name, "" for the whole catalog's.
func (g *Gateway) NotificationStreams(toolset string) int {
	if toolset == "" {
		return g.server.NotificationStreams()
	}
	return g.toolsetNamed(toolset).server.NotificationStreams()
}
