package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
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
func WithTruncated(s json.RawMessage) (out json.RawMessage, name string, merge bool, err error) {
	var root map[string]json.RawMessage
	if err := json.Unmarshal(s, &root); err != nil {
		return nil, "", false, fmt.Errorf("schema: output schema: %w", err)
	}
	if string(bytes.TrimSpace(root["additionalProperties"])) != "false" {
		return s, TruncatedProperty, false, nil
	}
	var props map[string]json.RawMessage
	if p, ok := root["properties"]; ok {
		if err := json.Unmarshal(p, &props); err != nil {
			return nil, "", false, fmt.Errorf("schema: output schema properties: %w", err)
		}
	}
	name = TruncatedProperty
	for props[name] != nil {
		name = "_" + name
	}
	member, _ := json.Marshal(name)
	member = append(append(member, ':'), truncatedSchema...)
	// Splice the member into the root's properties (or add properties),
	// keeping every other byte in place so the schema stays deterministic.
	var b []byte
	if end := propertiesEnd(s); end > 0 {
		b = append(b, s[:end]...)
		if len(props) > 0 {
			b = append(b, ',')
		}
		b = append(b, member...)
		b = append(b, s[end:]...)
	} else {
		b = append(b, s[:len(s)-1]...)
		b = append(b, `,"properties":{`...)
		b = append(b, member...)
		b = append(b, "}}"...)
	}
	if !json.Valid(b) {
		return nil, "", false, fmt.Errorf("schema: output schema: cannot add %q", name)
	}
	return b, name, true, nil
}

// propertiesEnd is the offset of the closing brace of the root's
// "properties" object, or 0 when it has none.
func propertiesEnd(s []byte) int {
	dec := json.NewDecoder(bytes.NewReader(s))
	if _, err := dec.Token(); err != nil {
		return 0
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return 0
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return 0
		}
		if key == "properties" {
			return int(dec.InputOffset()) - 1
		}
	}
	return 0
}

// RootRequired returns the members the root of the output schema s
// requires: what a result cut to its budget must keep to still match s.
func RootRequired(s json.RawMessage) ([]string, error) {
	var root struct {
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(s, &root); err != nil {
		return nil, fmt.Errorf("schema: output schema: %w", err)
	}
	return root.Required, nil
}
