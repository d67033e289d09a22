package schema

import (
	"strconv"

	"github.com/grpc-mcp-gateway/gateway/internal/jsonstr"
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
		b = jsonstr.Append(b, k)
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
		return jsonstr.Append(b, v)
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
			b = jsonstr.Append(b, s)
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

// appendCapped is appendJSON that gives up once the encoding passes max
// bytes: a bounded build (bound.go) only needs to know that a try is too
// large, and a try may write megabytes out.
func (n *node) appendCapped(b []byte, max int) ([]byte, bool) {
	b = append(b, '{')
	for i, k := range n.keys {
		if len(b) > max {
			return b, false
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.Append(b, k)
		b = append(b, ':')
		var ok bool
		if b, ok = appendValueCapped(b, n.vals[i], max); !ok {
			return b, false
		}
	}
	b = append(b, '}')
	return b, len(b) <= max
}

func appendValueCapped(b []byte, v any, max int) ([]byte, bool) {
	switch v := v.(type) {
	case *node:
		return v.appendCapped(b, max)
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendValueCapped(b, e, max); !ok {
				return b, false
			}
		}
		b = append(b, ']')
		return b, len(b) <= max
	}
	b = appendValue(b, v)
	return b, len(b) <= max
}
