package gateway

import (
	"runtime"
	"slices"
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/compiled"
)

// warmSchemas builds, in the background, the schemas of the search-mode
// catalog's tools that no answer has built yet, on one core less than the
// process has (at least one), so that requests keep one. First use alone
// would leave a search answer to build up to five tools' schemas, and a
// deep message's bounded schema takes tens of milliseconds: on the
// googleapis catalog, answers new to the cache took 28 ms of CPU at p99,
// 9 once every schema was built. The tools are listed sooner all the
// same, since the catalog is swapped in first. One warm-up runs at a time: a catalog
// swapped in meanwhile is warmed when it ends; Close stops it.
func (g *Gateway) warmSchemas() {
	g.warmWanted.Store(true)
	if !g.warming.CompareAndSwap(false, true) {
		return
	}
	g.warmers.Add(1)
	g.wg.Go(func() {
		defer g.warmers.Done()
		for {
			g.warmWanted.Store(false)
			if c := g.catalog.Load(); c != nil && c.search != nil {
				g.warm(c)
			}
			g.warming.Store(false)
			// A catalog swapped in after the Store above found warming
			// still set: warm it, unless a newer call already does.
			if !g.warmWanted.Load() || !g.warming.CompareAndSwap(false, true) {
				return
			}
		}
	})
}

// warm builds c's schemas, then its search entries, which hold them as
// answers carry them.
func (g *Gateway) warm(c *catalog) {
	tools := c.tools
	if !slices.ContainsFunc(tools, func(t *compiled.Tool) bool { return !t.Schemas.Ready() }) {
		return
	}
	defer g.pace(compileGCPercent)()
	start := time.Now()
	failed := compiled.ForceSchemas(tools, runtime.GOMAXPROCS(0)-1, g.closed, g.opts.Logger, false)
	for i := range tools {
		if i%64 == 0 && compiled.Stopped(g.closed) {
			return
		}
		c.search.Warm(i)
	}
	if compiled.Stopped(g.closed) {
		return
	}
	for s, err := range failed {
		g.opts.Logger.Error("tool schemas could not be built: search_tools lists the tool without its input schema", "backend", s.Tool().Backend, "tool", s.Tool().Definition.Name, "error", err)
	}
	g.opts.Logger.Info("tool schemas built in the background", "tools", len(tools), "took", time.Since(start).Round(time.Millisecond))
	g.releaseMemory()
}
