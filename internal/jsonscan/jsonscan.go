// Package jsonscan is the module's one JSON scanner, for code that walks
// raw JSON front to back instead of decoding it into a tree. It has two
// families of functions:
//
//   - validating ones ([Valid], [Skip], [Object], [Elements], [Unquote]),
//     for bytes from the outside: the MCP layer (gateway/mcp) checks and
//     picks apart every message with them, as strictly as encoding/json.Valid
//     but case-sensitively and without copying;
//   - trusting ones ([SpaceEnd], [StringEnd], [ScalarEnd], [ValueEnd]), for
//     JSON already known to be valid: the result cutter (gateway/results) and
//     the argument explainer (internal/schema). On input json.Valid would
//     refuse they return an index no greater than len(b) and never read past
//     it, but say nothing about validity.
//
// The package imports nothing but the standard library, so the protocol
// layer may use it without learning gRPC or protobuf.
package jsonscan

// SpaceEnd returns the index of the first byte at or after i that is not
// JSON white space.
func SpaceEnd(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// StringEnd returns the index just past the JSON string starting at b[i].
func StringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// ScalarEnd returns the index just past the number, true, false or null
// starting at b[i].
func ScalarEnd(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\n', '\r', '\t':
			return i
		}
		i++
	}
	return i
}

// ValueEnd returns the index just past the JSON value starting at b[i],
// without recursion, so nesting depth costs no stack.
func ValueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return StringEnd(b, i)
	case '{', '[':
	default:
		return ScalarEnd(b, i)
	}
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			i = StringEnd(b, i)
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
		i++
	}
	return i
}
