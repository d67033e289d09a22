package mcp

// A small validating JSON scanner for the envelope and params of a message.
//
// Why not encoding/json: decoding the envelope into a struct of
// json.RawMessage fields cost about 20 allocations per request (one copy per
// raw field, the scanner's parse-state stack, the decode state) and most of
// the CPU of a no-op tools/call. It also matched object keys
// case-insensitively, so {"Method":...} or {"Name":...} were accepted as
// "method" and "name"; MCP, like JSON-RPC, is case-sensitive. This scanner
// validates the whole input exactly as strictly as encoding/json.Valid, and
// hands out the raw bytes of the members it is asked for as sub-slices of
// the input, without copying.

// maxNesting bounds the depth of nested arrays and objects, like
// encoding/json's limit, so a hostile message cannot exhaust the stack.
const maxNesting = 10000

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(data []byte, i int) int {
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	return i
}

// validJSON reports whether data is exactly one JSON value, optionally
// surrounded by whitespace.
func validJSON(data []byte) bool {
	i := skipSpace(data, 0)
	end, ok := skipValue(data, i, 0)
	return ok && skipSpace(data, end) == len(data)
}

// skipValue validates the JSON value starting at data[i] and returns the
// index just past it.
func skipValue(data []byte, i, depth int) (int, bool) {
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
		if depth >= maxNesting {
			return i, false
		}
		i = skipSpace(data, i+1)
		if i < len(data) && data[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = skipValue(data, i, depth+1); !ok {
				return i, false
			}
			i = skipSpace(data, i)
			if i >= len(data) {
				return i, false
			}
			switch data[i] {
			case ',':
				i = skipSpace(data, i+1)
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

// skipNumber validates the JSON number grammar:
// -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
func skipNumber(data []byte, i int) (int, bool) {
	if data[i] == '-' {
		i++
	}
	digits := func() bool {
		start := i
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
		return i > start
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case !digits():
		return i, false
	}
	if i < len(data) && data[i] == '.' {
		i++
		if !digits() {
			return i, false
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if !digits() {
			return i, false
		}
	}
	return i, true
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
// visit (if not nil) with each member's key and raw value. The key is the
// string's content; a key written with escapes is unescaped first (rare,
// and the only case that allocates), so "na\u006de" is "name" but "Name"
// never is. Duplicate keys are all visited, in order: the last one wins for
// a visitor that assigns, as with encoding/json.
func forEachMember(data []byte, i, depth int, visit func(key, val []byte)) (int, bool) {
	if depth >= maxNesting {
		return i, false
	}
	i = skipSpace(data, i+1)
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
		i = skipSpace(data, kend)
		if i >= len(data) || data[i] != ':' {
			return i, false
		}
		i = skipSpace(data, i+1)
		vstart := i
		if i, ok = skipValue(data, i, depth+1); !ok {
			return i, false
		}
		if visit != nil {
			if escaped {
				s, _ := unquoteSimple(data[kstart:kend])
				key = []byte(s)
			}
			visit(key, data[vstart:i])
		}
		i = skipSpace(data, i)
		if i >= len(data) {
			return i, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
}

// scanObject validates data as one JSON value. If it is an object, visit
// sees its members; isObject reports whether it was one.
func scanObject(data []byte, visit func(key, val []byte)) (isObject, ok bool) {
	i := skipSpace(data, 0)
	if i < len(data) && data[i] == '{' {
		end, ok := forEachMember(data, i, 0, visit)
		return true, ok && skipSpace(data, end) == len(data)
	}
	end, ok := skipValue(data, i, 0)
	return false, ok && skipSpace(data, end) == len(data)
}

// forEachElement calls visit with each element of data when it is a JSON
// array (already validated), as sub-slices of data; any other value has
// none.
func forEachElement(data []byte, visit func(el []byte)) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return
	}
	for i = skipSpace(data, i+1); i < len(data) && data[i] != ']'; {
		end, ok := skipValue(data, i, 0)
		if !ok {
			return
		}
		visit(data[i:end])
		if i = skipSpace(data, end); i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
}
