package gateway

import (
	"cmp"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/gateway/describe"
	"github.com/grpc-mcp-gateway/gateway/gateway/exchange"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/anytypes"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/longrunning"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/overrides"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/paging"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/scopes"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/searchdoc"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/toolname"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/watch"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/schema"
	"github.com/grpc-mcp-gateway/gateway/gateway/transcode"
	mcpgatewayv1 "github.com/grpc-mcp-gateway/gateway/proto/mcpgateway/v1"
)

// healthService is hidden unless the operator asks for it: a model has no
// use for the backend's health checks, and they would crowd the tool list.
const healthService = "grpc.health.v1.Health"

// MaxToolNameLength is the longest tool name the gateway emits
// (gateway/internal/toolname has the naming rules).
const MaxToolNameLength = toolname.MaxLength

// tool is one RPC compiled for calling: everything tools/call needs is
// resolved here, once, at discovery, so the per-call path does no
// descriptor work.
type tool struct {
	// Definition is the tool's definition without its schemas, which
	// Schemas holds (withSchemas joins them).
	Definition mcp.Tool
	Schemas    *toolSchemas
	// Backend is the name of the backend serving the tool, for logs,
	// metrics and resource URIs.
	Backend string
	// Call is what a call of the tool sends and how it reads the answer.
	Call toolCall
	// Obs is the tool's metrics and span settings (observe.go).
	Obs toolObs
	// Budget shapes the tool's results cut to the result budget (budget.go).
	Budget toolBudget
	// Paging is set for a method paged by token (gateway/internal/paging).
	Paging *paging.Paged
	// LRO is set for a long-running method (gateway/internal/longrunning),
	// nil otherwise.
	LRO *longrunning.Method
	// Watch is set for an open-ended stream (gateway/internal/watch), nil
	// otherwise.
	Watch *watch.Spec
	// Search is what search mode indexes beyond the definition.
	Search searchdoc.Facts
	// Access is who may call the tool and with which token.
	Access toolAccess
	// Args are the operator's argument overrides (overrides.go), nil for
	// most; Origin says where the definition's parts came from, for the
	// catalog report (report.go).
	Args   *overrides.Args
	Origin toolOrigin
}

// toolCall is what a call of one tool needs of its method and backend.
type toolCall struct {
	// Method is "/package.Service/Method", as grpc.Invoke wants it.
	Method string
	Conn   grpc.ClientConnInterface
	// Input makes the request messages the arguments are decoded into.
	Input protoreflect.MessageType
	// WrapOutput: the response is not a JSON object in protojson
	// (Timestamp, Value, wrappers...), so it travels as {"value": ...}.
	// (The validator wraps and unwraps the input likewise.)
	WrapOutput bool
	// Validator converts and checks the arguments; compiled here so the
	// call path does only the conversion and the checks a type needs.
	Validator *schema.Validator
	// Response renders the response's wire bytes as protojson would,
	// without decoding them into a dynamic message.
	Response *transcode.Encoder
	// Types resolves the backend's own messages in google.rpc error
	// details (rpcstatus) and the Any values of responses (anytypes).
	Types *anytypes.Types
	// Kind is the tool's stream shape: unary, or one of those in
	// stream.go.
	Kind callKind
	// Invoke makes the call of the tool's shape (chooseInvoker).
	Invoke invoker
	// ProgressLabel ends each progress message of a server or
	// bidirectional stream: " (package.Response)".
	ProgressLabel string
	// Timeout is the call's deadline, resolved at discovery: the method's
	// or backend's setting (settings.go), else Options.Calls.Timeout or
	// StreamTimeout by kind.
	Timeout time.Duration
	// MD is the backend's own metadata (Backend.Metadata), nil for most.
	MD metadata.MD
	// Repeatable: its owners declared the method safe to repeat
	// (safeToRepeat); Retry: so it is, and its backend's connection
	// retries such calls (gateway/backendconn), so the call path counts
	// attempts.
	Repeatable, Retry bool
	// Limits are the message size limits of the backend's connection, for
	// the error a message over them becomes (callFailed); nil for a
	// connection not made by backendconn.Dial.
	Limits messageLimits
}

// toolAccess is what decides who may call a tool, and the token its
// calls carry to the backend.
type toolAccess struct {
	// BaseName is the name the tool has when no other collides with it
	// (toolname.Base), which a tool scope rule naming it keeps applying to
	// whatever a collision renames the tool.
	BaseName string
	// Scopes are what a call needs beyond the globally required scopes:
	// the tool scope rules that match it, resolved by assemble for its
	// catalog (package scopes), and the scopes its API declares
	// (DeclaredScopes). Nil for most tools.
	Scopes []string
	// Exchanger is the backend's token exchanger (Backend.TokenExchange),
	// nil when its calls carry no exchanged token.
	Exchanger *exchange.Exchanger
	// TokenScopes are the method's own scopes for its backend's
	// exchanged token (MethodSettings.TokenScopes), sorted.
	TokenScopes []string
	// DeclaredScopes are the scopes of the method's and its service's
	// (mcpgateway.v1) options, sorted; assemble adds them to Scopes.
	DeclaredScopes []string
}

// declaredScopes are the scopes a service's and a method's options
// declare, sorted and without duplicates; an error names the first that
// is not a scope token.
func declaredScopes(service, method []string) ([]string, error) {
	if len(service)+len(method) == 0 {
		return nil, nil
	}
	all := slices.Concat(service, method)
	for _, s := range all {
		if !auth.ValidScope(s) {
			return nil, fmt.Errorf("%q is not an OAuth scope token (printable ASCII, no spaces, quotes or backslashes)", s)
		}
	}
	slices.Sort(all)
	return slices.Compact(all), nil
}

// catalog is an immutable snapshot of the exposed tools (and services,
// for resources), assembled from every backend's last good discovery by
// refresh.go. A call that loaded a *tool keeps it, whatever is swapped in
// after.
type catalog struct {
	// listing is the whole catalog's list, served at /mcp; toolsets
	// are the lists of Options.FrontDoor.Toolsets, in order (toolsets.go).
	listing
	toolsets []*listing
	// typedTokens is the estimated size of the typed tools/list, which
	// ToolModeAuto weighs against the budget: at least that many when the
	// typed list was not built (chooseMode).
	typedTokens int
	// resources are the exposed services as MCP resources (resources.go).
	resources *resourceCatalog
	// byMethod finds a tool by its backend and full method
	// ("backend\x00/pkg.Service/Method"): a task is its starting tool's,
	// whatever that tool is named in this catalog (tasks.go).
	byMethod map[string]*tool
	// operations are the backends serving google.longrunning.Operations,
	// by backend name, for the task methods (tasks.go).
	operations map[string]*operationsBackend
	// withheldOps are the backends whose Operations tools are withheld
	// (assemble), for the log.
	withheldOps []string
	// listed are the backends whose discovered tools this catalog holds
	// (a backend with none exposed included): /readyz waits for a
	// backend's name here, not for its discovery alone, so ready means
	// that tools/list and search_tools already show its tools.
	listed map[string]bool
	// rules are the tool scope rules as resolved for this catalog: which
	// match nothing, and which name a tool by a name a collision took from
	// it (package scopes); rebuild logs them.
	rules scopes.Resolution
}

// listing is one list of tools: the whole catalog's, or a toolset's,
// which holds some of the catalog's tools (the same *tool values).
type listing struct {
	tools  []*tool
	byName map[string]*tool
	// set is what tools/list shows: every tool in typed mode, search
	// mode's two tools otherwise (then search is set).
	set    *mcp.ToolList
	mode   ToolMode
	search *searchCatalog
	// scopeSets are the distinct scopes the tools need, and views the
	// lists kept for callers by the sets their tokens hold (visible.go).
	scopeSets scopes.Sets
	views     scopes.Views[*mcp.ToolList]
	// restricted: the listing is a toolset's, whose endpoint reaches only
	// its own tools' tasks, Operations methods (ops) and resources
	// (services, reach); the whole catalog's reaches all of the catalog's.
	restricted bool
	// resources are what resources/list shows: the catalog's services, or
	// a toolset's tools' services; services are a toolset's by URI
	// (toolsets.go).
	resources *mcp.ResourceSet
	services  map[string]bool
	// reach are, by backend, the messages a toolset's tools reach, the
	// only message resources it serves (listing.reaches builds it).
	reachOnce sync.Once
	reach     map[string]map[protoreflect.FullName]bool
	// matchedRules are the indexes of a toolset's own overrides that
	// matched one of its tools (overrides.go), and replaced the catalog's
	// tools it holds its own copies of, for the tasks they start.
	matchedRules map[int]bool
	resolvedArgs map[overrides.ArgKey]bool
	replaced     map[*tool]bool
	// ops are the Operations tools, listed or withheld, whose methods a
	// toolset's task methods may call: those its patterns name and the
	// pollers its long-running tools bring (buildToolsets). Nil for the
	// whole catalog, which may call every one it has.
	ops map[*tool]bool
}

// catalogOptions are the settings that shape tools.
type catalogOptions struct {
	exposeHealth bool
	// exposeInternal is Options.Catalog.ExposeInternal.
	exposeInternal bool
	useProtoNames  bool
	filter         *methodFilter
	logger         *slog.Logger
	// backend is the backend's own settings; nil means none.
	backend *backendSettings
	// deadlines are the gateway-wide deadlines; backendSettings.apply
	// orders them with the backend's own.
	deadlines deadlines
	// operationWait and operationCancel are Options.Calls.OperationWait
	// (resolved) and Options.Calls.OperationCancel.
	operationWait   time.Duration
	operationCancel bool
	// exposeDebugInfo is Options.Calls.ExposeDebugInfo.
	exposeDebugInfo bool
	// maxResultBytes is the resolved result budget, -1 for none.
	maxResultBytes int
	// watch is Options.Calls.Watch, resolved (gateway/watch.go).
	watch watch.Settings
	// overrides are Options.Catalog.Tools, compiled (overrides.go).
	overrides *overrides.Rules
}

// backendTools is one backend's discovery compiled into tools. It is kept
// between refreshes so that a backend whose descriptors did not change
// costs a hash, not a compilation, and is shared read-only by catalogs:
// assemble copies each tool before naming it.
type backendTools struct {
	backend     string
	fingerprint [32]byte
	// tools are sorted by method full name and named by the rule within
	// one backend (toolname.Local).
	tools []*tool
	// services are the services with at least one exposed method, sorted
	// by full name, for resources.
	services []protoreflect.ServiceDescriptor
	// ops is the backend's google.longrunning.Operations service, nil
	// when it serves none (longrunning, tasks.go); md is the backend's
	// own metadata, for the task methods' calls to it.
	ops *longrunning.Client
	md  metadata.MD
	// methods are the exposed methods, for resources.
	methods map[protoreflect.FullName]bool
	// files resolves the imports of the services' files, for resources.
	files *protoregistry.Files
	// comments holds the source info of files, for resources.
	comments *descriptors.Comments
	// messages are those bounded schemas name, served as resources
	// (toolsize.go); schemas are bounded as they are built, on first use,
	// so it grows then.
	messages *messageSet
	// hidden are the internal services the backend serves that were
	// not exposed, and hiddenMethods their methods, for the log.
	hidden        []string
	hiddenMethods int
	// matchedRules are the indexes of the tool overrides that matched a
	// method of the backend, and resolvedArgs their arguments a method
	// it matched has.
	matchedRules map[int]bool
	resolvedArgs map[overrides.ArgKey]bool
}

// compileBackend compiles every exposed method of one backend's discovered
// services into a tool: unary methods for call.go, streaming methods for
// stream.go. What is exposed is decided here, in order: the reflection
// service never; the health service only with exposeHealth; the
// internal services only with exposeInternal; the
// (mcpgateway.v1.service) and (mcpgateway.v1.tool) hidden options; then
// the --include/--exclude globs.
func compileBackend(backend string, res *descriptors.Result, conn grpc.ClientConnInterface, opts catalogOptions) (*backendTools, error) {
	types := anytypes.New(res)
	var methods []protoreflect.MethodDescriptor
	toolOpts := make(map[protoreflect.FullName]*mcpgatewayv1.Tool)
	prefixes := make(map[protoreflect.FullName]string)
	declared := make(map[protoreflect.FullName][]string)
	ovs := make(map[protoreflect.FullName]*overrides.Method)
	matched := make(map[int]bool)
	var hidden []string
	hiddenMethods := 0
	for _, svc := range res.Services {
		if isReflectionService(svc.FullName()) || svc.FullName() == healthService && !opts.exposeHealth {
			continue
		}
		if _, internal := internalServices[svc.FullName()]; internal && !opts.exposeInternal {
			hidden = append(hidden, string(svc.FullName()))
			hiddenMethods += svc.Methods().Len()
			continue
		}
		so := descriptors.ServiceOptions(svc)
		if so.GetHidden() {
			continue
		}
		prefixes[svc.FullName()] = so.GetNamePrefix()
		ms := svc.Methods()
		for i := range ms.Len() {
			m := ms.Get(i)
			to := descriptors.ToolOptions(m)
			if to.GetHidden() || !opts.filter.match(m) || !opts.backend.exposes(m) {
				continue
			}
			scopes, err := declaredScopes(so.GetScopes(), to.GetScopes())
			if err != nil {
				// Fail closed: a scope no token can hold, or one that
				// would break the refusal's challenge header, must not
				// leave the method open or unreachable in silence.
				opts.logger.Error("method left out of the tool list: its scopes option is invalid", "backend", backend, "method", m.FullName(), "error", err)
				continue
			}
			if ov := opts.overrides.ForMethod(m, to); ov != nil {
				// The operator's corrections take the option's path.
				ovs[m.FullName()], to = ov, ov.Opt
				for _, i := range ov.Idx {
					matched[i] = true
				}
			}
			if to != nil {
				toolOpts[m.FullName()] = to
			}
			if scopes != nil {
				declared[m.FullName()] = scopes
			}
			methods = append(methods, m)
		}
	}
	slices.SortFunc(methods, func(a, b protoreflect.MethodDescriptor) int {
		return cmp.Compare(a.FullName(), b.FullName())
	})

	names := toolname.Local(methods, toolOpts, prefixes, opts.logger.With("backend", backend))
	if err := overrides.CheckNames(methods, names, ovs); err != nil {
		return nil, err
	}
	slices.Sort(hidden)
	bt := &backendTools{backend: backend, methods: make(map[protoreflect.FullName]bool, len(methods)), files: res.Files, comments: res.Comments,
		hidden: hidden, hiddenMethods: hiddenMethods, matchedRules: matched, resolvedArgs: make(map[overrides.ArgKey]bool)}
	cc := newCompileCache(backend, types, res.Files, res.Comments, opts.useProtoNames)
	ops := longrunning.NewClient(res, conn, types)
	if ops != nil {
		ops.ExposeDebugInfo = opts.exposeDebugInfo
	}
	// Tools are compiled on every core: at the scale of the googleapis
	// catalog (13,000 tools) validators, descriptions and search facts are
	// most of a discovery's work after the descriptors. The compile cache
	// makes a message shared by many tools cost one build. Their schemas
	// wait for first use (toolschemas.go), with the cache's tables.
	compiled := make([]compiledTool, len(methods))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(methods)) {
		wc := cc.forWorker()
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(methods); i = int(next.Add(1) - 1) {
				m := methods[i]
				compiled[i] = compileMethod(backend, m, names[i], toolOpts[m.FullName()], ovs[m.FullName()], prefixes[m.Parent().FullName()], conn, ops, res.Files, wc, opts)
			}
		})
	}
	wg.Wait()
	builder := newSchemaBuilder(cc, len(methods))
	for i, c := range compiled {
		if c.err != nil {
			return nil, c.err
		}
		t, m := c.tool, methods[i]
		t.Schemas = &toolSchemas{tool: t, m: m, b: builder}
		t.Access.DeclaredScopes = declared[m.FullName()]
		if ov := ovs[m.FullName()]; ov != nil {
			for _, k := range ov.Resolved {
				bt.resolvedArgs[k] = true
			}
		}
		bt.tools = append(bt.tools, t)
		bt.methods[m.FullName()] = true
		svc := m.Parent().(protoreflect.ServiceDescriptor)
		if n := len(bt.services); n == 0 || bt.services[n-1] != svc {
			bt.services = append(bt.services, svc)
		}
	}
	bt.ops = ops
	bt.messages = cc.escaped
	if opts.backend != nil {
		bt.md = opts.backend.md
	}
	slices.SortFunc(bt.services, func(a, b protoreflect.ServiceDescriptor) int {
		return cmp.Compare(a.FullName(), b.FullName())
	})
	bt.services = slices.Compact(bt.services)
	return bt, nil
}

// compiledTool is compileMethod's outcome: the tool, or the error that
// fails the discovery.
type compiledTool struct {
	tool *tool
	err  error
}

// compileMethod compiles one exposed method into its tool: what its calls
// need (validator, encoders, operation polling, result budget, settings)
// and what search and the list show beside schemas; the schemas
// themselves are built on first use (toolschemas.go). It is safe
// to run for several methods at once, each with its own cc from
// forWorker (ops is safe for concurrent use).
func compileMethod(backend string, m protoreflect.MethodDescriptor, name string, to *mcpgatewayv1.Tool, ov *overrides.Method, prefix string,
	conn grpc.ClientConnInterface, ops *longrunning.Client, files *protoregistry.Files, cc *compileCache, opts catalogOptions) compiledTool {
	t, err := compileTool(m, name, to, conn, cc)
	if err != nil {
		return compiledTool{err: err}
	}
	t.Origin = originOf(t, m, ov, to, cc.comments)
	if ov != nil {
		if err := applyOverride(t, m, ov, opts.useProtoNames); err != nil {
			return compiledTool{err: err}
		}
	}
	t.Access.BaseName = toolname.Base(m, to, prefix)
	logger := opts.logger.With("backend", backend)
	if t.LRO, err = longrunning.Compile(m, ops, cc.types, cc.encoder, logger); err != nil {
		return compiledTool{err: err}
	}
	if t.LRO != nil && ops != nil && ops.HasGet {
		// Tasks poll through GetOperation (tasks.go).
		t.Definition.TaskSupport = mcp.TaskSupportOptional
	}
	if t.LRO == nil {
		if t.LRO, err = longrunning.CompileCustom(m, conn, files, cc.anys, cc.sopts.UseProtoNames, t.Call.Response, logger); err != nil {
			return compiledTool{err: err}
		}
	}
	if t.LRO != nil {
		t.LRO.Wait, t.LRO.Cancel = opts.operationWait, opts.operationCancel
		t.LRO.ExposeDebugInfo = opts.exposeDebugInfo
	}
	var askLess string
	t.Paging, askLess, t.Budget.AskLess = paging.Compile(m, opts.useProtoNames)
	t.Definition.Description += askLess
	compileBudget(t, opts.maxResultBytes)
	if err := rootFacts(t, m, cc); err != nil {
		return compiledTool{err: err}
	}
	t.Backend = backend
	if c, ok := conn.(managedConn); ok {
		t.Call.Limits = c
		t.Call.Retry = c.RetriesSafeMethods() && t.Call.Repeatable
	}
	opts.backend.apply(t, m, opts.deadlines)
	var watchNote string
	t.Watch, watchNote = watch.Compile(m, to, opts.watch, t.Call.Timeout, opts.useProtoNames)
	t.Definition.Description += watchNote
	t.Call.Invoke = chooseInvoker(t)
	return compiledTool{tool: t}
}

func isReflectionService(name protoreflect.FullName) bool {
	return strings.HasPrefix(string(name), "grpc.reflection.")
}

// compileTool compiles one method; to is its (mcpgateway.v1.tool) option,
// nil when unset. What depends only on the request or response message
// comes from cc, shared with the backend's other tools.
func compileTool(m protoreflect.MethodDescriptor, name string, to *mcpgatewayv1.Tool, conn grpc.ClientConnInterface, cc *compileCache) (*tool, error) {
	in, out := m.Input(), m.Output()
	validator, err := cc.validator(in)
	if err != nil {
		return nil, fmt.Errorf("input validation rules of %s: %w", m.FullName(), err)
	}
	response, err := cc.encoder(out)
	if err != nil {
		return nil, fmt.Errorf("response encoder of %s: %w", m.FullName(), err)
	}
	svc := m.Parent().(protoreflect.ServiceDescriptor)
	an := cc.analyze(m)
	ann := methodAnnotations(an, to)
	t := &tool{
		Definition: mcp.Tool{
			Name:        name,
			Title:       ann.Title,
			Description: methodDescription(m, to, an, cc.comments),
			Annotations: ann,
		},
		Call: toolCall{
			Method:     "/" + string(svc.FullName()) + "/" + string(m.Name()),
			Conn:       conn,
			Input:      dynamicpb.NewMessageType(in),
			WrapOutput: !schema.IsObject(out),
			Types:      cc.anys,
			Validator:  validator,
			Response:   response,
			Repeatable: safeToRepeat(an, to),
		},
		Search: searchdoc.NewFacts(m, an),
	}
	// Search indexes what the description says the method does, not the
	// notes on its inputs and outputs: the field names are indexed on
	// their own, at their own weight.
	t.Search.Description = strings.TrimSuffix(t.Definition.Description, an.Notes())
	t.compileStream(m)
	return t, nil
}

// methodDescription is the (mcpgateway.v1.tool) description when the
// service's owners set one, else the method's own comment when the
// descriptors carry source info. Otherwise it is written from the
// method's structure (describe.Method.Description): what it does, to
// what, where, and what a call needs; never a sentence that only names
// the RPC.
func methodDescription(m protoreflect.MethodDescriptor, to *mcpgatewayv1.Tool, a *describe.Method, comments *descriptors.Comments) string {
	if d := strings.TrimSpace(to.GetDescription()); d != "" {
		return d
	}
	if c := comment(comments, m); c != "" {
		return c
	}
	desc := a.Description()
	if c := comment(comments, m.Parent()); c != "" {
		desc += " Service: " + c
	}
	return desc
}

// comment returns the leading comment of d (or its trailing one),
// cleaned of the comment syntax and the indentation common to its lines
// (Temporal's, like most, has a space after each "//").
func comment(comments *descriptors.Comments, d protoreflect.Descriptor) string {
	loc := comments.Location(d)
	c := schema.CleanComment(loc.LeadingComments)
	if c == "" {
		c = schema.CleanComment(loc.TrailingComments)
	}
	return c
}
