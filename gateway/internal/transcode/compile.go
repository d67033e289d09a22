// Package transcode converts protobuf binary wire bytes straight to the JSON
// that protojson.Marshal would produce for the same message, without building
// a dynamic message first.
//
// The gateway answers MCP tools/call with a backend's response rendered as
// protojson. Decoding into dynamicpb and then marshalling with protojson costs
// most of the allocations of a call, so this package walks the wire bytes once
// per message level, guided by a plan compiled from the descriptor at
// discovery time, and appends JSON directly to the caller's buffer.
//
// Guarantees: for every input, AppendJSON fails exactly when
// proto.Unmarshal into a dynamicpb message followed by protojson.Marshal
// (with the same UseProtoNames and Resolver) fails, and otherwise produces the
// same JSON up to insignificant whitespace (this package writes compact JSON;
// protojson inserts random spaces). That includes field and map-key order,
// last-wins and merge rules of the wire format, presence, float formatting,
// string escaping, the well-known types and google.protobuf.Any.
//
// A message instance that has a field number inside one of its message's
// extension ranges (so may carry an extension), and any MessageSet, is not
// transcoded directly: that subtree is decoded with dynamicpb and rendered
// with protojson, which keeps the output exact at the old cost for those rare
// instances only. As in proto.Unmarshal, extensions of the top-level response
// resolve through protoregistry.GlobalTypes, those inside an Any payload
// through Options.Resolver.
package transcode

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/grpc-mcp-gateway/gateway/internal/wellknown"
)

// Options configures Compile. A nil *Options means the zero value.
type Options struct {
	// UseProtoNames emits proto field names instead of lowerCamelCase JSON
	// names, as protojson.MarshalOptions.UseProtoNames does.
	UseProtoNames bool

	// AllowPartial renders messages whose proto2 or editions required
	// fields are missing instead of failing, as protojson's option of the
	// same name does. A gateway relays what its backend sent.
	AllowPartial bool

	// Resolver resolves the type URLs of google.protobuf.Any values and the
	// extensions found inside them. Nil means protoregistry.GlobalTypes, as in
	// protojson.
	Resolver interface {
		protoregistry.MessageTypeResolver
		protoregistry.ExtensionTypeResolver
	}
}

// Encoder renders the wire encoding of one message type as JSON. Its plans
// are compiled on first use; apart from that and an internal cache for the
// types met inside google.protobuf.Any it is immutable, and it is safe for
// concurrent use.
type Encoder struct {
	md     protoreflect.MessageDescriptor
	shared *shared

	once sync.Once
	root *plan
	err  error
}

// Descriptor returns the message type the encoder renders, as given to
// Compile.
func (e *Encoder) Descriptor() protoreflect.MessageDescriptor { return e.md }

// plan returns the root plan, compiling the plans on the first call.
func (e *Encoder) plan() (*plan, error) {
	e.once.Do(func() { e.root, e.err = e.shared.compile(e.md) })
	return e.root, e.err
}

// shared is what every plan compiled for one Encoder needs at call time.
type shared struct {
	useProtoNames bool
	allowPartial  bool
	resolver      interface {
		protoregistry.MessageTypeResolver
		protoregistry.ExtensionTypeResolver
	}
	// anyPlans caches plans for the message types resolved from Any type
	// URLs, keyed by protoreflect.MessageDescriptor. Any is rare enough that a
	// sync.Map lookup per Any value is acceptable.
	anyPlans sync.Map
}

// plan is the compiled form of one message descriptor.
type plan struct {
	md     protoreflect.MessageDescriptor
	wkt    wellknown.Kind
	fields []field // declaration order, which is protojson's output order

	// byNum maps a field number to index+1 in fields when the numbers are
	// dense enough; sparse holds the rest, sorted by number.
	byNum  []int32
	sparse []numIndex

	noneofs int // oneofs, each tracked in a slot after the fields
	// w1 and w2 index fields 1 and 2 of a well-known type; wo is the index of
	// google.protobuf.Value's oneof.
	w1, w2, wo int32
	required   []int32 // indexes of required fields

	// fallback renders this message through dynamicpb and protojson; chosen
	// at Compile time for MessageSets.
	fallback bool
	// extRanges are the message's extension ranges [start, end). A message
	// instance with a field in one of them may carry an extension, which only
	// the protobuf runtime can resolve, so it takes the fallback path; other
	// instances (the vast majority, e.g. options messages without custom
	// options) are transcoded directly.
	extRanges [][2]protowire.Number
	// closedEnums and anyFallback summarise the reachable plans so that a
	// generated Any payload, decoded by protobuf's fast path (which treats
	// unknown closed-enum values differently from dynamicpb), can be routed
	// to protojson instead.
	closedEnums bool
	anyFallback bool
}

type numIndex struct {
	num protowire.Number
	idx int32
}

type cardinality uint8

const (
	singular cardinality = iota
	list
	mapping
)

// field is the compiled form of one field, or of a map entry's key or value.
type field struct {
	fd     protoreflect.FieldDescriptor
	name   []byte // pre-encoded `"name":`
	num    protowire.Number
	kind   protoreflect.Kind
	wtyp   protowire.Type
	card   cardinality
	oneof  int32 // index among the message's oneofs, or -1
	packed bool  // packed encoding accepted (repeated numeric kinds)
	// presence reports explicit presence: the field is emitted when present
	// on the wire even if its value is the zero value.
	presence bool
	utf8     bool // the decoder validates UTF-8 (proto3, editions VERIFY)
	null     bool // enum google.protobuf.NullValue, rendered as null
	enum     *enumNames
	msg      *plan
	key, val *field // map entry fields

	// def is the default value used when a wrapper, Timestamp, Duration or
	// map entry lacks the field on the wire.
	defNum   uint64
	defBytes []byte
}

// Compile prepares an encoder for md. The descriptor is walked once, on
// the first AppendJSON: every reachable message gets a plan with
// pre-encoded keys, kinds and enum names, and recursive types share plans,
// so AppendJSON needs no descriptor lookups. The walk waits for first use
// because a gateway compiles an encoder for every method it discovers,
// 13,000 on the googleapis catalog (77 MB of plans), and most are never
// called; the first call pays for its own (BenchmarkFirstUse: 0.1 ms for
// a message of a hundred fields, 0.3 ms for descriptor.proto's
// FileDescriptorProto, plans and one response together).
func Compile(md protoreflect.MessageDescriptor, opts *Options) (*Encoder, error) {
	if md == nil {
		return nil, errors.New("transcode: nil message descriptor")
	}
	sh := &shared{resolver: protoregistry.GlobalTypes}
	if opts != nil {
		sh.useProtoNames = opts.UseProtoNames
		sh.allowPartial = opts.AllowPartial
		if opts.Resolver != nil {
			sh.resolver = opts.Resolver
		}
	}
	return &Encoder{md: md, shared: sh}, nil
}

// compile builds the plan graph rooted at md.
func (sh *shared) compile(md protoreflect.MessageDescriptor) (*plan, error) {
	c := compiler{sh: sh, plans: map[protoreflect.FullName]*plan{}}
	p, err := c.message(md)
	if err != nil {
		return nil, err
	}
	summarize(p, map[*plan]bool{})
	return p, nil
}

type compiler struct {
	sh    *shared
	plans map[protoreflect.FullName]*plan
}

func (c *compiler) message(md protoreflect.MessageDescriptor) (*plan, error) {
	if p, ok := c.plans[md.FullName()]; ok {
		return p, nil
	}
	// Registered before the fields are compiled so that recursive references
	// link to this plan instead of recursing forever.
	p := &plan{md: md, wkt: wellknown.Of(md), noneofs: md.Oneofs().Len()}
	c.plans[md.FullName()] = p
	if rs := md.ExtensionRanges(); rs.Len() > 0 {
		for i := range rs.Len() {
			r := rs.Get(i)
			p.extRanges = append(p.extRanges, [2]protowire.Number{r[0], r[1]})
		}
		// The MessageSet wire format is only understood by the protobuf
		// runtime (and rejected by protojson); always defer to it.
		if mo, ok := md.Options().(*descriptorpb.MessageOptions); ok && mo.GetMessageSetWireFormat() {
			p.fallback = true
			return p, nil
		}
	}
	fds := md.Fields()
	p.fields = make([]field, fds.Len())
	maxNum := protowire.Number(0)
	for i := range p.fields {
		fd := fds.Get(i)
		if err := c.field(&p.fields[i], fd, true); err != nil {
			return nil, err
		}
		if fd.Cardinality() == protoreflect.Required {
			p.required = append(p.required, int32(i))
		}
		maxNum = max(maxNum, fd.Number())
	}
	// A dense table costs 4 bytes per number; fall back to binary search
	// for the rest when numbers are sparse.
	limit := protowire.Number(4*len(p.fields) + 64)
	p.byNum = make([]int32, min(maxNum, limit)+1)
	for i := range p.fields {
		n := p.fields[i].num
		if n < protowire.Number(len(p.byNum)) {
			p.byNum[n] = int32(i) + 1
		} else {
			p.sparse = append(p.sparse, numIndex{n, int32(i)})
		}
	}
	sort.Slice(p.sparse, func(i, j int) bool { return p.sparse[i].num < p.sparse[j].num })
	if err := checkWKT(p); err != nil {
		return nil, err
	}
	return p, nil
}

func (c *compiler) field(f *field, fd protoreflect.FieldDescriptor, named bool) error {
	f.fd = fd
	f.num = fd.Number()
	f.kind = fd.Kind()
	f.oneof = -1
	if od := fd.ContainingOneof(); od != nil {
		f.oneof = int32(od.Index())
	}
	f.presence = fd.HasPresence()
	f.utf8 = enforceUTF8(fd)
	if named {
		name := fd.JSONName()
		if c.sh.useProtoNames {
			name = fd.TextName()
		}
		b, err := appendString(nil, []byte(name))
		if err != nil {
			return fmt.Errorf("transcode: field %s: %w", fd.FullName(), err)
		}
		f.name = append(b, ':')
	}
	wt, ok := wireTypes[f.kind]
	if !ok {
		return fmt.Errorf("transcode: field %s has unsupported kind %v", fd.FullName(), f.kind)
	}
	f.wtyp = wt
	switch {
	case fd.IsMap():
		f.card = mapping
		f.key, f.val = new(field), new(field)
		if err := c.field(f.key, fd.MapKey(), false); err != nil {
			return err
		}
		if err := c.field(f.val, fd.MapValue(), false); err != nil {
			return err
		}
		return nil
	case fd.IsList():
		f.card = list
		f.packed = wt != protowire.BytesType && wt != protowire.StartGroupType
	}
	switch f.kind {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		p, err := c.message(fd.Message())
		if err != nil {
			return err
		}
		f.msg = p
	case protoreflect.EnumKind:
		ed := fd.Enum()
		f.null = ed.FullName() == "google.protobuf.NullValue"
		f.enum = compileEnum(ed)
	}
	if !fd.IsList() && f.msg == nil {
		f.defNum, f.defBytes = defaultOf(fd)
	}
	return nil
}

// enforceUTF8 mirrors the rule protobuf's decoder uses to validate strings.
func enforceUTF8(fd protoreflect.FieldDescriptor) bool {
	if fd.Kind() != protoreflect.StringKind {
		return false
	}
	if fd.Syntax() == protoreflect.Editions {
		if v, ok := fd.(interface{ EnforceUTF8() bool }); ok {
			return v.EnforceUTF8()
		}
	}
	return fd.Syntax() == protoreflect.Proto3
}

var wireTypes = map[protoreflect.Kind]protowire.Type{
	protoreflect.BoolKind:     protowire.VarintType,
	protoreflect.EnumKind:     protowire.VarintType,
	protoreflect.Int32Kind:    protowire.VarintType,
	protoreflect.Sint32Kind:   protowire.VarintType,
	protoreflect.Uint32Kind:   protowire.VarintType,
	protoreflect.Int64Kind:    protowire.VarintType,
	protoreflect.Sint64Kind:   protowire.VarintType,
	protoreflect.Uint64Kind:   protowire.VarintType,
	protoreflect.Sfixed32Kind: protowire.Fixed32Type,
	protoreflect.Fixed32Kind:  protowire.Fixed32Type,
	protoreflect.FloatKind:    protowire.Fixed32Type,
	protoreflect.Sfixed64Kind: protowire.Fixed64Type,
	protoreflect.Fixed64Kind:  protowire.Fixed64Type,
	protoreflect.DoubleKind:   protowire.Fixed64Type,
	protoreflect.StringKind:   protowire.BytesType,
	protoreflect.BytesKind:    protowire.BytesType,
	protoreflect.MessageKind:  protowire.BytesType,
	protoreflect.GroupKind:    protowire.StartGroupType,
}

// defaultOf returns fd's default in the form the scalar writer consumes: the
// raw wire number for numeric kinds, the bytes for strings and bytes.
func defaultOf(fd protoreflect.FieldDescriptor) (uint64, []byte) {
	v := fd.Default()
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protowire.EncodeBool(v.Bool()), nil
	case protoreflect.EnumKind:
		return uint64(int64(v.Enum())), nil
	case protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Sfixed32Kind, protoreflect.Sfixed64Kind:
		return uint64(v.Int()), nil
	case protoreflect.Sint32Kind, protoreflect.Sint64Kind:
		return protowire.EncodeZigZag(v.Int()), nil
	case protoreflect.Uint32Kind, protoreflect.Uint64Kind, protoreflect.Fixed32Kind, protoreflect.Fixed64Kind:
		return v.Uint(), nil
	case protoreflect.FloatKind:
		return uint64(math.Float32bits(float32(v.Float()))), nil
	case protoreflect.DoubleKind:
		return math.Float64bits(v.Float()), nil
	case protoreflect.StringKind:
		return 0, []byte(v.String())
	case protoreflect.BytesKind:
		return 0, v.Bytes()
	}
	return 0, nil
}

// summarize computes closedEnums and anyFallback over the plans reachable
// from p. Cycles are cut by seen; a plan inside a cycle may get a partial
// summary, but only the summary of an Any payload's root plan is consulted,
// and that one is computed after its whole graph was visited.
func summarize(p *plan, seen map[*plan]bool) (closed, fb bool) {
	if seen[p] {
		return p.closedEnums, p.anyFallback
	}
	seen[p] = true
	closed, fb = false, p.fallback || len(p.extRanges) > 0
	for i := range p.fields {
		f := &p.fields[i]
		if f.card == mapping {
			f = f.val
		}
		if f.enum != nil && f.fd.Enum().IsClosed() {
			closed = true
		}
		if f.msg != nil {
			c, b := summarize(f.msg, seen)
			closed, fb = closed || c, fb || b
		}
	}
	p.closedEnums, p.anyFallback = closed, fb
	return closed, fb
}

func (p *plan) lookup(num protowire.Number) int32 {
	if num < protowire.Number(len(p.byNum)) {
		return p.byNum[num] - 1
	}
	s := p.sparse
	lo, hi := 0, len(s)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch {
		case s[m].num < num:
			lo = m + 1
		case s[m].num > num:
			hi = m
		default:
			return s[m].idx
		}
	}
	return -1
}
