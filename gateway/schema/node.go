package schema

import (
	"strconv"
	"unicode/utf8"
)

// node is a JSON object whose members keep their insertion order. The schema
// is built from nodes rather than maps so the encoding is byte-stable and reads
// in a sensible order (type first, then constraints, then description).
//
// A node may be shared by several parents (an inlined message used by many
// fields), so nodes are never mutated after they are handed out; callers that
// need to decorate one take a shallow copy with with.
type node struct {
	keys []string
	vals []any // string, bool, int64, uint64, float64, []string, []any, *node
}

func obj(kv ...any) *node {
	n := &node{}
	for i := 0; i+1 < len(kv); i += 2 {
		n.set(kv[i].(string), kv[i+1])
	}
	return n
}

// set replaces the member k in place, or appends it.
func (n *node) set(k string, v any) {
	for i, key := range n.keys {
		if key == k {
			n.vals[i] = v
			return
		}
	}
	n.keys = append(n.keys, k)
	n.vals = append(n.vals, v)
}

func (n *node) get(k string) (any, bool) {
	for i, key := range n.keys {
		if key == k {
			return n.vals[i], true
		}
	}
	return nil, false
}

// with returns a shallow copy of n with k set to v, leaving n (which may be
// shared) untouched.
func (n *node) with(k string, v any) *node {
	c := &node{
		keys: append(make([]string, 0, len(n.keys)+1), n.keys...),
		vals: append(make([]any, 0, len(n.vals)+1), n.vals...),
	}
	c.set(k, v)
	return c
}

// appendJSON encodes n. Shared subtrees are encoded once per use, so the cost
// is linear in the output size.
func (n *node) appendJSON(b []byte) []byte {
	b = append(b, '{')
	for i, k := range n.keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = appendValue(b, n.vals[i])
	}
	return append(b, '}')
}

func appendValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case *node:
		return v.appendJSON(b)
	case string:
		return appendString(b, v)
	case bool:
		return strconv.AppendBool(b, v)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case uint64:
		return strconv.AppendUint(b, v, 10)
	case float64:
		return strconv.AppendFloat(b, v, 'g', -1, 64)
	case []string:
		b = append(b, '[')
		for i, s := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, s)
		}
		return append(b, ']')
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, e)
		}
		return append(b, ']')
	}
	// Only this package builds nodes; reaching here is a programming error.
	panic("schema: unsupported node value type")
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string. Unlike encoding/json it leaves <, >
// and & alone, so descriptions taken from proto comments stay readable.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			// Valid JSON, but they break JavaScript consumers that eval or embed it.
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
