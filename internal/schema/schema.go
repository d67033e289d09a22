package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/grpc-mcp-gateway/gateway/internal/wellknown"
)

// Options selects the protojson options the schema must agree with. The
// gateway passes the same values to protojson when it converts arguments and
// responses; a schema built with other options describes a different JSON.
type Options struct {
	// UseProtoNames: property names are the original proto field names
	// (protoreflect.FieldDescriptor.TextName, as protojson's UseProtoNames
	// writes them) instead of the protojson JSON names (lowerCamel, or
	// json_name when set). Default false.
	UseProtoNames bool

	// Resolver finds message types by type URL, as protojson's resolver
	// does; the gateway passes the backend's types (a *dynamicpb.Types).
	// The Validator hands it to protojson so a google.protobuf.Any whose
	// "@type" the backend defines converts; nil means
	// protoregistry.GlobalTypes there. Input schemas use it for an Any whose
	// rules list the types it may hold ((buf.validate.field).any.in): the
	// resolvable ones are described (a single one as properties, several in
	// the description). Without a Resolver an Any keeps its generic shape.
	Resolver TypeResolver

	// Memo, when not nil, keeps what the builds with these Options read
	// from the descriptors, for the next ones (see Memo): a caller that
	// builds many schemas over one set of files, as a discovery does,
	// shares one and drops it afterwards. Without one, each call keeps its
	// own for its builds. Options holding a Memo are not safe for
	// concurrent use.
	Memo *Memo

	// Comments, when not nil, gives the descriptors' comments: sources
	// that keep source info apart from the descriptors pass it
	// (descriptors.Result.Comments). Nil reads the descriptors' own.
	Comments CommentSource
}

// CommentSource gives a descriptor's source location, comments included;
// *descriptors.Comments implements it.
type CommentSource interface {
	Location(protoreflect.Descriptor) protoreflect.SourceLocation
}

// TypeResolver is what protojson needs to resolve "@type" and extensions;
// *dynamicpb.Types and *protoregistry.Types implement it.
type TypeResolver interface {
	protoregistry.MessageTypeResolver
	protoregistry.ExtensionTypeResolver
}

// WrapperProperty is the single property of the object the gateway wraps a
// message in when protojson does not write that message as a JSON object (see
// IsObject), so that arguments and structuredContent are always objects.
const WrapperProperty = "value"

// Dialect is the JSON Schema dialect of every schema this package builds. It
// is not written into the schemas: MCP 2025-11-25 makes 2020-12 the default
// dialect, and some LLM APIs reject or ignore a root "$schema".
const Dialect = "https://json-schema.org/draft/2020-12/schema"

// Input returns the inputSchema for a request message: what protojson accepts
// when the gateway converts tool arguments into md. The root is always
// {"type":"object"}; for a message that is not a JSON object in protojson (see
// IsObject) it is {"type":"object","properties":{"value":...},"required":["value"]}.
//
// Where protojson is lenient the schema is deliberately narrower, to steer a
// model to the canonical form: it leaves out null for an unset field, quoted
// 32-bit integers and floats, numeric strings other than the 64-bit integer
// digits, enum numbers without a name, the original proto names next to the
// JSON names, and extension fields. Conversely a few values the schema accepts
// are still rejected by protojson because JSON Schema cannot say so cheaply:
// a string of digits out of the 64-bit range, an integer map key out of its
// range, bytes that are not base64 (contentEncoding is an annotation), and a
// Timestamp or Duration outside protobuf's range (or, with format assertion
// off, not RFC 3339). The gateway reports those as conversion errors. A nil
// opts means the defaults.
func Input(md protoreflect.MessageDescriptor, opts *Options) (json.RawMessage, error) {
	return build(md, opts, input, nil)
}

// Output returns the outputSchema for a response message: it accepts all JSON
// protojson.Marshal writes for md with default options (apart from
// UseProtoNames, taken from opts), so structuredContent always conforms. The
// root is shaped as for Input. A nil opts means the defaults.
//
// Output schemas are only exact for EmitUnpopulated=false: with
// EmitUnpopulated protojson writes null for unset message fields, which the
// schema does not allow.
func Output(md protoreflect.MessageDescriptor, opts *Options) (json.RawMessage, error) {
	return build(md, opts, output, nil)
}

// IsObject reports whether protojson writes md as a JSON object. It does not
// for Timestamp, Duration, FieldMask, Value, ListValue and the wrapper types;
// the gateway wraps those as {"value": <json>} and Input/Output describe that
// wrapper.
func IsObject(md protoreflect.MessageDescriptor) bool {
	return wellknown.Of(md).IsObject()
}

// direction says which side of protojson a schema describes; the two differ
// for 64-bit integers (strings out, strings or numbers in), enums and
// extensions.
type direction int

const (
	input direction = iota
	output
)

// build writes md's schema; lim, when not nil, bounds it (bound.go).
func build(md protoreflect.MessageDescriptor, opts *Options, dir direction, lim *limits) (json.RawMessage, error) {
	s, _, err := buildCapped(md, opts, dir, lim, 0)
	return s, err
}

// buildCapped is build that stops writing once the schema passes max
// bytes (0: no cap), and then returns fits false and no schema.
func buildCapped(md protoreflect.MessageDescriptor, opts *Options, dir direction, lim *limits, max int) (s json.RawMessage, fits bool, err error) {
	if md == nil {
		return nil, false, errors.New("schema: nil message descriptor")
	}
	if md.IsPlaceholder() {
		return nil, false, fmt.Errorf("schema: message %s is an unresolved placeholder; the descriptor set is missing a dependency", md.FullName())
	}
	opts = withMemo(opts)
	b := &builder{
		dir:     dir,
		opts:    *opts,
		inlined: map[protoreflect.FullName]*node{},
		defs:    map[protoreflect.FullName]*node{},
		lim:     lim,
	}
	b.recursive = recursiveMessages(md, b.allEdges, b.keep())
	b.shared = sharedMessages(md, b.recursive, b.shownEdges, b.keep())
	root, err := b.root(md)
	if err != nil {
		return nil, false, fmt.Errorf("schema: %s: %w", md.FullName(), err)
	}
	if len(b.defs) > 0 {
		names := make([]protoreflect.FullName, 0, len(b.defs))
		for name := range b.defs {
			names = append(names, name)
		}
		slices.Sort(names)
		defs := &node{}
		for _, name := range names {
			defs.set(string(name), b.defs[name])
		}
		root = root.with("$defs", defs)
	}
	if lim != nil {
		root = root.with("description", joinDesc([]string{str(root, "description"), lim.note()}))
	}
	out, fits := b.opts.Memo.scratch[:0], true
	if max > 0 {
		out, fits = root.appendCapped(out, max)
	} else {
		out = root.appendJSON(out)
	}
	b.opts.Memo.scratch = out[:0]
	if !fits {
		return nil, false, nil
	}
	// Copied at its size: a schema is kept for the catalog's life, spare
	// capacity with it would be too.
	return json.RawMessage(bytes.Clone(out)), true, nil
}
