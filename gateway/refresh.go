package gateway

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/compiled"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/longrunning"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/scopes"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/searchmode"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/toolname"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// Live refresh.
//
// Each backend is discovered on its own (backends.go); a success whose
// descriptors differ from the last one's (by a hash of every file) is
// compiled into that backend's tools, and then the catalog is assembled
// again from every backend's last good tools. The new catalog is compared
// with the current one by tool name and by each tool's definition as a
// client sees it (name, title, description, schemas, annotations); only
// when something differs is it swapped in, atomically, and clients told
// with notifications/tools/list_changed (and resources/list_changed when
// the services changed). A call that already loaded a *compiled.Tool finishes on it.

// discoverBackend discovers b once and, when its descriptors changed,
// compiles its tools. changed says whether the catalog must be assembled
// again. A failure leaves b's last good tools in place.
func (g *Gateway) discoverBackend(ctx context.Context, b *backendState) (changed bool, err error) {
	res, err := b.source.Discover(ctx)
	g.opts.Telemetry.Metrics.DiscoveryRefreshed(b.b.Name, err)
	if err != nil {
		return false, b.fail(discoveryError(b.b.Name, b.b.Address, err))
	}
	fp := fingerprint(res)
	prev, _, _, _ := b.snapshot()
	if prev != nil && prev.Fingerprint == fp {
		b.succeed(nil)
		return false, nil
	}
	defer g.pace(compileGCPercent)()
	bt, err := compiled.Compile(b.b.Name, res, b.b.Conn, compiled.Options{
		ExposeHealth:    g.opts.Catalog.ExposeHealth,
		ExposeInternal:  g.opts.Catalog.ExposeInternal,
		UseProtoNames:   g.opts.Catalog.UseProtoNames,
		Exposes:         exposer(g.filter, b.settings),
		Logger:          g.opts.Logger,
		Settle:          b.settings.settler(deadlines{methods: g.methodTimeouts, call: g.opts.Calls.Timeout, stream: g.opts.Calls.StreamTimeout}),
		MD:              b.settings.metadata(),
		OperationWait:   g.opts.Calls.OperationWait,
		OperationCancel: g.opts.Calls.OperationCancel,
		ExposeDebugInfo: g.opts.Calls.ExposeDebugInfo,
		MaxResultBytes:  g.budget,
		Watch:           g.watch,
		Overrides:       g.overrides,
		Invoker:         g.chooseInvoker,
		Answers:         b.ask,
	})
	if err != nil {
		return false, b.fail(fmt.Errorf("backend %s: %w", b.b.Name, err))
	}
	bt.Fingerprint = fp
	if b.managed != nil {
		var retried []string
		for _, t := range bt.Tools {
			if t.Call.Retry {
				retried = append(retried, t.Call.Method)
			}
		}
		health := false
		for _, svc := range res.Services {
			health = health || svc.FullName() == compiled.HealthService
		}
		b.managed.SetDiscovered(retried, health)
	}
	b.succeed(bt)
	g.opts.Logger.Info("discovered backend", "backend", b.b.Name, "services", len(res.Services), "tools", len(bt.Tools))
	if len(bt.Hidden) > 0 {
		// Logged when the backend's descriptors change (at start, and
		// when its API changes), not at every refresh: the operator
		// learns once what is missing from the catalog, and how to get
		// it.
		g.opts.Logger.Info("internal services not exposed as tools: they serve the server's operators and infrastructure, not its users; "+
			"expose them with Options.Catalog.ExposeInternal (gateway: --expose-internal, config expose_internal: true)",
			"backend", b.b.Name, "services", bt.Hidden, "methods", bt.HiddenMethods)
	}
	return true, nil
}

func (b *backendState) fail(err error) error {
	b.mu.Lock()
	b.lastErr = err
	b.mu.Unlock()
	return err
}

// succeed records a successful discovery; bt nil means "unchanged".
func (b *backendState) succeed(bt *compiled.Backend) {
	b.mu.Lock()
	b.lastErr = nil
	if bt != nil {
		b.tools = bt
	}
	b.mu.Unlock()
}

// fingerprint hashes everything of res that shapes tools and resources:
// every file (deterministically encoded, comments included) and the list
// of services. A source that fingerprints what it read (server reflection
// hashes the bytes the backend sent) saves encoding every file again.
func fingerprint(res *descriptors.Result) [32]byte {
	if res.Fingerprint != [32]byte{} {
		return res.Fingerprint // the source's own, cheaper: a hash of what it read
	}
	var files []protoreflect.FileDescriptor
	res.Files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		files = append(files, fd)
		return true
	})
	slices.SortFunc(files, func(a, b protoreflect.FileDescriptor) int { return cmp.Compare(a.Path(), b.Path()) })
	h := sha256.New()
	enc := proto.MarshalOptions{Deterministic: true}
	var buf []byte
	for _, fd := range files {
		buf, _ = enc.MarshalAppend(buf[:0], descriptors.ToFileDescriptorProto(fd, res.Comments))
		fmt.Fprintf(h, "%d:", len(buf))
		h.Write(buf)
	}
	for _, s := range res.Services {
		fmt.Fprintf(h, "%s;", s.FullName())
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// rebuild assembles a catalog from every backend's last good tools and
// swaps it in. It is called when a backend's descriptors changed, so the
// new catalog always replaces the old one (its tools carry the current
// descriptors, even where no client could tell); clients are told only
// when what they see changed. It reports whether the tool list changed.
func (g *Gateway) rebuild() (bool, error) {
	g.rebuildMu.Lock()
	defer g.rebuildMu.Unlock()
	parts := make([]*compiled.Backend, 0, len(g.backends))
	var undiscovered []string
	for _, b := range g.backends {
		if bt, _, _, _ := b.snapshot(); bt != nil {
			parts = append(parts, bt)
		} else {
			undiscovered = append(undiscovered, b.b.Name)
		}
	}
	c, err := assemble(parts, g.scopeRules, &g.scopePins, g.opts.Auth != nil, g.opts.Auth.OAuth())
	if err != nil {
		return false, err
	}
	if err := g.chooseMode(c); err != nil {
		return false, err
	}
	c.indexScopes()
	if err := g.buildToolsets(c); err != nil {
		return false, err
	}
	old := g.catalog.Load()
	if err := g.checkScopeRules(c, old == nil, undiscovered); err != nil {
		return false, err
	}
	if err := g.checkOverrides(c, parts, old == nil, undiscovered); err != nil {
		return false, err
	}
	if len(c.withheldOps) > 0 && (old == nil || !slices.Equal(old.withheldOps, c.withheldOps)) {
		g.opts.Logger.Info("google.longrunning.Operations tools not listed: they take any operation's name, so with several principals each could read and cancel the others' operations; "+
			"tasks reach each caller's own operations without them. To list them for the callers you trust, give them a scope: --oauth-tool-scope 'google.longrunning.Operations/*=SCOPE'",
			"backends", c.withheldOps)
	}
	g.instrument(c)
	if hook := g.beforeSwap.Load(); hook != nil {
		(*hook)()
	}
	g.catalog.Store(c)
	g.releaseMemory()
	if c.search != nil && !g.opts.noWarmSchemas {
		g.warmSchemas()
	}
	if g.semantic != nil && len(c.searchCatalogs()) > 0 {
		g.semantic.Kick()
	}
	if old == nil {
		return true, nil
	}
	added, removed, changed := diffTools(old, c)
	toolsChanged := added+removed+changed > 0
	resourcesChanged := !old.resources.sameAs(c.resources)
	if toolsChanged || resourcesChanged {
		g.opts.Logger.Info("tool catalog changed", "tools", len(c.tools), "added", added, "removed", removed, "changed", changed, "resources_changed", resourcesChanged)
	}
	if c.mode != old.mode {
		g.opts.Logger.Info("tool mode changed", "mode", c.mode, "estimated_tokens", c.typedTokens, "budget", g.opts.Search.ToolBudget)
	}
	// Clients are told when what tools/list shows changed: the tools in
	// typed mode, the mode itself, or search mode's two tools (whose
	// descriptions count the tools and name the APIs).
	// With lists by caller, a tool whose scopes changed is shown to
	// other callers.
	typedChanged := toolsChanged || g.listsByCaller() && !sameScopes(&old.listing, &c.listing)
	if c.mode != old.mode || c.mode == ToolModeTyped && typedChanged || c.mode == ToolModeSearch && !sameList(old.set, c.set) {
		g.server.NotifyToolListChanged()
	}
	g.notifyToolsets(old, c)
	if resourcesChanged {
		g.notifyResourceListChanged()
	}
	return toolsChanged, nil
}

// assemble names the tools of every backend (renaming only those whose
// names collide across backends; see gateway/internal/toolname), resolves the tool scope
// rules to the scopes each tool needs (gateway/internal/scopes), and builds the
// catalog. The tools are copied: the backends' compiled tools are shared
// with the catalogs before, and a copy keeps each catalog's names, scopes
// and telemetry its own.
//
// With guardOperations (front-door auth on), a backend's
// google.longrunning.Operations tools that no scope rule covers are
// withheld: they take any operation's name, so they would let every
// caller read and cancel every other caller's operations, which tasks
// (each bound to its owner) do not. Tasks still reach those methods, as
// the filters allow; the operator lists the tools by scoping them.
//
// With declared (an OAuth front door), the scopes the API declares in its
// options are added to each tool's; static bearer tokens hold no scopes,
// so without OAuth they would lock the tools away. A scope declared on
// the Operations service or one of its methods counts as a rule does: the
// API's owners said who may use every caller's operations, so the tool
// is listed, for the holders of that scope.
func assemble(parts []*compiled.Backend, rules scopes.Rules, pins *scopes.Pins, guardOperations, declared bool) (*catalog, error) {
	slices.SortFunc(parts, func(a, b *compiled.Backend) int { return cmp.Compare(a.Name, b.Name) })
	var all []*compiled.Tool
	var names, backends, methods []string
	for _, p := range parts {
		for _, t := range p.Tools {
			all = append(all, t)
			names = append(names, t.Definition.Name)
			backends = append(backends, p.Name)
			methods = append(methods, t.Call.Method[1:])
		}
	}
	final := toolname.BackendQualified(names, backends, methods)
	targets := make([]scopes.Target, len(all))
	for i := range all {
		targets[i] = scopes.Target{Name: final[i], Local: names[i], Base: all[i].Access.BaseName, Method: methods[i]}
	}
	resolved := rules.Resolve(targets, pins)
	c := &catalog{listing: listing{tools: make([]*compiled.Tool, 0, len(all)), byName: make(map[string]*compiled.Tool, len(all))}, rules: resolved, listed: make(map[string]bool, len(parts))}
	for _, p := range parts {
		c.listed[p.Name] = true
	}
	withheld := make([]bool, len(all))
	for i, t := range all {
		scoped := len(resolved.Scopes[i]) > 0 || declared && len(t.Access.DeclaredScopes) > 0
		withheld[i] = guardOperations && !scoped && strings.HasPrefix(t.Call.Method, "/"+longrunning.OperationsService+"/")
	}
	// Every listed tool's final name by backend and method, so the
	// long-running tools' descriptions and results can name the tools
	// that poll them; and every Operations tool, listed or withheld, for
	// the task methods.
	pollers := make(map[string]string)
	opsTools := make(map[string]*compiled.Tool)
	for i, t := range all {
		if !withheld[i] {
			pollers[t.Backend+t.Call.Method] = final[i]
		}
	}
	for i, t := range all {
		nt := *t
		nt.Definition.Name = final[i]
		nt.Access.Scopes = resolved.Scopes[i]
		if declared && len(t.Access.DeclaredScopes) > 0 {
			nt.Access.Scopes = slices.Compact(slices.Sorted(slices.Values(slices.Concat(nt.Access.Scopes, t.Access.DeclaredScopes))))
		}
		nt.Obs = compiled.Obs{}
		if strings.HasPrefix(t.Call.Method, "/"+longrunning.OperationsService+"/") {
			opsTools[t.Backend+t.Call.Method] = &nt
		}
		if withheld[i] {
			if !slices.Contains(c.withheldOps, t.Backend) {
				c.withheldOps = append(c.withheldOps, t.Backend)
			}
			continue
		}
		c.tools = append(c.tools, &nt)
		c.byName[nt.Definition.Name] = &nt
	}
	c.byMethod = make(map[string]*compiled.Tool, len(c.tools))
	for _, t := range c.tools {
		c.byMethod[t.Backend+"\x00"+t.Call.Method] = t
	}
	c.operations = make(map[string]*operationsBackend)
	for _, p := range parts {
		if p.Ops != nil {
			c.operations[p.Name] = &operationsBackend{name: p.Name, ops: p.Ops, md: p.MD,
				getTool: opsTools[p.Name+longrunning.GetOperationMethod], waitTool: opsTools[p.Name+longrunning.WaitOperationMethod],
				cancelTool: opsTools[p.Name+longrunning.CancelOperationMethod]}
		}
	}
	for _, nt := range c.tools {
		if nt.LRO != nil {
			lr := *nt.LRO
			lr.GetTool = pollers[nt.Backend+lr.PollMethod]
			if lr.WaitMethod != "" {
				lr.WaitTool = pollers[nt.Backend+lr.WaitMethod]
			}
			// A task is read through the backend's GetOperation
			// (tasks.go), as the filters allow it.
			b := c.operations[nt.Backend]
			lr.Taskable = b != nil && b.getTool != nil && lr.Ops != nil && lr.Ops.HasGet && !lr.Ops.IsCustom()
			if !lr.Taskable {
				nt.Definition.TaskSupport = ""
			}
			nt.LRO = &lr
			nt.Definition.Description += lr.Describe()
		}
	}
	var err error
	if c.resources, err = newResourceCatalog(parts); err != nil {
		return nil, fmt.Errorf("building resource list: %w", err)
	}
	c.listing.resources = c.resources.set
	return c, nil
}

// checkScopeRules says what an operator must know of the tool scope
// rules as resolved for c, a catalog about to be swapped in: each rule
// that matches no tool (Warn; Error with Options.Scopes.Strict, where at
// start it is New's error instead), and each tool-name rule that matched
// tools a collision renamed. undiscovered names the backends not
// discovered yet, whose tools a rule may be waiting for.
func (g *Gateway) checkScopeRules(c *catalog, first bool, undiscovered []string) error {
	res := c.rules
	if first && g.opts.Scopes.Strict && len(res.Unmatched) > 0 {
		var quoted []string
		for _, k := range res.Unmatched.Keys() {
			quoted = append(quoted, strconv.Quote(k))
		}
		waiting := ""
		if len(undiscovered) > 0 {
			waiting = " (backends not discovered at start: " + strings.Join(undiscovered, ", ") + ")"
		}
		return &OptionError{Option: "OAuthConfig.ToolScopes", Err: fmt.Errorf("%s: %w%s, and strict scopes refuse to start with it",
			strings.Join(quoted, ", "), ErrUnmatchedScopeRule, waiting)}
	}
	level, msg := slog.LevelWarn, "tool scope rule matches no tool: it applies to none until a tool it matches appears"
	if g.opts.Scopes.Strict {
		level, msg = slog.LevelError, "tool scope rule matches no tool since this catalog rebuild (strict scopes): it stays in force and applies again when a tool it matches appears"
	}
	for _, r := range res.Unmatched {
		attrs := []any{"rule", r.Key, "scopes", r.Scopes, "tools", len(c.tools)}
		if len(undiscovered) > 0 {
			attrs = append(attrs, "not_discovered", undiscovered)
		}
		g.opts.Logger.Log(context.Background(), level, msg, attrs...)
	}
	for _, r := range g.scopeRules {
		if tools, ok := res.Renamed[r.Key]; ok {
			g.opts.Logger.Warn("tool scope rule names a tool that a name collision renamed: it applies to every tool renamed from that name; name the method (package.Service/Method) to say so without depending on names",
				"rule", r.Key, "tools", tools)
		}
	}
	return nil
}

// chooseMode decides c's mode (toolmode.go) and lists its tools: every
// tool with its schemas in typed mode, search mode's two tools and the
// search catalog otherwise. ToolModeAuto picks search without building a
// schema when a lower bound of the typed list is over the budget
// (gateway/internal/compiled/schemas.go); c.typedTokens is then that bound.
func (g *Gateway) chooseMode(c *catalog) error {
	c.typedTokens = estimatedTokens(compiled.ListLowerBound(c.tools))
	c.mode = g.opts.Search.ToolMode
	if c.mode == ToolModeAuto && g.opts.Search.ToolBudget >= 0 && c.typedTokens > g.opts.Search.ToolBudget {
		c.mode = ToolModeSearch
	}
	compact := new(mcp.SchemaCompactor)
	if c.mode != ToolModeSearch {
		paced := g.pace(buildGCPercent)
		failed := compiled.ForceSchemas(c.tools, runtime.GOMAXPROCS(0), nil, g.opts.Logger, true)
		paced()
		if len(failed) > 0 {
			c.tools = slices.DeleteFunc(c.tools, func(t *compiled.Tool) bool {
				if err, ok := failed[t.Schemas]; ok {
					g.opts.Logger.Error("tool left out of the list: its schemas could not be built", "backend", t.Backend, "tool", t.Definition.Name, "error", err)
					delete(c.byName, t.Definition.Name)
					return true
				}
				return false
			})
		}
		defs := make([]mcp.Tool, len(c.tools))
		for i, t := range c.tools {
			defs[i], _ = t.WithSchemas() // built: forceSchemas left out those that failed
			defs[i].Handle = t
		}
		set, err := mcp.NewToolList(defs, &mcp.ToolListOptions{Compactor: compact, CacheScope: g.listCacheScope()})
		if err != nil {
			return fmt.Errorf("building tool list: %w", err)
		}
		c.set = set
		c.typedTokens = estimatedTokens(set.ListBytes())
		if c.mode = g.effectiveMode(set.ListBytes()); c.mode != ToolModeSearch {
			return nil
		}
	}
	// The meta tools' handles name the listing, so a call runs against
	// the list it was resolved in.
	st := searchTools(c.tools)
	set, err := searchmode.ToolList(st, &metaTool{in: &c.listing, name: SearchToolsName}, &metaTool{in: &c.listing, name: CallToolName})
	if err != nil {
		return fmt.Errorf("building the search-mode tool list: %w", err)
	}
	c.search, c.set = searchmode.New(st, compiled.AppendInflated), set
	return nil
}

// sameList compares two tool lists as clients see them.
func sameList(a, b *mcp.ToolList) bool {
	at, bt := a.Tools(), b.Tools()
	return slices.EqualFunc(at, bt, sameDef)
}

// diffTools counts the tools b adds to a, removes from it, and changes
// (same name, another definition).
func diffTools(a, b *catalog) (added, removed, changed int) {
	for name, t := range b.byName {
		o, ok := a.byName[name]
		switch {
		case !ok:
			added++
		case !sameTool(o, t):
			changed++
		}
	}
	for name := range a.byName {
		if _, ok := b.byName[name]; !ok {
			removed++
		}
	}
	return added, removed, changed
}

// sameTool compares two tools as tools/list shows them. Their schemas are
// compared when both are built, as typed mode builds them: a search-mode
// catalog's tools have theirs built on first use only, and without their
// output schemas, and there a tool whose other members did not change
// counts as unchanged (it is only logged: what search mode lists, its two
// tools, is compared in full).
func sameTool(a, b *compiled.Tool) bool {
	if !sameDef(a.Definition, b.Definition) {
		return false
	}
	return a.Schemas.Same(b.Schemas)
}

// sameDef compares two tools as tools/list shows them.
func sameDef(a, b mcp.Tool) bool {
	return a.Name == b.Name && a.Title == b.Title && a.Description == b.Description &&
		bytes.Equal(a.InputSchema, b.InputSchema) && bytes.Equal(a.OutputSchema, b.OutputSchema) &&
		reflect.DeepEqual(a.Annotations, b.Annotations)
}
