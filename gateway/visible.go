package gateway

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// Lists that show what the caller may call (Options.Scopes.ListVisibleOnly).
//
// A tool needs the scopes its catalog resolved for it (scopes.go); a
// catalog has few distinct sets of them, however many tools (every tool
// of a service, every write of an API, share one). What a caller may see
// is therefore decided by which of those sets its token holds: a bit per
// set, the caller's view key. Each key's list is a subset of the
// catalog's (mcp.ToolList.Subset: its pages, no schema encoded again),
// made at the first tools/list of a caller with that key and kept with
// the catalog, up to maxKeptViews; search_tools filters its matches by
// the same bits and keeps its answers under the key. The call path does
// not change: a call of a hidden tool is authorized as before and
// refused with the scope it lacks, so a client can still step up.

// maxKeptViews bounds the lists a catalog keeps, one per distinct view
// key: callers' tokens come in few shapes, but a token's scopes are the
// authorization server's to choose, so past this many a view's list is
// made for its request and not kept.
const maxKeptViews = 64

// scopeSets are a catalog's distinct tool scope sets, and each tool's.
type scopeSets struct {
	sets [][]string
	// of[i] is the index in sets of c.tools[i]'s scopes, -1 for a tool
	// that needs none.
	of []int
}

// views are the lists a catalog keeps by view key.
type views struct {
	mu sync.Mutex
	m  map[string]*mcp.ToolList
}

// indexScopes finds the distinct scope sets of c's listed tools; it runs
// once the tools are final (chooseMode).
func (c *listing) indexScopes() {
	ss := scopeSets{of: make([]int, len(c.tools))}
	seen := make(map[string]int)
	for i, t := range c.tools {
		if len(t.scopes) == 0 {
			ss.of[i] = -1
			continue
		}
		k := strings.Join(t.scopes, " ")
		n, ok := seen[k]
		if !ok {
			n = len(ss.sets)
			seen[k] = n
			ss.sets = append(ss.sets, t.scopes)
		}
		ss.of[i] = n
	}
	c.scopeSets = ss
}

// viewOf is the view of the caller of ctx: key names it ("" when the
// caller sees every tool), keep says which of c.tools it shows (nil for
// all of them). Without ListVisibleOnly, and for stdio's local user,
// every caller sees every tool.
func (g *Gateway) viewOf(ctx context.Context, c *listing) (key string, keep func(i int) bool) {
	if !g.listsByCaller() || len(c.scopeSets.sets) == 0 {
		return "", nil
	}
	p, ok := auth.FromContext(ctx)
	if !ok {
		// stdio has no front door; every other transport carries the
		// principal the middleware authenticated.
		return "", nil
	}
	bits := make([]byte, (len(c.scopeSets.sets)+7)/8)
	all := true
	for n, s := range c.scopeSets.sets {
		if p.Holds(s) {
			bits[n/8] |= 1 << (n % 8)
		} else {
			all = false
		}
	}
	if all {
		return "", nil
	}
	of := c.scopeSets.of
	return string(bits), func(i int) bool {
		n := of[i]
		return n < 0 || bits[n/8]&(1<<(n%8)) != 0
	}
}

// listedTools is what c lists to the caller of ctx: with
// Options.Scopes.ListVisibleOnly, the tools it may call (in search mode the two
// meta-tools, whose search filters the same way).
func (g *Gateway) listedTools(ctx context.Context, c *listing) *mcp.ToolList {
	if c.search != nil {
		return c.set
	}
	key, keep := g.viewOf(ctx, c)
	if keep == nil {
		return c.set
	}
	c.views.mu.Lock()
	set, ok := c.views.m[key]
	c.views.mu.Unlock()
	if ok {
		return set
	}
	set, err := c.set.Subset(keep, "")
	if err != nil {
		// Subset fails only on a cache scope, and this one is the set's.
		g.opts.Logger.Error("caller's tool list could not be made", "error", err)
		return nil
	}
	c.views.mu.Lock()
	defer c.views.mu.Unlock()
	if kept, ok := c.views.m[key]; ok {
		return kept
	}
	if len(c.views.m) < maxKeptViews {
		if c.views.m == nil {
			c.views.m = make(map[string]*mcp.ToolList)
		}
		c.views.m[key] = set
	}
	return set
}

// listCacheScope is the cacheScope of the typed tools/list: "private"
// when the list depends on who asks, so that no intermediary serves one
// caller's list to another.
func (g *Gateway) listCacheScope() string {
	if g.listsByCaller() {
		return "private"
	}
	return "public"
}

// listsByCaller: what tools/list and search_tools show depends on the
// caller's scopes.
func (g *Gateway) listsByCaller() bool { return g.opts.Scopes.ListVisibleOnly && g.opts.Auth != nil }

// sameScopes reports whether two catalogs' tools need the same scopes, by
// tool name, for the list_changed decision: with ListVisibleOnly a
// change of a tool's scopes changes who sees it.
func sameScopes(a, b *listing) bool {
	for name, t := range b.byName {
		if o, ok := a.byName[name]; ok && !slices.Equal(o.scopes, t.scopes) {
			return false
		}
	}
	return true
}
