package transcode

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/grpc-mcp-gateway/gateway/internal/wellknown"
)

// maxDepth bounds message nesting exactly as proto.Unmarshal's default
// recursion limit does, so both sides reject the same inputs.
const maxDepth = protowire.DefaultRecursionLimit

var (
	errDecode = errors.New("cannot parse invalid wire-format data")
	errDepth  = errors.New("exceeded maximum recursion depth")
)

// AppendJSON appends the JSON rendering of the message encoded in wire to dst
// and returns the extended buffer. The output is compact and equals what
// protojson.Marshal produces for proto.Unmarshal of wire into a dynamicpb
// message, modulo whitespace; AppendJSON fails in exactly the cases where
// that pipeline fails (malformed wire data, invalid UTF-8, missing required
// fields, out-of-range well-known values, unresolvable Any types).
//
// On error the returned slice has dst's length; bytes past it in dst's
// backing array may have been overwritten.
func (e *Encoder) AppendJSON(dst, wire []byte) ([]byte, error) {
	root, err := e.plan()
	if err != nil {
		return dst, err
	}
	st := statePool.Get().(*state)
	st.sh, st.wire = e.shared, wire
	st.checkRequired = !e.shared.allowPartial
	// proto.Unmarshal resolves extensions of the top-level message through
	// the global registry whatever the protojson resolver is.
	st.extResolver = protoregistry.GlobalTypes
	st.occs = append(st.occs[:0], occ{end: len(wire)})
	out, err := st.message(dst, root, 1, true, 1, nil)
	st.release()
	if err != nil {
		return dst, fmt.Errorf("transcode: %w", err)
	}
	return out, nil
}

// occ is one occurrence of a field on the wire: the decoded number for
// varint and fixed encodings, the byte range of the payload otherwise.
type occ struct {
	start, end int
	val        uint64
	next       int32 // index+1 of the field's next occurrence, 0 at the end
	packed     bool
}

// slot holds the occurrences of one field in a message frame (index+1 into
// state.occs), or for a oneof the index+1 of its current member in head.
type slot struct{ head, tail int32 }

// entry is one decoded map entry awaiting sorting.
type entry struct {
	key   uint64 // normalised: bools 0/1, signed kinds sign-extended
	skey  []byte // string keys
	val   uint64
	sval  []byte
	vhead int32 // message values: occurrences to merge
	vtail int32
	hasV  bool
}

// state is the per-call scratch space. The occurrence, slot and entry
// slices are used as stacks: a message frame pushes on entry and truncates on
// exit, so one pooled state serves any nesting without allocation.
type state struct {
	sh            *shared
	wire          []byte
	occs          []occ
	slots         []slot
	ents          []entry
	scratch       []byte
	checkRequired bool
	extResolver   protoregistry.ExtensionTypeResolver
}

var statePool = sync.Pool{New: func() any { return new(state) }}

func (st *state) release() {
	const keep = 1 << 16 // drop scratch grown by an outlier message
	if cap(st.occs) > keep || cap(st.slots) > keep || cap(st.ents) > keep || cap(st.scratch) > 1<<20 {
		*st = state{}
	}
	st.sh, st.wire, st.extResolver = nil, nil, nil
	st.occs, st.slots, st.ents = st.occs[:0], st.slots[:0], st.ents[:0]
	statePool.Put(st)
}

func (st *state) pushFrame(p *plan) int {
	base := len(st.slots)
	n := len(p.fields) + p.noneofs
	st.slots = slices.Grow(st.slots, n)[:base+n]
	clear(st.slots[base:])
	return base
}

// message renders the message formed by merging the occurrences starting at
// head (only the first if one is set). A non-nil typeURL is emitted as the
// leading "@type" member, for the payload of an Any.
func (st *state) message(dst []byte, p *plan, head int32, one bool, depth int, typeURL []byte) ([]byte, error) {
	if depth > maxDepth {
		return dst, errDepth
	}
	if p.fallback || p.extRanges != nil && st.hasExtension(p, head, one) {
		return st.fallback(dst, p, head, one, depth, true)
	}
	mark, base := len(st.occs), st.pushFrame(p)
	err := st.scan(p, head, one, depth, base)
	if err == nil && st.checkRequired {
		for _, i := range p.required {
			if st.slots[base+int(i)].head == 0 {
				err = fmt.Errorf("required field %s not set", p.fields[i].fd.FullName())
				break
			}
		}
	}
	if err == nil {
		if p.wkt != wellknown.None {
			dst, err = st.wellKnown(dst, p, base, depth)
		} else {
			dst, err = st.object(dst, p, base, depth, typeURL)
		}
	}
	st.occs, st.slots = st.occs[:mark], st.slots[:base]
	return dst, err
}

// hasExtension reports whether any top-level field of the message lies in an
// extension range. Malformed data also answers true, leaving the error to
// the fallback decoder.
func (st *state) hasExtension(p *plan, head int32, one bool) bool {
	for o := head; o != 0; o = st.occs[o-1].next {
		b := st.wire[st.occs[o-1].start:st.occs[o-1].end]
		for len(b) > 0 {
			num, wtyp, n := protowire.ConsumeTag(b)
			if n < 0 {
				return true
			}
			for _, r := range p.extRanges {
				if r[0] <= num && num < r[1] {
					return true
				}
			}
			m := protowire.ConsumeFieldValue(num, wtyp, b[n:])
			if m < 0 {
				return true
			}
			b = b[n+m:]
		}
		if one {
			break
		}
	}
	return false
}

func (st *state) scan(p *plan, head int32, one bool, depth, base int) error {
	for o := head; o != 0; o = st.occs[o-1].next {
		if err := st.scanSegment(p, st.occs[o-1].start, st.occs[o-1].end, depth, base); err != nil {
			return err
		}
		if one {
			break
		}
	}
	return nil
}

func (st *state) scanSegment(p *plan, pos, end, depth, base int) error {
	for pos < end {
		num, wtyp, n := protowire.ConsumeTag(st.wire[pos:end])
		if n < 0 || num > protowire.MaxValidNumber {
			return errDecode
		}
		pos += n
		if fi := p.lookup(num); fi >= 0 {
			m, err := st.record(p, fi, wtyp, pos, end, depth, base)
			if err != nil {
				return err
			}
			if m >= 0 {
				pos += m
				continue
			}
		}
		// Unknown fields, and known ones with an unexpected wire type, are
		// skipped: protojson never renders unknown fields.
		m := protowire.ConsumeFieldValue(num, wtyp, st.wire[pos:end])
		if m < 0 {
			return errDecode
		}
		pos += m
	}
	return nil
}

// record stores one occurrence of field fi whose tag ends at pos. It returns
// the payload length, or -1 if the wire type makes it an unknown field.
func (st *state) record(p *plan, fi int32, wtyp protowire.Type, pos, end, depth, base int) (int, error) {
	f := &p.fields[fi]
	o, n, err := st.consume(f, wtyp, pos, end)
	if n < 0 || err != nil {
		return n, err
	}
	if o.packed && o.start == o.end {
		return n, nil // an empty packed run adds no elements
	}
	if f.oneof >= 0 {
		os := base + len(p.fields) + int(f.oneof)
		if cur := st.slots[os].head; cur != 0 && cur-1 != fi {
			// Setting another member clears the previous one; its
			// payload was still decoded by proto.Unmarshal, so it must
			// still be well-formed.
			prev := st.slots[base+int(cur-1)]
			st.slots[base+int(cur-1)] = slot{}
			if m := p.fields[cur-1].msg; m != nil {
				if err := st.validate(m, prev.head, false, depth+1); err != nil {
					return 0, err
				}
			}
		}
		st.slots[os].head = fi + 1
	}
	s := &st.slots[base+int(fi)]
	if f.card == singular && f.msg == nil && s.head != 0 {
		st.occs[s.head-1] = o // last value wins
		return n, nil
	}
	st.occs = append(st.occs, o)
	idx := int32(len(st.occs))
	if s.tail != 0 {
		st.occs[s.tail-1].next = idx
	} else {
		s.head = idx
	}
	s.tail = idx
	return n, nil
}

// consume decodes one payload of field f starting at pos, validating it the
// way proto.Unmarshal does. n is -1 when the wire type does not match.
func (st *state) consume(f *field, wtyp protowire.Type, pos, end int) (o occ, n int, err error) {
	b := st.wire[pos:end]
	switch {
	case wtyp == f.wtyp:
	case f.packed && wtyp == protowire.BytesType:
		o.packed = true
	default:
		return o, -1, nil
	}
	switch wtyp {
	case protowire.VarintType:
		o.val, n = protowire.ConsumeVarint(b)
	case protowire.Fixed32Type:
		var v uint32
		v, n = protowire.ConsumeFixed32(b)
		o.val = uint64(v)
	case protowire.Fixed64Type:
		o.val, n = protowire.ConsumeFixed64(b)
	case protowire.BytesType:
		var v []byte
		v, n = protowire.ConsumeBytes(b)
		if n < 0 {
			return o, 0, errDecode
		}
		o.start = pos + n - len(v)
		o.end = o.start + len(v)
		switch {
		case o.packed:
			if !validPacked(f.wtyp, v) {
				return o, 0, errDecode
			}
		case f.utf8 && !utf8.Valid(v):
			return o, 0, fmt.Errorf("field %s contains %w", f.fd.FullName(), errInvalidUTF8)
		}
	case protowire.StartGroupType:
		var v []byte
		v, n = protowire.ConsumeGroup(f.num, b)
		o.start, o.end = pos, pos+len(v)
	}
	if n < 0 {
		return o, 0, errDecode
	}
	return o, n, nil
}

func validPacked(wt protowire.Type, b []byte) bool {
	switch wt {
	case protowire.Fixed32Type:
		return len(b)%4 == 0
	case protowire.Fixed64Type:
		return len(b)%8 == 0
	}
	for len(b) > 0 {
		_, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return false
		}
		b = b[n:]
	}
	return true
}

// object renders a message with ordinary field-by-field JSON.
func (st *state) object(dst []byte, p *plan, base, depth int, typeURL []byte) ([]byte, error) {
	dst = append(dst, '{')
	sep := false
	var err error
	if typeURL != nil {
		dst = append(dst, `"@type":`...)
		if dst, err = appendString(dst, typeURL); err != nil {
			return dst, fmt.Errorf("google.protobuf.Any type_url: %w", err)
		}
		sep = true
	}
	for i := range p.fields {
		f := &p.fields[i]
		s := st.slots[base+i]
		if s.head == 0 {
			continue
		}
		if f.card == singular && f.msg == nil && !f.presence && st.isZero(f, s.head) {
			continue
		}
		if sep {
			dst = append(dst, ',')
		}
		sep = true
		dst = append(dst, f.name...)
		if dst, err = st.value(dst, f, s, depth); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// isZero reports whether the value protojson would see is the zero value,
// which for implicit presence means "not set". Note -0.0 counts as set.
func (st *state) isZero(f *field, o int32) bool {
	oc := &st.occs[o-1]
	switch f.kind {
	case protoreflect.StringKind, protoreflect.BytesKind:
		return oc.start == oc.end
	case protoreflect.Sint32Kind:
		return uint32(oc.val) == 0
	case protoreflect.BoolKind, protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Uint64Kind,
		protoreflect.Sfixed64Kind, protoreflect.Fixed64Kind, protoreflect.DoubleKind:
		return oc.val == 0
	default: // 32-bit kinds keep only the low 32 bits of the varint
		return uint32(oc.val) == 0
	}
}

// value renders the whole value of a field: an array, an object, a message
// or a scalar. Empty lists and maps render as [] and {} and an absent scalar
// as its default; plain messages never call this for absent fields, but the
// well-known types do.
func (st *state) value(dst []byte, f *field, s slot, depth int) ([]byte, error) {
	switch {
	case f.card == mapping:
		if s.head == 0 {
			return append(dst, '{', '}'), nil
		}
		return st.mapValue(dst, f, s.head, depth)
	case f.card == list:
		return st.listValue(dst, f, s.head, depth)
	case f.msg != nil:
		return st.message(dst, f.msg, s.head, false, depth+1, nil)
	case s.head == 0:
		return st.scalar(dst, f, f.defNum, f.defBytes)
	default:
		oc := &st.occs[s.head-1]
		return st.scalar(dst, f, oc.val, st.wire[oc.start:oc.end])
	}
}

func (st *state) listValue(dst []byte, f *field, head int32, depth int) ([]byte, error) {
	dst = append(dst, '[')
	var err error
	n := 0
	for o := head; o != 0; o = st.occs[o-1].next {
		oc := st.occs[o-1]
		if oc.packed {
			if dst, n, err = st.packed(dst, f, st.wire[oc.start:oc.end], n); err != nil {
				return dst, err
			}
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		if f.msg != nil {
			dst, err = st.message(dst, f.msg, o, true, depth+1, nil)
		} else {
			dst, err = st.scalar(dst, f, oc.val, st.wire[oc.start:oc.end])
		}
		if err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

// packed renders the elements of one packed run (already validated by
// consume), n being the number of elements written so far.
func (st *state) packed(dst []byte, f *field, b []byte, n int) ([]byte, int, error) {
	var err error
	for len(b) > 0 {
		var v uint64
		switch f.wtyp {
		case protowire.Fixed32Type:
			v, b = uint64(uint32(b[0])|uint32(b[1])<<8|uint32(b[2])<<16|uint32(b[3])<<24), b[4:]
		case protowire.Fixed64Type:
			lo := uint64(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24)
			hi := uint64(uint32(b[4]) | uint32(b[5])<<8 | uint32(b[6])<<16 | uint32(b[7])<<24)
			v, b = lo|hi<<32, b[8:]
		default:
			var m int
			v, m = protowire.ConsumeVarint(b)
			b = b[m:]
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		if dst, err = st.scalar(dst, f, v, nil); err != nil {
			return dst, n, err
		}
	}
	return dst, n, nil
}

// scalar renders a non-message value from its wire form: v holds varint and
// fixed payloads, b string and bytes payloads.
func (st *state) scalar(dst []byte, f *field, v uint64, b []byte) ([]byte, error) {
	switch f.kind {
	case protoreflect.BoolKind:
		if v != 0 {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case protoreflect.EnumKind:
		if f.null {
			return append(dst, "null"...), nil
		}
		if name := f.enum.lookup(int32(v)); name != nil {
			return append(dst, name...), nil
		}
		return strconv.AppendInt(dst, int64(int32(v)), 10), nil
	case protoreflect.Int32Kind:
		return strconv.AppendInt(dst, int64(int32(v)), 10), nil
	case protoreflect.Sint32Kind:
		return strconv.AppendInt(dst, int64(int32(protowire.DecodeZigZag(v&math.MaxUint32))), 10), nil
	case protoreflect.Sfixed32Kind:
		return strconv.AppendInt(dst, int64(int32(uint32(v))), 10), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return strconv.AppendUint(dst, uint64(uint32(v)), 10), nil
	case protoreflect.Int64Kind, protoreflect.Sfixed64Kind:
		dst = strconv.AppendInt(append(dst, '"'), int64(v), 10)
		return append(dst, '"'), nil
	case protoreflect.Sint64Kind:
		dst = strconv.AppendInt(append(dst, '"'), protowire.DecodeZigZag(v), 10)
		return append(dst, '"'), nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		dst = strconv.AppendUint(append(dst, '"'), v, 10)
		return append(dst, '"'), nil
	case protoreflect.FloatKind:
		return appendFloat(dst, float64(math.Float32frombits(uint32(v))), 32), nil
	case protoreflect.DoubleKind:
		return appendFloat(dst, math.Float64frombits(v), 64), nil
	case protoreflect.StringKind:
		out, err := appendString(dst, b)
		if err != nil {
			return dst, fmt.Errorf("field %s contains %w", f.fd.FullName(), err)
		}
		return out, nil
	case protoreflect.BytesKind:
		dst = base64.StdEncoding.AppendEncode(append(dst, '"'), b)
		return append(dst, '"'), nil
	}
	return dst, fmt.Errorf("field %s has unsupported kind %v", f.fd.FullName(), f.kind)
}

// mapValue renders a map field. Entries are decoded, sorted the way protojson
// orders map keys (false before true, integers numerically, strings
// bytewise), and for duplicate keys the last entry on the wire wins.
func (st *state) mapValue(dst []byte, f *field, head int32, depth int) ([]byte, error) {
	base := len(st.ents)
	defer func() { st.ents = st.ents[:base] }()
	if err := st.parseEntries(f, head, depth); err != nil {
		return dst, err
	}
	slices.SortStableFunc(st.ents[base:], keyOrder(f.key.kind))
	dst = append(dst, '{')
	n := len(st.ents) - base
	sep := false
	var err error
	for i := range n {
		e := st.ents[base+i]
		if i+1 < n && sameKey(&e, &st.ents[base+i+1]) {
			if f.val.msg != nil {
				if err := st.validate(f.val.msg, e.vhead, false, depth+2); err != nil {
					return dst, err
				}
			}
			continue
		}
		if sep {
			dst = append(dst, ',')
		}
		sep = true
		if dst, err = appendKey(dst, f.key, &e); err != nil {
			return dst, err
		}
		switch {
		case f.val.msg != nil:
			dst, err = st.message(dst, f.val.msg, e.vhead, false, depth+2, nil)
		case e.hasV:
			dst, err = st.scalar(dst, f.val, e.val, e.sval)
		default:
			dst, err = st.scalar(dst, f.val, f.val.defNum, f.val.defBytes)
		}
		if err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// parseEntries decodes every entry of a map field onto st.ents, validating
// keys and scalar values as proto.Unmarshal does.
func (st *state) parseEntries(f *field, head int32, depth int) error {
	if depth+1 > maxDepth {
		return errDepth
	}
	for o := head; o != 0; o = st.occs[o-1].next {
		pos, end := st.occs[o-1].start, st.occs[o-1].end
		var e entry
		for pos < end {
			num, wtyp, n := protowire.ConsumeTag(st.wire[pos:end])
			if n < 0 || num > protowire.MaxValidNumber {
				return errDecode
			}
			pos += n
			var kf *field
			switch num {
			case 1:
				kf = f.key
			case 2:
				kf = f.val
			}
			if kf != nil {
				v, m, err := st.consume(kf, wtyp, pos, end)
				if err != nil {
					return err
				}
				if m >= 0 {
					pos += m
					switch {
					case num == 1:
						e.key, e.skey = normKey(kf.kind, v.val), st.wire[v.start:v.end]
					case kf.msg != nil:
						st.occs = append(st.occs, v)
						idx := int32(len(st.occs))
						if e.vtail != 0 {
							st.occs[e.vtail-1].next = idx
						} else {
							e.vhead = idx
						}
						e.vtail = idx
					default:
						e.val, e.sval, e.hasV = v.val, st.wire[v.start:v.end], true
					}
					continue
				}
			}
			m := protowire.ConsumeFieldValue(num, wtyp, st.wire[pos:end])
			if m < 0 {
				return errDecode
			}
			pos += m
		}
		st.ents = append(st.ents, e)
	}
	return nil
}

func normKey(k protoreflect.Kind, v uint64) uint64 {
	switch k {
	case protoreflect.BoolKind:
		if v != 0 {
			return 1
		}
		return 0
	case protoreflect.Int32Kind:
		return uint64(int64(int32(v)))
	case protoreflect.Sint32Kind:
		return uint64(int64(int32(protowire.DecodeZigZag(v & math.MaxUint32))))
	case protoreflect.Sfixed32Kind:
		return uint64(int64(int32(uint32(v))))
	case protoreflect.Sint64Kind:
		return uint64(protowire.DecodeZigZag(v))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return uint64(uint32(v))
	}
	return v
}

func isSignedKey(k protoreflect.Kind) bool {
	switch k {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return true
	}
	return false
}

func keyOrder(k protoreflect.Kind) func(a, b entry) int {
	switch {
	case k == protoreflect.StringKind:
		return func(a, b entry) int { return bytes.Compare(a.skey, b.skey) }
	case isSignedKey(k):
		return func(a, b entry) int { return cmp.Compare(int64(a.key), int64(b.key)) }
	default:
		return func(a, b entry) int { return cmp.Compare(a.key, b.key) }
	}
}

func sameKey(a, b *entry) bool { return a.key == b.key && bytes.Equal(a.skey, b.skey) }

func appendKey(dst []byte, kf *field, e *entry) ([]byte, error) {
	switch {
	case kf.kind == protoreflect.StringKind:
		out, err := appendString(dst, e.skey)
		if err != nil {
			return dst, fmt.Errorf("map key of %s: %w", kf.fd.FullName(), err)
		}
		dst = out
	case kf.kind == protoreflect.BoolKind:
		if e.key != 0 {
			dst = append(dst, `"true"`...)
		} else {
			dst = append(dst, `"false"`...)
		}
	case isSignedKey(kf.kind):
		dst = append(strconv.AppendInt(append(dst, '"'), int64(e.key), 10), '"')
	default:
		dst = append(strconv.AppendUint(append(dst, '"'), e.key, 10), '"')
	}
	return append(dst, ':'), nil
}

// validate decodes a message that proto.Unmarshal would parse but protojson
// would never render (a replaced oneof member, a map entry overwritten by a
// later duplicate key), so that malformed data there fails here too. Only
// decoding rules apply: required fields and well-known-type ranges are not
// checked for discarded values.
func (st *state) validate(p *plan, head int32, one bool, depth int) error {
	if depth > maxDepth {
		return errDepth
	}
	if p.fallback || p.extRanges != nil && st.hasExtension(p, head, one) {
		_, err := st.fallback(nil, p, head, one, depth, false)
		return err
	}
	mark, base := len(st.occs), st.pushFrame(p)
	defer func() { st.occs, st.slots = st.occs[:mark], st.slots[:base] }()
	if err := st.scan(p, head, one, depth, base); err != nil {
		return err
	}
	for i := range p.fields {
		f := &p.fields[i]
		s := st.slots[base+i]
		if s.head == 0 {
			continue
		}
		switch {
		case f.card == mapping:
			eb := len(st.ents)
			err := st.parseEntries(f, s.head, depth)
			for j := eb; err == nil && j < len(st.ents) && f.val.msg != nil; j++ {
				err = st.validate(f.val.msg, st.ents[j].vhead, false, depth+2)
			}
			st.ents = st.ents[:eb]
			if err != nil {
				return err
			}
		case f.msg == nil:
		case f.card == list:
			for o := s.head; o != 0; o = st.occs[o-1].next {
				if err := st.validate(f.msg, o, true, depth+1); err != nil {
					return err
				}
			}
		default:
			if err := st.validate(f.msg, s.head, false, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}
