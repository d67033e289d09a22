package compiled

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
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/anytypes"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/describe"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/longrunning"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/overrides"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/paging"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/searchdoc"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/toolname"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/watch"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/internal/schema"
	mcpgatewayv1 "github.com/grpc-mcp-gateway/gateway/proto/mcpgateway/v1"
)

// HealthService is hidden unless the operator asks for it: a model has no
// use for the backend's health checks, and they would crowd the tool list.
const HealthService = "grpc.health.v1.Health"

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

// Options are the settings that shape tools.
type Options struct {
	ExposeHealth bool
	// ExposeInternal is Options.Catalog.ExposeInternal.
	ExposeInternal bool
	UseProtoNames  bool
	Logger         *slog.Logger
	// Exposes says whether the operator's method filters (the gateway's
	// and the backend's own) let m through; nil lets every method through.
	Exposes func(m protoreflect.MethodDescriptor) bool
	// Settle sets what the gateway's and the backend's settings decide
	// of t once its shape is known: its deadline, metadata, token
	// exchange and operation wait; nil leaves them unset.
	Settle func(t *Tool, m protoreflect.MethodDescriptor)
	// MD is the backend's own metadata (Backend.Metadata), nil for none.
	MD metadata.MD
	// OperationWait and OperationCancel are Options.Calls.OperationWait
	// (resolved) and Options.Calls.OperationCancel.
	OperationWait   time.Duration
	OperationCancel bool
	// ExposeDebugInfo is Options.Calls.ExposeDebugInfo.
	ExposeDebugInfo bool
	// MaxResultBytes is the resolved result budget, -1 for none.
	MaxResultBytes int
	// Watch is Options.Calls.Watch, resolved (gateway/watch.go).
	Watch watch.Settings
	// Overrides are Options.Catalog.Tools, compiled.
	Overrides *overrides.Rules
	// Invoker is the invoker of a compiled tool's shape (the gateway's
	// chooseInvoker); nil leaves tools without one, for a check that
	// compiles but never calls.
	Invoker func(t *Tool) Invoker
	// Answers is told, without blocking, of each call that ended at
	// DEADLINE_EXCEEDED, so the backend is asked whether it still
	// answers; nil for none (Call.Answers).
	Answers chan<- struct{}
}

// Backend is one backend's discovery compiled into tools. It is kept
// between refreshes so that a backend whose descriptors did not change
// costs a hash, not a compilation, and is shared read-only by catalogs:
// assemble copies each tool before naming it.
type Backend struct {
	Name        string
	Fingerprint [32]byte
	// tools are sorted by method full name and named by the rule within
	// one backend (toolname.Local).
	Tools []*Tool
	// services are the services with at least one exposed method, sorted
	// by full name, for resources.
	Services []protoreflect.ServiceDescriptor
	// ops is the backend's google.longrunning.Operations service, nil
	// when it serves none (longrunning; the gateway's tasks.go); md is the backend's
	// own metadata, for the task methods' calls to it.
	Ops *longrunning.Client
	MD  metadata.MD
	// methods are the exposed methods, for resources.
	Methods map[protoreflect.FullName]bool
	// files resolves the imports of the services' files, for resources.
	Files *protoregistry.Files
	// comments holds the source info of files, for resources.
	Comments *descriptors.Comments
	// messages are those bounded schemas name, served as resources
	// (toolsize.go); schemas are bounded as they are built, on first use,
	// so it grows then.
	Messages *MessageSet
	// hidden are the internal services the backend serves that were
	// not exposed, and hiddenMethods their methods, for the log.
	Hidden        []string
	HiddenMethods int
	// matchedRules are the indexes of the tool overrides that matched a
	// method of the backend, and resolvedArgs their arguments a method
	// it matched has.
	MatchedRules map[int]bool
	ResolvedArgs map[overrides.ArgKey]bool
}

// Compile compiles every exposed method of one backend's discovered
// services into a tool: unary methods and streaming
// ones alike. What is exposed is decided here, in order: the reflection
// service never; the health service only with exposeHealth; the
// internal services only with exposeInternal; the
// (mcpgateway.v1.service) and (mcpgateway.v1.tool) hidden options; then
// the --include/--exclude globs.
func Compile(backend string, res *descriptors.Result, conn grpc.ClientConnInterface, opts Options) (*Backend, error) {
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
		if isReflectionService(svc.FullName()) || svc.FullName() == HealthService && !opts.ExposeHealth {
			continue
		}
		if _, internal := internalServices[svc.FullName()]; internal && !opts.ExposeInternal {
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
			if to.GetHidden() || (opts.Exposes != nil && !opts.Exposes(m)) {
				continue
			}
			scopes, err := declaredScopes(so.GetScopes(), to.GetScopes())
			if err != nil {
				// Fail closed: a scope no token can hold, or one that
				// would break the refusal's challenge header, must not
				// leave the method open or unreachable in silence.
				opts.Logger.Error("method left out of the tool list: its scopes option is invalid", "backend", backend, "method", m.FullName(), "error", err)
				continue
			}
			if ov := opts.Overrides.ForMethod(m, to); ov != nil {
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

	names := toolname.Local(methods, toolOpts, prefixes, opts.Logger.With("backend", backend))
	if err := overrides.CheckNames(methods, names, ovs); err != nil {
		return nil, err
	}
	slices.Sort(hidden)
	bt := &Backend{Name: backend, Methods: make(map[protoreflect.FullName]bool, len(methods)), Files: res.Files, Comments: res.Comments,
		Hidden: hidden, HiddenMethods: hiddenMethods, MatchedRules: matched, ResolvedArgs: make(map[overrides.ArgKey]bool)}
	cc := newCompileCache(backend, types, res.Files, res.Comments, opts.UseProtoNames)
	ops := longrunning.NewClient(res, conn, types)
	if ops != nil {
		ops.ExposeDebugInfo = opts.ExposeDebugInfo
	}
	// Tools are compiled on every core: at the scale of the googleapis
	// catalog (13,000 tools) validators, descriptions and search facts are
	// most of a discovery's work after the descriptors. The compile cache
	// makes a message shared by many tools cost one build. Their schemas
	// wait for first use (schemas.go), with the cache's tables.
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
		t.Schemas = &Schemas{tool: t, m: m, b: builder}
		t.Access.DeclaredScopes = declared[m.FullName()]
		if ov := ovs[m.FullName()]; ov != nil {
			for _, k := range ov.Resolved {
				bt.ResolvedArgs[k] = true
			}
		}
		bt.Tools = append(bt.Tools, t)
		bt.Methods[m.FullName()] = true
		svc := m.Parent().(protoreflect.ServiceDescriptor)
		if n := len(bt.Services); n == 0 || bt.Services[n-1] != svc {
			bt.Services = append(bt.Services, svc)
		}
	}
	bt.Ops = ops
	bt.Messages = cc.escaped
	bt.MD = opts.MD
	slices.SortFunc(bt.Services, func(a, b protoreflect.ServiceDescriptor) int {
		return cmp.Compare(a.FullName(), b.FullName())
	})
	bt.Services = slices.Compact(bt.Services)
	return bt, nil
}

// compiledTool is compileMethod's outcome: the tool, or the error that
// fails the discovery.
type compiledTool struct {
	tool *Tool
	err  error
}

// compileMethod compiles one exposed method into its tool: what its calls
// need (validator, encoders, operation polling, result budget, settings)
// and what search and the list show beside schemas; the schemas
// themselves are built on first use (schemas.go). It is safe
// to run for several methods at once, each with its own cc from
// forWorker (ops is safe for concurrent use).
func compileMethod(backend string, m protoreflect.MethodDescriptor, name string, to *mcpgatewayv1.Tool, ov *overrides.Method, prefix string,
	conn grpc.ClientConnInterface, ops *longrunning.Client, files *protoregistry.Files, cc *compileCache, opts Options) compiledTool {
	t, err := compileTool(m, name, to, conn, cc)
	if err != nil {
		return compiledTool{err: err}
	}
	t.Origin = originOf(t, m, ov, to, cc.comments)
	if ov != nil {
		if err := applyOverride(t, m, ov, opts.UseProtoNames); err != nil {
			return compiledTool{err: err}
		}
	}
	t.Access.BaseName = toolname.Base(m, to, prefix)
	logger := opts.Logger.With("backend", backend)
	if t.LRO, err = longrunning.Compile(m, ops, cc.types, cc.encoder, logger); err != nil {
		return compiledTool{err: err}
	}
	if t.LRO != nil && ops != nil && ops.HasGet {
		// Tasks poll through GetOperation (the gateway's tasks.go).
		t.Definition.TaskSupport = mcp.TaskSupportOptional
	}
	if t.LRO == nil {
		if t.LRO, err = longrunning.CompileCustom(m, conn, files, cc.anys, cc.sopts.UseProtoNames, t.Call.Response, logger); err != nil {
			return compiledTool{err: err}
		}
	}
	if t.LRO != nil {
		t.LRO.Wait, t.LRO.Cancel = opts.OperationWait, opts.OperationCancel
		t.LRO.ExposeDebugInfo = opts.ExposeDebugInfo
	}
	var askLess string
	t.Paging, askLess, t.Budget.AskLess = paging.Compile(m, opts.UseProtoNames)
	t.Definition.Description += askLess
	compileBudget(t, opts.MaxResultBytes)
	if err := rootFacts(t, m, cc); err != nil {
		return compiledTool{err: err}
	}
	t.Backend = backend
	t.Call.Answers = opts.Answers
	if c, ok := conn.(managed); ok {
		t.Call.Limits = c
		t.Call.Retry = c.RetriesSafeMethods() && t.Call.Repeatable
	}
	if opts.Settle != nil {
		opts.Settle(t, m)
	}
	var watchNote string
	t.Watch, watchNote = watch.Compile(m, to, opts.Watch, t.Call.Timeout, opts.UseProtoNames)
	t.Definition.Description += watchNote
	if opts.Invoker != nil {
		t.Call.Invoke = opts.Invoker(t)
	}
	return compiledTool{tool: t}
}

// internalServices are hidden unless Options.Catalog.ExposeInternal: services
// that run beside an application's own on many servers, but serve the
// server's operators or its infrastructure, not its users. A model has no
// business calling them, some destroy data, and they crowd a search.
// Each is named exactly, with the reason: a guess by name (*AdminService,
// *Admin) would hide users' own APIs, such as Spanner's
// google.spanner.admin.database.v1.DatabaseAdmin.
var internalServices = map[protoreflect.FullName]string{
	"grpc.channelz.v1.Channelz":                            "gRPC's introspection of the server's channels, sockets and peers (grpc-go channelz/service, admin.Register)",
	"envoy.service.status.v3.ClientStatusDiscoveryService": "the xDS client's configuration dump, CSDS (admin.Register)",
	"xds.service.orca.v3.OpenRcaService":                   "backend load reports for load balancers, ORCA",
	"temporal.server.api.adminservice.v1.AdminService":     "Temporal's cluster administration, served beside WorkflowService: deletes workflow executions, DLQ messages, replication",
}

// InternalServices are the full names of the services hidden unless
// the gateway's Options.Catalog.ExposeInternal, sorted: for help texts and docs, which list
// them from here.
func InternalServices() []string {
	out := make([]string, 0, len(internalServices))
	for s := range internalServices {
		out = append(out, string(s))
	}
	slices.Sort(out)
	return out
}

func isReflectionService(name protoreflect.FullName) bool {
	return strings.HasPrefix(string(name), "grpc.reflection.")
}

// compileTool compiles one method; to is its (mcpgateway.v1.tool) option,
// nil when unset. What depends only on the request or response message
// comes from cc, shared with the backend's other tools.
func compileTool(m protoreflect.MethodDescriptor, name string, to *mcpgatewayv1.Tool, conn grpc.ClientConnInterface, cc *compileCache) (*Tool, error) {
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
	t := &Tool{
		Definition: mcp.Tool{
			Name:        name,
			Title:       ann.Title,
			Description: methodDescription(m, to, an, cc.comments),
			Annotations: ann,
		},
		Call: Call{
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
	if c := Comment(comments, m); c != "" {
		return c
	}
	desc := a.Description()
	if c := Comment(comments, m.Parent()); c != "" {
		desc += " Service: " + c
	}
	return desc
}

// Comment returns the leading comment of d (or its trailing one),
// cleaned of the comment syntax and the indentation common to its lines
// (Temporal's, like most, has a space after each "//").
func Comment(comments *descriptors.Comments, d protoreflect.Descriptor) string {
	loc := comments.Location(d)
	c := schema.CleanComment(loc.LeadingComments)
	if c == "" {
		c = schema.CleanComment(loc.TrailingComments)
	}
	return c
}
