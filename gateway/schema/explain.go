package schema

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// explain is Decode's slow path, taken only when the fast path failed. It
// walks the arguments as generic JSON against the descriptor, which lets it
// report every problem rather than protojson's first, and builds a repaired
// copy: nulls dropped, JSON-encoded strings decoded where an object or array
// belongs, offending values removed. When the walk finds nothing wrong the
// repaired copy is what the caller meant, and it is converted; otherwise the
// repaired copy is still converted, so protovalidate can report the rules
// the remaining fields break in the same answer.
func (v *Validator) explain(args []byte, msg proto.Message) error {
	doc, err := decodeJSON(args)
	if err != nil {
		return &ValidationError{Violations: []Violation{{Rule: "json", Expected: "a JSON object (" + err.Error() + ")"}}, cause: err}
	}
	w := &walker{v: v}
	var fixed any
	if v.wrap {
		fixed = w.wrapper(doc)
	} else {
		fixed = w.message(v.md, doc)
	}
	found := w.out

	var raw []byte
	if fixed != nil {
		raw, _ = json.Marshal(fixed)
	}
	proto.Reset(msg)
	var convErr error
	if raw != nil {
		uo := v.unmarshal
		uo.AllowPartial = len(found) > 0 // missing required fields are already reported
		convErr = uo.Unmarshal(raw, msg)
	}
	if convErr != nil {
		if len(found) > 0 {
			return &ValidationError{Violations: found}
		}
		// Something protojson rejects that the walk does not model: its own
		// words are the best explanation there is.
		return &ValidationError{Violations: []Violation{{Rule: "conversion",
			Expected: strings.TrimPrefix(convErr.Error(), "proto: ")}}, cause: convErr}
	}
	reported := func(path string) bool {
		for _, f := range found {
			if f.Path == path || strings.HasPrefix(path, f.Path+".") || strings.HasPrefix(path, f.Path+"[") {
				return true
			}
		}
		return false
	}
	if len(found) == 0 {
		// The walk repaired the arguments (stringified JSON): the usual
		// checks decide.
		return v.check(msg, nil)
	}
	// The walk already checked what the plan would (required fields, closed
	// enums); protovalidate adds the rules on what remains.
	more, cause := v.rules(msg, reported)
	return &ValidationError{Violations: append(found, more...), cause: cause}
}

// walker explains a JSON document against a message type. Every method
// returns the repaired value, or nil to drop it.
type walker struct {
	v    *Validator
	path pathBuf
	out  []Violation
}

func (w *walker) add(rule, expected string, got any) {
	vi := Violation{Path: w.path.String(), Rule: rule, Expected: expected}
	if got != nil {
		vi.Received = describe(got)
	}
	w.out = append(w.out, vi)
}

func (w *walker) addMissing(name string) {
	mark := w.path.len()
	w.path.field(name)
	w.out = append(w.out, Violation{Path: w.path.String(), Rule: "required", Expected: "required"})
	w.path.truncate(mark)
}

func (w *walker) wrapper(doc any) any {
	obj, ok := doc.(map[string]any)
	if !ok {
		w.add("type", `an object {"value": ...}`, doc)
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if k != WrapperProperty {
			mark := w.path.len()
			w.path.field(k)
			w.add("unknown_field", `no such field (the only member is "value")`, nil)
			w.path.truncate(mark)
		}
	}
	inner, ok := obj[WrapperProperty]
	if !ok {
		w.addMissing(WrapperProperty)
		return nil
	}
	if inner == nil {
		if w.v.md.FullName() == "google.protobuf.Value" {
			return inner
		}
		return nil
	}
	w.path.field(WrapperProperty)
	fixed := w.message(w.v.md, inner)
	w.path.truncate(0)
	return fixed
}

// message explains v against md, following the well-known types' JSON forms.
func (w *walker) message(md protoreflect.MessageDescriptor, v any) any {
	if fixed, handled := w.wellKnown(md, v); handled {
		return fixed
	}
	v = w.destringify(v, true)
	obj, ok := v.(map[string]any)
	if !ok {
		w.add("type", "an object ("+string(md.FullName())+")", v)
		return nil
	}
	fields := md.Fields()
	fixed := make(map[string]any, len(obj))
	byNumber := map[protoreflect.FieldNumber]string{}
	oneofs := map[protoreflect.FullName]string{}
	for _, key := range slices.Sorted(maps.Keys(obj)) {
		mark := w.path.len()
		fd := fields.ByJSONName(key)
		if fd == nil {
			fd = fields.ByTextName(key)
		}
		if fd == nil {
			w.path.field(key)
			w.add("unknown_field", "no such field; expected one of: "+w.fieldList(md), nil)
			w.path.truncate(mark)
			continue
		}
		w.path.field(w.v.fieldName(fd))
		val := obj[key]
		if val == nil && !isNullable(fd) {
			w.path.truncate(mark)
			continue // null means unset
		}
		if other, dup := byNumber[fd.Number()]; dup {
			w.add("duplicate_field", "set once, but it is also set as "+strconv.Quote(other), nil)
			w.path.truncate(mark)
			continue
		}
		byNumber[fd.Number()] = key
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
			if other, dup := oneofs[od.FullName()]; dup {
				w.add("oneof", "at most one of the oneof "+string(od.Name())+" may be set, but "+
					strconv.Quote(other)+" and "+strconv.Quote(key)+" are both set", nil)
				w.path.truncate(mark)
				continue
			}
			oneofs[od.FullName()] = key
		}
		if f := w.field(fd, val); f != nil || val == nil {
			fixed[key] = f
		}
		w.path.truncate(mark)
	}
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Cardinality() != protoreflect.Required && !fieldBehavior(fd).has(annotations.FieldBehavior_REQUIRED) {
			continue
		}
		if _, set := byNumber[fd.Number()]; !set {
			w.addMissing(w.v.fieldName(fd))
		}
	}
	return fixed
}

// isNullable: the fields for which protojson gives null a meaning.
func isNullable(fd protoreflect.FieldDescriptor) bool {
	if fd.IsList() || fd.IsMap() {
		return false
	}
	if m := fd.Message(); m != nil {
		return m.FullName() == "google.protobuf.Value"
	}
	return fd.Enum() != nil && fd.Enum().FullName() == "google.protobuf.NullValue"
}

// destringify decodes a string holding a JSON object (or array, for
// wantObject false), which language models often send in place of the
// value itself. Anything else is returned unchanged.
func (w *walker) destringify(v any, wantObject bool) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	t := strings.TrimSpace(s)
	if len(t) < 2 || (wantObject && t[0] != '{') || (!wantObject && t[0] != '[') {
		return v
	}
	out, err := decodeJSON([]byte(t))
	if err != nil {
		return v
	}
	return out
}

// decodeJSON parses exactly one JSON value, keeping numbers exact.
func decodeJSON(b []byte) (any, error) {
	var out any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b[dec.InputOffset():])) > 0 {
		return nil, errors.New("trailing data after the JSON value")
	}
	return out, nil
}

func (w *walker) field(fd protoreflect.FieldDescriptor, v any) any {
	switch {
	case fd.IsMap():
		obj, ok := w.destringify(v, true).(map[string]any)
		if !ok {
			w.add("type", "an object (map)", v)
			return nil
		}
		fixed := make(map[string]any, len(obj))
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			mark := w.path.len()
			w.path.key(k)
			keyOK := true
			if msg := checkMapKey(fd.MapKey(), k); msg != "" {
				w.add("type", msg, nil)
				keyOK = false
			}
			if f := w.value(fd.MapValue(), obj[k]); f != nil && keyOK {
				fixed[k] = f
			}
			w.path.truncate(mark)
		}
		return fixed
	case fd.IsList():
		arr, ok := w.destringify(v, false).([]any)
		if !ok {
			w.add("type", "an array", v)
			return nil
		}
		fixed := make([]any, 0, len(arr))
		for i, e := range arr {
			mark := w.path.len()
			w.path.index(i)
			if f := w.value(fd, e); f != nil {
				fixed = append(fixed, f)
			}
			w.path.truncate(mark)
		}
		return fixed
	}
	return w.value(fd, v)
}

// value explains one singular value of fd's kind (list elements and map
// values included).
func (w *walker) value(fd protoreflect.FieldDescriptor, v any) any {
	if v == nil {
		if isNullable(fd) || fd.Message() != nil && fd.Message().FullName() == "google.protobuf.Value" {
			return v
		}
		w.add("type", "a value (null is not allowed inside a list or map)", nil)
		return nil
	}
	kind := fd.Kind()
	switch kind {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return w.message(fd.Message(), v)
	case protoreflect.EnumKind:
		return w.enum(fd.Enum(), v)
	case protoreflect.BoolKind:
		if _, ok := v.(bool); !ok {
			w.add("type", "a boolean", v)
			return nil
		}
	case protoreflect.StringKind:
		if _, ok := v.(string); !ok {
			w.add("type", "a string", v)
			return nil
		}
	case protoreflect.BytesKind:
		if s, ok := v.(string); !ok || !isBase64(s) {
			w.add("type", "base64-encoded bytes", v)
			return nil
		}
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		if msg := checkFloat(v, kind == protoreflect.FloatKind); msg != "" {
			w.add("type", msg, v)
			return nil
		}
	default:
		if msg := checkInteger(kind, v); msg != "" {
			w.add("type", msg, v)
			return nil
		}
	}
	return v
}

func (w *walker) enum(ed protoreflect.EnumDescriptor, v any) any {
	switch x := v.(type) {
	case string:
		if ed.Values().ByName(protoreflect.Name(x)) != nil {
			return v
		}
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 32); err == nil {
			if !ed.IsClosed() || ed.Values().ByNumber(protoreflect.EnumNumber(n)) != nil {
				return v
			}
		}
	}
	w.add("enum", enumExpected(ed), v)
	return nil
}

// wellKnown handles the well-known types whose JSON is not an object of
// their fields; handled is false for the others. Timestamp, Duration and
// FieldMask are checked by protojson itself, so the verdict is exact.
func (w *walker) wellKnown(md protoreflect.MessageDescriptor, v any) (fixed any, handled bool) {
	switch wellKnown(md) {
	case wktTimestamp:
		return w.exact(md, v, `an RFC 3339 timestamp string such as "2026-01-02T15:04:05Z"`), true
	case wktDuration:
		return w.exact(md, v, `a duration string in seconds such as "3.5s"`), true
	case wktFieldMask:
		return w.exact(md, v, `a field mask string of comma-separated camelCase paths such as "name,displayName"`), true
	case wktStruct:
		v = w.destringify(v, true)
		if _, ok := v.(map[string]any); !ok {
			w.add("type", "an object", v)
			return nil, true
		}
		return v, true
	case wktListValue:
		v = w.destringify(v, false)
		if _, ok := v.([]any); !ok {
			w.add("type", "an array", v)
			return nil, true
		}
		return v, true
	case wktValue:
		return v, true
	case wktWrapper:
		return w.value(md.Fields().ByName("value"), v), true
	case wktAny:
		return w.any(v), true
	}
	return nil, false
}

// exact asks protojson about one well-known value.
func (w *walker) exact(md protoreflect.MessageDescriptor, v any, expected string) any {
	b, err := json.Marshal(v)
	if err == nil {
		err = protojson.Unmarshal(b, dynamicpb.NewMessage(md))
	}
	if err != nil {
		w.add("type", expected, v)
		return nil
	}
	return v
}

func (w *walker) any(v any) any {
	v = w.destringify(v, true)
	obj, ok := v.(map[string]any)
	if !ok {
		w.add("type", `an object with "@type"`, v)
		return nil
	}
	url, ok := obj["@type"].(string)
	if !ok {
		mark := w.path.len()
		w.path.field("@type")
		w.add("required", `required: the type URL, such as "type.googleapis.com/package.Message"`, obj["@type"])
		w.path.truncate(mark)
		return nil
	}
	mt, err := w.v.resolver.FindMessageByURL(url)
	if err != nil {
		mark := w.path.len()
		w.path.field("@type")
		w.add("type", "the type URL of a message the backend defines", url)
		w.path.truncate(mark)
		return nil
	}
	md := mt.Descriptor()
	rest := make(map[string]any, len(obj))
	for k, x := range obj {
		if k != "@type" {
			rest[k] = x
		}
	}
	var fixed any
	if IsObject(md) {
		fixed = w.message(md, rest)
	} else {
		inner, ok := rest[WrapperProperty]
		if !ok || len(rest) != 1 {
			w.add("type", `an Any of a `+string(md.FullName())+` holds it under "value" and nothing else`, nil)
			return nil
		}
		mark := w.path.len()
		w.path.field(WrapperProperty)
		fixed = w.message(md, inner)
		w.path.truncate(mark)
		if fixed != nil {
			fixed = map[string]any{WrapperProperty: fixed}
		}
	}
	m, ok := fixed.(map[string]any)
	if !ok {
		return nil
	}
	m["@type"] = url
	return m
}

func (w *walker) fieldList(md protoreflect.MessageDescriptor) string {
	fs := md.Fields()
	names := make([]string, 0, fs.Len())
	for i := range fs.Len() {
		fd := fs.Get(i)
		if fieldBehavior(fd).has(annotations.FieldBehavior_OUTPUT_ONLY) {
			continue
		}
		names = append(names, w.v.fieldName(fd))
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
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
		return "an integer (" + name + ")"
	}
	switch name {
	case "int64":
		if _, err := strconv.ParseInt(text, 10, 64); err == nil {
			return ""
		}
		// protojson also takes an exact float form such as 1e3.
		if f, err := strconv.ParseFloat(text, 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<63 {
			if _, isNum := v.(json.Number); isNum {
				return ""
			}
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
	return "an integer in the " + name + " range (a number or a decimal string)"
}

func checkFloat(v any, is32 bool) string {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err == nil && (!is32 || math.Abs(f) <= maxFloat32JSON) {
			return ""
		}
		return "a number in range"
	case string:
		if x == "NaN" || x == "Infinity" || x == "-Infinity" {
			return ""
		}
		if _, err := strconv.ParseFloat(x, 64); err == nil {
			return ""
		}
	}
	return `a number (or "NaN", "Infinity", "-Infinity")`
}

func checkMapKey(fd protoreflect.FieldDescriptor, k string) string {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return ""
	case protoreflect.BoolKind:
		if k == "true" || k == "false" {
			return ""
		}
		return `a map key "true" or "false"`
	default:
		if msg := checkInteger(fd.Kind(), k); msg != "" {
			return "a map key that is " + msg
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

// describe renders a received JSON value, truncated so a large argument
// cannot flood the answer.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array of " + strconv.Itoa(len(x)) + " elements"
	case map[string]any:
		return "an object"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "a value"
	}
	return truncate(string(b))
}
