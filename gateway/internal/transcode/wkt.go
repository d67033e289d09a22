package transcode

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/grpc-mcp-gateway/gateway/internal/wellknown"
)

// Range limits protojson enforces for Timestamp and Duration.
const (
	minTimestampSeconds = -62135596800 // 0001-01-01T00:00:00Z
	maxTimestampSeconds = 253402300799 // 9999-12-31T23:59:59Z
	maxDurationSeconds  = 315576000000
	maxNanos            = 999999999
)

// checkWKT verifies that a well-known type has the shape its JSON mapping
// relies on, so that a malformed descriptor fails at Compile time instead of
// rendering something protojson would not.
func checkWKT(p *plan) error {
	if p.wkt == wellknown.None {
		return nil
	}
	p.w1, p.w2, p.wo = p.lookup(1), p.lookup(2), -1
	want := func(i int32, c cardinality, kinds ...protoreflect.Kind) bool {
		if i < 0 || p.fields[i].card != c {
			return false
		}
		for _, k := range kinds {
			if p.fields[i].kind == k {
				return true
			}
		}
		return false
	}
	ok := false
	switch p.wkt {
	case wellknown.Any:
		ok = want(p.w1, singular, protoreflect.StringKind) && want(p.w2, singular, protoreflect.BytesKind)
	case wellknown.Timestamp, wellknown.Duration:
		ok = want(p.w1, singular, protoreflect.Int64Kind) && want(p.w2, singular, protoreflect.Int32Kind)
	case wellknown.Wrapper:
		ok = p.w1 >= 0 && p.fields[p.w1].card == singular && p.fields[p.w1].msg == nil
	case wellknown.Struct:
		ok = want(p.w1, mapping, protoreflect.MessageKind)
	case wellknown.ListValue:
		ok = want(p.w1, list, protoreflect.MessageKind)
	case wellknown.FieldMask:
		ok = want(p.w1, list, protoreflect.StringKind)
	case wellknown.Value:
		if od := p.md.Oneofs().ByName("kind"); od != nil {
			p.wo, ok = int32(od.Index()), true
		}
	}
	if !ok {
		return fmt.Errorf("transcode: well-known type %s has an unexpected shape", p.md.FullName())
	}
	return nil
}

// wellKnown renders the special JSON mappings of the well-known types.
func (st *state) wellKnown(dst []byte, p *plan, base, depth int) ([]byte, error) {
	switch p.wkt {
	case wellknown.Timestamp:
		return st.timestamp(dst, p, base)
	case wellknown.Duration:
		return st.duration(dst, p, base)
	case wellknown.Wrapper, wellknown.Struct, wellknown.ListValue:
		return st.value(dst, &p.fields[p.w1], st.slots[base+int(p.w1)], depth)
	case wellknown.Value:
		cur := st.slots[base+len(p.fields)+int(p.wo)].head
		if cur == 0 {
			return dst, errors.New("google.protobuf.Value: none of the oneof fields is set")
		}
		f, s := &p.fields[cur-1], st.slots[base+int(cur-1)]
		if f.kind == protoreflect.DoubleKind && f.card == singular {
			if v := math.Float64frombits(st.occs[s.head-1].val); math.IsNaN(v) || math.IsInf(v, 0) {
				return dst, fmt.Errorf("google.protobuf.Value: invalid %s value %v", f.fd.FullName(), v)
			}
		}
		return st.value(dst, f, s, depth)
	case wellknown.FieldMask:
		return st.fieldMask(dst, p, base)
	case wellknown.Any:
		return st.anyValue(dst, p, base)
	}
	return dst, fmt.Errorf("unhandled well-known type %s", p.md.FullName())
}

// num returns the last value of scalar field i, or its default.
func (st *state) num(p *plan, base int, i int32) uint64 {
	if s := st.slots[base+int(i)]; s.head != 0 {
		return st.occs[s.head-1].val
	}
	return p.fields[i].defNum
}

// bytesOf returns the last payload of string or bytes field i, or its default.
func (st *state) bytesOf(p *plan, base int, i int32) []byte {
	if s := st.slots[base+int(i)]; s.head != 0 {
		return st.wire[st.occs[s.head-1].start:st.occs[s.head-1].end]
	}
	return p.fields[i].defBytes
}

func (st *state) timestamp(dst []byte, p *plan, base int) ([]byte, error) {
	secs, nanos := int64(st.num(p, base, p.w1)), int64(int32(st.num(p, base, p.w2)))
	if secs < minTimestampSeconds || secs > maxTimestampSeconds {
		return dst, fmt.Errorf("google.protobuf.Timestamp: seconds out of range %d", secs)
	}
	if nanos < 0 || nanos > maxNanos {
		return dst, fmt.Errorf("google.protobuf.Timestamp: nanos out of range %d", nanos)
	}
	dst = append(dst, '"')
	dst = time.Unix(secs, nanos).UTC().AppendFormat(dst, "2006-01-02T15:04:05.000000000")
	dst = trimNanos(dst)
	return append(dst, 'Z', '"'), nil
}

func (st *state) duration(dst []byte, p *plan, base int) ([]byte, error) {
	secs, nanos := int64(st.num(p, base, p.w1)), int64(int32(st.num(p, base, p.w2)))
	if secs < -maxDurationSeconds || secs > maxDurationSeconds {
		return dst, fmt.Errorf("google.protobuf.Duration: seconds out of range %d", secs)
	}
	if nanos < -maxNanos || nanos > maxNanos {
		return dst, fmt.Errorf("google.protobuf.Duration: nanos out of range %d", nanos)
	}
	if (secs > 0 && nanos < 0) || (secs < 0 && nanos > 0) {
		return dst, errors.New("google.protobuf.Duration: signs of seconds and nanos do not match")
	}
	dst = append(dst, '"')
	if secs < 0 || nanos < 0 {
		dst = append(dst, '-')
		secs, nanos = -secs, -nanos
	}
	dst = strconv.AppendInt(dst, secs, 10)
	dst = append(dst, '.')
	frac := strconv.AppendInt(make([]byte, 0, 12), nanos+1e9, 10) // "1" + nine digits
	dst = trimNanos(append(dst, frac[1:]...))
	return append(dst, 's', '"'), nil
}

// trimNanos drops trailing groups of three zeros from a nine-digit fraction,
// and the fraction altogether when it is zero, giving 0, 3, 6 or 9 digits.
func trimNanos(b []byte) []byte {
	for range 2 {
		if hasSuffix(b, "000") {
			b = b[:len(b)-3]
		}
	}
	if hasSuffix(b, ".000") {
		b = b[:len(b)-4]
	}
	return b
}

func hasSuffix(b []byte, s string) bool {
	return len(b) >= len(s) && string(b[len(b)-len(s):]) == s
}

// fieldMask renders paths converted to lowerCamelCase and joined by commas,
// rejecting paths that are not identifiers or would not convert back.
func (st *state) fieldMask(dst []byte, p *plan, base int) ([]byte, error) {
	dst = append(dst, '"')
	n := 0
	for o := st.slots[base+int(p.w1)].head; o != 0; o = st.occs[o-1].next {
		path := st.wire[st.occs[o-1].start:st.occs[o-1].end]
		if !protoreflect.FullName(path).IsValid() {
			return dst, fmt.Errorf("google.protobuf.FieldMask.paths contains invalid path: %q", path)
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		start := len(dst)
		upper := false
		for _, c := range path {
			if c == '_' {
				upper = true
				continue
			}
			if upper && 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			upper = false
			dst = append(dst, c)
		}
		if !snakeEquals(dst[start:], path) {
			return dst, fmt.Errorf("google.protobuf.FieldMask.paths contains irreversible value %q", path)
		}
	}
	return append(dst, '"'), nil
}

// snakeEquals reports whether converting camel back to snake_case (every
// upper-case letter becomes '_' and its lower-case form) yields path.
func snakeEquals(camel, path []byte) bool {
	i := 0
	for _, c := range camel {
		if 'A' <= c && c <= 'Z' {
			if i+1 >= len(path) || path[i] != '_' || path[i+1] != c+('a'-'A') {
				return false
			}
			i += 2
			continue
		}
		if i >= len(path) || path[i] != c {
			return false
		}
		i++
	}
	return i == len(path)
}
