package gateway

import (
	"encoding/json"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/grpc-mcp-gateway/gateway/gateway/describe"
	"github.com/grpc-mcp-gateway/gateway/gateway/results"
	"github.com/grpc-mcp-gateway/gateway/gateway/schema"
	"github.com/grpc-mcp-gateway/gateway/gateway/transcode"
)

// compileCache shares, between the tools of one backend's discovery, what
// depends only on a message: its schemas, its argument validator and its
// response encoder. Large APIs reuse a few messages across hundreds of
// methods (510 of Compute Engine's return its Operation), so each is built,
// and held in memory, once. Message names are unique within one backend's
// files, so the name is the key. Not safe for concurrent use: one
// discovery compiles its tools in turn.
type compileCache struct {
	// sopts carry a schema.Memo: the schemas of one discovery read each
	// descriptor's comments and field behaviors once, and the memo goes
	// with the cache when the discovery ends.
	sopts *schema.Options
	topts *transcode.Options
	// types are the discovered types, for what discovery resolves by
	// name; anys adds what lookups learn, for the values calls render.
	types      *dynamicpb.Types
	anys       *anyTypes
	inputs     map[protoreflect.FullName]json.RawMessage
	outputs    map[protoreflect.FullName]json.RawMessage
	validators map[protoreflect.FullName]*schema.Validator
	encoders   map[protoreflect.FullName]*transcode.Encoder
	// handles and truncated memoize withHandle and withTruncated by the
	// schema they are given: those decode and re-encode a schema, and 503
	// of Compute Engine's tools give them the same one.
	handles   map[string]handled
	truncated map[string]truncated
	// describe is what describe.Analyze needs beyond the method.
	describe describe.Options
	// backend names the backend in the resources bounded schemas name;
	// boundIn and boundOut memoize those schemas, and escaped holds the
	// messages they may name (toolsize.go).
	backend  string
	boundIn  map[boundKey]json.RawMessage
	boundOut map[boundKey]json.RawMessage
	escaped  map[protoreflect.FullName]protoreflect.MessageDescriptor
	// scratch is the buffer boundTool measures each tool's entry in.
	scratch []byte
}

type handled struct {
	schema json.RawMessage
	key    string
}

type truncated struct {
	schema json.RawMessage
	shape  results.Shape
}

func newCompileCache(backend string, anys *anyTypes, files *protoregistry.Files, useProtoNames bool) *compileCache {
	types := anys.local
	fieldName := protoreflect.FieldDescriptor.JSONName
	if useProtoNames {
		fieldName = func(fd protoreflect.FieldDescriptor) string { return string(fd.Name()) }
	}
	return &compileCache{
		describe:   describe.Options{FieldName: fieldName, Resources: describe.NewResources(files)},
		sopts:      &schema.Options{UseProtoNames: useProtoNames, Resolver: types, Memo: &schema.Memo{}},
		topts:      &transcode.Options{UseProtoNames: useProtoNames, AllowPartial: true, Resolver: anys},
		types:      types,
		anys:       anys,
		inputs:     map[protoreflect.FullName]json.RawMessage{},
		outputs:    map[protoreflect.FullName]json.RawMessage{},
		validators: map[protoreflect.FullName]*schema.Validator{},
		encoders:   map[protoreflect.FullName]*transcode.Encoder{},
		handles:    map[string]handled{},
		truncated:  map[string]truncated{},
		backend:    backend,
		boundIn:    map[boundKey]json.RawMessage{},
		boundOut:   map[boundKey]json.RawMessage{},
	}
}

// analyze reads what m's structure says about it (descriptions, titles,
// hints, search), once per method.
func (c *compileCache) analyze(m protoreflect.MethodDescriptor) *describe.Method {
	opts := c.describe
	if resp, _, ok := operationInfo(m); ok {
		if md := resolveTypeName(resp, m, c.types); md != nil {
			opts.LongRunningResult = string(md.FullName())
		}
	}
	return describe.Analyze(m, &opts)
}

func (c *compileCache) withHandle(out json.RawMessage) (json.RawMessage, string, error) {
	if h, ok := c.handles[string(out)]; ok {
		return h.schema, h.key, nil
	}
	s, key, err := withHandle(out)
	if err == nil {
		c.handles[string(out)] = handled{s, key}
	}
	return s, key, err
}

// withTruncated is schema.WithTruncated, with the shape a cut of the
// tool's results needs: the records' member and the members the schema
// requires (schema.RootRequired), both read in one pass.
func (c *compileCache) withTruncated(out json.RawMessage) (json.RawMessage, results.Shape, error) {
	if t, ok := c.truncated[string(out)]; ok {
		return t.schema, t.shape, nil
	}
	t, err := schema.ReadTruncation(out)
	if err != nil {
		return nil, results.Shape{}, err
	}
	shape := results.Shape{Member: t.Member, Merge: t.Merge, Required: t.Required}
	c.truncated[string(out)] = truncated{t.Schema, shape}
	return t.Schema, shape, nil
}

func (c *compileCache) input(md protoreflect.MessageDescriptor) (json.RawMessage, error) {
	return cached(c.inputs, md, func() (json.RawMessage, error) { return schema.Input(md, c.sopts) })
}

func (c *compileCache) output(md protoreflect.MessageDescriptor) (json.RawMessage, error) {
	return cached(c.outputs, md, func() (json.RawMessage, error) { return schema.Output(md, c.sopts) })
}

func (c *compileCache) validator(md protoreflect.MessageDescriptor) (*schema.Validator, error) {
	return cached(c.validators, md, func() (*schema.Validator, error) { return schema.NewValidator(md, c.sopts) })
}

func (c *compileCache) encoder(md protoreflect.MessageDescriptor) (*transcode.Encoder, error) {
	return cached(c.encoders, md, func() (*transcode.Encoder, error) { return transcode.Compile(md, c.topts) })
}

// cached returns m's entry for md, building it on first use; a failure is
// not cached (the discovery fails with it anyway).
func cached[V any](m map[protoreflect.FullName]V, md protoreflect.MessageDescriptor, build func() (V, error)) (V, error) {
	if v, ok := m[md.FullName()]; ok {
		return v, nil
	}
	v, err := build()
	if err != nil {
		return v, err
	}
	m[md.FullName()] = v
	return v, nil
}
