package gateway

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/results"
	"github.com/grpc-mcp-gateway/gateway/gateway/schema"
)

// Tool schemas on demand.
//
// A tool's input and output schemas are most of what discovering a large
// catalog costs (on the googleapis catalog, 13,386 tools: three quarters
// of compiling the tools, and 119 MB once packed), and in search mode,
// which --tool-mode auto picks for any catalog that large, a client needs
// none of them to start: tools/list shows two tools, and search_tools
// shows a schema only for the few matches an answer carries. So discovery
// compiles a tool without them, and they are built later:
//
//   - typed mode lists every tool, so the catalog builds them all before
//     it is swapped in, on every core (forceSchemas);
//   - search mode builds a tool's when a search answer carries it, and
//     builds the rest in the background once the catalog is listed
//     (warmSchemas), on one core less than the process has;
//   - ToolModeAuto weighs the typed list against the budget only when a
//     lower bound of its size (listLowerBound: names and descriptions)
//     leaves the question open, which is never the case for a large
//     catalog.
//
// What a call needs of the output schema (where a cut result lists its
// cuts, the member that holds an unfinished operation's handle) is read
// at discovery from the schema's root alone (schema.OutputRoot, rootFacts),
// which is all those readers look at; building the whole schema later
// checks that it has the same root facts.

// toolSchemas are one tool's schemas, built once, on first use. The
// copies of a tool in the catalogs that share its backend's discovery
// share one.
type toolSchemas struct {
	once  sync.Once
	ready atomic.Bool
	tool  *tool // as compiled, before a catalog names it
	m     protoreflect.MethodDescriptor
	b     *schemaBuilder
	built builtSchemas
}

// builtSchemas are a tool's schemas as tools/list shows them, bounded to
// MaxToolBytes; whole and took are boundTool's, for the log.
type builtSchemas struct {
	in, out json.RawMessage
	whole   int
	took    time.Duration
	err     error
}

// schemaBuilder builds the schemas of one discovery's tools on demand,
// one at a time, with the discovery's compile cache; the cache is dropped
// once every tool's schemas are built.
type schemaBuilder struct {
	mu      sync.Mutex
	cc      *compileCache
	pending atomic.Int64
}

func newSchemaBuilder(cc *compileCache, tools int) *schemaBuilder {
	b := &schemaBuilder{cc: cc.forWorker()}
	b.pending.Store(int64(tools))
	return b
}

// worker is a compile cache for one more goroutine building schemas; nil
// when every schema is built.
func (b *schemaBuilder) worker() *compileCache {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cc == nil {
		return nil
	}
	return b.cc.forWorker()
}

// done counts one tool's schemas built, and drops the cache after the last.
func (b *schemaBuilder) done() {
	if b.pending.Add(-1) == 0 {
		b.mu.Lock()
		b.cc = nil
		b.mu.Unlock()
	}
}

// get returns the tool's schemas, building them on first use.
func (s *toolSchemas) get() builtSchemas {
	s.once.Do(func() {
		s.b.mu.Lock()
		s.built = buildSchemas(s.tool, s.m, s.b.cc)
		s.b.mu.Unlock()
		s.ready.Store(true)
		s.b.done()
	})
	return s.built
}

// publish sets the schemas forceSchemas built, unless get built them first.
func (s *toolSchemas) publish(b builtSchemas) {
	s.once.Do(func() {
		s.built = b
		s.ready.Store(true)
		s.b.done()
	})
}

// buildSchemas builds t's input and output schemas and bounds them to
// MaxToolBytes (boundTool). t is the tool as compileMethod left it.
func buildSchemas(t *tool, m protoreflect.MethodDescriptor, cc *compileCache) builtSchemas {
	fail := func(err error) builtSchemas {
		return builtSchemas{err: fmt.Errorf("schemas of %s: %w", m.FullName(), err)}
	}
	var in json.RawMessage
	var err error
	if m.IsStreamingClient() {
		in, err = schema.StreamInput(m.Input(), cc.sopts)
	} else {
		in, err = cc.input(m.Input())
	}
	if err != nil {
		return fail(fmt.Errorf("input schema: %w", err))
	}
	out, facts, err := toolOutput(t, m, cc, false)
	if err != nil {
		return fail(fmt.Errorf("output schema: %w", err))
	}
	if want := (outputFacts{handleKey: lroHandleKey(t), shape: t.budget.shape}); !facts.equal(want) {
		// OutputRoot writes the root as the whole schema does; a
		// difference is a bug, and the tool would cut or poll wrongly.
		return fail(fmt.Errorf("the output schema's root (%+v) differs from the one discovery read (%+v)", facts, want))
	}
	st := *t
	st.def.InputSchema, st.def.OutputSchema = in, out
	start := time.Now()
	whole, err := boundTool(&st, m, cc)
	if err != nil {
		return fail(fmt.Errorf("bounding: %w", err))
	}
	return builtSchemas{in: st.def.InputSchema, out: st.def.OutputSchema, whole: whole, took: time.Since(start)}
}

// outputFacts are what calls need of a tool's output schema, read from
// its root: the member an unfinished operation's handle goes in (a
// long-running tool's), and the shape of a cut result (with a result
// budget).
type outputFacts struct {
	handleKey string
	shape     results.Shape
}

func (f outputFacts) equal(o outputFacts) bool {
	return f.handleKey == o.handleKey && f.shape.Member == o.shape.Member && f.shape.Merge == o.shape.Merge &&
		slices.Equal(f.shape.Required, o.shape.Required)
}

func lroHandleKey(t *tool) string {
	if t.lro == nil {
		return ""
	}
	return t.lro.handleKey
}

// toolOutput writes t's output schema before bounding, with what the
// gateway adds to the response's schema: the handle of an unfinished
// operation (a long-running tool's response is the operation's final
// response), then the list of a cut result's cuts (with a result budget,
// which compileBudget marks by a shape member). With root, the response's
// schema is its root alone (schema.OutputRoot): the facts are the same,
// at a fraction of the cost. A server stream's output has no additions.
func toolOutput(t *tool, m protoreflect.MethodDescriptor, cc *compileCache, root bool) (json.RawMessage, outputFacts, error) {
	facts := outputFacts{shape: t.budget.shape}
	if m.IsStreamingServer() {
		if root {
			return nil, facts, nil
		}
		out, err := schema.StreamOutput(m.Output(), cc.sopts)
		return out, facts, err
	}
	md := m.Output()
	if t.lro != nil {
		md = t.lro.responseDesc
	}
	var out json.RawMessage
	var err error
	if root {
		out, err = cc.outputRoot(md)
	} else {
		out, err = cc.output(md)
	}
	if err != nil {
		return nil, facts, err
	}
	if t.lro != nil {
		if out, facts.handleKey, err = cc.withHandle(out); err != nil {
			return nil, facts, err
		}
	}
	if facts.shape.Member != "" {
		if out, facts.shape, err = cc.withTruncated(out); err != nil {
			return nil, facts, err
		}
	}
	return out, facts, nil
}

// rootFacts sets what t's calls need of its output schema, read from its
// root (toolOutput), so that the whole schema can wait for its first use.
func rootFacts(t *tool, m protoreflect.MethodDescriptor, cc *compileCache) error {
	_, facts, err := toolOutput(t, m, cc, true)
	if err != nil {
		return fmt.Errorf("output schema of %s: %w", m.FullName(), err)
	}
	if t.lro != nil {
		t.lro.handleKey = facts.handleKey
	}
	t.budget.shape = facts.shape
	return nil
}

// forceSchemas builds, on workers goroutines, the schemas of every tool
// that has none yet, packs them into one block (packSchemas) and logs, per
// backend, the tools whose schemas had to be shortened. It returns the
// schemas that failed to build, for the caller to say what becomes of
// their tools. Once stop is closed it builds no more and publishes
// nothing, leaving the rest to first use.
func forceSchemas(tools []*tool, workers int, stop <-chan struct{}, logger *slog.Logger) (failed map[*toolSchemas]error) {
	var todo []*toolSchemas
	seen := make(map[*toolSchemas]bool)
	for _, t := range tools {
		if s := t.schemas; !s.ready.Load() && !seen[s] {
			seen[s] = true
			todo = append(todo, s)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	built := make([]builtSchemas, len(todo))
	var next atomic.Int64
	var wg sync.WaitGroup
	stopped := func() bool { return isStopped(stop) }
	for range max(1, min(workers, len(todo))) {
		wg.Go(func() {
			caches := make(map[*schemaBuilder]*compileCache)
			for i := int(next.Add(1) - 1); i < len(todo) && !stopped(); i = int(next.Add(1) - 1) {
				s := todo[i]
				if s.ready.Load() {
					continue // a search answer built it meanwhile
				}
				wc, ok := caches[s.b]
				if !ok {
					wc = s.b.worker()
					caches[s.b] = wc
				}
				if wc == nil {
					continue // every schema of its discovery is built
				}
				built[i] = buildSchemas(s.tool, s.m, wc)
			}
		})
	}
	wg.Wait()
	if stopped() {
		return nil
	}
	packSchemas(built)
	bounded := make(map[string]*boundedTools)
	for i, s := range todo {
		b := built[i]
		if b.in == nil && b.err == nil {
			continue // built by get meanwhile
		}
		s.publish(b)
		b = s.get()
		if b.err != nil {
			if failed == nil {
				failed = make(map[*toolSchemas]error)
			}
			failed[s] = b.err
			continue
		}
		bt := bounded[s.tool.backend]
		if bt == nil {
			bt = new(boundedTools)
			bounded[s.tool.backend] = bt
		}
		bt.add(s.tool.def.Name, b.whole, b.took)
	}
	for backend, b := range bounded {
		if b.n > 0 {
			logger.Info("tool schemas shortened: written out, these tools would each take more than the gateway's bound of a tool's tools/list entry; each shortened schema names the resources (grpc://BACKEND/message.Name) that hold what it leaves out",
				"backend", backend, "tools", b.n, "bound_bytes", MaxToolBytes, "largest_tool", b.largestTool, "largest_bytes", b.largest, "took", b.took.Round(time.Millisecond))
		}
	}
	return failed
}

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
	if !slices.ContainsFunc(tools, func(t *tool) bool { return !t.schemas.ready.Load() }) {
		return
	}
	start := time.Now()
	failed := forceSchemas(tools, runtime.GOMAXPROCS(0)-1, g.closed, g.opts.Logger)
	for i := range tools {
		if i%64 == 0 && isStopped(g.closed) {
			return
		}
		c.search.entry(i)
	}
	if isStopped(g.closed) {
		return
	}
	for s, err := range failed {
		g.opts.Logger.Error("tool schemas could not be built: search_tools lists the tool without its input schema", "backend", s.tool.backend, "tool", s.tool.def.Name, "error", err)
	}
	g.opts.Logger.Info("tool schemas built in the background", "tools", len(tools), "took", time.Since(start).Round(time.Millisecond))
	g.releaseMemory()
}

func isStopped(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// listLowerBound is at most the bytes of the typed tools/list of tools
// (mcp.ToolSet.ListBytes), counted without building a schema: each entry
// has at least its name, its description and the smallest input schema.
// When even that is over the tool budget, ToolModeAuto picks search mode
// without building the typed list.
func listLowerBound(tools []*tool) int {
	const entry = len(`{"name":"","description":"","inputSchema":{"type":"object"}}`)
	n := len(`{"tools":[]}`)
	for _, t := range tools {
		n += entry + len(t.def.Name) + len(t.def.Description)
	}
	return n
}

// withSchemas is t's definition as tools/list shows it, its schemas built
// on first use.
func (t *tool) withSchemas() (mcp.Tool, error) {
	b := t.schemas.get()
	def := t.def
	def.InputSchema, def.OutputSchema = b.in, b.out
	return def, b.err
}
