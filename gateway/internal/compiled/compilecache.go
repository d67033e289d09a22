package compiled

import (
	"encoding/json"
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/anytypes"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/describe"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/longrunning"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/transcode"
	"github.com/grpc-mcp-gateway/gateway/gateway/results"
	"github.com/grpc-mcp-gateway/gateway/internal/schema"
)

// compileCache shares, between the tools of one backend's discovery, what
// depends only on a message: its schemas, its argument validator and its
// response encoder. Large APIs reuse a few messages across hundreds of
// methods (510 of Compute Engine's return its Operation), so each is built,
// and held in memory, once. Message names are unique within one backend's
// files, so the name is the key. A discovery compiles its tools on every
// core (Compile), each goroutine with its own compileCache from
// forWorker: they share the tables, where the first tool to need a
// message builds it while the others needing it wait.
type compileCache struct {
	*cacheTables
	// sopts carry a schema.Memo, one per goroutine (a Memo is not safe
	// for concurrent use): the schemas it builds read each descriptor's
	// comments and field behaviors once, and the memo goes with the cache
	// when the discovery ends.
	sopts *schema.Options
}

// cacheTables are what the goroutines of one discovery share.
type cacheTables struct {
	topts *transcode.Options
	// types are the discovered types, for what discovery resolves by
	// name; anys adds what lookups learn, for the values calls render.
	types      *dynamicpb.Types
	anys       *anytypes.Types
	inputs     memo[protoreflect.FullName, json.RawMessage]
	outputs    memo[protoreflect.FullName, json.RawMessage]
	facts      memo[factsKey, outputFacts]
	validators memo[protoreflect.FullName, *schema.Validator]
	encoders   memo[protoreflect.FullName, *transcode.Encoder]
	// handles and truncated memoize withHandle and withTruncated by the
	// schema they are given: those decode and re-encode a schema, and 503
	// of Compute Engine's tools give them the same one.
	handles   memo[string, handled]
	truncated memo[string, truncated]
	// describe is what describe.Analyze needs beyond the method.
	describe describe.Options
	// backend names the backend in the resources bounded schemas name;
	// boundIn and boundOut memoize those schemas, and escaped holds the
	// messages they may name (toolsize.go).
	backend  string
	boundIn  memo[boundKey, json.RawMessage]
	boundOut memo[boundKey, json.RawMessage]
	escaped  *MessageSet
	// comments holds the source info the descriptors do not carry.
	comments *descriptors.Comments
}

// memo holds values built once per key, for concurrent callers: a caller
// that finds the key being built waits for that build instead of
// repeating it. A failed build is kept too; its discovery fails with it.
type memo[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]*memoEntry[V]
}

type memoEntry[V any] struct {
	once sync.Once
	v    V
	err  error
}

// get returns k's value, building it with build on first use.
func (m *memo[K, V]) get(k K, build func() (V, error)) (V, error) {
	m.mu.Lock()
	e, ok := m.m[k]
	if !ok {
		if m.m == nil {
			m.m = make(map[K]*memoEntry[V])
		}
		e = &memoEntry[V]{}
		m.m[k] = e
	}
	m.mu.Unlock()
	e.once.Do(func() { e.v, e.err = build() })
	return e.v, e.err
}

type handled struct {
	schema json.RawMessage
	key    string
}

type truncated struct {
	schema json.RawMessage
	shape  results.Shape
}

func newCompileCache(backend string, anys *anytypes.Types, files *protoregistry.Files, comments *descriptors.Comments, useProtoNames bool) *compileCache {
	types := anys.Local()
	fieldName := protoreflect.FieldDescriptor.JSONName
	if useProtoNames {
		fieldName = func(fd protoreflect.FieldDescriptor) string { return string(fd.Name()) }
	}
	return &compileCache{
		cacheTables: &cacheTables{
			describe: describe.Options{FieldName: fieldName, Resources: describe.NewResources(files), Required: schema.RulesRequire},
			topts:    &transcode.Options{UseProtoNames: useProtoNames, AllowPartial: true, Resolver: anys},
			types:    types,
			anys:     anys,
			backend:  backend,
			escaped:  &MessageSet{Files: files, Comments: comments},
			comments: comments,
		},
		sopts: &schema.Options{UseProtoNames: useProtoNames, Resolver: types, Memo: &schema.Memo{}, Comments: comments},
	}
}

// forWorker returns a cache sharing c's tables, with a schema.Memo of its
// own, for one more goroutine.
func (c *compileCache) forWorker() *compileCache {
	o := *c.sopts
	o.Memo = &schema.Memo{}
	return &compileCache{cacheTables: c.cacheTables, sopts: &o}
}

// blank returns a cache with c's settings and empty tables, for building
// again what a dropped cache built (schemaBuilder.buildAgain). The
// messages bounded schemas name (escaped) stay shared: building again
// names the same ones.
func (c *compileCache) blank() *compileCache {
	t := c.cacheTables
	o := *c.sopts
	o.Memo = &schema.Memo{}
	return &compileCache{
		cacheTables: &cacheTables{topts: t.topts, types: t.types, anys: t.anys, describe: t.describe, backend: t.backend, escaped: t.escaped, comments: t.comments},
		sopts:       &o,
	}
}

// analyze reads what m's structure says about it (descriptions, titles,
// hints, search), once per method.
func (c *compileCache) analyze(m protoreflect.MethodDescriptor) *describe.Method {
	opts := c.describe
	if md := longrunning.ResponseType(m, c.types); md != nil {
		opts.LongRunningResult = string(md.FullName())
	}
	return describe.Analyze(m, &opts)
}

func (c *compileCache) withHandle(out json.RawMessage) (json.RawMessage, string, error) {
	h, err := c.handles.get(string(out), func() (handled, error) {
		s, key, err := longrunning.WithHandle(out)
		return handled{s, key}, err
	})
	return h.schema, h.key, err
}

// withTruncated is schema.WithTruncated, with the shape a cut of the
// tool's results needs: the records' member and the members the schema
// requires (schema.RootRequired), both read in one pass.
func (c *compileCache) withTruncated(out json.RawMessage) (json.RawMessage, results.Shape, error) {
	t, err := c.truncated.get(string(out), func() (truncated, error) {
		t, err := schema.ReadTruncation(out)
		if err != nil {
			return truncated{}, err
		}
		return truncated{t.Schema, results.Shape{Member: t.Member, Merge: t.Merge, Required: t.Required}}, nil
	})
	return t.schema, t.shape, err
}

func (c *compileCache) input(md protoreflect.MessageDescriptor) (json.RawMessage, error) {
	return c.inputs.get(md.FullName(), func() (json.RawMessage, error) { return schema.Input(md, c.sopts) })
}

func (c *compileCache) output(md protoreflect.MessageDescriptor) (json.RawMessage, error) {
	return c.outputs.get(md.FullName(), func() (json.RawMessage, error) { return schema.Output(md, c.sopts) })
}

// factsKey is what a tool's output facts depend on: the response message
// (an operation's final response for a long-running tool), whether the
// schema carries an operation's handle, and whether it lists a cut
// result's cuts.
type factsKey struct {
	md       protoreflect.FullName
	lro, cut bool
}

// rootFacts reads the output facts of md's schema, with the handle and the
// list of cuts as asked, from its root alone (schema.OutputRoot) as
// toolOutput adds them to the whole schema: the same facts at a fraction
// of the cost. Only the facts are kept: the roots are written for this
// alone, and kept they were most of what discovery's cache held once the
// tools were compiled (59 of 128 MB on the googleapis catalog).
func (c *compileCache) rootFacts(md protoreflect.MessageDescriptor, lro, cut bool) (outputFacts, error) {
	return c.facts.get(factsKey{md.FullName(), lro, cut}, func() (outputFacts, error) {
		var f outputFacts
		out, err := schema.OutputRoot(md, c.sopts)
		if err != nil {
			return f, err
		}
		if lro {
			if out, f.handleKey, err = longrunning.WithHandle(out); err != nil {
				return f, err
			}
		}
		if cut {
			t, err := schema.ReadTruncation(out)
			if err != nil {
				return f, err
			}
			f.shape = results.Shape{Member: t.Member, Merge: t.Merge, Required: t.Required}
		}
		return f, nil
	})
}

func (c *compileCache) validator(md protoreflect.MessageDescriptor) (*schema.Validator, error) {
	return c.validators.get(md.FullName(), func() (*schema.Validator, error) { return schema.NewValidator(md, c.sopts) })
}

func (c *compileCache) encoder(md protoreflect.MessageDescriptor) (*transcode.Encoder, error) {
	return c.encoders.get(md.FullName(), func() (*transcode.Encoder, error) { return transcode.Compile(md, c.topts) })
}
