package schema

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"

	validatepb "buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/grpc-mcp-gateway/gateway/internal/wellknown"
)

// builder holds the state of one Input or Output call. Message bodies are
// built once per call and shared by every field that uses them, so the build
// cost is linear in the number of distinct messages even when inlining makes
// the encoded schema larger.
type builder struct {
	dir       direction
	opts      Options
	recursive map[protoreflect.FullName]bool
	// shared are the messages written more than once otherwise: like
	// recursive ones they go into $defs and are referenced.
	shared    map[protoreflect.FullName]bool
	inlined   map[protoreflect.FullName]*node // bodies of non-recursive messages
	defs      map[protoreflect.FullName]*node // bodies of recursive messages; nil while being built
	ruleCache map[protoreflect.FieldDescriptor]*validatepb.FieldRules
	// lim bounds a schema's size (bound.go); nil writes it whole.
	lim *limits
}

const defsPrefix = "#/$defs/"

// behavior is fd's google.api.field_behavior, read once per Memo.
func (b *builder) behavior(fd protoreflect.FieldDescriptor) behavior {
	return b.opts.Memo.behavior(fd)
}

func (b *builder) root(md protoreflect.MessageDescriptor) (*node, error) {
	if !IsObject(md) {
		inner, err := b.message(md)
		if err != nil {
			return nil, err
		}
		return obj(
			"type", "object",
			"properties", obj(WrapperProperty, inner),
			"required", []string{WrapperProperty},
			"additionalProperties", false,
		), nil
	}
	if wellknown.Of(md) != wellknown.None {
		return b.message(md)
	}
	if b.recursive[md.FullName()] {
		// The root must be an object schema, not a $ref, so a recursive root
		// is written twice: inline here and in $defs for the references.
		if err := b.ensureDef(md); err != nil {
			return nil, err
		}
		return b.defs[md.FullName()], nil
	}
	return b.body(md)
}

// message returns the schema a field of type md refers to: a well-known
// type's JSON form, a $ref for a recursive or shared message, or the
// inlined body.
func (b *builder) message(md protoreflect.MessageDescriptor) (*node, error) {
	if md.IsPlaceholder() {
		return nil, fmt.Errorf("message %s is an unresolved placeholder", md.FullName())
	}
	if k := wellknown.Of(md); k != wellknown.None {
		return b.wellKnown(k, md), nil
	}
	if !b.expanded(md) {
		return b.lim.escape(md), nil
	}
	if b.recursive[md.FullName()] || b.shared[md.FullName()] {
		if err := b.ensureDef(md); err != nil {
			return nil, err
		}
		return obj("$ref", defsPrefix+string(md.FullName())), nil
	}
	if n, ok := b.inlined[md.FullName()]; ok {
		return n, nil
	}
	n, err := b.body(md)
	if err != nil {
		return nil, err
	}
	b.inlined[md.FullName()] = n
	return n, nil
}

func (b *builder) ensureDef(md protoreflect.MessageDescriptor) error {
	if _, ok := b.defs[md.FullName()]; ok {
		return nil
	}
	b.defs[md.FullName()] = nil // a reference back to md while building it only needs the name
	n, err := b.body(md)
	if err != nil {
		return err
	}
	b.defs[md.FullName()] = n
	return nil
}

// body is the object schema of an ordinary message.
func (b *builder) body(md protoreflect.MessageDescriptor) (*node, error) {
	n := obj("type", "object")
	facts := b.opts.Memo.message(md)
	desc := []string{b.opts.Memo.messageComment(md, b.opts.Comments)}
	if b.dir == input {
		desc = append(desc, b.messageNotes(md)...)
	}
	desc = append(desc, b.oneofSummaries(md)...)
	if d := joinDesc(desc); d != "" {
		n.set("description", d)
	}
	props := &node{}
	var required []string
	fields := md.Fields()
	listed, left := 0, 0
	for i := range fields.Len() {
		fd := fields.Get(i)
		fb := facts.fields[i].behavior
		if b.dir == input && fb.has(annotations.FieldBehavior_OUTPUT_ONLY) {
			// The server sets it; AIP-203 has servers ignore it in requests,
			// so a model is not told about it.
			continue
		}
		if b.lim != nil && b.lim.fields >= 0 && listed >= b.lim.fields && !b.requiredField(fd, fb) {
			left++
			continue
		}
		listed++
		fs, err := b.field(fd, fb)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", fd.Name(), err)
		}
		name := b.name(fd)
		props.set(name, fs)
		if b.requiredField(fd, fb) {
			required = append(required, name)
		}
	}
	if left > 0 {
		// The fields left out are accepted as they are: no
		// additionalProperties, and the gateway's validator checks them.
		d, _ := n.get("description")
		s, _ := d.(string)
		n.set("description", joinDesc([]string{s, b.lim.more(md, left)}))
	}
	if len(props.keys) > 0 {
		n.set("properties", props)
	}
	if len(required) > 0 {
		n.set("required", required)
	}
	if b.dir == output && md.ExtensionRanges().Len() > 0 {
		// protojson writes a set extension as "[full.name]" when its resolver
		// knows it; the output schema must accept those members. Inputs do
		// not advertise extensions: a model has no way to know them.
		n.set("patternProperties", obj(`^\[[A-Za-z_][A-Za-z0-9_.]*\]$`, &node{}))
	}
	if left == 0 {
		n.set("additionalProperties", false)
	}
	return n, nil
}

// requiredField reports whether the schema lists fd in "required".
func (b *builder) requiredField(fd protoreflect.FieldDescriptor, fb behavior) bool {
	return fd.Cardinality() == protoreflect.Required ||
		(b.dir == input && (fb.has(annotations.FieldBehavior_REQUIRED) || b.rules(fd).GetRequired()))
}

func joinDesc(parts []string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "\n\n")
}

func (b *builder) name(fd protoreflect.FieldDescriptor) string {
	if b.opts.UseProtoNames {
		return fd.TextName()
	}
	return fd.JSONName()
}

// rules returns fd's protovalidate rules for input schemas (nil for output
// schemas, which carry none), reading each field's options once per build.
func (b *builder) rules(fd protoreflect.FieldDescriptor) *validatepb.FieldRules {
	if b.dir != input {
		return nil
	}
	if r, ok := b.ruleCache[fd]; ok {
		return r
	}
	r := fieldRules(fd)
	if b.ruleCache == nil {
		b.ruleCache = map[protoreflect.FieldDescriptor]*validatepb.FieldRules{}
	}
	b.ruleCache[fd] = r
	return r
}

// field is the schema of one field, decorated with its description, its
// field_behavior and protovalidate notes, the alternatives of its oneof and
// its proto2 default.
func (b *builder) field(fd protoreflect.FieldDescriptor, fb behavior) (*node, error) {
	r := b.rules(fd)
	var n *node
	var notes []string
	switch {
	case fd.IsMap():
		v, vNotes, err := b.value(fd.MapValue(), r.GetMap().GetValues())
		if err != nil {
			return nil, err
		}
		n = obj("type", "object")
		keyRules := r.GetMap().GetKeys()
		var kNotes []string
		if fd.MapKey().Kind() == protoreflect.StringKind && keyRules != nil {
			var kn *node
			kn, kNotes = b.constrain(obj("type", "string"), fd.MapKey(), keyRules)
			n.set("propertyNames", kn)
		} else {
			if p := mapKeyPattern(fd.MapKey().Kind()); p != "" {
				n.set("propertyNames", obj("pattern", p))
			}
			if keyRules != nil {
				_, kNotes = b.constrain(obj(), fd.MapKey(), keyRules)
			}
		}
		n.set("additionalProperties", v)
		n, notes = collectionRules(n, r)
		notes = append(notes, prefixed("Each key: ", kNotes)...)
		notes = append(notes, prefixed("Each value: ", vNotes)...)
	case fd.IsList():
		items, iNotes, err := b.value(fd, r.GetRepeated().GetItems())
		if err != nil {
			return nil, err
		}
		n = obj("type", "array", "items", items)
		n, notes = collectionRules(n, r)
		notes = append(notes, prefixed("Each item: ", iNotes)...)
	default:
		s, sNotes, err := b.value(fd, r)
		if err != nil {
			return nil, err
		}
		n, notes = s, sNotes
		if d, ok := defaultValue(fd); ok {
			n = n.with("default", d)
		}
	}
	if r != nil && (fd.IsList() || fd.IsMap()) {
		notes = append(notes, celNotes(r.GetCel(), r.GetCelExpression())...)
	}
	// The field's comment comes first (it is the most specific), then the
	// type's own (message or enum) description it would otherwise replace,
	// then behaviour, rules and the oneof note. Repeated and map fields keep
	// the type's description on their items.
	var desc []string
	if c := b.opts.Memo.field(fd, b.opts.Comments).comment; c != "" {
		desc = append(desc, c)
	}
	extra := append(behaviorNotes(fb, b.dir), notes...)
	if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
		extra = append(extra, b.oneofNote(od, fd))
	}
	if len(desc) == 0 && len(extra) == 0 {
		return n, nil
	}
	if d, ok := n.get("description"); ok && !fd.IsList() && !fd.IsMap() {
		desc = append(desc, d.(string))
	}
	return n.with("description", joinDesc(append(desc, extra...))), nil
}

func prefixed(prefix string, notes []string) []string {
	out := make([]string, len(notes))
	for i, n := range notes {
		out[i] = prefix + n
	}
	return out
}

// behaviorNotes says in words what google.api.field_behavior values mean
// for a caller; REQUIRED and OUTPUT_ONLY are expressed structurally instead.
func behaviorNotes(fb behavior, dir direction) []string {
	var notes []string
	if fb.has(annotations.FieldBehavior_IMMUTABLE) {
		notes = append(notes, "Immutable: may be set when the resource is created, never changed afterwards.")
	}
	if fb.has(annotations.FieldBehavior_INPUT_ONLY) {
		notes = append(notes, "Input only: never returned in responses.")
	}
	if dir == output && fb.has(annotations.FieldBehavior_OUTPUT_ONLY) {
		notes = append(notes, "Output only: set by the server.")
	}
	return notes
}

// maxListedAlternatives is the largest number of other members a oneof
// member's note names. A larger oneof (Vertex AI's EvaluateInstancesRequest
// has 25 members) is listed once, in its message's description: naming every
// other member in each member's note would grow with the square of its size.
const maxListedAlternatives = 4

// oneofNote tells a member which fields are its alternatives. Members left
// out of the schema (output-only in an input schema) are not named.
func (b *builder) oneofNote(od protoreflect.OneofDescriptor, self protoreflect.FieldDescriptor) string {
	var others []string
	for _, name := range b.oneofMembers(od) {
		if name != b.name(self) {
			others = append(others, name)
		}
	}
	rule := b.oneofRule(od)
	switch {
	case len(others) == 0:
		return fmt.Sprintf("Member of oneof %s.", od.Name())
	case len(others) > maxListedAlternatives:
		return fmt.Sprintf("Alternative to the %d other fields of oneof %s, listed in the object's description: %s.", len(others), od.Name(), rule)
	}
	return fmt.Sprintf("Alternative to %s (oneof %s): %s.", strings.Join(others, ", "), od.Name(), rule)
}

// oneofSummaries list, for the message's description, the members of each
// oneof too large for its members' notes to name.
func (b *builder) oneofSummaries(md protoreflect.MessageDescriptor) []string {
	var out []string
	oneofs := md.Oneofs()
	for i := range oneofs.Len() {
		od := oneofs.Get(i)
		if od.IsSynthetic() {
			continue
		}
		if names := b.oneofMembers(od); len(names)-1 > maxListedAlternatives {
			out = append(out, fmt.Sprintf("Oneof %s (%s): %s.", od.Name(), b.oneofRule(od), strings.Join(names, ", ")))
		}
	}
	return out
}

// oneofMembers names the members the schema shows (not output-only ones in
// an input schema).
func (b *builder) oneofMembers(od protoreflect.OneofDescriptor) []string {
	var names []string
	fields := od.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if b.dir == input && b.outputOnly(fd) {
			continue
		}
		names = append(names, b.name(fd))
	}
	return names
}

func (b *builder) oneofRule(od protoreflect.OneofDescriptor) string {
	if b.dir == input && oneofRules(od).GetRequired() {
		return "exactly one of them must be set"
	}
	return "set at most one of them"
}

// value is the schema of one value of fd (a singular field, a list item or
// a map value) with the protovalidate rules r for that value applied.
func (b *builder) value(fd protoreflect.FieldDescriptor, r *validatepb.FieldRules) (*node, []string, error) {
	if fd.Message() != nil && wellknown.Of(fd.Message()) == wellknown.Any && b.dir == input {
		if n, ok, err := b.anyOf(r.GetAny().GetIn()); ok || err != nil {
			_, notes := b.constrain(n, fd, r)
			return n, notes, err
		}
	}
	n, err := b.singular(fd)
	if err != nil {
		return nil, nil, err
	}
	n, notes := b.constrain(n, fd, r)
	return n, notes, nil
}

// singular is the schema of one value of fd, ignoring repetition.
func (b *builder) singular(fd protoreflect.FieldDescriptor) (*node, error) {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return b.message(fd.Message())
	case protoreflect.EnumKind:
		return b.enum(fd.Enum()), nil
	}
	return b.scalar(fd.Kind()), nil
}

// BytesDescription describes every bytes value (a bytes field, its items
// or map values, a BytesValue) in input schemas: what to send, with the
// example of a text, since a model's usual mistake is to send the text
// itself. The gateway takes only the canonical form it names.
const BytesDescription = `Base64 of the raw bytes, padded with "=" to a multiple of 4 characters (the text json/plain is "anNvbi9wbGFpbg==").`

const (
	// maxFloat32JSON is math.MaxFloat32 as protojson writes it (shortest
	// float32 form). It is slightly above the exact value, so it, not
	// math.MaxFloat32, must be the schema's bound.
	maxFloat32JSON = 3.4028235e38
	// nonFinitePattern matches the strings protojson uses for non-finite floats.
	nonFinitePattern = "^(NaN|-?Infinity)$"
	int64Pattern     = "^-?[0-9]+$"
	uint64Pattern    = "^[0-9]+$"
)

// scalar is the schema of a value of kind k. Scalars' schemas are built
// once for each direction and shared by every build: a node is never
// changed once handed out (see node).
func (b *builder) scalar(k protoreflect.Kind) *node {
	return scalars[b.dir][k]
}

// scalars are scalarSchema's nodes by direction and kind; nil for the
// kinds that are not scalars.
var scalars = func() (s [output + 1][protoreflect.Sint64Kind + 1]*node) {
	for _, dir := range []direction{input, output} {
		for k := range s[dir] {
			switch kind := protoreflect.Kind(k); kind {
			case 0, protoreflect.MessageKind, protoreflect.GroupKind, protoreflect.EnumKind:
			default:
				s[dir][k] = scalarSchema(kind, dir)
			}
		}
	}
	return s
}()

// scalarSchema builds the schema of a value of kind k.
func scalarSchema(k protoreflect.Kind, dir direction) *node {
	switch k {
	case protoreflect.BoolKind:
		return obj("type", "boolean")
	case protoreflect.StringKind:
		return obj("type", "string")
	case protoreflect.BytesKind:
		if dir == input {
			// contentEncoding is an annotation most models never act on;
			// the description is what keeps a model from writing the text
			// a field should hold the bytes of (see base64.go).
			return obj("type", "string", "contentEncoding", "base64", "description", BytesDescription)
		}
		return obj("type", "string", "contentEncoding", "base64")
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return obj("type", "integer", "minimum", int64(math.MinInt32), "maximum", int64(math.MaxInt32))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return obj("type", "integer", "minimum", int64(0), "maximum", int64(math.MaxUint32))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		if dir == output {
			return obj("type", "string", "pattern", int64Pattern)
		}
		return obj("type", []string{"string", "integer"}, "pattern", int64Pattern,
			"minimum", int64(math.MinInt64), "maximum", int64(math.MaxInt64))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		if dir == output {
			return obj("type", "string", "pattern", uint64Pattern)
		}
		return obj("type", []string{"string", "integer"}, "pattern", uint64Pattern,
			"minimum", int64(0), "maximum", uint64(math.MaxUint64))
	case protoreflect.FloatKind:
		return obj("type", []string{"number", "string"}, "pattern", nonFinitePattern,
			"minimum", -maxFloat32JSON, "maximum", maxFloat32JSON)
	case protoreflect.DoubleKind:
		return obj("type", []string{"number", "string"}, "pattern", nonFinitePattern)
	}
	// Every scalar kind is listed above; a new kind would need its own mapping.
	panic(fmt.Sprintf("schema: unhandled kind %v", k))
}

// mapKeyPattern is the pattern of the string form protojson uses for map keys
// of kind k; string keys need none.
func mapKeyPattern(k protoreflect.Kind) string {
	switch k {
	case protoreflect.BoolKind:
		return "^(true|false)$"
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return uint64Pattern
	case protoreflect.StringKind:
		return ""
	}
	return int64Pattern
}

// enum is ed's schema, built once per Memo and direction: the builds
// sharing a Memo share it, so it depends on ed and b.dir alone.
func (b *builder) enum(ed protoreflect.EnumDescriptor) *node {
	memo := b.opts.Memo
	if n, ok := memo.enums[b.dir][ed]; ok {
		return n
	}
	n := b.enumSchema(ed)
	if memo.enums[b.dir] == nil {
		memo.enums[b.dir] = map[protoreflect.EnumDescriptor]*node{}
	}
	memo.enums[b.dir][ed] = n
	return n
}

// enumSchema builds ed's schema.
func (b *builder) enumSchema(ed protoreflect.EnumDescriptor) *node {
	if ed.FullName() == "google.protobuf.NullValue" {
		return obj("type", "null")
	}
	values := ed.Values()
	var names []any
	var numbers []any
	seen := map[protoreflect.EnumNumber]bool{}
	var valueDocs []string
	for i := range values.Len() {
		v := values.Get(i)
		names = append(names, string(v.Name()))
		if !seen[v.Number()] {
			seen[v.Number()] = true
			numbers = append(numbers, int64(v.Number()))
		}
		if c := comments(b.opts.Comments, v); c != "" {
			valueDocs = append(valueDocs, "- "+string(v.Name())+": "+strings.ReplaceAll(c, "\n", " "))
		}
	}
	var n *node
	switch {
	case b.dir == input:
		// protojson accepts a name or any int32 number; the known numbers are
		// listed so the type array is not a lie, unknown ones are left out.
		n = obj("type", []string{"string", "integer"}, "enum", append(names, numbers...))
	case ed.IsClosed():
		// Unknown numbers of a closed enum are kept as unknown fields, which
		// protojson never writes.
		n = obj("type", "string", "enum", names)
	default:
		// An open enum writes unknown numbers as integers. "enum" would apply
		// to both types; pattern only constrains strings, so it lists the names.
		alts := make([]string, len(names))
		for i, n := range names {
			alts[i] = n.(string)
		}
		n = obj("type", []string{"string", "integer"}, "pattern", "^("+strings.Join(alts, "|")+")$",
			"minimum", int64(math.MinInt32), "maximum", int64(math.MaxInt32))
	}
	desc := comments(b.opts.Comments, ed)
	if len(valueDocs) > 0 {
		desc = strings.TrimSpace(desc + "\n\n" + strings.Join(valueDocs, "\n"))
	}
	if desc != "" {
		n.set("description", desc)
	}
	return n
}

// defaultValue is fd's explicit proto2/editions default in the JSON form
// protojson uses, which is valid against both the input and output schema.
func defaultValue(fd protoreflect.FieldDescriptor) (any, bool) {
	if !fd.HasDefault() || fd.IsList() || fd.IsMap() {
		return nil, false
	}
	v := fd.Default()
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return v.Bool(), true
	case protoreflect.StringKind:
		return v.String(), true
	case protoreflect.BytesKind:
		return base64.StdEncoding.EncodeToString(v.Bytes()), true
	case protoreflect.EnumKind:
		if ev := fd.DefaultEnumValue(); ev != nil && fd.Enum().FullName() != "google.protobuf.NullValue" {
			return string(ev.Name()), true
		}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return v.Int(), true
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return v.Uint(), true
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return strconv.FormatInt(v.Int(), 10), true
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return strconv.FormatUint(v.Uint(), 10), true
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		f := v.Float()
		switch {
		case math.IsNaN(f):
			return "NaN", true
		case math.IsInf(f, 1):
			return "Infinity", true
		case math.IsInf(f, -1):
			return "-Infinity", true
		}
		if fd.Kind() == protoreflect.FloatKind {
			// The float32 value as protojson prints it, not its float64 widening.
			f, _ = strconv.ParseFloat(strconv.FormatFloat(f, 'g', -1, 32), 64)
		}
		return f, true
	}
	return nil, false
}
