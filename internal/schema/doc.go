// Package schema turns protobuf message descriptors into the JSON Schema
// (draft 2020-12) documents the gateway publishes as a tool's inputSchema and
// outputSchema.
//
// The schemas describe protojson, not the proto wire format: an Input schema
// accepts what protojson.Unmarshal accepts for the message (a deliberately
// narrower set where protojson is lenient in ways a model should not rely on,
// see Input), and an Output schema accepts everything protojson.Marshal emits
// with default options. That is what makes the published schema honest: a model
// that follows it produces arguments the gateway can convert, and a client that
// validates structuredContent against the outputSchema never sees a spurious
// failure.
//
// The schemas are shaped for the LLM APIs that consume them, which accept a
// smaller language than JSON Schema: the root is always {"type":"object"}, no
// anyOf/oneOf/allOf is ever emitted (a oneof becomes optional properties whose
// descriptions name the alternatives), type arrays are used where a value may
// take two JSON types, and $defs/$ref appear only for messages that can reach
// themselves, so every other type is inlined and the schema stays finite for any
// descriptor set. Lint checks a schema against those constraints.
//
// Input schemas also carry what the descriptors say about valid requests:
// google.api.field_behavior (REQUIRED fields are required, OUTPUT_ONLY
// fields are left out, IMMUTABLE is noted) and protovalidate (buf.validate)
// rules, as keywords where JSON Schema has one and in the description where
// it has not. Validator enforces the same at the gateway, before a backend
// is called, and explains every violation by its JSON path. For the
// common argument types it can also write the request's wire form straight
// from the JSON (AppendWire), the same bytes protojson's message marshals
// to, declining whatever it cannot show is accepted as it stands.
//
// Encoding is deterministic: the same descriptors and options always give the
// same bytes, so tools/list pages built from them are stable.
package schema
