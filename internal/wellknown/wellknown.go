// Package wellknown is the module's one answer to "is this message one of
// the well-known types protojson writes in a special JSON form, and which?".
// Two decisions hang on it: the JSON Schema internal/schema publishes for a
// message, and the JSON gateway/internal/transcode writes from its wire bytes. They
// must agree with each other and with protojson, so the classification lives
// here, once.
package wellknown

import (
	"strconv"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// Kind identifies a well-known type with a special JSON mapping, or None.
//
// google.protobuf.Empty is deliberately absent: protojson writes it like any
// message without fields ({}), and so does the gateway.
type Kind uint8

const (
	// None is every message protojson writes as an ordinary JSON object of
	// its fields.
	None Kind = iota
	// Any is google.protobuf.Any: an object with "@type" and the embedded
	// message's members (or "value" for a type that is not an object).
	Any
	// Timestamp is google.protobuf.Timestamp: an RFC 3339 string.
	Timestamp
	// Duration is google.protobuf.Duration: a decimal number of seconds
	// followed by "s".
	Duration
	// FieldMask is google.protobuf.FieldMask: its paths in lowerCamelCase,
	// joined by commas.
	FieldMask
	// Struct is google.protobuf.Struct: a JSON object of arbitrary values.
	Struct
	// Value is google.protobuf.Value: any JSON value.
	Value
	// ListValue is google.protobuf.ListValue: a JSON array of arbitrary
	// values.
	ListValue
	// Wrapper is one of the nine wrapper types (google.protobuf.BoolValue,
	// Int32Value, Int64Value, UInt32Value, UInt64Value, FloatValue,
	// DoubleValue, StringValue, BytesValue): the JSON form of its "value"
	// field.
	Wrapper
)

var names = [...]string{
	None:      "None",
	Any:       "Any",
	Timestamp: "Timestamp",
	Duration:  "Duration",
	FieldMask: "FieldMask",
	Struct:    "Struct",
	Value:     "Value",
	ListValue: "ListValue",
	Wrapper:   "Wrapper",
}

// String returns the kind's name, as its constant is spelt.
func (k Kind) String() string {
	if int(k) < len(names) {
		return names[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Of classifies md by its full name only, as protojson does: descriptors
// obtained through server reflection or built from descriptor protos are
// copies, not the generated ones, and must be classified the same. Only
// top-level messages of the google.protobuf package count; a message of
// another package, or one nested in a google.protobuf message, is None
// whatever its name.
func Of(md protoreflect.MessageDescriptor) Kind {
	name := md.FullName()
	if name.Parent() != "google.protobuf" {
		return None
	}
	switch name.Name() {
	case "Any":
		return Any
	case "Timestamp":
		return Timestamp
	case "Duration":
		return Duration
	case "FieldMask":
		return FieldMask
	case "Struct":
		return Struct
	case "Value":
		return Value
	case "ListValue":
		return ListValue
	case "BoolValue", "Int32Value", "Int64Value", "UInt32Value", "UInt64Value",
		"FloatValue", "DoubleValue", "StringValue", "BytesValue":
		return Wrapper
	}
	return None
}

// IsObject reports whether protojson writes a message of kind k as a JSON
// object: it does for ordinary messages, Struct and Any, and not for the
// other kinds, whose JSON is a string, a number, an array or any value.
func (k Kind) IsObject() bool {
	return k == None || k == Struct || k == Any
}
