package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"sync"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/compiled"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/overrides"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/searchmode"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/toolsets"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// Toolsets: several MCP endpoints from one gateway (Options.FrontDoor.Toolsets).
//
// A toolset is a named view of the catalog, served at /mcp/NAME,
// /ws/NAME and /sse/NAME by an MCP server of its own (its sessions,
// instructions and list_changed), while /mcp stays the whole catalog.
// Discovery and refresh happen once: every catalog the gateway builds
// gets one listing per toolset (buildToolsets), holding the catalog's
// own *compiled.Tool values, so a toolset costs its list (pages kept as the
// whole list's subset in typed mode) and, in search mode, its index.
//
// A toolset's server can reach only its listing: tools/call resolves
// names against it (a tool outside is an unknown tool, as if the
// gateway had none), call_tool and search_tools look only in it, a task
// started by a tool outside it is not found, and its resources are the
// services of its tools. Authorization is the gateway's, per tool, plus
// the toolset's RequiredScopes, checked at its endpoints' front door.
//
// What a toolset is on its own (its name's rules, which tools it
// selects, its required scopes' checks and front door) is package
// toolsets' (gateway/internal/toolsets); here it is wired to the
// catalogs, the MCP servers and the mux.

// Toolset is a named, curated view of the catalog, served at its own
// endpoints (see Options.FrontDoor.Toolsets).
type Toolset struct {
	// Name is the endpoints' last path segment: 1 to 63 of a-z 0-9 _ -,
	// starting with a letter or digit.
	Name string
	// Description is the instructions its server sends in initialize
	// (and server/discover), telling a client what the toolset is for;
	// empty: Options.Transports.Server's.
	Description string
	// Include and Exclude select its tools by method, with the patterns
	// of Options.Catalog.Include ("package.Service/Method" globs), among the
	// tools the catalog exposes; neither means every tool.
	Include, Exclude []string
	// ToolMode is its list's mode; ToolModeAuto decides by its own list's
	// size against Options.Search.ToolBudget.
	ToolMode ToolMode
	// RequiredScopes are OAuth scopes a token must hold to use the
	// toolset's endpoints at all, on top of the gateway's; needs
	// Options.Auth.
	RequiredScopes []string
	// Tools correct the toolset's own copies of its tools, after
	// Options.Catalog.Tools, as Options.Catalog.Tools does; they change nothing outside
	// the toolset.
	Tools []ToolOverride
}

// ValidToolsetName checks a Toolset.Name.
func ValidToolsetName(name string) error { return toolsets.ValidName(name) }

// toolsetServer serves one toolset: its endpoint is the handler of the
// toolset's own MCP server.
type toolsetServer struct {
	endpoint
	i          int // index in Options.FrontDoor.Toolsets and catalog.toolsets
	def        Toolset
	filter     *methodFilter
	overrides  *overrides.Rules
	server     *mcp.Server
	streamable http.Handler
}

// checkToolsets checks Options.FrontDoor.Toolsets.
func (g *Gateway) checkToolsets() error {
	seen := make(map[string]bool)
	for i, ts := range g.opts.FrontDoor.Toolsets {
		setting := fmt.Sprintf("Options.FrontDoor.Toolsets[%d]", i)
		if err := ValidToolsetName(ts.Name); err != nil {
			return &OptionError{Option: setting + ".Name", Err: err}
		}
		switch {
		case seen[ts.Name]:
			return &OptionError{Option: setting + ".Name", Err: fmt.Errorf("%q: another toolset has that name", ts.Name)}
		case ts.ToolMode < ToolModeAuto || ts.ToolMode > ToolModeSearch:
			return &OptionError{Option: setting + ".ToolMode", Err: fmt.Errorf("toolset %s: %d: want auto, typed or search", ts.Name, ts.ToolMode)}
		}
		if err := toolsets.CheckRequiredScopes(setting, ts.Name, ts.RequiredScopes, g.opts.Auth != nil); err != nil {
			return err
		}
		seen[ts.Name] = true
		if _, err := newMethodFilter(setting, ts.Include, ts.Exclude); err != nil {
			return err
		}
		if _, err := overrides.Compile(setting+".Tools", ts.Tools); err != nil {
			return fmt.Errorf("%w: %w", ErrToolOverride, err)
		}
	}
	switch {
	case g.opts.FrontDoor.ToolsetsOnly && len(g.opts.FrontDoor.Toolsets) == 0:
		return &OptionError{Option: "Options.FrontDoor.ToolsetsOnly", Err: errors.New("needs FrontDoor.Toolsets (with neither, nothing would be served)")}
	case g.opts.FrontDoor.StdioToolset != "" && !seen[g.opts.FrontDoor.StdioToolset]:
		return &OptionError{Option: "Options.FrontDoor.StdioToolset", Err: fmt.Errorf("%q: no toolset of that name", g.opts.FrontDoor.StdioToolset)}
	}
	return nil
}

// toolsetNamed is the toolset of that name, nil for none ("").
func (g *Gateway) toolsetNamed(name string) *toolsetServer {
	for _, ts := range g.toolsets {
		if ts.def.Name == name {
			return ts
		}
	}
	return nil
}

// newToolsetServers makes each toolset's MCP server, with so (the
// gateway's server options) and its own instructions.
func (g *Gateway) newToolsetServers(so mcp.ServerOptions, httpOpts *mcp.StreamableHTTPOptions) error {
	for i, def := range g.opts.FrontDoor.Toolsets {
		f, _ := newMethodFilter("", def.Include, def.Exclude) // checked by checkToolsets
		ovs, _ := overrides.Compile(fmt.Sprintf("Options.FrontDoor.Toolsets[%d].Tools", i), def.Tools)
		ts := &toolsetServer{i: i, def: def, filter: f, overrides: ovs}
		ts.endpoint = endpoint{g: g, of: func(c *catalog) *listing { return c.toolsets[i] },
			called: func() { g.opts.Telemetry.Metrics.ToolsetCall(def.Name) }}
		o := so
		if def.Description != "" {
			o.Instructions = def.Description
		}
		if m := g.opts.Telemetry.Metrics; m != nil {
			o.SessionObserver = func(transport string, delta int) {
				so.SessionObserver(transport, delta)
				m.ToolsetSession(def.Name, delta)
			}
		}
		ts.server = mcp.NewServer(mcp.Implementation{Name: "grpc-mcp-gateway/" + def.Name, Title: "gRPC MCP Gateway: " + def.Name, Version: g.opts.Version}, &ts.endpoint, &o)
		// The toolset's session tokens say where they belong: one of /mcp
		// or of another toolset is not a session here.
		ho := *httpOpts
		ho.Endpoint = "/mcp/" + def.Name
		var err error
		if ts.streamable, err = ts.server.StreamableHTTPHandler(&ho); err != nil {
			return wrapOption("Options.Transports.HTTP", err)
		}
		g.toolsets = append(g.toolsets, ts)
	}
	return nil
}

// buildToolsets gives c a listing per toolset, from c's final tools.
func (g *Gateway) buildToolsets(c *catalog) error {
	c.toolsets = make([]*listing, len(g.toolsets))
	if len(g.toolsets) == 0 {
		return nil
	}
	sel := make([]toolsets.Tool, len(c.tools))
	for j, t := range c.tools {
		sel[j] = toolsets.Tool{Name: t.Definition.Name, Method: t.Call.Method[1:]}
		if t.LRO != nil {
			sel[j].Pollers = []string{t.LRO.GetTool, t.LRO.WaitTool}
		}
	}
	selection := toolsets.NewCatalog(sel)
	for i, ts := range g.toolsets {
		l := &listing{byName: make(map[string]*compiled.Tool), restricted: true}
		member := selection.Select(ts.filter.matchPath)
		own := false
		l.matchedRules, l.resolvedArgs = make(map[int]bool), make(map[overrides.ArgKey]bool)
		for j, t := range c.tools {
			if !member[j] {
				continue
			}
			nt, err := compiled.ToolsetCopy(ts.overrides, t, g.opts.Catalog.UseProtoNames, l.matchedRules, l.resolvedArgs)
			if err != nil {
				return fmt.Errorf("toolset %s: %w", ts.def.Name, err)
			}
			if nt != nil {
				if l.replaced == nil {
					l.replaced = make(map[*compiled.Tool]bool)
				}
				l.replaced[t] = true
				t, own = nt, true
			}
			if o := l.byName[t.Definition.Name]; o != nil {
				return fmt.Errorf("%w: toolset %s: tools of %s and %s are both named %q", ErrToolOverride, ts.def.Name, o.Call.Method[1:], t.Call.Method[1:], t.Definition.Name)
			}
			l.tools = append(l.tools, t)
			l.byName[t.Definition.Name] = t
		}
		l.ops = toolsetOperations(c, l, ts.filter)
		if own {
			// The catalog's list holds the catalog's definitions, not
			// the toolset's corrected ones.
			member = nil
		}
		if err := g.chooseToolsetMode(c, l, member, ts.def.ToolMode); err != nil {
			return fmt.Errorf("toolset %s: %w", ts.def.Name, err)
		}
		l.indexScopes()
		services := make(map[string]bool)
		for _, t := range l.tools {
			services[serviceURI(t.Backend, t.Search.Pkg, t.Search.Service)] = true
		}
		var defs []mcp.Resource
		for _, r := range c.resources.set.Resources() {
			if services[r.URI] {
				defs = append(defs, r)
			}
		}
		set, err := mcp.NewResourceSet(defs, nil)
		if err != nil {
			return fmt.Errorf("toolset %s: resources: %w", ts.def.Name, err)
		}
		l.resources, l.services = set, services
		c.toolsets[i] = l
	}
	return nil
}

// toolsetOperations are the Operations tools, listed or withheld
// (assemble), a toolset's task methods may call: those its patterns name,
// and the GetOperation and WaitOperation that poll its long-running
// tools, as its list holds them. Withheld tools count as the list would
// hold them: tasks reach each caller's own operations through them.
func toolsetOperations(c *catalog, l *listing, filter *methodFilter) map[*compiled.Tool]bool {
	ops := make(map[*compiled.Tool]bool)
	for _, b := range c.operations {
		for _, ot := range []*compiled.Tool{b.getTool, b.waitTool, b.cancelTool} {
			if ot != nil && filter.matchPath(ot.Call.Method[1:]) {
				ops[ot] = true
			}
		}
	}
	for _, t := range l.tools {
		b := c.operations[t.Backend]
		if t.LRO == nil || b == nil {
			continue
		}
		for _, ot := range []*compiled.Tool{b.getTool, b.waitTool} {
			if ot != nil && (ot.Call.Method == t.LRO.PollMethod || ot.Call.Method == t.LRO.WaitMethod) {
				ops[ot] = true
			}
		}
	}
	return ops
}

// chooseToolsetMode lists l's tools in mode: typed as the subset of c's
// typed list when c has one (nothing encoded again), else with the
// tools' schemas built now; search with an index of its own. Auto
// decides by l's typed list against the tool budget, as chooseMode does
// for the catalog.
func (g *Gateway) chooseToolsetMode(c *catalog, l *listing, member []bool, mode ToolMode) error {
	budget := g.opts.Search.ToolBudget
	if mode == ToolModeAuto && budget >= 0 && estimatedTokens(compiled.ListLowerBound(l.tools)) > budget {
		mode = ToolModeSearch
	}
	if mode != ToolModeSearch {
		var set *mcp.ToolList
		var err error
		if c.search == nil && member != nil {
			set, err = c.set.Subset(func(i int) bool { return member[i] }, "")
		} else {
			set, err = g.typedSet(l)
		}
		if err != nil {
			return err
		}
		if mode == ToolModeTyped || budget < 0 || estimatedTokens(set.ListBytes()) <= budget {
			l.set, l.mode = set, ToolModeTyped
			return nil
		}
	}
	st := searchTools(l.tools)
	set, err := searchmode.ToolList(st, &metaTool{in: l, name: SearchToolsName}, &metaTool{in: l, name: CallToolName})
	if err != nil {
		return fmt.Errorf("building the search-mode tool list: %w", err)
	}
	l.search, l.set, l.mode = searchmode.New(st, compiled.AppendInflated), set, ToolModeSearch
	return nil
}

// typedSet builds l's typed list when the catalog has none (it is in
// search mode): the tools' schemas are built now; a tool whose schemas
// fail is left out, as chooseMode leaves it out of the catalog's.
func (g *Gateway) typedSet(l *listing) (*mcp.ToolList, error) {
	failed := compiled.ForceSchemas(l.tools, runtime.GOMAXPROCS(0), nil, g.opts.Logger, true)
	l.tools = slices.DeleteFunc(l.tools, func(t *compiled.Tool) bool {
		if _, bad := failed[t.Schemas]; bad {
			delete(l.byName, t.Definition.Name)
			return true
		}
		return false
	})
	defs := make([]mcp.Tool, len(l.tools))
	for i, t := range l.tools {
		defs[i], _ = t.WithSchemas()
		defs[i].Handle = t
	}
	return mcp.NewToolList(defs, &mcp.ToolListOptions{CacheScope: g.listCacheScope()})
}

// notifyToolsets tells each toolset's clients what changed between two
// catalogs: its list (the tools, or the mode), and its resources.
func (g *Gateway) notifyToolsets(old, c *catalog) {
	for i, ts := range g.toolsets {
		o, n := old.toolsets[i], c.toolsets[i]
		if o.mode != n.mode || !sameList(o.set, n.set) || g.listsByCaller() && !sameScopes(o, n) {
			ts.server.NotifyToolListChanged()
		}
		if !sameServices(old.resources, c.resources, o.services, n.services) {
			ts.server.NotifyResourceListChanged()
		}
	}
}

// sameServices reports whether two toolset listings show the same
// services with the same content (each service's source is its backend's
// discovery, keyed as the whole catalog's resources are).
func sameServices(orc, nrc *resourceCatalog, o, n map[string]bool) bool {
	if len(o) != len(n) {
		return false
	}
	for uri := range n {
		if !o[uri] {
			return false
		}
		or, nr := orc.byURI[uri], nrc.byURI[uri]
		if or == nil || nr == nil || or.key != nr.key {
			return false
		}
	}
	return true
}

// searchCatalogs are c's search indexes: the whole catalog's in search
// mode, and each search-mode toolset's.
func (c *catalog) searchCatalogs() []*searchmode.Catalog {
	var out []*searchmode.Catalog
	if c.search != nil {
		out = append(out, c.search)
	}
	for _, l := range c.toolsets {
		if l.search != nil {
			out = append(out, l.search)
		}
	}
	return out
}

// mount serves the toolset's endpoints on mux, behind the gateway's
// front door and the toolset's required scopes.
func (ts *toolsetServer) mount(mux *http.ServeMux, wsOpts *mcp.WebSocketOptions, sseOpts *mcp.SSEOptions) {
	g := ts.g
	mux.Handle("/mcp/"+ts.def.Name, g.protect(ts.requireScopes(ts.streamable)))
	mux.Handle("/ws/"+ts.def.Name, g.protect(ts.requireScopes(ts.server.WebSocketHandler(wsOpts))))
	// The toolset's SSE sessions post under its own path, whatever
	// message path the whole catalog's announce.
	so := *sseOpts
	so.MessagePath = ""
	sse := g.protect(ts.requireScopes(ts.server.SSEHandler(&so)))
	mux.Handle("/sse/"+ts.def.Name, sse)
	mux.Handle("/sse/"+ts.def.Name+"/message", sse)
}

// requireScopes refuses a request whose token lacks the toolset's
// RequiredScopes, with the step-up challenge the gateway's own required
// scopes get.
func (ts *toolsetServer) requireScopes(h http.Handler) http.Handler {
	return toolsets.RequireScopes(ts.g.opts.Auth, ts.def.Name, ts.def.RequiredScopes, h)
}

// processSlots counts each principal's requests in flight across the
// gateway's MCP servers (the whole catalog's and the toolsets'), as
// mcp.FleetSlots, so that ServerOptions.MaxInFlightPerPrincipal is one
// share however many endpoints a principal uses. A fleet counts in its
// store instead (Options.State).
type processSlots struct {
	mu sync.Mutex
	n  map[string]int
}

func (p *processSlots) AcquireSlot(_ context.Context, principal string, limit int) (func(), error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n[principal] >= limit {
		return nil, mcp.ErrNoSlot
	}
	if p.n == nil {
		p.n = make(map[string]int)
	}
	p.n[principal]++
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.n[principal]--; p.n[principal] <= 0 {
			delete(p.n, principal)
		}
	}, nil
}
