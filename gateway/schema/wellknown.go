package schema

import (
	"google.golang.org/protobuf/reflect/protoreflect"
)

// wkt identifies the well-known types protojson gives a special JSON form.
// google.protobuf.Empty is not among them: protojson writes it like any
// message without fields, and so does this package.
type wkt int

const (
	wktNone wkt = iota
	wktAny
	wktTimestamp
	wktDuration
	wktFieldMask
	wktStruct
	wktValue
	wktListValue
	wktWrapper
)

func wellKnown(md protoreflect.MessageDescriptor) wkt {
	if md.ParentFile() == nil || md.ParentFile().Package() != "google.protobuf" {
		return wktNone
	}
	switch md.Name() {
	case "Any":
		return wktAny
	case "Timestamp":
		return wktTimestamp
	case "Duration":
		return wktDuration
	case "FieldMask":
		return wktFieldMask
	case "Struct":
		return wktStruct
	case "Value":
		return wktValue
	case "ListValue":
		return wktListValue
	case "DoubleValue", "FloatValue", "Int64Value", "UInt64Value", "Int32Value",
		"UInt32Value", "BoolValue", "StringValue", "BytesValue":
		return wktWrapper
	}
	return wktNone
}

const (
	// durationPattern is what protojson writes for a Duration; its parser also
	// takes a leading "+" and a missing integer part, which are left out.
	durationPattern = `^-?(0|[1-9][0-9]*)(\.[0-9]{1,9})?s$`
	// fieldMaskInput: protojson rejects any "_" in an input path and needs
	// each dotted segment to snake_case into a proto identifier.
	fieldMaskPath  = `[A-Za-z][A-Za-z0-9]*(\.[A-Za-z][A-Za-z0-9]*)*`
	fieldMaskInput = `^(` + fieldMaskPath + `(,` + fieldMaskPath + `)*)?$`
	// fieldMaskOutput: protojson keeps an underscore the lowerCamel conversion
	// cannot remove (before a digit, a leading one), so output may contain "_".
	fieldMaskOutPath = `[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*`
	fieldMaskOutput  = `^(` + fieldMaskOutPath + `(,` + fieldMaskOutPath + `)*)?$`
	anyDescription   = `A google.protobuf.Any: "@type" is the type URL ("type.googleapis.com/" followed by the full message name); the other members are that message's fields in JSON, or "value" for a type that is not a JSON object.`
)

// anyJSON accepts every JSON value. It spells out the type array rather than
// using the empty schema because several LLM APIs require "type" everywhere.
func anyJSON() *node {
	return obj("type", []string{"null", "boolean", "number", "string", "array", "object"})
}

func (b *builder) wellKnown(k wkt, md protoreflect.MessageDescriptor) *node {
	switch k {
	case wktAny:
		// "@type" is required but cannot be listed under properties: LLM APIs
		// reject property names outside [a-zA-Z0-9_.-]. The embedded type's
		// fields are inlined, hence additionalProperties.
		return obj("type", "object", "description", anyDescription,
			"required", []string{"@type"}, "additionalProperties", true)
	case wktTimestamp:
		return obj("type", "string", "format", "date-time")
	case wktDuration:
		return obj("type", "string", "pattern", durationPattern)
	case wktFieldMask:
		p := fieldMaskInput
		if b.dir == output {
			p = fieldMaskOutput
		}
		return obj("type", "string", "pattern", p)
	case wktStruct:
		return obj("type", "object", "additionalProperties", anyJSON())
	case wktValue:
		return anyJSON()
	case wktListValue:
		return obj("type", "array", "items", anyJSON())
	case wktWrapper:
		return b.scalar(md.Fields().ByName("value").Kind())
	}
	panic("schema: unhandled well-known type")
}
