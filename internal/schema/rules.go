package schema

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	validatepb "buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// protovalidate rules become JSON Schema keywords only in input schemas and
// only where the keyword means exactly what the rule means for the JSON
// protojson accepts; everything else (CEL, byte lengths, prefixes, rules on
// Duration and Timestamp values) becomes a sentence in the description. The
// gateway runs protovalidate itself, so a rule the schema only describes is
// still enforced. Output schemas carry no rules: a backend is not bound by
// its own request rules when it answers, and structuredContent must always
// conform.

// constrain applies the rules of one value (a singular field, a list item or
// a map value) to its schema n, which may be shared and is never mutated. It
// returns the sentences for what keywords cannot say.
func (b *builder) constrain(n *node, fd protoreflect.FieldDescriptor, r *validatepb.FieldRules) (*node, []string) {
	if r == nil {
		return n, nil
	}
	var notes []string
	switch {
	case r.HasString():
		n, notes = stringRules(n, r.GetString())
	case r.HasEnum():
		n, notes = b.enumRules(n, fd.Enum(), r.GetEnum())
	case r.HasFloat(), r.HasDouble(), r.HasInt32(), r.HasInt64(), r.HasUint32(), r.HasUint64(),
		r.HasSint32(), r.HasSint64(), r.HasFixed32(), r.HasFixed64(), r.HasSfixed32(), r.HasSfixed64():
		n, notes = numericRules(n, typeRules(r))
	case r.HasBool():
		n, notes = boolRules(n, r.GetBool())
	case r.HasBytes(), r.HasDuration(), r.HasTimestamp(), r.HasFieldMask():
		notes = genericNotes(typeRules(r), nil)
	case r.HasAny():
		// The schema names the types of in it resolved (anyOf); the rule
		// is said in words when it names one the schema does not show.
		if in := r.GetAny().GetIn(); len(in) > 0 {
			desc, _ := n.get("description")
			shown, _ := desc.(string)
			for _, u := range in {
				if !strings.Contains(shown, strconv.Quote(u)) {
					notes = append(notes, fmt.Sprintf(`"@type" must be one of: %s.`, strings.Join(in, ", ")))
					break
				}
			}
		}
		if notIn := r.GetAny().GetNotIn(); len(notIn) > 0 {
			notes = append(notes, fmt.Sprintf(`"@type" must not be any of: %s.`, strings.Join(notIn, ", ")))
		}
	}
	return n, append(notes, celNotes(r.GetCel(), r.GetCelExpression())...)
}

// typeRules is the set member of r's type oneof (StringRules, Int32Rules...).
func typeRules(r *validatepb.FieldRules) protoreflect.Message {
	m := r.ProtoReflect()
	od := m.Descriptor().Oneofs().ByName("type")
	fd := m.WhichOneof(od)
	if fd == nil {
		return nil
	}
	return m.Get(fd).Message()
}

func stringRules(n *node, s *validatepb.StringRules) (*node, []string) {
	used := map[protoreflect.Name]bool{}
	set := func(rule protoreflect.Name, k string, v any) {
		used[rule] = true
		n = n.with(k, v)
	}
	if s.HasConst() {
		set("const", "const", s.GetConst())
	}
	if s.HasLen() {
		set("len", "minLength", int64(s.GetLen()))
		n = n.with("maxLength", int64(s.GetLen()))
	}
	if s.HasMinLen() {
		set("min_len", "minLength", int64(s.GetMinLen()))
	}
	if s.HasMaxLen() {
		set("max_len", "maxLength", int64(s.GetMaxLen()))
	}
	if s.HasPattern() {
		// protovalidate patterns are RE2; the common subset (classes,
		// anchors, quantifiers) reads the same in ECMA-262 regular expressions.
		set("pattern", "pattern", s.GetPattern())
	}
	if in := s.GetIn(); len(in) > 0 {
		set("in", "enum", in)
	}
	formats := map[protoreflect.Name]string{
		"email": "email", "hostname": "hostname", "ipv4": "ipv4", "ipv6": "ipv6",
		"uri": "uri", "uri_ref": "uri-reference", "uuid": "uuid",
	}
	patterns := map[protoreflect.Name]string{
		"tuuid": "^[0-9a-fA-F]{32}$",
		"ulid":  "^[0-7][0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{25}$",
	}
	m := s.ProtoReflect()
	if wk := m.WhichOneof(m.Descriptor().Oneofs().ByName("well_known")); wk != nil && m.Get(wk).Interface() == true {
		if f, ok := formats[wk.Name()]; ok {
			set(wk.Name(), "format", f)
		} else if p, ok := patterns[wk.Name()]; ok && !s.HasPattern() {
			set(wk.Name(), "pattern", p)
		}
	}
	return n, genericNotes(m, used)
}

// boolRules: const is the one value a bool may take, a keyword of its
// own; the note says it too, for clients that drop keywords they do not
// show.
func boolRules(n *node, r *validatepb.BoolRules) (*node, []string) {
	if r.HasConst() {
		n = n.with("const", r.GetConst())
	}
	return n, genericNotes(r.ProtoReflect(), nil)
}

// enumRules narrows the enum list: the input schema already lists only the
// known numbers, so defined_only needs nothing more.
func (b *builder) enumRules(n *node, ed protoreflect.EnumDescriptor, e *validatepb.EnumRules) (*node, []string) {
	used := map[protoreflect.Name]bool{"defined_only": true}
	allowed := func(protoreflect.EnumNumber) bool { return true }
	switch {
	case e.HasConst():
		used["const"] = true
		c := protoreflect.EnumNumber(e.GetConst())
		allowed = func(v protoreflect.EnumNumber) bool { return v == c }
	case len(e.GetIn()) > 0 || len(e.GetNotIn()) > 0:
		used["in"], used["not_in"] = true, true
		in, notIn := map[protoreflect.EnumNumber]bool{}, map[protoreflect.EnumNumber]bool{}
		for _, v := range e.GetIn() {
			in[protoreflect.EnumNumber(v)] = true
		}
		for _, v := range e.GetNotIn() {
			notIn[protoreflect.EnumNumber(v)] = true
		}
		allowed = func(v protoreflect.EnumNumber) bool { return (len(in) == 0 || in[v]) && !notIn[v] }
	}
	if b.dir == input && ed.FullName() != "google.protobuf.NullValue" {
		var names, numbers []any
		seen := map[protoreflect.EnumNumber]bool{}
		values := ed.Values()
		for i := range values.Len() {
			v := values.Get(i)
			if !allowed(v.Number()) {
				continue
			}
			names = append(names, string(v.Name()))
			if !seen[v.Number()] {
				seen[v.Number()] = true
				numbers = append(numbers, int64(v.Number()))
			}
		}
		n = n.with("enum", append(names, numbers...))
	}
	return n, genericNotes(e.ProtoReflect(), used)
}

// numericRules maps bounds and lists onto the numeric keywords. Bounds only
// constrain JSON numbers: a 64-bit integer sent as a string, or "NaN" for a
// float, is checked by protovalidate at the gateway instead.
func numericRules(n *node, m protoreflect.Message) (*node, []string) {
	if m == nil {
		return n, nil
	}
	used := map[protoreflect.Name]bool{}
	fields := m.Descriptor().Fields()
	get := func(name protoreflect.Name) (any, bool) {
		fd := fields.ByName(name)
		if fd == nil || !m.Has(fd) {
			return nil, false
		}
		return jsonNumber(m.Get(fd), fd.Kind()), true
	}
	is64 := false
	if fd := fields.ByName("const"); fd != nil {
		switch fd.Kind() {
		case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
			protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
			is64 = true
		}
	}
	// enumOf lists values the way protojson accepts them: 64-bit integers
	// as numbers or decimal strings.
	enumOf := func(vs []any) []any {
		if !is64 {
			return vs
		}
		out := append([]any(nil), vs...)
		for _, v := range vs {
			out = append(out, fmt.Sprint(v))
		}
		return out
	}
	if v, ok := get("const"); ok {
		used["const"] = true
		n = n.with("enum", enumOf([]any{v}))
	}
	if fd := fields.ByName("in"); fd != nil && m.Get(fd).List().Len() > 0 {
		used["in"] = true
		l := m.Get(fd).List()
		vs := make([]any, l.Len())
		for i := range vs {
			vs[i] = jsonNumber(l.Get(i), fd.Kind())
		}
		n = n.with("enum", enumOf(vs))
	}
	lo, loKey, hasLo := any(nil), "", false
	if v, ok := get("gt"); ok {
		lo, loKey, hasLo = v, "gt", true
	} else if v, ok := get("gte"); ok {
		lo, loKey, hasLo = v, "gte", true
	}
	hi, hiKey, hasHi := any(nil), "", false
	if v, ok := get("lt"); ok {
		hi, hiKey, hasHi = v, "lt", true
	} else if v, ok := get("lte"); ok {
		hi, hiKey, hasHi = v, "lte", true
	}
	// gt > lt means "outside the range", which needs a combinator.
	if !(hasLo && hasHi && toFloat(lo) > toFloat(hi)) {
		if hasLo {
			used[protoreflect.Name(loKey)] = true
			if loKey == "gt" {
				n = n.with("exclusiveMinimum", lo)
			} else if cur, ok := n.get("minimum"); !ok || toFloat(lo) > toFloat(cur) {
				n = n.with("minimum", lo)
			}
		}
		if hasHi {
			used[protoreflect.Name(hiKey)] = true
			if hiKey == "lt" {
				n = n.with("exclusiveMaximum", hi)
			} else if cur, ok := n.get("maximum"); !ok || toFloat(hi) < toFloat(cur) {
				n = n.with("maximum", hi)
			}
		}
	}
	return n, genericNotes(m, used)
}

func jsonNumber(v protoreflect.Value, k protoreflect.Kind) any {
	switch k {
	case protoreflect.FloatKind:
		f, _ := strconv.ParseFloat(strconv.FormatFloat(v.Float(), 'g', -1, 32), 64)
		return f
	case protoreflect.DoubleKind:
		return v.Float()
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return v.Uint()
	}
	return v.Int()
}

func toFloat(v any) float64 {
	switch v := v.(type) {
	case int64:
		return float64(v)
	case uint64:
		return float64(v)
	case float64:
		return v
	}
	return math.NaN()
}

// genericNotes describes the rules set in m that no keyword expressed, in
// protovalidate's own terms ("prefix: \"ab\""), which a model reads well
// enough and which never drifts from the rule.
func genericNotes(m protoreflect.Message, used map[protoreflect.Name]bool) []string {
	if m == nil {
		return nil
	}
	var parts []string
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if used[fd.Name()] || fd.Name() == "example" || fd.IsExtension() {
			return true
		}
		// A bool rule is a check turned on (email, unique, finite), named
		// alone; const is a value (the one a bool may take), false
		// included.
		if fd.Kind() == protoreflect.BoolKind && !fd.IsList() && fd.Name() != "const" {
			if v.Bool() {
				parts = append(parts, string(fd.Name()))
			}
			return true
		}
		parts = append(parts, string(fd.Name())+" "+ruleValue(fd, v))
		return true
	})
	if len(parts) == 0 {
		return nil
	}
	kind := strings.TrimSuffix(string(m.Descriptor().Name()), "Rules")
	return []string{fmt.Sprintf("Constraints (%s): %s.", strings.ToLower(kind), strings.Join(parts, "; "))}
}

func ruleValue(fd protoreflect.FieldDescriptor, v protoreflect.Value) string {
	if fd.IsList() {
		l := v.List()
		parts := make([]string, l.Len())
		for i := range parts {
			parts[i] = scalarText(fd, l.Get(i))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return scalarText(fd, v)
}

func scalarText(fd protoreflect.FieldDescriptor, v protoreflect.Value) string {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return strconv.Quote(v.String())
	case protoreflect.BytesKind:
		return strconv.Quote(string(v.Bytes()))
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name())
		}
	case protoreflect.MessageKind:
		// Duration and Timestamp bounds read best in their JSON form.
		if b, err := protojson.Marshal(v.Message().Interface()); err == nil {
			return string(b)
		}
	}
	return fmt.Sprint(v.Interface())
}

func celNotes(rules []*validatepb.Rule, exprs []string) []string {
	var notes []string
	for _, r := range rules {
		switch {
		case r.GetMessage() != "" && r.GetId() != "":
			notes = append(notes, fmt.Sprintf("Rule %s: %s (CEL: %s).", r.GetId(), r.GetMessage(), r.GetExpression()))
		case r.GetMessage() != "":
			notes = append(notes, fmt.Sprintf("Rule: %s (CEL: %s).", r.GetMessage(), r.GetExpression()))
		default:
			notes = append(notes, fmt.Sprintf("Rule %s: must satisfy the CEL expression %s.", r.GetId(), r.GetExpression()))
		}
	}
	for _, e := range exprs {
		notes = append(notes, fmt.Sprintf("Must satisfy the CEL expression %s.", e))
	}
	return notes
}

// collectionRules applies repeated and map rules to a list or map schema.
func collectionRules(n *node, r *validatepb.FieldRules) (*node, []string) {
	switch {
	case r.HasRepeated():
		rr := r.GetRepeated()
		used := map[protoreflect.Name]bool{"items": true}
		if rr.HasMinItems() {
			used["min_items"] = true
			n = n.with("minItems", int64(rr.GetMinItems()))
		}
		if rr.HasMaxItems() {
			used["max_items"] = true
			n = n.with("maxItems", int64(rr.GetMaxItems()))
		}
		if rr.GetUnique() {
			used["unique"] = true
			n = n.with("uniqueItems", true)
		}
		return n, genericNotes(rr.ProtoReflect(), used)
	case r.HasMap():
		mr := r.GetMap()
		used := map[protoreflect.Name]bool{"keys": true, "values": true}
		if mr.HasMinPairs() {
			used["min_pairs"] = true
			n = n.with("minProperties", int64(mr.GetMinPairs()))
		}
		if mr.HasMaxPairs() {
			used["max_pairs"] = true
			n = n.with("maxProperties", int64(mr.GetMaxPairs()))
		}
		return n, genericNotes(mr.ProtoReflect(), used)
	}
	return n, nil
}

// messageNotes describes a message's own rules: its CEL rules and the
// (buf.validatepb.message).oneof groups.
func (b *builder) messageNotes(md protoreflect.MessageDescriptor) []string {
	r := messageRules(md)
	if r == nil || proto.Size(r) == 0 {
		return nil
	}
	notes := celNotes(r.GetCel(), r.GetCelExpression())
	for _, o := range r.GetOneof() {
		names := make([]string, 0, len(o.GetFields()))
		for _, f := range o.GetFields() {
			if fd := md.Fields().ByName(protoreflect.Name(f)); fd != nil {
				names = append(names, b.name(fd))
			} else {
				names = append(names, f)
			}
		}
		if o.GetRequired() {
			notes = append(notes, fmt.Sprintf("Exactly one of %s must be set.", strings.Join(names, ", ")))
		} else {
			notes = append(notes, fmt.Sprintf("At most one of %s may be set.", strings.Join(names, ", ")))
		}
	}
	return notes
}
