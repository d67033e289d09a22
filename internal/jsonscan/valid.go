package jsonscan

import (
	"bytes"
	"encoding/json"
)

// Why not encoding/json for messages: decoding an envelope into a struct of
// json.RawMessage fields cost about 20 allocations per request (one copy per
// raw field, the scanner's parse-state stack, the decode state) and most of
// the CPU of a no-op tools/call. It also matched object keys
// case-insensitively, so {"Method":...} or {"Name":...} were accepted as
// "method" and "name"; MCP, like JSON-RPC, is case-sensitive. The functions
// here validate exactly as strictly as encoding/json.Valid, and hand out the
// raw bytes of values as sub-slices of the input, without copying.

// MaxNesting bounds the depth of nested arrays and objects, like
// encoding/json's limit, so a hostile message cannot exhaust the stack:
// deeper input is not valid.
const MaxNesting = 10000

// Valid reports whether data is exactly one JSON value, optionally
// surrounded by white space. It agrees with encoding/json.Valid on every
// input nested no deeper than MaxNesting.
func Valid(data []byte) bool {
	i := SpaceEnd(data, 0)
	end, ok := Skip(data, i, 0)
	return ok && SpaceEnd(data, end) == len(data)
}

// Skip validates the JSON value starting at data[i], found at nesting
// depth depth (0 for a document's top level), and returns the index just
// past it; ok is false when it is not a valid value.
func Skip(data []byte, i, depth int) (end int, ok bool) {
	if i >= len(data) {
		return i, false
	}
	switch c := data[i]; {
	case c == '"':
		end, _, ok := skipString(data, i)
		return end, ok
	case c == '{':
		return forEachMember(data, i, depth, nil)
	case c == '[':
		if depth >= MaxNesting {
			return i, false
		}
		i = SpaceEnd(data, i+1)
		if i < len(data) && data[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = Skip(data, i, depth+1); !ok {
				return i, false
			}
			i = SpaceEnd(data, i)
			if i >= len(data) {
				return i, false
			}
			switch data[i] {
			case ',':
				i = SpaceEnd(data, i+1)
			case ']':
				return i + 1, true
			default:
				return i, false
			}
		}
	case c == 't':
		return skipLiteral(data, i, "true")
	case c == 'f':
		return skipLiteral(data, i, "false")
	case c == 'n':
		return skipLiteral(data, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return skipNumber(data, i)
	}
	return i, false
}

func skipLiteral(data []byte, i int, lit string) (int, bool) {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

// NumberEnd returns the end of the JSON number (RFC 8259) that starts at
// data[i], and false when no number starts there.
func NumberEnd(data []byte, i int) (int, bool) {
	if i >= len(data) {
		return i, false
	}
	return skipNumber(data, i)
}

// skipNumber validates the JSON number grammar:
// -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
func skipNumber(data []byte, i int) (int, bool) {
	if data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	default:
		if d := digitsEnd(data, i); d > i {
			i = d
		} else {
			return i, false
		}
	}
	if i < len(data) && data[i] == '.' {
		d := digitsEnd(data, i+1)
		if d == i+1 {
			return d, false
		}
		i = d
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		d := digitsEnd(data, i)
		if d == i {
			return i, false
		}
		i = d
	}
	return i, true
}

// digitsEnd is the end of the run of decimal digits at data[i].
func digitsEnd(data []byte, i int) int {
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		i++
	}
	return i
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// skipString validates the string starting at data[i] (a quote) and
// returns the index past its closing quote and whether it has escapes.
// Invalid UTF-8 is accepted, as encoding/json accepts it.
func skipString(data []byte, i int) (end int, escaped, ok bool) {
	i++
	for i < len(data) {
		c := data[i]
		switch {
		case c == '"':
			return i + 1, escaped, true
		case c < 0x20:
			return i, false, false
		case c == '\\':
			escaped = true
			if i+1 >= len(data) {
				return i, false, false
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(data) || !isHex(data[i+2]) || !isHex(data[i+3]) || !isHex(data[i+4]) || !isHex(data[i+5]) {
					return i, false, false
				}
				i += 6
			default:
				return i, false, false
			}
		default:
			i++
		}
	}
	return i, false, false
}

// forEachMember validates the object starting at data[i] ('{') and calls
// visit (if not nil) with each member's key and raw value, as Object
// describes.
func forEachMember(data []byte, i, depth int, visit func(key, val []byte)) (int, bool) {
	if depth >= MaxNesting {
		return i, false
	}
	i = SpaceEnd(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return i, false
		}
		kstart := i
		kend, escaped, ok := skipString(data, i)
		if !ok {
			return i, false
		}
		key := data[kstart+1 : kend-1]
		i = SpaceEnd(data, kend)
		if i >= len(data) || data[i] != ':' {
			return i, false
		}
		i = SpaceEnd(data, i+1)
		vstart := i
		if i, ok = Skip(data, i, depth+1); !ok {
			return i, false
		}
		if visit != nil {
			if escaped {
				s, _ := Unquote(data[kstart:kend])
				key = []byte(s)
			}
			visit(key, data[vstart:i])
		}
		i = SpaceEnd(data, i)
		if i >= len(data) {
			return i, false
		}
		switch data[i] {
		case ',':
			i = SpaceEnd(data, i+1)
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
}

// Object validates data as one JSON value, like Valid. If it is an object,
// visit (when not nil) sees each member's key and raw value as they are
// validated, the value as a sub-slice of data; isObject reports whether it
// was one. A member seen before the input turns out invalid has been
// visited, so a visitor should keep what it is given only when ok.
//
// Keys match exactly: the key is the string's content, and a key written
// with escapes is unescaped first (rare, and the only case that
// allocates), so "na\u006de" is "name" but "Name" never is. Duplicate keys
// are all visited, in order: the last one wins for a visitor that assigns,
// as with encoding/json.
func Object(data []byte, visit func(key, val []byte)) (isObject, ok bool) {
	i := SpaceEnd(data, 0)
	if i < len(data) && data[i] == '{' {
		end, ok := forEachMember(data, i, 0, visit)
		return true, ok && SpaceEnd(data, end) == len(data)
	}
	end, ok := Skip(data, i, 0)
	return false, ok && SpaceEnd(data, end) == len(data)
}

// Elements calls visit with each element of data when it is a JSON array,
// as sub-slices of data; any other value has none. data should be valid
// (Valid); the elements of an invalid array are visited up to the first
// invalid one.
func Elements(data []byte, visit func(el []byte)) {
	i := SpaceEnd(data, 0)
	if i >= len(data) || data[i] != '[' {
		return
	}
	for i = SpaceEnd(data, i+1); i < len(data) && data[i] != ']'; {
		end, ok := Skip(data, i, 0)
		if !ok {
			return
		}
		visit(data[i:end])
		if i = SpaceEnd(data, end); i < len(data) && data[i] == ',' {
			i = SpaceEnd(data, i+1)
		}
	}
}

// Unquote returns the string that raw, a JSON value already validated
// (by Valid, Object or Skip), denotes; ok is false when it is not a string.
// Method and tool names rarely contain escapes, so the common case costs
// one string conversion and no decoding.
func Unquote(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		for _, c := range inner {
			if c < 0x20 {
				return "", false
			}
		}
		return string(inner), true
	}
	// s is declared here, not as a named result: its address escapes to
	// json.Unmarshal, and a named result would be moved to the heap on
	// every call, the common case too.
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}
