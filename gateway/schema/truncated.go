package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// TruncatedProperty is the member of structuredContent that lists what the
// gateway cut from a result: a result over the gateway's result budget, or
// a stream stopped at a limit. It is present only when something was cut.
// A response message that has a field of this name gets the gateway's list
// under the name with a leading underscore instead ([WithTruncated]).
const TruncatedProperty = "truncated"

// truncatedSchema describes the list; the records are what
// results.Record.AppendJSON writes: path, kept, total (absent when
// unknown), unit ("characters" for a string) and reason. It is kept short
// because it is part of every tool's output schema, and clients that show
// schemas to a model pay for each byte; the sentence beside a cut result
// spells the entries out.
const truncatedSchema = `{"type":"array","description":"Only when the gateway cut this result: what it cut (path, kept, total).","items":{"type":"object","required":["path","kept"]}}`

// WithTruncated returns the output schema s extended so that
// structuredContent may carry the gateway's list of cuts, and the member
// name to use: TruncatedProperty, or that name with underscores before it
// when the message has a property of that name. A root that admits any
// member (additionalProperties not false: Struct, Any) is returned as it
// is; merge is then false, since a member of that name would be the
// response's own data, and the cut picks a free name when it happens.
// Otherwise merge is true: a root member of that name can only be the
// gateway's.
//
// It reads only the root's members, front to back, without decoding the
// schema into a tree: discovery calls it for every distinct output schema,
// some of them hundreds of kilobytes. A root member given twice (this
// package never writes one twice) counts as the last one given, as when
// decoding.
func WithTruncated(s json.RawMessage) (out json.RawMessage, name string, merge bool, err error) {
	var root map[string]json.RawMessage // what the errors are worded after
	if !json.Valid(s) {
		return nil, "", false, rootError(s, &root)
	}
	c := cursor{in: s}
	switch c.peek() {
	case '{':
	case 'n': // null: decoded, a root without members, which admits any
		return s, TruncatedProperty, false, nil
	default:
		return nil, "", false, rootError(s, &root)
	}
	var closed bool
	var props []byte // the root's "properties", when it has them
	propsAt := 0     // where props start in s
	c.members(func(key []byte) {
		c.skipSpace()
		at := c.pos
		v := c.raw()
		switch {
		case keyIs(key, "additionalProperties"):
			closed = string(v) == "false"
		case keyIs(key, "properties"):
			props, propsAt = v, at
		}
	})
	if !closed {
		return s, TruncatedProperty, false, nil
	}
	if props != nil && props[0] != '{' {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(props, &m); err != nil {
			return nil, "", false, fmt.Errorf("schema: output schema properties: %w", err)
		}
		// null: there is no object to add the member to.
		return nil, "", false, fmt.Errorf("schema: output schema: cannot add %q", TruncatedProperty)
	}
	name, empty := freeTruncatedName(props)
	member := `"` + name + `":` + truncatedSchema
	// Splice the member into the root's properties (or add properties),
	// keeping every other byte in place so the schema stays deterministic.
	// The result is sized once: it is kept for the catalog's life.
	var b []byte
	if props != nil {
		end := propsAt + len(props) - 1 // the closing brace
		b = make([]byte, 0, len(s)+1+len(member))
		b = append(b, s[:end]...)
		if !empty {
			b = append(b, ',')
		}
		b = append(b, member...)
		b = append(b, s[end:]...)
	} else {
		if s[len(s)-1] != '}' { // white space after the root
			return nil, "", false, fmt.Errorf("schema: output schema: cannot add %q", name)
		}
		const open, close = `,"properties":{`, "}}"
		b = make([]byte, 0, len(s)-1+len(open)+len(member)+len(close))
		b = append(b, s[:len(s)-1]...)
		b = append(b, open...)
		b = append(b, member...)
		b = append(b, close...)
	}
	return b, name, true, nil
}

// freeTruncatedName is the first of TruncatedProperty, "_"+TruncatedProperty,
// ... that the raw properties object props does not have (nil: none), and
// whether props has no member at all.
func freeTruncatedName(props []byte) (name string, empty bool) {
	var taken []int // the underscores before TruncatedProperty in a member's name
	empty = true
	if props != nil {
		c := cursor{in: props}
		c.members(func(key []byte) {
			empty = false
			c.raw()
			if n, ok := underscores(key); ok {
				taken = append(taken, n)
			}
		})
	}
	n := 0
	for slices.Contains(taken, n) {
		n++
	}
	return strings.Repeat("_", n) + TruncatedProperty, empty
}

// RootRequired returns the members the root of the output schema s
// requires: what a result cut to its budget must keep to still match s.
// Like WithTruncated it reads the root's members without decoding the
// rest of s.
func RootRequired(s json.RawMessage) ([]string, error) {
	var root struct { // what the errors are worded after
		Required []string `json:"required"`
	}
	if !json.Valid(s) {
		return nil, rootError(s, &root)
	}
	c := cursor{in: s}
	switch c.peek() {
	case '{':
	case 'n':
		return nil, nil
	default:
		return nil, rootError(s, &root)
	}
	var req []byte
	c.members(func(key []byte) {
		v := c.raw()
		// encoding/json matches a struct field's name ignoring case.
		if strings.EqualFold(unquote(key), "required") {
			req = v
		}
	})
	if req == nil {
		return nil, nil
	}
	var required []string
	if err := json.Unmarshal(req, &required); err != nil {
		return nil, rootError(s, &root)
	}
	return required, nil
}

// rootError is the error for an output schema s that WithTruncated or
// RootRequired cannot read, worded as decoding s into root says it (the
// error path alone decodes the whole schema).
func rootError(s []byte, root any) error {
	err := json.Unmarshal(s, root)
	if err == nil {
		err = errors.New("unexpected root") // not reached: the callers saw why
	}
	return fmt.Errorf("schema: output schema: %w", err)
}

// keyIs reports whether the raw (quoted) member name key is name.
func keyIs(key []byte, name string) bool {
	inner := key[1 : len(key)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner) == name
	}
	return unquote(key) == name
}

// underscores reports whether the raw (quoted) member name key is
// TruncatedProperty after n underscores.
func underscores(key []byte) (n int, ok bool) {
	inner := key[1 : len(key)-1]
	if bytes.IndexByte(inner, '\\') >= 0 {
		inner = appendUnquoted(nil, key)
	}
	rest, ok := bytes.CutSuffix(inner, []byte(TruncatedProperty))
	if !ok || len(bytes.TrimLeft(rest, "_")) > 0 {
		return 0, false
	}
	return len(rest), true
}
