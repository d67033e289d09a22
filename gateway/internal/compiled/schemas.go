package compiled

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/overrides"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/results"
	"github.com/grpc-mcp-gateway/gateway/internal/schema"
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
//     it is swapped in, on every core (ForceSchemas);
//   - search mode builds a tool's when a search answer carries it, and
//     builds the rest in the background once the catalog is listed
//     (warmSchemas), on one core less than the process has. It keeps the
//     input schema only: search answers carry no output schema, and calls
//     need only its root facts (below). The output schema is built to
//     bound the tool (boundTool weighs the two together), then dropped;
//     on the googleapis catalog that is 66 of the schemas' 118 MB. A
//     typed list of the same discovery's tools (a refresh that makes
//     ToolModeAuto pick typed) builds it again (Schemas.full);
//   - ToolModeAuto weighs the typed list against the budget only when a
//     lower bound of its size (ListLowerBound: names and descriptions)
//     leaves the question open, which is never the case for a large
//     catalog.
//
// What a call needs of the output schema (where a cut result lists its
// cuts, the member that holds an unfinished operation's handle) is read
// at discovery from the schema's root alone (schema.OutputRoot, rootFacts),
// which is all those readers look at; building the whole schema later
// checks that it has the same root facts.

// Schemas are one tool's schemas, built once, on first use. The
// copies of a tool in the catalogs that share its backend's discovery
// share one.
type Schemas struct {
	once  sync.Once
	ready atomic.Bool // built holds the input schema (or the error)
	tool  *Tool       // as compiled, before a catalog names it
	m     protoreflect.MethodDescriptor
	b     *schemaBuilder
	built builtSchemas
	// rebuilt and whole are the schemas built again when a typed list
	// needs the output schema search mode dropped.
	rebuilt sync.Once
	whole   builtSchemas
	// base and derive are set for a toolset's copy of a tool that its own
	// overrides change (ToolsetCopy): its schemas are base's with
	// derive's argument rules applied, and build nothing of their own.
	base   *Schemas
	derive *overrides.Args
}

// derived is b with s's argument rules applied to its input schema.
func (s *Schemas) derived(b builtSchemas) builtSchemas {
	if b.err != nil {
		return b
	}
	in, err := b.inputSchema()
	if err == nil {
		in, err = s.derive.RewriteSchema(in)
	}
	if err != nil {
		return builtSchemas{err: fmt.Errorf("schemas of %s: input schema: %w", s.m.FullName(), err)}
	}
	b.in, b.inZ, b.inLen = in, nil, 0
	return b
}

// builtSchemas are a tool's schemas as tools/list shows them, bounded to
// MaxToolBytes; whole and took are boundTool's, for the log.
type builtSchemas struct {
	in, out json.RawMessage
	// inZ is the input schema deflated, and inLen its length, when
	// search mode holds it so (packSchemas); in is then nil.
	inZ   []byte
	inLen int
	// outDropped says out was built and dropped, as search mode does.
	outDropped bool
	whole      int
	took       time.Duration
	err        error
}

// built says b holds schemas, or the error that kept them from being built.
func (b builtSchemas) built() bool {
	return b.in != nil || b.inZ != nil || b.err != nil
}

// inputSchema is b's input schema, inflated when it is held deflated.
func (b builtSchemas) inputSchema() (json.RawMessage, error) {
	if b.inZ == nil {
		return b.in, nil
	}
	return AppendInflated(nil, b.inZ, b.inLen)
}

// sameInput says whether b and o have the same input schema.
func (b builtSchemas) sameInput(o builtSchemas) bool {
	if b.inZ != nil && o.inZ != nil {
		return bytes.Equal(b.inZ, o.inZ) // deflated alike: the same level
	}
	x, err1 := b.inputSchema()
	y, err2 := o.inputSchema()
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// withoutOutput is b as search mode keeps it.
func (b builtSchemas) withoutOutput() builtSchemas {
	if b.err == nil {
		b.out, b.outDropped = nil, true
	}
	return b
}

// schemaBuilder builds the schemas of one discovery's tools on demand,
// one at a time, with the discovery's compile cache; the cache is dropped
// once every tool's schemas are built.
type schemaBuilder struct {
	mu      sync.Mutex
	cc      *compileCache
	pending atomic.Int64
	// blank has cc's settings and none of its tables, to make again, a
	// cache for the output schemas search mode dropped that a typed list
	// then needs; again goes once dropped of them are all built again.
	blank   *compileCache
	again   *compileCache
	dropped int
}

func newSchemaBuilder(cc *compileCache, tools int) *schemaBuilder {
	b := &schemaBuilder{cc: cc.forWorker(), blank: cc.blank()}
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

// input returns the tool's schemas with at least the input schema,
// building them on first use as search mode keeps them.
func (s *Schemas) input() builtSchemas {
	return s.build(false)
}

// full returns the tool's input and output schemas, building them on
// first use, or building them again when search mode dropped the output
// schema.
func (s *Schemas) full() builtSchemas {
	b := s.build(true)
	if !b.outDropped {
		return b
	}
	s.rebuilt.Do(func() {
		if s.base != nil {
			s.whole = s.derived(s.base.full())
			return
		}
		s.whole = s.b.buildAgain(s.tool, s.m)
		if s.whole.err == nil && !s.whole.sameInput(b) {
			// The same descriptors give the same schemas; a difference
			// is a bug, and search and the list would disagree.
			s.whole = builtSchemas{err: fmt.Errorf("schemas of %s: the input schema built again differs from the first", s.m.FullName())}
		}
	})
	return s.whole
}

func (s *Schemas) build(keepOutput bool) builtSchemas {
	if s.base != nil {
		s.once.Do(func() {
			s.built = s.derived(s.base.build(keepOutput))
			s.ready.Store(true)
		})
		return s.built
	}
	s.once.Do(func() {
		s.b.mu.Lock()
		b := buildSchemas(s.tool, s.m, s.b.cc)
		if !keepOutput {
			b = b.withoutOutput()
			if b.outDropped {
				s.b.dropped++
			}
		}
		s.built = b
		s.b.mu.Unlock()
		s.ready.Store(true)
		s.b.done()
	})
	return s.built
}

// publish sets the schemas ForceSchemas built, unless first use built
// them first.
func (s *Schemas) publish(b builtSchemas) {
	s.once.Do(func() {
		if b.outDropped {
			s.b.mu.Lock()
			s.b.dropped++
			s.b.mu.Unlock()
		}
		s.built = b
		s.ready.Store(true)
		s.b.done()
	})
}

// buildAgain builds t's schemas, whose output schema search mode
// dropped, with a cache of their own that goes once every dropped one
// is built again.
func (b *schemaBuilder) buildAgain(t *Tool, m protoreflect.MethodDescriptor) builtSchemas {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.again == nil {
		b.again = b.blank.blank()
	}
	built := buildSchemas(t, m, b.again)
	if b.dropped--; b.dropped == 0 {
		b.again = nil
	}
	return built
}

// buildSchemas builds t's input and output schemas and bounds them to
// MaxToolBytes (boundTool). t is the tool as compileMethod left it.
func buildSchemas(t *Tool, m protoreflect.MethodDescriptor, cc *compileCache) builtSchemas {
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
	out, facts, err := toolOutput(t, m, cc)
	if err != nil {
		return fail(fmt.Errorf("output schema: %w", err))
	}
	if want := (outputFacts{handleKey: lroHandleKey(t), shape: t.Budget.Shape}); !facts.equal(want) {
		// OutputRoot writes the root as the whole schema does; a
		// difference is a bug, and the tool would cut or poll wrongly.
		return fail(fmt.Errorf("the output schema's root (%+v) differs from the one discovery read (%+v)", facts, want))
	}
	st := *t
	dec := schemaDecor{t}
	if st.Definition.InputSchema, err = dec.input(in); err != nil {
		return fail(err)
	}
	if st.Definition.OutputSchema, err = dec.output(out); err != nil {
		return fail(err)
	}
	start := time.Now()
	whole, err := boundTool(&st, m, cc, dec)
	if err != nil {
		return fail(fmt.Errorf("bounding: %w", err))
	}
	return builtSchemas{in: st.Definition.InputSchema, out: st.Definition.OutputSchema, whole: whole, took: time.Since(start)}
}

// schemaDecor applies to a tool's schemas, as written from its messages,
// what the gateway changes in them: the operator's argument rules
// (gateway/internal/overrides) and a watch's window
// (gateway/internal/watch). Bounding rebuilds schemas from the messages,
// so it applies them again to what it rebuilt.
type schemaDecor struct{ t *Tool }

func (d schemaDecor) input(in json.RawMessage) (json.RawMessage, error) {
	var err error
	if d.t.Args != nil {
		if in, err = d.t.Args.RewriteSchema(in); err != nil {
			return nil, fmt.Errorf("input schema: %w", err)
		}
	}
	if d.t.Watch != nil {
		if in, err = d.t.Watch.InputSchema(in); err != nil {
			return nil, err
		}
	}
	return in, nil
}

func (d schemaDecor) output(out json.RawMessage) (json.RawMessage, error) {
	if d.t.Watch == nil || out == nil {
		return out, nil
	}
	return d.t.Watch.OutputSchema(out)
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

func lroHandleKey(t *Tool) string {
	if t.LRO == nil {
		return ""
	}
	return t.LRO.HandleKey
}

// toolOutput writes t's output schema before bounding, with what the
// gateway adds to the response's schema: the handle of an unfinished
// operation (a long-running tool's response is the operation's final
// response), then the list of a cut result's cuts (with a result budget,
// which compileBudget marks by a shape member). A server stream's output
// has no additions.
func toolOutput(t *Tool, m protoreflect.MethodDescriptor, cc *compileCache) (json.RawMessage, outputFacts, error) {
	facts := outputFacts{shape: t.Budget.Shape}
	if m.IsStreamingServer() {
		out, err := schema.StreamOutput(m.Output(), cc.sopts)
		return out, facts, err
	}
	md := m.Output()
	if t.LRO != nil {
		md = t.LRO.ResponseDesc
	}
	out, err := cc.output(md)
	if err != nil {
		return nil, facts, err
	}
	if t.LRO != nil {
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
// root (compileCache.rootFacts), so that the whole schema can wait for its
// first use: the handle's member of a long-running tool, and the shape of
// a cut result. A server stream's output has neither.
func rootFacts(t *Tool, m protoreflect.MethodDescriptor, cc *compileCache) error {
	cut := t.Budget.Shape.Member != ""
	if m.IsStreamingServer() || (t.LRO == nil && !cut) {
		return nil
	}
	md := m.Output()
	if t.LRO != nil {
		md = t.LRO.ResponseDesc
	}
	facts, err := cc.rootFacts(md, t.LRO != nil, cut)
	if err != nil {
		return fmt.Errorf("output schema of %s: %w", m.FullName(), err)
	}
	if t.LRO != nil {
		t.LRO.HandleKey = facts.handleKey
	}
	if cut {
		t.Budget.Shape = facts.shape
	}
	return nil
}

// ForceSchemas builds, on workers goroutines, the schemas of every tool
// that has none yet, packs them into one block (packSchemas) and logs, per
// backend, the tools whose schemas had to be shortened. Without
// keepOutput it keeps the input schemas only, as search mode does; with
// it, it also builds again the output schemas search mode dropped. It
// returns the schemas that failed to build, for the caller to say what
// becomes of their tools. Once stop is closed it builds no more and
// publishes nothing, leaving the rest to first use.
func ForceSchemas(tools []*Tool, workers int, stop <-chan struct{}, logger *slog.Logger, keepOutput bool) (failed map[*Schemas]error) {
	var todo, again, derived []*Schemas
	seen := make(map[*Schemas]bool)
	for _, t := range tools {
		s := t.Schemas
		if seen[s] {
			continue
		}
		seen[s] = true
		if s.base != nil {
			// Built from its base once that is, below.
			derived = append(derived, s)
			if !seen[s.base] && !s.base.ready.Load() {
				seen[s.base] = true
				todo = append(todo, s.base)
			}
			continue
		}
		if !s.ready.Load() {
			todo = append(todo, s)
		} else if keepOutput && s.built.outDropped {
			again = append(again, s)
		}
	}
	defer func() {
		if Stopped(stop) {
			return
		}
		for _, s := range derived {
			b := s.build(keepOutput)
			if keepOutput {
				b = s.full()
			}
			if b.err != nil {
				if failed == nil {
					failed = make(map[*Schemas]error)
				}
				failed[s] = b.err
			}
		}
	}()
	// Built again one at a time: only a catalog that search mode held
	// and typed mode now lists has any, and typed mode lists small ones.
	for _, s := range again {
		if b := s.full(); b.err != nil {
			if failed == nil {
				failed = make(map[*Schemas]error)
			}
			failed[s] = b.err
		}
	}
	if len(todo) == 0 {
		return failed
	}
	built := make([]builtSchemas, len(todo))
	var next atomic.Int64
	var wg sync.WaitGroup
	stopped := func() bool { return Stopped(stop) }
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
				if !keepOutput {
					built[i] = built[i].withoutOutput()
				}
			}
		})
	}
	wg.Wait()
	if stopped() {
		return nil
	}
	packSchemas(built, !keepOutput)
	bounded := make(map[string]*boundedTools)
	for i, s := range todo {
		b := built[i]
		if !b.built() {
			continue // built on first use meanwhile
		}
		s.publish(b)
		b = s.build(keepOutput)
		if b.err != nil {
			if failed == nil {
				failed = make(map[*Schemas]error)
			}
			failed[s] = b.err
			continue
		}
		bt := bounded[s.tool.Backend]
		if bt == nil {
			bt = new(boundedTools)
			bounded[s.tool.Backend] = bt
		}
		bt.add(s.tool.Definition.Name, b.whole, b.took)
	}
	for backend, b := range bounded {
		if b.n > 0 {
			logger.Info("tool schemas shortened: written out, these tools would each take more than the gateway's bound of a tool's tools/list entry; each shortened schema names the resources (grpc://BACKEND/message.Name) that hold what it leaves out",
				"backend", backend, "tools", b.n, "bound_bytes", MaxToolBytes, "largest_tool", b.largestTool, "largest_bytes", b.largest, "took", b.took.Round(time.Millisecond))
		}
	}
	return failed
}

// ListLowerBound is at most the bytes of the typed tools/list of tools
// (mcp.ToolList.ListBytes), counted without building a schema: each entry
// has at least its name, its description and the smallest input schema.
// When even that is over the tool budget, ToolModeAuto picks search mode
// without building the typed list.
func ListLowerBound(tools []*Tool) int {
	const entry = len(`{"name":"","description":"","inputSchema":{"type":"object"}}`)
	n := len(`{"tools":[]}`)
	for _, t := range tools {
		n += entry + len(t.Definition.Name) + len(t.Definition.Description)
	}
	return n
}

// WithSchemas is t's definition as tools/list shows it, its schemas built
// on first use.
func (t *Tool) WithSchemas() (mcp.Tool, error) {
	b := t.Schemas.full()
	def := t.Definition
	def.InputSchema, def.OutputSchema = b.in, b.out
	return def, b.err
}

// Stopped says whether ch is closed.
func Stopped(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Ready says whether s holds its input schema, or the error that kept it
// from being built.
func (s *Schemas) Ready() bool { return s.ready.Load() }

// HoldsOutput says whether s holds a built output schema (search mode
// drops them).
func (s *Schemas) HoldsOutput() bool { return s.ready.Load() && s.built.out != nil }

// Method is the method the schemas describe.
func (s *Schemas) Method() protoreflect.MethodDescriptor { return s.m }

// Tool is the tool as compiled, before a catalog named it.
func (s *Schemas) Tool() *Tool { return s.tool }

// Shortened says whether the tool's schemas had to be shortened to
// MaxToolBytes, building them on first use.
func (s *Schemas) Shortened() bool { return s.full().whole > 0 }

// Same says whether s and o are the same schemas as far as both are
// built: only built schemas are compared, and an output schema search
// mode dropped is not.
func (s *Schemas) Same(o *Schemas) bool {
	if s == o || !s.ready.Load() || !o.ready.Load() {
		return true
	}
	x, y := s.input(), o.input()
	return x.sameInput(y) && (x.outDropped || y.outDropped || bytes.Equal(x.out, y.out))
}
