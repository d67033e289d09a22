package transcode

import (
	"cmp"
	"errors"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"google.golang.org/protobuf/reflect/protoreflect"
)

var errInvalidUTF8 = errors.New("invalid UTF-8")

// escapes marks the ASCII bytes protojson escapes; bytes >= 0x80 are handled
// by UTF-8 validation instead.
var escapes = func() (t [utf8.RuneSelf]bool) {
	for c := range ' ' {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string byte for byte as protojson
// writes it, the transcoder's contract (internal/jsonstr says why the
// module has more than one string encoder): only
// control characters, '"' and '\\' are escaped (HTML characters and U+2028
// are not), and invalid UTF-8 is an error, as protojson reports for every
// string it writes.
func appendString(dst, s []byte) ([]byte, error) {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			if !escapes[c] {
				continue
			}
			dst = append(dst, s[start:i-1]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			start = i
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && n == 1 {
			return dst, errInvalidUTF8
		}
		i += n
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"'), nil
}

// appendFloat formats f the way protojson does: NaN and infinities as quoted
// names, otherwise the shortest representation for bitSize, switching to
// exponent form outside [1e-6, 1e21) and trimming a leading zero from
// two-digit negative exponents, as encoding/json does.
func appendFloat(dst []byte, f float64, bitSize int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 {
		if bitSize == 64 && (a < 1e-6 || a >= 1e21) ||
			bitSize == 32 && (float32(a) < 1e-6 || float32(a) >= 1e21) {
			format = 'e'
		}
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bitSize)
	if format == 'e' {
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// enumNames maps enum numbers to their pre-quoted value names. When several
// values share a number, the first declared wins, as in
// EnumValueDescriptors.ByNumber.
type enumNames struct {
	min   int32
	dense [][]byte // indexed by number-min when the range is small
	// sparse is used when the numbers span a large range.
	sparse []enumName
}

type enumName struct {
	num  int32
	name []byte
}

func compileEnum(ed protoreflect.EnumDescriptor) *enumNames {
	vals := ed.Values()
	e := &enumNames{}
	if vals.Len() == 0 {
		return e
	}
	lo, hi := int64(math.MaxInt32), int64(math.MinInt32)
	for i := range vals.Len() {
		n := int64(vals.Get(i).Number())
		lo, hi = min(lo, n), max(hi, n)
	}
	quoted := func(v protoreflect.EnumValueDescriptor) []byte {
		// Enum value names are identifiers, so they never need escaping.
		return []byte(`"` + string(v.Name()) + `"`)
	}
	if hi-lo < int64(4*vals.Len()+64) {
		e.min = int32(lo)
		e.dense = make([][]byte, hi-lo+1)
		for i := range vals.Len() {
			if v := vals.Get(i); vals.ByNumber(v.Number()) == v {
				e.dense[int64(v.Number())-lo] = quoted(v)
			}
		}
		return e
	}
	for i := range vals.Len() {
		v := vals.Get(i)
		if vals.ByNumber(v.Number()) == v {
			e.sparse = append(e.sparse, enumName{int32(v.Number()), quoted(v)})
		}
	}
	slices.SortFunc(e.sparse, func(a, b enumName) int { return cmp.Compare(a.num, b.num) })
	return e
}

func (e *enumNames) lookup(n int32) []byte {
	if e.dense != nil {
		i := int64(n) - int64(e.min)
		if i >= 0 && i < int64(len(e.dense)) {
			return e.dense[i]
		}
		return nil
	}
	s := e.sparse
	lo, hi := 0, len(s)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch {
		case s[m].num < n:
			lo = m + 1
		case s[m].num > n:
			hi = m
		default:
			return s[m].name
		}
	}
	return nil
}
