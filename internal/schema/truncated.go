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
	r, err := readRoot(s)
	if err != nil {
		return nil, "", false, err
	}
	return r.withTruncated()
}

// Truncation is what WithTruncated and RootRequired say of one output
// schema.
type Truncation struct {
	// Schema, Member and Merge are WithTruncated's out, name and merge.
	Schema json.RawMessage
	Member string
	Merge  bool
	// Required is RootRequired's answer.
	Required []string
}

// ReadTruncation is WithTruncated and RootRequired of s, reading s once:
// discovery needs both for every distinct output schema. Its error is the
// first of theirs.
func ReadTruncation(s json.RawMessage) (Truncation, error) {
	r, err := readRoot(s)
	if err != nil {
		return Truncation{}, err
	}
	var t Truncation
	if t.Schema, t.Member, t.Merge, err = r.withTruncated(); err != nil {
		return Truncation{}, err
	}
	if t.Required, err = r.rootRequired(); err != nil {
		return Truncation{}, err
	}
	return t, nil
}

// rootMembers are what WithTruncated and RootRequired read of an output
// schema's root: its members "additionalProperties", "properties" and
// "required".
type rootMembers struct {
	s      []byte // the schema, valid JSON
	null   bool   // the root is null, which decodes as an object without members
	closed bool   // additionalProperties is false
	// props are the raw "properties", nil without them; propsAt is where
	// they start in s.
	props   []byte
	propsAt int
	// required is the raw member named "required" in any case (decoding
	// into a struct field matches names so), nil without one.
	required []byte
}

// readRoot checks that s is JSON and reads its root's members. Its error
// is WithTruncated's, worded as decoding s into a map says it.
func readRoot(s []byte) (rootMembers, error) {
	var m map[string]json.RawMessage
	if !json.Valid(s) {
		return rootMembers{}, rootError(s, &m)
	}
	r := rootMembers{s: s}
	c := cursor{in: s}
	switch c.peek() {
	case '{':
	case 'n':
		r.null = true
		return r, nil
	default:
		return rootMembers{}, rootError(s, &m)
	}
	c.members(func(key []byte) {
		c.skipSpace()
		at := c.pos
		v := c.raw()
		switch {
		case keyIs(key, "additionalProperties"):
			r.closed = string(v) == "false"
		case keyIs(key, "properties"):
			r.props, r.propsAt = v, at
		case strings.EqualFold(unquote(key), "required"):
			r.required = v
		}
	})
	return r, nil
}

// withTruncated is WithTruncated of the schema r was read from.
func (r rootMembers) withTruncated() (out json.RawMessage, name string, merge bool, err error) {
	s := r.s
	if r.null || !r.closed {
		return s, TruncatedProperty, false, nil
	}
	if r.props != nil && r.props[0] != '{' {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(r.props, &m); err != nil {
			return nil, "", false, fmt.Errorf("schema: output schema properties: %w", err)
		}
		// null: there is no object to add the member to.
		return nil, "", false, fmt.Errorf("schema: output schema: cannot add %q", TruncatedProperty)
	}
	name, empty := freeTruncatedName(r.props)
	member := `"` + name + `":` + truncatedSchema
	// Splice the member into the root's properties (or add properties),
	// keeping every other byte in place so the schema stays deterministic.
	// The result is sized once: it is kept for the catalog's life.
	var b []byte
	if r.props != nil {
		end := r.propsAt + len(r.props) - 1 // the closing brace
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
	r, err := readRoot(s)
	if err != nil {
		return nil, requiredError(s)
	}
	return r.rootRequired()
}

// rootRequired is RootRequired of the schema r was read from.
func (r rootMembers) rootRequired() ([]string, error) {
	if r.required == nil {
		return nil, nil
	}
	var required []string
	if err := json.Unmarshal(r.required, &required); err != nil {
		return nil, requiredError(r.s)
	}
	return required, nil
}

// requiredError is RootRequired's error, worded as decoding s into a
// struct says it.
func requiredError(s []byte) error {
	var root struct {
		Required []string `json:"required"`
	}
	return rootError(s, &root)
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
