package gateway

import (
	"context"

	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/compiled"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/scopes"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// Lists that show what the caller may call (Options.Scopes.ListVisibleOnly):
// the view keys and the kept lists are package scopes' (views.go there);
// here they are wired to a listing and to the caller's principal.

// indexScopes finds the distinct scope sets of c's listed tools; it runs
// once the tools are final (chooseMode).
func (c *listing) indexScopes() {
	c.scopeSets = scopes.Index(len(c.tools), func(i int) []string { return c.tools[i].Access.Scopes })
}

// viewOf is the view of the caller of ctx: key names it ("" when the
// caller sees every tool), keep says which of c.tools it shows (nil for
// all of them). Without ListVisibleOnly, and for stdio's local user,
// every caller sees every tool.
func (g *Gateway) viewOf(ctx context.Context, c *listing) (key string, keep func(i int) bool) {
	if !g.listsByCaller() || c.scopeSets.Len() == 0 {
		return "", nil
	}
	p, ok := auth.FromContext(ctx)
	if !ok {
		// stdio has no front door; every other transport carries the
		// principal the middleware authenticated.
		return "", nil
	}
	return c.scopeSets.View(p.Holds)
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
	if set, ok := c.views.Get(key); ok {
		return set
	}
	set, err := c.set.Subset(keep, "")
	if err != nil {
		// Subset fails only on a cache scope, and this one is the set's.
		g.opts.Logger.Error("caller's tool list could not be made", "error", err)
		return nil
	}
	return c.views.Keep(key, set)
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
	return scopes.Same(a.byName, b.byName, func(t *compiled.Tool) []string { return t.Access.Scopes })
}

// ErrUnmatchedScopeRule is wrapped by New's error when Options.Scopes.Strict
// is set and a tool scope rule matches no tool of the first catalog.
var ErrUnmatchedScopeRule = scopes.ErrUnmatched

// CheckScopeRule reports whether rule is a valid key of
// auth.OAuthConfig.ToolScopes as the gateway reads it: a tool name, or a
// method pattern on "package.Service/Method" (docs/security.md). Its
// error is the one New returns for the rule: an [*OptionError] on
// "OAuthConfig.ToolScopes" whose Err quotes the rule, says what is wrong
// and what a rule may be.
func CheckScopeRule(rule string) error { return scopes.Check(toolScopesOption, rule) }

// toolScopesOption is the path of the option the tool scope rules come
// from, as errors about them name it.
const toolScopesOption = "OAuthConfig.ToolScopes"
