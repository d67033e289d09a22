package schema

import (
	"bytes"
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// Property names of the objects that carry a gRPC stream through a tool. They
// are part of the gateway's public contract: models and clients read them in
// the schemas and in structuredContent.
const (
	// StreamRequestsProperty holds the request messages of a client-streaming
	// or bidirectional call, in the order they are sent.
	StreamRequestsProperty = "requests"
	// StreamMessagesProperty holds the messages a server-streaming or
	// bidirectional call received, in order.
	StreamMessagesProperty = "messages"
	// StreamTruncatedProperty lists what the gateway cut, as for any
	// result (TruncatedProperty): a stream stopped at the gateway's
	// message or byte limit is one entry, path "messages", with the
	// messages kept and the reason (total absent: the stream had more).
	StreamTruncatedProperty = TruncatedProperty
	// StreamErrorProperty is the gRPC status that ended the stream, present
	// only in an error result (isError: true).
	StreamErrorProperty = "error"
)

// StreamInput returns the inputSchema of a client-streaming or bidirectional
// method whose request message is md: an object whose one required property,
// "requests", is an array of what Input describes for md, sent in order. The
// message schema keeps its shape (including the {"value": ...} wrapper of a
// message that is not a JSON object); its $defs move to the root so every
// $ref still resolves. The gateway also accepts a single object for
// "requests" as a one-element stream; the schema states the array form only,
// which is what a model should produce.
func StreamInput(md protoreflect.MessageDescriptor, opts *Options) (json.RawMessage, error) {
	return streamWithin(md, opts, input, Bound{}, streamInput)
}

// StreamInputWithin is StreamInput within b.MaxBytes bytes: the message
// schema is bounded as InputWithin bounds it (see "Bounded schemas").
func StreamInputWithin(md protoreflect.MessageDescriptor, opts *Options, b Bound) (json.RawMessage, error) {
	return streamWithin(md, opts, input, b, streamInput)
}

// StreamOutputWithin is StreamOutput within b.MaxBytes bytes: the message
// schema is bounded as OutputWithin bounds it.
func StreamOutputWithin(md protoreflect.MessageDescriptor, opts *Options, b Bound) (json.RawMessage, error) {
	return streamWithin(md, opts, output, b, streamOutput)
}

// streamWithin wraps md's schema with wrap, bounding the message's schema
// by what is left of b after the wrapper.
func streamWithin(md protoreflect.MessageDescriptor, opts *Options, dir direction, b Bound,
	wrap func(protoreflect.MessageDescriptor, json.RawMessage) (json.RawMessage, error)) (json.RawMessage, error) {
	opts = withMemo(opts) // the whole build and the bounded ones read the same descriptors
	elem, err := build(md, opts, dir, nil)
	if err != nil {
		return nil, err
	}
	s, err := wrap(md, elem)
	if err != nil || b.MaxBytes <= 0 || len(s) <= b.MaxBytes {
		return s, err
	}
	b.MaxBytes -= len(s) - len(elem)
	b.WholeBytes = len(elem)
	if elem, err = buildWithin(md, opts, dir, b); err != nil {
		return nil, err
	}
	return wrap(md, elem)
}

func streamInput(md protoreflect.MessageDescriptor, elem json.RawMessage) (json.RawMessage, error) {
	items, defs, err := splitDefs(elem)
	if err != nil {
		return nil, fmt.Errorf("schema: stream input %s: %w", md.FullName(), err)
	}
	var b streamWriter
	b.raw(`{"type":"object","description":`)
	b.str(fmt.Sprintf("The %s messages of a client stream.", md.FullName()))
	b.raw(`,"properties":{`)
	b.str(StreamRequestsProperty)
	b.raw(`:{"type":"array","description":`)
	b.str(fmt.Sprintf("The %s messages to send, in order; the gateway closes its side of the stream after the last one. [] sends none.", md.FullName()))
	b.raw(`,"items":`)
	b.raw(string(items))
	b.raw(`}},"required":[`)
	b.str(StreamRequestsProperty)
	b.raw(`],"additionalProperties":false`)
	b.defs(defs)
	b.raw("}")
	return b.bytes(), nil
}

// StreamOutput returns the outputSchema of a server-streaming or
// bidirectional method whose response message is md: an object with
//
//   - "messages" (required): an array of what Output describes for md, in the
//     order received;
//   - "truncated": present when the gateway cut something, a stream
//     stopped at a limit or a result over the budget (TruncatedProperty);
//   - "error": present only in an error result (isError: true), the gRPC
//     status that ended the stream after the messages listed.
//
// Declaring "error" keeps clients that validate structuredContent against
// the outputSchema happy even for error results, which carry the messages
// received before the failure. As for StreamInput, md's $defs move to the
// root.
func StreamOutput(md protoreflect.MessageDescriptor, opts *Options) (json.RawMessage, error) {
	return streamWithin(md, opts, output, Bound{}, streamOutput)
}

func streamOutput(md protoreflect.MessageDescriptor, elem json.RawMessage) (json.RawMessage, error) {
	items, defs, err := splitDefs(elem)
	if err != nil {
		return nil, fmt.Errorf("schema: stream output %s: %w", md.FullName(), err)
	}
	var b streamWriter
	b.raw(`{"type":"object","description":`)
	b.str(fmt.Sprintf("The %s messages of a server stream, in the order received.", md.FullName()))
	b.raw(`,"properties":{`)
	b.str(StreamMessagesProperty)
	b.raw(`:{"type":"array","description":"Every message collected from the stream, in order.","items":`)
	b.raw(string(items))
	b.raw(`},`)
	b.str(StreamTruncatedProperty)
	b.raw(`:` + truncatedSchema + `,`)
	b.str(StreamErrorProperty)
	b.raw(`:{"type":"string","description":"Only in an error result: the gRPC status that ended the stream after the messages listed."}},"required":[`)
	b.str(StreamMessagesProperty)
	b.raw(`],"additionalProperties":false`)
	b.defs(defs)
	b.raw("}")
	return b.bytes(), nil
}

// splitDefs separates a schema document into the schema without its root
// $defs and the $defs object itself (nil when absent). The other members keep
// their bytes and order, so the result is as deterministic as the input.
func splitDefs(doc json.RawMessage) (rest, defs json.RawMessage, err error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, fmt.Errorf("schema root is not an object")
	}
	out := []byte{'{'}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		if key == "$defs" {
			defs = v
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		k, _ := json.Marshal(key)
		out = append(out, k...)
		out = append(out, ':')
		out = append(out, v...)
	}
	return append(out, '}'), defs, nil
}

// streamWriter assembles a schema document from fixed JSON and strings.
type streamWriter struct{ buf bytes.Buffer }

func (w *streamWriter) raw(s string) { w.buf.WriteString(s) }

// str writes s as a JSON string without HTML escaping, so message names and
// descriptions read as written.
func (w *streamWriter) str(s string) {
	enc := json.NewEncoder(&w.buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	w.buf.Truncate(w.buf.Len() - 1)
}

func (w *streamWriter) defs(defs json.RawMessage) {
	if defs != nil {
		w.raw(`,"$defs":`)
		w.raw(string(defs))
	}
}

func (w *streamWriter) bytes() json.RawMessage { return json.RawMessage(w.buf.Bytes()) }
