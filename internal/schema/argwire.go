package schema

import (
	"bytes"
	"math"
	"slices"
	"sort"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/grpc-mcp-gateway/gateway/internal/jsonscan"
	"github.com/grpc-mcp-gateway/gateway/internal/wellknown"
)

// Arguments straight to wire form.
//
// Decode converts arguments with protojson into a dynamic message, which
// the call path then marshals: a dozen allocations and a reflective walk
// each way for every call. For the common argument types, AppendWire
// writes the wire form directly from the JSON instead, in one pass and
// into one buffer.
//
// It is a second implementation of a conversion that must not differ from
// the first, so it only ever handles the success path: given arguments,
// it either writes exactly the bytes that protojson.Unmarshal followed by
// a deterministic proto.Marshal would give (and that Decode would accept
// without a warning), or it declines and the caller runs Decode, which
// then makes every error, warning and explanation what it always was.
// Anything it does not model it declines: JSON outside the strict RFC 8259
// grammar, an unknown or repeated member or map key, two members of one
// oneof, null where protojson would not skip it, a string escape in a
// number or a duration, bytes that are not canonical base64 or that
// base64.go would warn about.
//
// Whether a type can take this path at all is decided once, when a
// validator's converter is first asked for (Fast, newWireMsg): not when
// Decode has checks to make after protojson (required fields, closed enums, protovalidate rules, proto2
// required fields, which extension ranges could bring), nor when the type
// reaches a group, a placeholder, or a well-known type other
// than the wrappers, Timestamp, Duration and Empty (FieldMask, Struct,
// Value, ListValue, Any), nor when one member name could mean two fields.
// A tool whose injector completes its requests never takes it either (the
// caller's decision: compiled.Tool.EncodeRequest).

// wireMsg is the converter of one message type.
type wireMsg struct {
	fields []wireField
	// names maps every member name protojson takes (JSON names, then proto
	// names) to an index in fields.
	names map[string]int32
	// wrapper: a google.protobuf wrapper, whose JSON is its value's.
	wrapper bool
	// time: google.protobuf.Timestamp or Duration, whose JSON is a
	// string (argwire_time.go).
	time  wellknown.Kind
	words int // words of the per-call bitset: fields, then real oneofs
}

type wireField struct {
	num      protowire.Number
	kind     protoreflect.Kind
	list     bool
	packed   bool
	presence bool  // zero values are written (explicit presence, oneofs)
	oneof    int32 // index among the real oneofs, -1 for none
	rank     int32 // place in the deterministic marshal's field order
	enum     map[string]int32
	msg      *wireMsg
	// mapKey and mapVal are a map's entry fields, nil for other fields.
	mapKey, mapVal *wireField
}

// wireCompiler builds the converters of one root type and the types it
// reaches; ok turns false at the first thing it does not model.
type wireCompiler struct {
	msgs map[protoreflect.FullName]*wireMsg
	ok   bool
}

// timeShaped reports whether md, named google.protobuf.Timestamp or
// Duration, has that type's two fields: int64 seconds = 1, int32 nanos = 2.
func timeShaped(md protoreflect.MessageDescriptor) bool {
	fields := md.Fields()
	if fields.Len() != 2 || md.Oneofs().Len() != 0 {
		return false
	}
	s, n := fields.ByNumber(1), fields.ByNumber(2)
	return s != nil && n != nil && s.Kind() == protoreflect.Int64Kind && n.Kind() == protoreflect.Int32Kind &&
		!s.IsList() && !n.IsList()
}

// newWireMsg is md's converter, nil when md or a type it reaches has
// something the converter does not model.
func newWireMsg(md protoreflect.MessageDescriptor) *wireMsg {
	c := wireCompiler{msgs: map[protoreflect.FullName]*wireMsg{}, ok: true}
	m := c.message(md)
	if !c.ok {
		return nil
	}
	return m
}

func (c *wireCompiler) message(md protoreflect.MessageDescriptor) *wireMsg {
	if m, ok := c.msgs[md.FullName()]; ok {
		return m
	}
	m := &wireMsg{}
	c.msgs[md.FullName()] = m
	switch k := wellknown.Of(md); k {
	case wellknown.None:
		// protojson knows google.protobuf.Empty by its name alone, and
		// refuses every member of one: a type of that name declaring
		// fields (only a hand-built descriptor can) is not modelled.
		if md.FullName() == "google.protobuf.Empty" && md.Fields().Len() > 0 {
			c.ok = false
			return m
		}
	case wellknown.Wrapper:
		m.wrapper = true
	case wellknown.Timestamp, wellknown.Duration:
		// protojson reads these by name too, and writes the two fields by
		// number: a type of the name with another shape is not modelled.
		if !timeShaped(md) {
			c.ok = false
			return m
		}
		m.time = k
		return m
	default:
		c.ok = false
		return m
	}
	if md.IsPlaceholder() || md.IsMapEntry() || md.ExtensionRanges().Len() > 0 || md.RequiredNumbers().Len() > 0 ||
		md.Options() != nil && isMessageSet(md) {
		c.ok = false
		return m
	}
	fields := md.Fields()
	m.fields = make([]wireField, fields.Len())
	m.names = make(map[string]int32, 2*fields.Len())
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Kind() == protoreflect.GroupKind || fd.Cardinality() == protoreflect.Required {
			c.ok = false
			return m
		}
		f := wireField{
			num:      fd.Number(),
			kind:     fd.Kind(),
			list:     fd.IsList(),
			packed:   fd.IsPacked(),
			presence: fd.HasPresence(),
			oneof:    -1,
		}
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
			f.oneof = int32(realOneofIndex(md, od))
		}
		if fd.IsMap() {
			key, val := c.scalar(fd.MapKey()), c.scalar(fd.MapValue())
			f.mapKey, f.mapVal = &key, &val
			f.list, f.packed, f.kind = false, false, protoreflect.MessageKind
		} else {
			f = c.fill(f, fd)
		}
		if !c.ok {
			return m
		}
		m.fields[i] = f
		// protojson looks a member up by JSON name, then by proto name; a
		// name that could mean two fields (and so be read differently by
		// base64.go's scan) is not modelled.
		for _, name := range []string{fd.JSONName(), fd.TextName()} {
			if len(name) >= 2 && name[0] == '[' && name[len(name)-1] == ']' {
				// protojson takes a member so named for an extension's
				// and never looks it up among the fields (protoc refuses
				// such a json_name; a hand-built descriptor may not).
				c.ok = false
				return m
			}
			if prev, ok := m.names[name]; ok && int(prev) != i {
				c.ok = false
				return m
			}
			target := fields.ByJSONName(name)
			if target == nil {
				target = fields.ByTextName(name)
			}
			if target != fd {
				c.ok = false
				return m
			}
			m.names[name] = int32(i)
		}
	}
	if m.wrapper && (len(m.fields) != 1 || m.fields[0].num != 1 || m.fields[0].list || m.fields[0].msg != nil) {
		c.ok = false
		return m
	}
	oneofs := 0 // real (not synthetic) ones
	for i := range md.Oneofs().Len() {
		if !md.Oneofs().Get(i).IsSynthetic() {
			oneofs++
		}
	}
	m.words = (len(m.fields)+63)/64 + (oneofs+63)/64
	// The deterministic marshal's order (protobuf-go's legacy order):
	// fields outside real oneofs by number, then each oneof's, the oneofs
	// in declaration order.
	order := make([]int, len(m.fields))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		x, y := &m.fields[order[a]], &m.fields[order[b]]
		if (x.oneof >= 0) != (y.oneof >= 0) {
			return x.oneof < 0
		}
		if x.oneof != y.oneof {
			return x.oneof < y.oneof
		}
		return x.num < y.num
	})
	for r, i := range order {
		m.fields[i].rank = int32(r)
	}
	return m
}

// scalar is the converter of a map's key or value field.
func (c *wireCompiler) scalar(fd protoreflect.FieldDescriptor) wireField {
	return c.fill(wireField{num: fd.Number(), kind: fd.Kind(), oneof: -1}, fd)
}

// fill completes f with what fd's enum or message type needs.
func (c *wireCompiler) fill(f wireField, fd protoreflect.FieldDescriptor) wireField {
	if fd.Kind() == protoreflect.GroupKind {
		c.ok = false
		return f
	}
	if ed := fd.Enum(); ed != nil {
		if ed.IsClosed() || ed.IsPlaceholder() || ed.FullName() == "google.protobuf.NullValue" {
			c.ok = false
			return f
		}
		values := ed.Values()
		f.enum = make(map[string]int32, values.Len())
		for j := range values.Len() {
			f.enum[string(values.Get(j).Name())] = int32(values.Get(j).Number())
		}
	}
	if sub := fd.Message(); sub != nil {
		f.msg = c.message(sub)
	}
	return f
}

// realOneofIndex is od's index among md's oneofs that are not synthetic.
func realOneofIndex(md protoreflect.MessageDescriptor, od protoreflect.OneofDescriptor) int {
	n := 0
	for i := range od.Index() {
		if !md.Oneofs().Get(i).IsSynthetic() {
			n++
		}
	}
	return n
}

// isMessageSet: protojson refuses message sets.
func isMessageSet(md protoreflect.MessageDescriptor) bool {
	type messageSet interface{ GetMessageSetWireFormat() bool }
	o, ok := md.Options().(messageSet)
	return ok && o.GetMessageSetWireFormat()
}

// maxWireDepth bounds the nesting of messages the converter follows; a
// deeper value is declined (protojson's limit is far above it).
const maxWireDepth = 64

// wireState is one conversion's working memory, pooled.
type wireState struct {
	in      []byte
	pos     int
	depth   int
	segs    []wireSeg
	ents    []wireEnt
	bits    []uint64
	scratch []byte
}

// wireSeg is the output of one member: its field's rank and where its
// bytes are, so a message whose members came out of order is put in order
// at its end.
type wireSeg struct {
	rank       int32
	start, end int
}

var wireStates = sync.Pool{New: func() any { return new(wireState) }}

// Fast reports whether the arguments of v's type can be converted
// straight to wire form (AppendWire) when no injector completes them.
// The first call compiles the converter.
func (v *Validator) Fast() bool {
	v.wireOnce.Do(v.compileWire)
	return v.wire != nil || v.wireRoot != nil
}

// AppendWire appends to b the wire form of the request message args
// convert to, and reports true, when it can show that Decode would accept
// args without a warning and that the message Decode makes marshals
// (deterministically) to exactly those bytes. Otherwise it reports false,
// b's content beyond its length is unspecified, and the caller runs
// Decode, which explains whatever is wrong. It must not be used for a
// tool whose injector completes its requests.
func (v *Validator) AppendWire(b, args []byte) ([]byte, bool) {
	if !v.Fast() {
		return b, false
	}
	w := wireStates.Get().(*wireState)
	w.in, w.pos, w.depth = args, 0, 0
	start := len(b)
	var ok bool
	if v.wireRoot != nil {
		b, ok = w.wrapped(b, v.wireRoot)
	} else {
		w.ws()
		b, ok = w.message(b, v.wire)
	}
	if ok {
		w.ws()
		ok = w.pos == len(w.in)
	}
	w.in = nil
	w.segs, w.ents = w.segs[:0], w.ents[:0]
	wireStates.Put(w)
	if !ok {
		return b[:start], false
	}
	return b, true
}

// wrapped converts {"value": X}, the arguments of a wrapper type, as
// unwrapFast and protojson read them: null is the empty message.
func (w *wireState) wrapped(b []byte, m *wireMsg) ([]byte, bool) {
	w.ws()
	if !w.eat('{') {
		return b, false
	}
	w.ws()
	if !bytes.HasPrefix(w.in[w.pos:], []byte(`"`+WrapperProperty+`"`)) {
		return b, false
	}
	w.pos += len(WrapperProperty) + 2
	w.ws()
	if !w.eat(':') {
		return b, false
	}
	w.ws()
	var ok bool
	if w.literal("null") {
		ok = true
	} else {
		b, ok = w.body(b, m)
	}
	if !ok {
		return b, false
	}
	w.ws()
	return b, w.eat('}')
}

// body converts one value of message type m, not null, to the message's
// fields: an object, or the JSON form of a well-known type.
func (w *wireState) body(b []byte, m *wireMsg) ([]byte, bool) {
	switch {
	case m.wrapper:
		// The wrapper's value is implicit: its zero writes nothing.
		return w.scalar(b, &m.fields[0], true, true)
	case m.time == wellknown.Timestamp:
		return w.timestamp(b)
	case m.time == wellknown.Duration:
		return w.duration(b)
	}
	return w.message(b, m)
}

func (w *wireState) ws() { w.pos = jsonscan.SpaceEnd(w.in, w.pos) }

func (w *wireState) eat(c byte) bool {
	if w.pos < len(w.in) && w.in[w.pos] == c {
		w.pos++
		return true
	}
	return false
}

func (w *wireState) peek() byte {
	if w.pos < len(w.in) {
		return w.in[w.pos]
	}
	return 0
}

// endsValue: what may follow a number or a literal in strict JSON.
func endsValue(in []byte, i int) bool {
	if i >= len(in) {
		return true
	}
	switch in[i] {
	case ' ', '\t', '\n', '\r', ',', '}', ']':
		return true
	}
	return false
}

// literal consumes lit (null, true, false) when it is the next value.
func (w *wireState) literal(lit string) bool {
	if !bytes.HasPrefix(w.in[w.pos:], unsafe.Slice(unsafe.StringData(lit), len(lit))) || !endsValue(w.in, w.pos+len(lit)) {
		return false
	}
	w.pos += len(lit)
	return true
}

// message converts one JSON object of type m, at w.pos (after
// whitespace), appending its fields' wire form to b.
func (w *wireState) message(b []byte, m *wireMsg) ([]byte, bool) {
	if w.depth >= maxWireDepth || !w.eat('{') {
		return b, false
	}
	w.depth++
	body := len(b)
	segMark := len(w.segs)
	// The seen fields, then the set oneofs, as offsets into w.bits: a
	// nested message may grow it.
	seen := len(w.bits)
	oneofs := seen + (len(m.fields)+63)/64
	w.bits = append(w.bits, make([]uint64, m.words)...)
	b, ok := w.members(b, m, seen, oneofs)
	w.bits = w.bits[:seen]
	w.depth--
	if !ok {
		return b, false
	}
	b = w.order(b, body, w.segs[segMark:])
	w.segs = w.segs[:segMark]
	return b, true
}

// members converts the members of one object, after its "{".
func (w *wireState) members(b []byte, m *wireMsg, seen, oneofs int) ([]byte, bool) {
	w.ws()
	if w.eat('}') {
		return b, true
	}
	for {
		w.ws()
		key, ok := w.str()
		if !ok {
			return b, false
		}
		i, found := m.names[string(key)]
		if !found {
			return b, false // protojson: unknown field
		}
		word, bit := &w.bits[seen+int(i/64)], uint64(1)<<(i%64)
		if *word&bit != 0 {
			return b, false // protojson: duplicate field
		}
		*word |= bit
		w.ws()
		if !w.eat(':') {
			return b, false
		}
		w.ws()
		f := &m.fields[i]
		if !w.literal("null") { // null: unset, as protojson reads it
			if o := f.oneof; o >= 0 {
				word, bit := &w.bits[oneofs+int(o/64)], uint64(1)<<(o%64)
				if *word&bit != 0 {
					return b, false // protojson: oneof already set
				}
				*word |= bit
			}
			start := len(b)
			if b, ok = w.field(b, f); !ok {
				return b, false
			}
			if len(b) > start {
				w.segs = append(w.segs, wireSeg{rank: f.rank, start: start, end: len(b)})
			}
		}
		w.ws()
		if w.eat('}') {
			return b, true
		}
		if !w.eat(',') {
			return b, false
		}
	}
}

// order puts the members of one message, segs, written from body on, in
// the deterministic marshal's order, when they came in another.
func (w *wireState) order(b []byte, body int, segs []wireSeg) []byte {
	sorted := true
	for i := 1; i < len(segs); i++ {
		if segs[i].rank < segs[i-1].rank {
			sorted = false
			break
		}
	}
	if sorted {
		return b
	}
	w.scratch = append(w.scratch[:0], b[body:]...)
	slices.SortFunc(segs, func(x, y wireSeg) int { return int(x.rank - y.rank) })
	out := b[:body]
	for _, s := range segs {
		out = append(out, w.scratch[s.start-body:s.end-body]...)
	}
	return out
}

// field converts the value of one member that is not null.
func (w *wireState) field(b []byte, f *wireField) ([]byte, bool) {
	if f.mapKey != nil {
		return w.mapField(b, f)
	}
	if !f.list {
		return w.single(b, f, !f.presence)
	}
	if !w.eat('[') {
		return b, false
	}
	start := len(b)
	packed := f.packed
	var pos int
	if packed {
		b = protowire.AppendTag(b, f.num, protowire.BytesType)
		b, pos = openLen(b)
	}
	w.ws()
	n := 0
	if !w.eat(']') {
		for {
			w.ws()
			var ok bool
			if packed {
				b, ok = w.scalar(b, f, false, false)
			} else {
				b, ok = w.single(b, f, false)
			}
			if !ok {
				return b, false
			}
			n++
			w.ws()
			if w.eat(']') {
				break
			}
			if !w.eat(',') {
				return b, false
			}
		}
	}
	if n == 0 {
		return b[:start], true // an empty list is unset
	}
	if packed {
		b = closeLen(b, pos)
	}
	return b, true
}

// wireEnt is one entry of a map: where its bytes are, and its key, by
// which the deterministic marshal orders the entries (and protojson finds
// a repeated key).
type wireEnt struct {
	start, end int
	num        uint64 // an integer or bool key, as its bits
	ks, ke     int    // a string key's bytes in the output
}

// mapField converts a map's object: each member an entry, with its key
// read as protojson reads it (strconv, for integers) and its value never
// null. The entries are put in key order, where a repeated key (which
// protojson refuses) shows as two equal neighbours.
func (w *wireState) mapField(b []byte, f *wireField) ([]byte, bool) {
	if !w.eat('{') {
		return b, false
	}
	body := len(b)
	mark := len(w.ents)
	w.ws()
	if !w.eat('}') {
		for {
			w.ws()
			key, ok := w.str()
			if !ok {
				return b, false
			}
			e := wireEnt{start: len(b)}
			b = protowire.AppendTag(b, f.num, protowire.BytesType)
			var pos int
			b, pos = openLen(b)
			if b, e.num, e.ks, ok = appendMapKey(b, f.mapKey, key); !ok {
				return b, false
			}
			e.ke = len(b)
			w.ws()
			if !w.eat(':') {
				return b, false
			}
			w.ws()
			if b, ok = w.single(b, f.mapVal, false); !ok {
				return b, false
			}
			n := len(b)
			b = closeLen(b, pos)
			e.ks, e.ke, e.end = e.ks+len(b)-n, e.ke+len(b)-n, len(b)
			w.ents = append(w.ents, e)
			w.ws()
			if w.eat('}') {
				break
			}
			if !w.eat(',') {
				return b, false
			}
		}
	}
	ents := w.ents[mark:]
	w.ents = w.ents[:mark]
	cmp := func(x, y wireEnt) int {
		switch f.mapKey.kind {
		case protoreflect.StringKind:
			return bytes.Compare(b[x.ks:x.ke], b[y.ks:y.ke])
		case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
			protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
			return cmpOrdered(int64(x.num), int64(y.num))
		}
		return cmpOrdered(x.num, y.num)
	}
	sorted := true
	for i := 1; i < len(ents); i++ {
		if c := cmp(ents[i-1], ents[i]); c == 0 {
			return b, false // protojson: duplicate map key
		} else if c > 0 {
			sorted = false
		}
	}
	if sorted {
		return b, true
	}
	slices.SortFunc(ents, cmp)
	for i := 1; i < len(ents); i++ {
		if cmp(ents[i-1], ents[i]) == 0 {
			return b, false
		}
	}
	w.scratch = append(w.scratch[:0], b[body:]...)
	out := b[:body]
	for _, e := range ents {
		out = append(out, w.scratch[e.start-body:e.end-body]...)
	}
	return out, true
}

func cmpOrdered[T int64 | uint64](x, y T) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// appendMapKey writes a map entry's key field from a member name, as
// protojson parses it; for sorting it returns an integer or bool key's
// bits and where a string key's bytes start in b.
func appendMapKey(b []byte, f *wireField, key []byte) ([]byte, uint64, int, bool) {
	b = protowire.AppendTag(b, 1, wireType(f.kind))
	s := unsafe.String(unsafe.SliceData(key), len(key))
	switch f.kind {
	case protoreflect.StringKind:
		b = protowire.AppendVarint(b, uint64(len(key)))
		ks := len(b)
		return append(b, key...), 0, ks, true
	case protoreflect.BoolKind:
		switch s {
		case "true":
			return append(b, 1), 1, 0, true
		case "false":
			return append(b, 0), 0, 0, true
		}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		n, err := strconv.ParseInt(s, 10, intBits(f.kind))
		if err != nil {
			return b, 0, 0, false
		}
		return appendInt(b, f.kind, n), uint64(n), 0, true
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		n, err := strconv.ParseUint(s, 10, intBits(f.kind))
		if err != nil {
			return b, 0, 0, false
		}
		return appendUint(b, f.kind, n), n, 0, true
	}
	return b, 0, 0, false
}

// intBits is the width of an integer kind's values, 32 or 64.
func intBits(k protoreflect.Kind) int {
	switch k {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return 32
	}
	return 64
}

// appendInt writes n, the value of a field of signed integer kind k,
// without its tag.
func appendInt(b []byte, k protoreflect.Kind, n int64) []byte {
	switch k {
	case protoreflect.Sint32Kind, protoreflect.Sint64Kind:
		return protowire.AppendVarint(b, protowire.EncodeZigZag(n))
	case protoreflect.Sfixed32Kind:
		return protowire.AppendFixed32(b, uint32(n))
	case protoreflect.Sfixed64Kind:
		return protowire.AppendFixed64(b, uint64(n))
	}
	return protowire.AppendVarint(b, uint64(n))
}

// appendUint writes n, the value of a field of unsigned integer kind k,
// without its tag.
func appendUint(b []byte, k protoreflect.Kind, n uint64) []byte {
	switch k {
	case protoreflect.Fixed32Kind:
		return protowire.AppendFixed32(b, uint32(n))
	case protoreflect.Fixed64Kind:
		return protowire.AppendFixed64(b, n)
	}
	return protowire.AppendVarint(b, n)
}

// single converts one value with its tag: a message, or a scalar
// (skipZero: a zero scalar is unset and writes nothing).
func (w *wireState) single(b []byte, f *wireField, skipZero bool) ([]byte, bool) {
	if f.msg == nil {
		return w.scalar(b, f, true, skipZero)
	}
	b = protowire.AppendTag(b, f.num, protowire.BytesType)
	b, pos := openLen(b)
	b, ok := w.body(b, f.msg)
	if !ok {
		return b, false
	}
	return closeLen(b, pos), true
}

// openLen reserves one byte for a length that closeLen writes; a longer
// length moves what follows.
func openLen(b []byte) ([]byte, int) { return append(b, 0), len(b) }

func closeLen(b []byte, pos int) []byte {
	n := len(b) - pos - 1
	if n < 0x80 {
		b[pos] = byte(n)
		return b
	}
	k := protowire.SizeVarint(uint64(n))
	b = append(b, make([]byte, k-1)...)
	copy(b[pos+k:], b[pos+1:pos+1+n])
	protowire.AppendVarint(b[pos:pos], uint64(n))
	return b
}

// scalar converts one scalar value of f's kind, with its tag when tagged.
func (w *wireState) scalar(b []byte, f *wireField, tagged, skipZero bool) ([]byte, bool) {
	start := len(b)
	if tagged {
		b = protowire.AppendTag(b, f.num, wireType(f.kind))
	}
	zero := false
	switch f.kind {
	case protoreflect.BoolKind:
		switch {
		case w.literal("true"):
			b = append(b, 1)
		case w.literal("false"):
			b, zero = append(b, 0), true
		default:
			return b, false
		}
	case protoreflect.EnumKind:
		var n int64
		if w.peek() == '"' {
			name, ok := w.str()
			if !ok {
				return b, false
			}
			v, found := f.enum[string(name)]
			if !found {
				return b, false
			}
			n = int64(v)
		} else {
			raw, ok := w.number()
			if !ok {
				return b, false
			}
			if n, ok = parseInt(raw, 32); !ok {
				return b, false
			}
		}
		b, zero = protowire.AppendVarint(b, uint64(n)), n == 0
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		raw, ok := w.numberOrString()
		if !ok {
			return b, false
		}
		n, ok := parseInt(raw, intBits(f.kind))
		if !ok {
			return b, false
		}
		b, zero = appendInt(b, f.kind, n), n == 0
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		raw, ok := w.numberOrString()
		if !ok {
			return b, false
		}
		n, ok := parseUint(raw, intBits(f.kind))
		if !ok {
			return b, false
		}
		b, zero = appendUint(b, f.kind, n), n == 0
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		bits := 64
		if f.kind == protoreflect.FloatKind {
			bits = 32
		}
		x, ok := w.float(bits)
		if !ok {
			return b, false
		}
		zero = x == 0 && !math.Signbit(x)
		if bits == 32 {
			b = protowire.AppendFixed32(b, math.Float32bits(float32(x)))
		} else {
			b = protowire.AppendFixed64(b, math.Float64bits(x))
		}
	case protoreflect.StringKind:
		if w.peek() != '"' {
			return b, false
		}
		var pos int
		b, pos = openLen(b)
		var ok bool
		if b, ok = w.appendStr(b); !ok {
			return b, false
		}
		zero = len(b) == pos+1
		b = closeLen(b, pos)
	case protoreflect.BytesKind:
		text, ok := w.str()
		if !ok {
			return b, false
		}
		var pos int
		b, pos = openLen(b)
		if b, ok = appendBase64(b, text); !ok {
			return b, false
		}
		zero = len(b) == pos+1
		b = closeLen(b, pos)
	default:
		return b, false
	}
	if zero && skipZero {
		return b[:start], true
	}
	return b, true
}

func wireType(k protoreflect.Kind) protowire.Type {
	switch k {
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type
	case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.MessageKind:
		return protowire.BytesType
	}
	return protowire.VarintType
}

// appendBase64 decodes a bytes value as protojson does, when base64.go
// would take it without a word: canonical, and not a word that decodes to
// bytes that are not text (which it warns about).
func appendBase64(b, text []byte) ([]byte, bool) {
	if classify(text) != canonical {
		return b, false
	}
	enc := encodingOf(text)
	start := len(b)
	b = slices.Grow(b, enc.DecodedLen(len(text)))
	n, err := enc.Decode(b[start:start+enc.DecodedLen(len(text))], text)
	if err != nil {
		return b[:start], false
	}
	b = b[:start+n]
	if wordLike(text) && !isText(b[start:]) {
		return b[:start], false
	}
	return b, true
}

// number consumes a JSON number in the strict grammar and returns it.
func (w *wireState) number() ([]byte, bool) {
	end, ok := jsonscan.NumberEnd(w.in, w.pos)
	if !ok || !endsValue(w.in, end) {
		return nil, false
	}
	raw := w.in[w.pos:end]
	w.pos = end
	return raw, true
}

// numberOrString is a number, or the content of a string that is exactly
// a number (protojson takes integers quoted); a string with an escape is
// declined.
func (w *wireState) numberOrString() ([]byte, bool) {
	if w.peek() != '"' {
		return w.number()
	}
	raw, ok := w.quoted()
	if end, number := jsonscan.NumberEnd(raw, 0); !ok || !number || end != len(raw) {
		return nil, false
	}
	w.pos += len(raw) + 2
	return raw, true
}

// quoted is the text of the string at w.pos up to its next quote, not
// consumed (the caller does, by len+2, once it is sure of it). It is read
// as it stands, escapes and all: every caller wants a form no escape is
// part of (a number, a float's name, a duration), so one is declined.
func (w *wireState) quoted() ([]byte, bool) {
	if w.peek() != '"' {
		return nil, false
	}
	end := bytes.IndexByte(w.in[w.pos+1:], '"')
	if end < 0 {
		return nil, false
	}
	return w.in[w.pos+1 : w.pos+1+end], true
}

// float reads a float as protojson does: a number, a quoted number, or
// "NaN", "Infinity", "-Infinity".
func (w *wireState) float(bits int) (float64, bool) {
	if s, ok := w.quoted(); ok {
		switch string(s) {
		case "NaN":
			w.pos += len(s) + 2
			return math.NaN(), true
		case "Infinity":
			w.pos += len(s) + 2
			return math.Inf(1), true
		case "-Infinity":
			w.pos += len(s) + 2
			return math.Inf(-1), true
		}
	}
	raw, ok := w.numberOrString()
	if !ok {
		return 0, false
	}
	x, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(raw), len(raw)), bits)
	if err != nil {
		return 0, false
	}
	return x, true
}

// parseInt reads an integer as protojson does: a JSON number (strict
// grammar, checked by jsonscan.NumberEnd) whose value is whole, so 1.0, 1e2 and
// 150e-1 are integers, 1.5 is not.
func parseInt(raw []byte, bits int) (int64, bool) {
	var buf [32]byte
	digits, ok := wholeDigits(raw, &buf)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(unsafe.String(unsafe.SliceData(digits), len(digits)), 10, bits)
	return n, err == nil
}

func parseUint(raw []byte, bits int) (uint64, bool) {
	var buf [32]byte
	digits, ok := wholeDigits(raw, &buf)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(unsafe.String(unsafe.SliceData(digits), len(digits)), 10, bits)
	return n, err == nil
}

// wholeDigits writes a JSON number without fraction or exponent, the
// way protojson normalizes one it reads as an integer: the leading zero
// of the integer part dropped, trailing zeros of the fraction dropped,
// the exponent applied (at most 20 digits), a zero unsigned, false for a
// number that is not whole. A plain integer is returned as it is.
func wholeDigits(raw []byte, buf *[32]byte) ([]byte, bool) {
	if !bytes.ContainsAny(raw, ".eE") {
		if string(raw) == "-0" {
			return raw[1:], true
		}
		return raw, true
	}
	s := raw
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	var intp, frac, exp []byte
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if s[0] != '0' {
		intp = s[:i]
	}
	s = s[i:]
	if len(s) > 0 && s[0] == '.' {
		j := 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		frac = bytes.TrimRight(s[1:j], "0")
		s = s[j:]
	}
	if len(s) > 0 {
		exp = s[1:] // after e or E, sign included
	}
	if len(intp) == 0 && len(frac) == 0 {
		return append(buf[:0], '0'), true
	}
	e := int64(0)
	if len(exp) > 0 {
		var err error
		if e, err = strconv.ParseInt(unsafe.String(unsafe.SliceData(exp), len(exp)), 10, 32); err != nil {
			return nil, false
		}
	}
	out := buf[:0]
	if neg {
		out = append(out, '-')
	}
	if e >= 0 {
		if int64(len(frac)) > e || int64(len(intp))+e > 20 {
			return nil, false
		}
		out = append(append(out, intp...), frac...)
		for range e - int64(len(frac)) {
			out = append(out, '0')
		}
		return out, true
	}
	if len(frac) > 0 {
		return nil, false
	}
	cut := int64(len(intp)) + e
	if cut < 0 {
		return nil, false
	}
	for _, c := range intp[cut:] {
		if c != '0' {
			return nil, false
		}
	}
	return append(out, intp[:cut]...), true
}

// str consumes a JSON string and returns its content: the input itself
// when it has no escape, else the content unescaped into w.scratch (valid
// until the next call).
func (w *wireState) str() ([]byte, bool) {
	if w.peek() != '"' {
		return nil, false
	}
	in := w.in[w.pos+1:]
	for i := 0; i < len(in); i++ {
		switch c := in[i]; {
		case c == '"':
			if !utf8.Valid(in[:i]) {
				return nil, false
			}
			w.pos += i + 2
			return in[:i], true
		case c == '\\':
			var ok bool
			w.scratch, ok = w.appendStr(w.scratch[:0])
			return w.scratch, ok
		case c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// appendStr consumes a JSON string, appending its content to b, with
// protojson's rules: valid UTF-8, no control characters, the escapes of
// RFC 8259, surrogates only in pairs.
func (w *wireState) appendStr(b []byte) ([]byte, bool) {
	if !w.eat('"') {
		return b, false
	}
	in := w.in
	i := w.pos
	run := i
	for i < len(in) {
		c := in[i]
		switch {
		case c == '"':
			if !utf8.Valid(in[run:i]) {
				return b, false
			}
			b = append(b, in[run:i]...)
			w.pos = i + 1
			return b, true
		case c < 0x20:
			return b, false
		case c != '\\':
			i++
			continue
		}
		if !utf8.Valid(in[run:i]) {
			return b, false
		}
		b = append(b, in[run:i]...)
		if i+1 >= len(in) {
			return b, false
		}
		switch e := in[i+1]; {
		case e == 'u':
			r, ok := wireHex4(in, i+2)
			if !ok {
				return b, false
			}
			if utf16.IsSurrogate(r) {
				if r >= 0xdc00 || i+11 >= len(in) || in[i+6] != '\\' || in[i+7] != 'u' {
					return b, false
				}
				lo, ok := wireHex4(in, i+8)
				if !ok || lo < 0xdc00 || lo > 0xdfff {
					return b, false
				}
				r = utf16.DecodeRune(r, lo)
				i += 6
			}
			b = utf8.AppendRune(b, r)
			i += 4
		default:
			c, ok := unescaped(e)
			if !ok {
				return b, false
			}
			b = append(b, c)
		}
		i += 2
		run = i
	}
	return b, false
}

// wireHex4 reads the four hex digits of a \u escape at in[i:].
func wireHex4(in []byte, i int) (rune, bool) {
	if i+4 > len(in) {
		return 0, false
	}
	var r rune
	for _, c := range in[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
