package schema

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/grpc-mcp-gateway/gateway/internal/wellknown"
)

// explain is Decode's slow path, taken only when the fast path failed. It
// walks the arguments once, as raw JSON against the descriptor (see
// rawjson.go), which lets it report every problem rather than protojson's
// first, and writes a repaired copy as it goes: nulls dropped, JSON-encoded
// strings decoded where an object or array belongs, offending values
// removed. When the walk finds nothing wrong the repaired copy is what the
// caller meant, and it is converted; otherwise the repaired copy is still
// converted, so protovalidate can report the rules the remaining fields
// break in the same answer. Only the first MaxExplained violations are
// explained (a path and a description each); the rest are counted. When
// the arguments convert, ws (if not nil) receives the warnings about them.
func (v *Validator) explain(args []byte, msg proto.Message, ws *Warnings, in Injector) error {
	if err := checkJSON(args); err != nil {
		return &ValidationError{Violations: []Violation{{Rule: "json", Expected: "a JSON object (" + err.Error() + ")"}}, cause: err}
	}
	w := &walker{v: v, cursor: cursor{in: args}, fixed: make([]byte, 0, len(args))}
	var kept bool
	if v.wrap {
		kept = w.wrapper()
	} else {
		kept = w.message(v.md)
	}
	if in != nil {
		// A required argument the injector supplies is not missing.
		w.out.out = slices.DeleteFunc(w.out.out, func(vi Violation) bool { return vi.Rule == "required" && in.Supplies(vi.Path) })
	}
	found := w.out.out

	proto.Reset(msg)
	if w.out.full() {
		// Nothing more would be explained: converting what remains only
		// to count the rules it breaks would cost a message per value.
		return w.out.err(nil)
	}
	var convErr error
	if kept {
		uo := v.unmarshal
		uo.AllowPartial = w.out.count() > 0 // missing required fields are already reported
		convErr = uo.Unmarshal(w.fixed, msg)
	}
	if convErr != nil {
		if w.out.count() > 0 {
			return w.out.err(nil)
		}
		// Something protojson rejects that the walk does not model: its own
		// words are the best explanation there is.
		return &ValidationError{Violations: []Violation{{Rule: "conversion",
			Expected: strings.TrimPrefix(convErr.Error(), "proto: ")}}, cause: convErr}
	}
	if kept {
		for _, vi := range injected(in, msg.ProtoReflect()) {
			w.out.add(vi)
		}
	}
	if w.out.count() == 0 {
		// The walk repaired the arguments (stringified JSON): the usual
		// checks decide, the bytes values' included. The walk has
		// checked those already, so the scan of the repaired copy only
		// collects the warnings; it would still refuse what slipped by.
		fixed := w.fixed
		if v.wrap {
			fixed, _ = unwrapFast(fixed)
		}
		found, bad := v.scanBytes(fixed)
		if bad != nil {
			return &ValidationError{Violations: []Violation{*bad}}
		}
		if err := v.check(msg, nil); err != nil {
			return err
		}
		if ws != nil {
			*ws = found
		}
		return nil
	}
	// The walk already checked what the plan would (required fields, closed
	// enums); protovalidate adds the rules on what remains. found holds at
	// most MaxExplained paths, so this stays linear.
	reported := func(path string) bool {
		for _, f := range found {
			if f.Path == path || strings.HasPrefix(path, f.Path+".") || strings.HasPrefix(path, f.Path+"[") {
				return true
			}
		}
		return false
	}
	cause := v.rules(msg, reported, &w.out)
	return w.out.err(cause)
}

// walker explains a JSON document against a message type. It consumes the
// document through its cursor, appends the repaired form of what it keeps
// to fixed, and reports whether it kept the value (the caller truncates
// fixed when not).
type walker struct {
	cursor
	v     *Validator
	path  pathBuf
	out   violationSet
	fixed []byte
	// scratch is reused for decoding bytes values.
	scratch []byte
	// set and oneofs are stacks of what each object being walked has set.
	set, oneofs []setField
	keys        map[string]string // see keyText

	// Texts computed once per type per call, so that each further
	// violation costs its path, never a list the size of the schema.
	unknown  map[protoreflect.FullName]string
	enums    map[protoreflect.FullName]string
	required map[protoreflect.FullName][]protoreflect.FieldDescriptor
}

// add reports a violation at the current path; got is the raw value
// received, or nil.
func (w *walker) add(rule, expected string, got []byte) {
	if w.out.full() {
		w.out.omitted++
		return
	}
	vi := Violation{Path: w.path.String(), Rule: rule, Expected: expected}
	if got != nil {
		vi.Received = describe(got)
	}
	w.out.add(vi)
}

// addAt is add at the member name of the current path.
func (w *walker) addAt(name, rule, expected string, got []byte) {
	mark := w.path.len()
	w.path.field(name)
	w.add(rule, expected, got)
	w.path.truncate(mark)
}

// skipBad consumes a value of the wrong kind and reports it.
func (w *walker) skipBad(rule, expected string) bool {
	w.add(rule, expected, w.raw())
	return false
}

// keep copies the next value unchanged into the repaired output.
func (w *walker) keep() bool {
	w.fixed = append(w.fixed, w.raw()...)
	return true
}

func (w *walker) wrapper() bool {
	if w.peek() != '{' {
		return w.skipBad("type", `an object {"value": ...}`)
	}
	kept, seen := false, false
	w.members(func(rawKey []byte) {
		if k := unquote(rawKey); k != WrapperProperty {
			w.raw()
			w.addAt(k, "unknown_field", `no such field (the only member is "value")`, nil)
			return
		}
		if seen {
			w.raw()
			w.addAt(WrapperProperty, "duplicate_field", "set once", nil)
			return
		}
		seen = true
		if w.peek() == 'n' {
			w.raw()
			if w.v.md.FullName() == "google.protobuf.Value" {
				w.fixed = append(w.fixed, "null"...)
				kept = true
			}
			return
		}
		w.path.field(WrapperProperty)
		mark := len(w.fixed)
		if kept = w.message(w.v.md); !kept {
			w.fixed = w.fixed[:mark]
		}
		w.path.truncate(0)
	})
	if !seen {
		w.addAt(WrapperProperty, "required", "required", nil)
	}
	return kept
}

// message explains the next value against md, following the well-known
// types' JSON forms.
func (w *walker) message(md protoreflect.MessageDescriptor) bool {
	if kept, handled := w.wellKnown(md); handled {
		return kept
	}
	return w.destringified('{', func() bool { return w.object(md, nil) }, "type", "an object ("+string(md.FullName())+")")
}

// enter readies the next value to be walked as a document that starts
// with open: the value itself, or the document a JSON string holds, which
// language models often send in place of the value. When the value is
// neither, it is consumed and returned as bad. leave(outer) returns to
// the enclosing document.
func (w *walker) enter(open byte) (outer cursor, bad []byte, ok bool) {
	switch w.peek() {
	case open:
		return cursor{}, nil, true
	case '"':
		raw := w.raw()
		doc, ok := stringified(raw, open)
		if !ok {
			return cursor{}, raw, false
		}
		outer = w.cursor
		w.cursor = cursor{in: doc}
		return outer, nil, true
	}
	return cursor{}, w.raw(), false
}

func (w *walker) leave(outer cursor) {
	if outer.in != nil {
		w.cursor = outer
	}
}

// destringified walks the next value with walk between enter and leave;
// a bad value is reported as rule/expected.
func (w *walker) destringified(open byte, walk func() bool, rule, expected string) bool {
	outer, bad, ok := w.enter(open)
	if !ok {
		w.add(rule, expected, bad)
		return false
	}
	kept := walk()
	w.leave(outer)
	return kept
}

// object explains the object at the cursor as a message of type md. A
// non-nil typeURL (the raw "@type" of an Any) is written first and its
// member skipped. An object is always kept: what is wrong inside it is
// dropped member by member.
func (w *walker) object(md protoreflect.MessageDescriptor, typeURL []byte) bool {
	fields := md.Fields()
	w.fixed = append(w.fixed, '{')
	wrote := false
	if typeURL != nil {
		w.fixed = append(append(w.fixed, `"@type":`...), typeURL...)
		wrote = true
	}
	// The fields and oneofs set so far in this object, on stacks shared by
	// the whole walk; duplicates are refused, so there are never more
	// than md has fields.
	setMark, oneofMark := len(w.set), len(w.oneofs)
	defer func() { w.set, w.oneofs = w.set[:setMark], w.oneofs[:oneofMark] }()
	for w.open(); ; {
		rawKey, ok := w.nextMember()
		if !ok {
			break
		}
		key := w.keyText(rawKey)
		if typeURL != nil && key == "@type" {
			w.raw()
			continue
		}
		fd := fields.ByJSONName(key)
		if fd == nil {
			fd = fields.ByTextName(key)
		}
		if fd == nil {
			w.raw()
			if w.out.full() {
				w.out.omitted++
				continue
			}
			w.addAt(key, "unknown_field", w.unknownText(md), nil)
			continue
		}
		mark := w.path.len()
		w.path.field(w.v.fieldName(fd))
		w.member(fd, key, rawKey, setMark, oneofMark, &wrote)
		w.path.truncate(mark)
	}
	w.fixed = append(w.fixed, '}')
	for _, fd := range w.requiredOf(md) {
		if !slices.ContainsFunc(w.set[setMark:], func(s setField) bool { return s.num == fd.Number() }) {
			w.addAt(w.v.fieldName(fd), "required", "required", nil)
		}
	}
	return true
}

// setField is a field set in the object being walked, under the key the
// client used; for a oneof, name is the oneof's.
type setField struct {
	num  protoreflect.FieldNumber
	name protoreflect.FullName
	key  string
}

// member explains the value of field fd, found under key, and writes it
// to the repaired object unless it is dropped.
func (w *walker) member(fd protoreflect.FieldDescriptor, key string, rawKey []byte, setMark, oneofMark int, wrote *bool) {
	if w.peek() == 'n' && !isNullable(fd) {
		w.raw()
		return // null means unset
	}
	for _, s := range w.set[setMark:] {
		if s.num == fd.Number() {
			w.raw()
			w.add("duplicate_field", "set once, but it is also set as "+strconv.Quote(s.key), nil)
			return
		}
	}
	w.set = append(w.set, setField{num: fd.Number(), key: key})
	if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
		for _, s := range w.oneofs[oneofMark:] {
			if s.name == od.FullName() {
				w.raw()
				w.add("oneof", "at most one of the oneof "+string(od.Name())+" may be set, but "+
					strconv.Quote(s.key)+" and "+strconv.Quote(key)+" are both set", nil)
				return
			}
		}
		w.oneofs = append(w.oneofs, setField{name: od.FullName(), key: key})
	}
	start := len(w.fixed)
	if *wrote {
		w.fixed = append(w.fixed, ',')
	}
	w.fixed = append(append(w.fixed, rawKey...), ':')
	if w.field(fd) {
		*wrote = true
	} else {
		w.fixed = w.fixed[:start]
	}
}

// keyText is the text of a member's raw key. Keys repeat (every element
// of a list of objects has the same ones), so the first few hundred
// distinct ones are kept and the rest cost a string each.
func (w *walker) keyText(rawKey []byte) string {
	inner := rawKey[1 : len(rawKey)-1]
	if bytes.IndexByte(inner, '\\') >= 0 {
		return unquote(rawKey)
	}
	if s, ok := w.keys[string(inner)]; ok {
		return s
	}
	s := string(inner)
	if len(w.keys) < 256 {
		if w.keys == nil {
			w.keys = map[string]string{}
		}
		w.keys[s] = s
	}
	return s
}

// requiredOf lists md's required fields (proto2 required, or
// google.api.field_behavior REQUIRED), once per type per call.
func (w *walker) requiredOf(md protoreflect.MessageDescriptor) []protoreflect.FieldDescriptor {
	if r, ok := w.required[md.FullName()]; ok {
		return r
	}
	var r []protoreflect.FieldDescriptor
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Cardinality() == protoreflect.Required || fieldBehavior(fd).has(annotations.FieldBehavior_REQUIRED) {
			r = append(r, fd)
		}
	}
	if w.required == nil {
		w.required = map[protoreflect.FullName][]protoreflect.FieldDescriptor{}
	}
	w.required[md.FullName()] = r
	return r
}

// unknownText is the Expected of an unknown field of md, once per type.
func (w *walker) unknownText(md protoreflect.MessageDescriptor) string {
	if s, ok := w.unknown[md.FullName()]; ok {
		return s
	}
	if w.unknown == nil {
		w.unknown = map[protoreflect.FullName]string{}
	}
	s := "no such field; expected one of: " + w.fieldList(md)
	w.unknown[md.FullName()] = s
	return s
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

func (w *walker) field(fd protoreflect.FieldDescriptor) bool {
	switch {
	case fd.IsMap():
		return w.destringified('{', func() bool { w.mapMembers(fd); return true }, "type", "an object (map)")
	case fd.IsList():
		return w.destringified('[', func() bool { w.listElements(fd); return true }, "type", "an array")
	}
	return w.value(fd)
}

func (w *walker) mapMembers(fd protoreflect.FieldDescriptor) {
	w.fixed = append(w.fixed, '{')
	wrote := false
	for w.open(); ; {
		rawKey, ok := w.nextMember()
		if !ok {
			break
		}
		k := w.keyText(rawKey)
		mark := w.path.len()
		w.path.key(k)
		keyOK := true
		if msg := checkMapKey(fd.MapKey(), k); msg != "" {
			w.add("type", msg, nil)
			keyOK = false
		}
		start := len(w.fixed)
		if wrote {
			w.fixed = append(w.fixed, ',')
		}
		w.fixed = append(append(w.fixed, rawKey...), ':')
		if w.value(fd.MapValue()) && keyOK {
			wrote = true
		} else {
			w.fixed = w.fixed[:start]
		}
		w.path.truncate(mark)
	}
	w.fixed = append(w.fixed, '}')
}

func (w *walker) listElements(fd protoreflect.FieldDescriptor) {
	w.fixed = append(w.fixed, '[')
	wrote := false
	w.open()
	for i := 0; w.nextElement(); i++ {
		mark := w.path.len()
		w.path.index(i)
		start := len(w.fixed)
		if wrote {
			w.fixed = append(w.fixed, ',')
		}
		if w.value(fd) {
			wrote = true
		} else {
			w.fixed = w.fixed[:start]
		}
		w.path.truncate(mark)
	}
	w.fixed = append(w.fixed, ']')
}

// value explains one singular value of fd's kind (list elements and map
// values included).
func (w *walker) value(fd protoreflect.FieldDescriptor) bool {
	c := w.peek()
	if c == 'n' {
		if isNullable(fd) || fd.Message() != nil && fd.Message().FullName() == "google.protobuf.Value" {
			return w.keep()
		}
		w.raw()
		w.add("type", "a value (null is not allowed inside a list or map)", nil)
		return false
	}
	kind := fd.Kind()
	switch kind {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return w.message(fd.Message())
	case protoreflect.EnumKind:
		return w.enum(fd.Enum())
	case protoreflect.BoolKind:
		if c != 't' && c != 'f' {
			return w.skipBad("type", "a boolean")
		}
	case protoreflect.StringKind:
		if c != '"' {
			return w.skipBad("type", "a string")
		}
	case protoreflect.BytesKind:
		raw := w.raw()
		if c != '"' {
			w.add("type", "base64-encoded bytes", raw)
			return false
		}
		if text := w.bytesText(raw); classify(text) != canonical {
			w.add("type", bytesExpected(text), raw)
			return false
		}
		w.fixed = append(w.fixed, raw...)
		return true
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		raw := w.raw()
		if msg := checkFloat(raw, kind == protoreflect.FloatKind); msg != "" {
			w.add("type", msg, raw)
			return false
		}
		w.fixed = append(w.fixed, raw...)
		return true
	default:
		raw := w.raw()
		if msg := checkInteger(kind, raw); msg != "" {
			w.add("type", msg, raw)
			return false
		}
		w.fixed = append(w.fixed, raw...)
		return true
	}
	return w.keep()
}

func (w *walker) enum(ed protoreflect.EnumDescriptor) bool {
	raw := w.raw()
	switch c := raw[0]; {
	case c == '"':
		if ed.Values().ByName(protoreflect.Name(unquote(raw))) != nil {
			w.fixed = append(w.fixed, raw...)
			return true
		}
	case c == '-' || c >= '0' && c <= '9':
		if n, err := strconv.ParseInt(string(raw), 10, 32); err == nil {
			if !ed.IsClosed() || ed.Values().ByNumber(protoreflect.EnumNumber(n)) != nil {
				w.fixed = append(w.fixed, raw...)
				return true
			}
		}
	}
	if w.out.full() {
		w.out.omitted++
		return false
	}
	w.add("enum", cachedEnumExpected(&w.enums, ed), raw)
	return false
}

// wellKnown handles the well-known types whose JSON is not an object of
// their fields; handled is false for the others. Timestamp, Duration and
// FieldMask are checked by protojson itself, so the verdict is exact.
func (w *walker) wellKnown(md protoreflect.MessageDescriptor) (kept, handled bool) {
	switch wellknown.Of(md) {
	case wellknown.Timestamp:
		return w.exact(md, `an RFC 3339 timestamp string such as "2026-01-02T15:04:05Z"`), true
	case wellknown.Duration:
		return w.exact(md, `a duration string in seconds such as "3.5s"`), true
	case wellknown.FieldMask:
		return w.exact(md, `a field mask string of comma-separated camelCase paths such as "name,displayName"`), true
	case wellknown.Struct:
		return w.destringified('{', w.keep, "type", "an object"), true
	case wellknown.ListValue:
		return w.destringified('[', w.keep, "type", "an array"), true
	case wellknown.Value:
		return w.keep(), true
	case wellknown.Wrapper:
		return w.value(md.Fields().ByName("value")), true
	case wellknown.Any:
		return w.destringified('{', w.anyObject, "type", `an object with "@type"`), true
	}
	return false, false
}

// exact asks protojson about one well-known value.
func (w *walker) exact(md protoreflect.MessageDescriptor, expected string) bool {
	raw := w.raw()
	if err := protojson.Unmarshal(raw, dynamicpb.NewMessage(md)); err != nil {
		w.add("type", expected, raw)
		return false
	}
	w.fixed = append(w.fixed, raw...)
	return true
}

// anyObject explains the object at the cursor as a google.protobuf.Any:
// "@type" names a message the resolver knows, and the rest is that
// message's members (or, for a type with a JSON form of its own, its
// "value").
func (w *walker) anyObject() bool {
	// Find "@type" and what else there is, without consuming the object.
	var url []byte
	others, hasValue := 0, false
	probe := w.cursor
	probe.members(func(rawKey []byte) {
		switch unquote(rawKey) {
		case "@type":
			url = probe.raw()
		case WrapperProperty:
			hasValue = true
			others++
			probe.raw()
		default:
			others++
			probe.raw()
		}
	})
	if url == nil || url[0] != '"' {
		w.raw()
		w.addAt("@type", "required", `required: the type URL, such as "type.googleapis.com/package.Message"`, url)
		return false
	}
	mt, err := w.v.resolver.FindMessageByURL(unquote(url))
	if err != nil {
		w.raw()
		w.addAt("@type", "type", "the type URL of a message the backend defines", url)
		return false
	}
	md := mt.Descriptor()
	if IsObject(md) && wellknown.Of(md) == wellknown.None {
		return w.object(md, url)
	}
	if !hasValue || others != 1 {
		w.skipBad("type", `an Any of a `+string(md.FullName())+` holds it under "value" and nothing else`)
		return false
	}
	start := len(w.fixed)
	w.fixed = append(append(append(w.fixed, `{"@type":`...), url...), `,"value":`...)
	kept := false
	w.members(func(rawKey []byte) {
		if unquote(rawKey) != WrapperProperty {
			w.raw()
			return
		}
		mark := w.path.len()
		w.path.field(WrapperProperty)
		kept = w.message(md)
		w.path.truncate(mark)
	})
	if !kept {
		w.fixed = w.fixed[:start]
		return false
	}
	w.fixed = append(w.fixed, '}')
	return true
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

// rawScalar is the text of a raw JSON number or string, and which it was.
func rawScalar(raw []byte) (text string, isNumber, isString bool) {
	switch c := raw[0]; {
	case c == '"':
		return unquote(raw), false, true
	case c == '-' || c >= '0' && c <= '9':
		return string(raw), true, false
	}
	return "", false, false
}

func checkInteger(kind protoreflect.Kind, raw []byte) string {
	text, isNumber, isString := rawScalar(raw)
	return checkIntegerText(kind, text, isNumber, isString)
}

func checkIntegerText(kind protoreflect.Kind, text string, isNumber, isString bool) string {
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
	if !isNumber && !isString {
		return "an integer (" + name + ")"
	}
	// Only what can be a number reaches strconv, whose errors allocate:
	// a flood of wrong values then costs no garbage.
	if !numeric(text) {
		return "an integer in the " + name + " range (a number or a decimal string)"
	}
	fractional := strings.ContainsAny(text, ".eE")
	switch name {
	case "int64":
		if !fractional {
			if _, err := strconv.ParseInt(text, 10, 64); err == nil {
				return ""
			}
		}
		// protojson also takes an exact float form such as 1e3.
		if f, err := strconv.ParseFloat(text, 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<63 {
			if isNumber {
				return ""
			}
		}
	case "uint64":
		if fractional {
			break
		}
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

func checkFloat(raw []byte, is32 bool) string {
	x, isNumber, isString := rawScalar(raw)
	switch {
	case isNumber:
		f, err := strconv.ParseFloat(x, 64)
		if err == nil && (!is32 || math.Abs(f) <= maxFloat32JSON) {
			return ""
		}
		return "a number in range"
	case isString:
		if x == "NaN" || x == "Infinity" || x == "-Infinity" {
			return ""
		}
		if !numeric(x) {
			break
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
		if msg := checkIntegerText(fd.Kind(), k, false, true); msg != "" {
			return "a map key that is " + msg
		}
	}
	return ""
}

// bytesText is the text of a raw JSON string holding bytes, unquoted
// into one reused buffer when it has escapes.
func (w *walker) bytesText(raw []byte) []byte {
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1]
	}
	w.scratch = appendUnquoted(w.scratch[:0], raw)
	return w.scratch
}

// describe renders a received raw JSON value, truncated so a large
// argument cannot flood the answer.
func describe(raw []byte) string {
	switch raw[0] {
	case '[':
		return "an array of " + strconv.Itoa(countElements(raw)) + " elements"
	case '{':
		return "an object"
	case '"':
		// Re-encoded, so the text reads the same whatever escapes the
		// client chose.
		b, err := json.Marshal(unquote(cutString(raw, 4*receivedLimit)))
		if err != nil {
			return "a value"
		}
		return truncate(string(b))
	}
	return truncate(string(raw))
}

// cutString shortens a raw JSON string to about limit bytes, never inside
// an escape, so that only what will be shown is decoded.
func cutString(raw []byte, limit int) []byte {
	if len(raw) <= limit {
		return raw
	}
	j := 1
	for j < limit {
		step := 1
		if raw[j] == '\\' {
			step = 2
			if raw[j+1] == 'u' {
				step = 6
			}
		}
		j += step
	}
	return append(raw[:j:j], '"')
}

// numeric reports whether s holds only what a JSON or decimal number can
// (so that strconv, whose errors allocate, sees only likely numbers).
func numeric(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := range len(s) {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
		default:
			return false
		}
	}
	return true
}
