package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/grpc-mcp-gateway/gateway/internal/jsonscan"
)

// A cursor over JSON that json.Valid has accepted, for explain. Explaining
// walks the arguments once, front to back, without decoding them into a
// tree: a 4 MiB argument of a million small values costs what it takes to
// read it, not a million boxed values (each with its own allocations) held
// at once. Every value is consumed exactly once, so the walk is linear in
// the input whatever its nesting.

// checkJSON returns nil when b is exactly one JSON value, else the error
// encoding/json gives, for the violation that says so.
func checkJSON(b []byte) error {
	if json.Valid(b) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	return errors.New("trailing data after the JSON value")
}

// cursor reads one validated JSON document.
type cursor struct {
	in  []byte
	pos int
}

func (c *cursor) skipSpace() {
	c.pos = jsonscan.SpaceEnd(c.in, c.pos)
}

// peek returns the first byte of the next value ('{', '[', '"', 't', 'f',
// 'n', or a number's first byte).
func (c *cursor) peek() byte {
	c.skipSpace()
	if c.pos >= len(c.in) {
		return 0
	}
	return c.in[c.pos]
}

// raw consumes the next value and returns its bytes.
func (c *cursor) raw() []byte {
	c.skipSpace()
	start := c.pos
	c.pos = jsonscan.ValueEnd(c.in, c.pos)
	return c.in[start:c.pos]
}

// open consumes the '{' or '[' that starts the value at the cursor.
func (c *cursor) open() {
	c.skipSpace()
	c.pos++
}

// nextMember, after open, returns the raw (quoted) key of the next member
// of the object and leaves the cursor at its value, which the caller must
// consume; ok is false once the closing '}' is consumed.
func (c *cursor) nextMember() (rawKey []byte, ok bool) {
	c.skipSpace()
	if c.in[c.pos] == '}' {
		c.pos++
		return nil, false
	}
	if c.in[c.pos] == ',' {
		c.pos++
		c.skipSpace()
	}
	start := c.pos
	c.pos = jsonscan.StringEnd(c.in, c.pos)
	rawKey = c.in[start:c.pos]
	c.skipSpace()
	c.pos++ // ':'
	return rawKey, true
}

// nextElement, after open, reports whether another element of the array
// follows (the caller must consume it); false once the closing ']' is
// consumed.
func (c *cursor) nextElement() bool {
	c.skipSpace()
	if c.in[c.pos] == ']' {
		c.pos++
		return false
	}
	if c.in[c.pos] == ',' {
		c.pos++
	}
	return true
}

// members calls fn with the raw key of each member of the object at the
// cursor; fn must consume the member's value.
func (c *cursor) members(fn func(rawKey []byte)) {
	c.open()
	for {
		k, ok := c.nextMember()
		if !ok {
			return
		}
		fn(k)
	}
}

// unquote returns the text of a raw JSON string.
func unquote(raw []byte) string {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner)
	}
	return string(appendUnquoted(nil, raw))
}

// appendUnquoted appends the text of a raw JSON string (validated) to b.
func appendUnquoted(b, raw []byte) []byte {
	inner := raw[1 : len(raw)-1]
	for i := 0; i < len(inner); i++ {
		c := inner[i]
		if c != '\\' {
			b = append(b, c)
			continue
		}
		i++
		if c, ok := unescaped(inner[i]); ok {
			b = append(b, c)
			continue
		}
		// \u, the one escape left in validated JSON.
		r := hex4(inner[i+1 : i+5])
		i += 4
		if utf16.IsSurrogate(r) && i+6 < len(inner) && inner[i+1] == '\\' && inner[i+2] == 'u' {
			if pair := utf16.DecodeRune(r, hex4(inner[i+3:i+7])); pair != utf8.RuneError {
				r = pair
				i += 6
			}
		}
		if utf16.IsSurrogate(r) {
			r = utf8.RuneError
		}
		b = utf8.AppendRune(b, r)
	}
	return b
}

// unescaped is the byte a JSON escape of one character (\n, \", ...)
// stands for; ok is false for \u and for what is no escape.
func unescaped(e byte) (c byte, ok bool) {
	switch e {
	case '"', '\\', '/':
		return e, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}

// hex4 is the code unit of a \u escape's four digits, h, already validated.
func hex4(h []byte) rune {
	r, _ := wireHex4(h, 0)
	return r
}

// countElements counts the elements of a raw array.
func countElements(raw []byte) int {
	c := cursor{in: raw}
	n := 0
	for c.open(); c.nextElement(); n++ {
		c.raw()
	}
	return n
}

// stringified returns the JSON document a raw JSON string holds when it is
// an object (open '{') or an array (open '['), which language models often
// send in place of the value itself.
func stringified(raw []byte, open byte) ([]byte, bool) {
	// Look before unquoting: most strings are not documents.
	i := 1
	for i < len(raw)-1 && (raw[i] == ' ' || raw[i] == '\\' && i+1 < len(raw) && (raw[i+1] == 'n' || raw[i+1] == 't' || raw[i+1] == 'r')) {
		if raw[i] == '\\' {
			i++
		}
		i++
	}
	if i >= len(raw)-1 || raw[i] != open {
		return nil, false
	}
	t := bytes.TrimSpace(appendUnquoted(make([]byte, 0, len(raw)), raw))
	if len(t) < 2 || t[0] != open || !json.Valid(t) {
		return nil, false
	}
	return t, true
}
