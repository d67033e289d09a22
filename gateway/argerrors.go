package gateway

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/grpc-mcp-gateway/gateway/gateway/schema"
)

// maxReported caps how many violations one answer lists.
const maxReported = 20

// describeInputError explains why protojson rejected the arguments, naming
// each offending field by its JSON path (keepers[1].name) with what was
// expected and what was received. It runs only after a conversion failed,
// so its cost is off the hot path. When the walk finds nothing (a case
// protojson rejects that the walk does not model) protojson's own message
// is returned.
func describeInputError(t *tool, args []byte, cause error) string {
	var v any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "arguments are not valid JSON: " + err.Error()
	}
	w := &argWalker{useProto: t.useProto}
	md := t.input.Descriptor()
	if t.wrapInput {
		obj, _ := v.(map[string]any)
		for k := range obj {
			if k != schema.WrapperProperty {
				w.add(k, "unknown field (expected only %q)", schema.WrapperProperty)
			}
		}
		inner, ok := obj[schema.WrapperProperty]
		if !ok {
			w.add(schema.WrapperProperty, "required")
		} else {
			w.value(schema.WrapperProperty, md, inner)
		}
	} else {
		w.message("", md, v)
	}
	if len(w.problems) == 0 {
		return strings.TrimPrefix(cause.Error(), "proto: ")
	}
	if len(w.problems) > maxReported {
		extra := len(w.problems) - maxReported
		w.problems = append(w.problems[:maxReported], fmt.Sprintf("and %d more", extra))
	}
	return strings.Join(w.problems, "; ")
}

type argWalker struct {
	useProto bool
	problems []string
}

func (w *argWalker) add(path, format string, args ...any) {
	if path == "" {
		path = "arguments"
	}
	w.problems = append(w.problems, path+": "+fmt.Sprintf(format, args...))
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// message checks a JSON value against a message type, following the
// well-known types' special JSON forms.
func (w *argWalker) message(path string, md protoreflect.MessageDescriptor, v any) {
	if wktCheck(w, path, md, v) {
		return
	}
	obj, ok := v.(map[string]any)
	if !ok {
		w.add(path, "expected an object (%s), got %s", md.FullName(), describe(v))
		return
	}
	fields := md.Fields()
	seenOneof := map[protoreflect.FullName]string{}
	for _, key := range slices.Sorted(maps.Keys(obj)) {
		fd := fields.ByJSONName(key)
		if fd == nil {
			fd = fields.ByTextName(key)
		}
		if fd == nil {
			w.add(join(path, key), "unknown field (expected one of: %s)", fieldList(md, w.useProto))
			continue
		}
		val := obj[key]
		if val == nil {
			continue // null means unset
		}
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
			if other, dup := seenOneof[od.FullName()]; dup {
				w.add(join(path, key), "only one of the oneof %s may be set, but %s is set too", od.Name(), other)
			}
			seenOneof[od.FullName()] = key
		}
		w.field(join(path, key), fd, val)
	}
}

func (w *argWalker) field(path string, fd protoreflect.FieldDescriptor, v any) {
	switch {
	case fd.IsMap():
		obj, ok := v.(map[string]any)
		if !ok {
			w.add(path, "expected an object (map), got %s", describe(v))
			return
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			p := fmt.Sprintf("%s[%q]", path, k)
			if msg := checkMapKey(fd.MapKey(), k); msg != "" {
				w.add(p, "%s", msg)
			}
			w.value(p, fd.MapValue(), obj[k])
		}
	case fd.IsList():
		arr, ok := v.([]any)
		if !ok {
			w.add(path, "expected an array, got %s", describe(v))
			return
		}
		for i, e := range arr {
			w.value(fmt.Sprintf("%s[%d]", path, i), fd, e)
		}
	default:
		w.value(path, fd, v)
	}
}

// value checks one singular value of fd's kind (list elements and map
// values included).
func (w *argWalker) value(path string, d any, v any) {
	var kind protoreflect.Kind
	var fd protoreflect.FieldDescriptor
	switch d := d.(type) {
	case protoreflect.MessageDescriptor:
		w.message(path, d, v)
		return
	case protoreflect.FieldDescriptor:
		fd, kind = d, d.Kind()
	}
	if v == nil {
		if fd.Message() != nil && fd.Message().FullName() == "google.protobuf.Value" {
			return
		}
		w.add(path, "null is not allowed inside a list or map")
		return
	}
	switch kind {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		w.message(path, fd.Message(), v)
	case protoreflect.EnumKind:
		w.enum(path, fd.Enum(), v)
	case protoreflect.BoolKind:
		if _, ok := v.(bool); !ok {
			w.add(path, "expected a boolean, got %s", describe(v))
		}
	case protoreflect.StringKind:
		if _, ok := v.(string); !ok {
			w.add(path, "expected a string, got %s", describe(v))
		}
	case protoreflect.BytesKind:
		s, ok := v.(string)
		if !ok || !isBase64(s) {
			w.add(path, "expected base64-encoded bytes, got %s", describe(v))
		}
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		if msg := checkFloat(v, kind == protoreflect.FloatKind); msg != "" {
			w.add(path, "%s", msg)
		}
	default:
		if msg := checkInteger(kind, v); msg != "" {
			w.add(path, "%s", msg)
		}
	}
}

func (w *argWalker) enum(path string, ed protoreflect.EnumDescriptor, v any) {
	switch x := v.(type) {
	case string:
		if ed.Values().ByName(protoreflect.Name(x)) != nil {
			return
		}
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 32); err == nil {
			if !ed.IsClosed() || ed.Values().ByNumber(protoreflect.EnumNumber(n)) != nil {
				return
			}
		}
	}
	names := make([]string, 0, ed.Values().Len())
	for i := range ed.Values().Len() {
		names = append(names, string(ed.Values().Get(i).Name()))
	}
	w.add(path, "expected one of %s (enum %s), got %s", strings.Join(names, ", "), ed.FullName(), describe(v))
}

var (
	durationRE = regexp.MustCompile(`^-?[0-9]+(\.[0-9]{1,9})?s$`)
	// timestampRE is RFC 3339 as protojson accepts it: 'T' separator,
	// optional fraction, Z or an offset.
	timestampRE = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})$`)
)

// wktCheck handles the well-known types whose JSON is not an object of
// their fields; it reports whether md was one of them.
func wktCheck(w *argWalker, path string, md protoreflect.MessageDescriptor, v any) bool {
	switch md.FullName() {
	case "google.protobuf.Timestamp":
		if s, ok := v.(string); !ok || !timestampRE.MatchString(s) {
			w.add(path, `expected an RFC 3339 timestamp string such as "2026-01-02T15:04:05Z", got %s`, describe(v))
		}
	case "google.protobuf.Duration":
		if s, ok := v.(string); !ok || !durationRE.MatchString(s) {
			w.add(path, `expected a duration string in seconds such as "3.5s", got %s`, describe(v))
		}
	case "google.protobuf.FieldMask":
		if _, ok := v.(string); !ok {
			w.add(path, `expected a field mask string of comma-separated camelCase paths such as "name,diet", got %s`, describe(v))
		}
	case "google.protobuf.Struct":
		if _, ok := v.(map[string]any); !ok {
			w.add(path, "expected an object, got %s", describe(v))
		}
	case "google.protobuf.ListValue":
		if _, ok := v.([]any); !ok {
			w.add(path, "expected an array, got %s", describe(v))
		}
	case "google.protobuf.Value":
	case "google.protobuf.Any":
		obj, ok := v.(map[string]any)
		if !ok {
			w.add(path, `expected an object with "@type", got %s`, describe(v))
		} else if _, ok := obj["@type"].(string); !ok {
			w.add(join(path, "@type"), `required: the type URL, such as "type.googleapis.com/package.Message"`)
		}
	case "google.protobuf.Empty":
		if obj, ok := v.(map[string]any); !ok || len(obj) > 0 {
			w.add(path, "expected an empty object {}, got %s", describe(v))
		}
	case "google.protobuf.DoubleValue", "google.protobuf.FloatValue", "google.protobuf.Int64Value",
		"google.protobuf.UInt64Value", "google.protobuf.Int32Value", "google.protobuf.UInt32Value",
		"google.protobuf.BoolValue", "google.protobuf.StringValue", "google.protobuf.BytesValue":
		w.value(path, md.Fields().ByName("value"), v)
	default:
		return false
	}
	return true
}

func checkInteger(kind protoreflect.Kind, v any) string {
	var lo, hi float64
	var name string
	switch kind {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		lo, hi, name = math.MinInt32, math.MaxInt32, "int32"
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		lo, hi, name = 0, math.MaxUint32, "uint32"
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		name = "int64"
	default:
		name = "uint64"
	}
	var text string
	switch x := v.(type) {
	case json.Number:
		text = string(x)
	case string:
		text = x
	default:
		return fmt.Sprintf("expected an integer (%s), got %s", name, describe(v))
	}
	switch name {
	case "int64":
		if _, err := strconv.ParseInt(text, 10, 64); err == nil {
			return ""
		}
	case "uint64":
		if _, err := strconv.ParseUint(text, 10, 64); err == nil {
			return ""
		}
	default:
		if f, err := strconv.ParseFloat(text, 64); err == nil && f == math.Trunc(f) && f >= lo && f <= hi {
			return ""
		}
	}
	return fmt.Sprintf("expected an integer in the %s range (a number or a decimal string), got %s", name, describe(v))
}

func checkFloat(v any, is32 bool) string {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err == nil && (!is32 || math.Abs(f) <= math.MaxFloat32) {
			return ""
		}
		return fmt.Sprintf("number out of range, got %s", describe(v))
	case string:
		if x == "NaN" || x == "Infinity" || x == "-Infinity" {
			return ""
		}
		if _, err := strconv.ParseFloat(x, 64); err == nil {
			return ""
		}
	}
	return fmt.Sprintf(`expected a number (or "NaN", "Infinity", "-Infinity"), got %s`, describe(v))
}

func checkMapKey(fd protoreflect.FieldDescriptor, k string) string {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return ""
	case protoreflect.BoolKind:
		if k == "true" || k == "false" {
			return ""
		}
		return fmt.Sprintf(`map key must be "true" or "false", got %q`, k)
	default:
		if msg := checkInteger(fd.Kind(), k); msg != "" {
			return "map key: " + msg
		}
	}
	return ""
}

func isBase64(s string) bool {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if _, err := enc.DecodeString(s); err == nil {
			return true
		}
	}
	return false
}

// describe renders a received value for an error message, truncated so a
// large argument cannot flood the answer.
func describe(v any) string {
	var s string
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		s = strconv.Quote(x)
	case json.Number:
		return "number " + string(x)
	case bool:
		return strconv.FormatBool(x)
	case []any:
		return fmt.Sprintf("an array of %d elements", len(x))
	case map[string]any:
		return "an object"
	default:
		s = fmt.Sprint(x)
	}
	const limit = 64
	if len(s) > limit {
		s = s[:limit] + `..."`
	}
	return "string " + s
}

func fieldList(md protoreflect.MessageDescriptor, useProto bool) string {
	fs := md.Fields()
	names := make([]string, 0, fs.Len())
	for i := range fs.Len() {
		if useProto {
			names = append(names, string(fs.Get(i).Name()))
		} else {
			names = append(names, fs.Get(i).JSONName())
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
