package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	validatepb "buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"buf.build/go/protovalidate"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/grpc-mcp-gateway/gateway/internal/wellknown"
)

// Validator converts tool arguments into a request message and checks them
// the way the tool's Input schema describes, so that the backend only ever
// sees arguments that passed. It is built once per tool, at discovery, and is
// safe for concurrent use.
//
// Decode's fast path for good arguments is one protojson.Unmarshal, plus a
// walk over the fields that need a check protojson does not make
// (google.api.field_behavior REQUIRED, closed enums) and protovalidate when
// the message type has rules; both are skipped entirely when the type has
// none, which is decided here. Arguments of a type that can hold bytes get
// one more walk, over their members that lead to bytes, to hold every
// bytes value to canonical base64 (base64.go); other types skip it. Only
// when something fails does Decode parse the arguments a second time to
// explain every problem with its JSON path.
type Validator struct {
	md        protoreflect.MessageDescriptor
	wrap      bool // arguments are {"value": <json>}, see IsObject
	useProto  bool
	resolver  TypeResolver
	unmarshal protojson.UnmarshalOptions
	root      *plan // nil: nothing to check after protojson
	pv        protovalidate.Validator
	// bytes is where the arguments can hold bytes, nil when nowhere;
	// bytesRoot: the message is a BytesValue, whose "value" is bytes.
	bytes     *bytesPlan
	bytesRoot bool
	// anyPlans are the bytes plans of the types Any values name.
	anyPlans anyPlans
	// wire converts arguments straight to wire form (argwire.go), nil
	// when the type cannot take that path; wireRoot is it for a type
	// whose arguments are {"value": ...}. Both are compiled on first use
	// (wireOnce), as transcode's encoders are: a catalog holds a
	// validator for every tool, most of them never called.
	wire, wireRoot *wireMsg
	wireOnce       sync.Once
	wireCandidate  bool // nothing to check after protojson
}

// NewValidator compiles the checks for arguments of type md. opts must be the
// Options the tool's Input schema was built with (UseProtoNames picks the
// names used in violation paths; Resolver resolves "@type" in Any values).
// It fails when md's protovalidate rules do not compile (a bad CEL
// expression): such a tool would fail every call.
func NewValidator(md protoreflect.MessageDescriptor, opts *Options) (*Validator, error) {
	if md == nil {
		return nil, errors.New("schema: nil message descriptor")
	}
	if opts == nil {
		opts = &Options{}
	}
	v := &Validator{
		md:       md,
		wrap:     !IsObject(md),
		useProto: opts.UseProtoNames,
		resolver: opts.Resolver,
	}
	if opts.Resolver != nil {
		v.unmarshal.Resolver = opts.Resolver
	} else {
		v.resolver = protoregistry.GlobalTypes // what protojson uses by default
	}
	// protojson's own required-field check is a reflective walk of the
	// whole message, with allocations, on every call; a type with no
	// proto2 required field anywhere in it has nothing for it to find.
	v.unmarshal.AllowPartial = !mayRequire(md, map[protoreflect.FullName]bool{})
	v.root = planFor(md)
	v.bytes = newBytesPlan(md)
	v.bytesRoot = md.FullName() == "google.protobuf.BytesValue"
	if hasRules(md) {
		pv, err := protovalidate.New(protovalidate.WithMessageDescriptors(md), protovalidate.WithDisableLazy())
		if err != nil {
			return nil, fmt.Errorf("schema: protovalidate rules of %s: %w", md.FullName(), err)
		}
		v.pv = pv
	}
	v.wireCandidate = v.root == nil && v.pv == nil && v.unmarshal.AllowPartial
	return v, nil
}

// compileWire builds the wire converter of v's type, if it can have one.
func (v *Validator) compileWire() {
	if !v.wireCandidate {
		return
	}
	switch wellknown.Of(v.md) {
	case wellknown.None:
		v.wire = newWireMsg(v.md)
	case wellknown.Wrapper, wellknown.Timestamp, wellknown.Duration:
		v.wireRoot = newWireMsg(v.md)
	}
}

// Violation is one problem with the arguments.
type Violation struct {
	// Path is the JSON path of the offending value in the names the schema
	// uses: `keepers[1].name`, `labels["env"]`; empty for the arguments
	// object itself.
	Path string
	// Rule classifies the problem: "json" (not JSON), "type" (wrong JSON
	// type or format), "unknown_field", "duplicate_field", "required",
	// "oneof", "enum", "conversion" (rejected by protojson for a reason the
	// explanation does not model), or the protovalidate rule id
	// ("string.min_len", or a CEL rule's id).
	Rule string
	// Expected says in words what would have been accepted.
	Expected string
	// Received is the value received, in JSON, truncated to about 64
	// bytes; empty when nothing was received (a missing field).
	Received string
}

func (v Violation) String() string {
	var b strings.Builder
	if v.Path != "" {
		b.WriteString(v.Path)
	} else {
		b.WriteString("arguments")
	}
	b.WriteString(": ")
	// Type and enum rules name a kind of value ("a string"), which reads
	// as an expectation; other rules ("required", CEL messages) are
	// sentences of their own.
	if v.Rule == "type" || v.Rule == "enum" {
		b.WriteString("expected ")
	}
	b.WriteString(v.Expected)
	if v.Received != "" {
		b.WriteString(", got ")
		b.WriteString(v.Received)
	}
	return b.String()
}

// ValidationError reports the violations found in one set of arguments:
// the first MaxExplained of them explained, the rest only counted.
type ValidationError struct {
	Violations []Violation
	// Omitted counts the violations found beyond those in Violations:
	// explaining each would cost memory and text in proportion to what a
	// client chose to send, and the first ones are what a model needs to
	// correct its call.
	Omitted int
	// cause is protovalidate's or protojson's own error, when there was one.
	cause error
}

// MaxExplained caps the violations one ValidationError explains; further
// ones are counted in Omitted ("and N more").
const MaxExplained = 100

// Error lists the violations, "; "-separated: "keepers[1].name: required;
// age: value must be greater than or equal to 18, got 7", then "and N more"
// for those beyond MaxExplained.
func (e *ValidationError) Error() string {
	n := min(len(e.Violations), MaxExplained)
	parts := make([]string, 0, n+1)
	for _, v := range e.Violations[:n] {
		parts = append(parts, v.String())
	}
	if more := e.Omitted + len(e.Violations) - n; more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(parts, "; ")
}

// violationSet collects what one Decode finds: up to MaxExplained explained,
// the rest counted. Callers test full before building a Violation, so a
// flood of errors costs a counter, not a path string and a description
// each.
type violationSet struct {
	out     []Violation
	omitted int
}

func (vs *violationSet) full() bool { return len(vs.out) >= MaxExplained }

func (vs *violationSet) add(v Violation) {
	if vs.full() {
		vs.omitted++
		return
	}
	vs.out = append(vs.out, v)
}

func (vs *violationSet) count() int { return len(vs.out) + vs.omitted }

func (vs *violationSet) err(cause error) error {
	if vs.count() == 0 {
		return nil
	}
	return &ValidationError{Violations: vs.out, Omitted: vs.omitted, cause: cause}
}

// Unwrap returns the underlying protojson or protovalidate error, if any.
func (e *ValidationError) Unwrap() error { return e.cause }

// Decode converts args, a JSON object, into msg (a new message of the
// Validator's type, typically dynamicpb) and checks it. It returns nil or a
// *ValidationError listing every violation; after an error msg's content is
// unspecified.
//
// It accepts what protojson accepts (JSON names and proto names alike),
// with two leniencies for what language models send: null for any field
// means unset, and a JSON-encoded string where an object or array is
// expected is decoded ("{\"a\":1}" for a message). It rejects what the
// schema rejects beyond protojson: missing google.api.field_behavior
// REQUIRED fields, unknown numbers of closed enums, protovalidate rule
// violations, and bytes that are not canonical base64 (padded, one
// alphabet: see base64.go), which protojson would take. For a message that
// is not a JSON object (IsObject false), args is the {"value": ...}
// wrapper.
func (v *Validator) Decode(args []byte, msg proto.Message) error {
	_, err := v.DecodeWarn(args, msg)
	return err
}

// DecodeWarn is Decode, also returning what the arguments set that
// converted but was probably not meant so: bytes values that look like
// words rather than base64 (see base64.go). A caller that shows the call's
// result should show them with it. The warnings are empty when err is not
// nil.
func (v *Validator) DecodeWarn(args []byte, msg proto.Message) (Warnings, error) {
	return v.decode(args, msg, nil)
}

// decode is DecodeWarn with the injector in (nil for none).
func (v *Validator) decode(args []byte, msg proto.Message, in Injector) (Warnings, error) {
	raw := args
	fast := true
	if v.wrap {
		raw, fast = unwrapFast(args)
	}
	if fast {
		var err error
		if raw == nil && v.md.FullName() == "google.protobuf.Value" {
			raw = []byte("null") // a JSON null is a Value of its own
		}
		if raw == nil {
			proto.Reset(msg) // {"value": null}: unset
		} else {
			err = v.unmarshal.Unmarshal(raw, msg)
		}
		if err == nil {
			ws, bad := v.scanBytes(raw)
			if bad != nil {
				// Explained with everything else that is wrong.
				return Warnings{}, v.explain(args, msg, nil, in)
			}
			if vs := injected(in, msg.ProtoReflect()); len(vs) > 0 {
				return Warnings{}, &ValidationError{Violations: vs}
			}
			if err := v.check(msg, nil); err != nil {
				return Warnings{}, err
			}
			return ws, nil
		}
	}
	var ws Warnings
	err := v.explain(args, msg, &ws, in)
	return ws, err
}

// unwrapFast returns the inner JSON of {"value": X}; nil for null. ok is
// false when args is not exactly such an object.
func unwrapFast(args []byte) (inner []byte, ok bool) {
	var w map[string]json.RawMessage
	if err := json.Unmarshal(args, &w); err != nil || len(w) != 1 {
		return nil, false
	}
	inner, ok = w[WrapperProperty]
	if !ok {
		return nil, false
	}
	if string(bytes.TrimSpace(inner)) == "null" {
		return nil, true
	}
	return inner, true
}

// check runs the checks protojson does not make on a converted message. skip
// reports paths already explained, whose protovalidate violations would
// repeat them.
func (v *Validator) check(msg proto.Message, skip func(path string) bool) error {
	if v.root == nil && v.pv == nil {
		return nil // nothing to check after protojson
	}
	c := &checker{v: v}
	if v.root != nil {
		c.message(msg.ProtoReflect(), v.root)
	}
	if skip == nil && c.out.count() > 0 {
		// A missing required field breaks its own rules too; say it once.
		plan := c.out.out
		skip = func(path string) bool {
			for _, p := range plan {
				if p.Path == path {
					return true
				}
			}
			return false
		}
	}
	cause := v.rules(msg, skip, &c.out)
	return c.out.err(cause)
}

// rules runs protovalidate, when the type has rules, adding to vs the
// violations at paths skip does not report as explained already.
func (v *Validator) rules(msg proto.Message, skip func(path string) bool, vs *violationSet) error {
	if v.pv == nil {
		return nil
	}
	err := v.pv.Validate(msg)
	if err == nil {
		return nil
	}
	var verr *protovalidate.ValidationError
	if !errors.As(err, &verr) {
		// A CEL runtime error: the rule could not be evaluated on this value.
		vs.add(Violation{Rule: "protovalidate", Expected: err.Error()})
		return err
	}
	for _, pvv := range verr.Violations {
		if vs.full() {
			vs.omitted++
			continue
		}
		vi := v.fromProtovalidate(pvv)
		if skip != nil && skip(vi.Path) {
			continue
		}
		vs.add(vi)
	}
	return err
}

// fromProtovalidate renames protovalidate's proto-name path into the JSON
// path the schema uses.
func (v *Validator) fromProtovalidate(pvv *protovalidate.Violation) Violation {
	out := Violation{Rule: pvv.Proto.GetRuleId(), Expected: pvv.Proto.GetMessage()}
	if out.Expected == "" {
		out.Expected = "must satisfy " + out.Rule
	}
	var p pathBuf
	md := v.md
	for _, el := range pvv.Proto.GetField().GetElements() {
		var fd protoreflect.FieldDescriptor
		if md != nil {
			fd = md.Fields().ByNumber(protoreflect.FieldNumber(el.GetFieldNumber()))
		}
		if fd == nil {
			p.field(el.GetFieldName())
			md = nil
			continue
		}
		p.field(v.fieldName(fd))
		switch el.WhichSubscript() {
		case validatepb.FieldPathElement_Index_case:
			p.index(int(el.GetIndex()))
		case validatepb.FieldPathElement_BoolKey_case:
			p.key(strconv.FormatBool(el.GetBoolKey()))
		case validatepb.FieldPathElement_IntKey_case:
			p.key(strconv.FormatInt(el.GetIntKey(), 10))
		case validatepb.FieldPathElement_UintKey_case:
			p.key(strconv.FormatUint(el.GetUintKey(), 10))
		case validatepb.FieldPathElement_StringKey_case:
			p.key(el.GetStringKey())
		}
		if fd.IsMap() {
			fd = fd.MapValue()
		}
		md = fd.Message()
	}
	out.Path = p.String()
	if pvv.Proto.GetForKey() {
		out.Expected = "map key: " + out.Expected
	} else if pvv.FieldValue.IsValid() && pvv.FieldDescriptor != nil {
		out.Received = received(pvv.FieldDescriptor, pvv.FieldValue)
	}
	return out
}

func (v *Validator) fieldName(fd protoreflect.FieldDescriptor) string {
	if v.useProto {
		return fd.TextName()
	}
	return fd.JSONName()
}

// received renders a converted value for Violation.Received.
func received(fd protoreflect.FieldDescriptor, val protoreflect.Value) string {
	switch x := val.Interface().(type) {
	case protoreflect.List:
		return fmt.Sprintf("an array of %d elements", x.Len())
	case protoreflect.Map:
		return fmt.Sprintf("an object of %d members", x.Len())
	case protoreflect.Message:
		if b, err := (protojson.MarshalOptions{}).Marshal(x.Interface()); err == nil {
			return truncate(string(b))
		}
		return "an object"
	case protoreflect.EnumNumber:
		if ev := fd.Enum().Values().ByNumber(x); ev != nil {
			return strconv.Quote(string(ev.Name()))
		}
		return strconv.Itoa(int(x))
	case string:
		return truncate(strconv.Quote(x))
	case []byte:
		return fmt.Sprintf("%d bytes", len(x))
	}
	return truncate(fmt.Sprint(val.Interface()))
}

const receivedLimit = 64

func truncate(s string) string {
	if len(s) <= receivedLimit {
		return s
	}
	cut := receivedLimit
	for cut > 0 && s[cut]&0xc0 == 0x80 { // keep UTF-8 whole
		cut--
	}
	return s[:cut] + "..."
}

// plan lists what check must look at in one message type: only fields that
// need a check or lead to one, so a type without any has no plan at all.
type plan struct {
	required []protoreflect.FieldDescriptor // google.api.field_behavior REQUIRED
	closed   []protoreflect.FieldDescriptor // closed enums (protojson takes any number)
	children []protoreflect.FieldDescriptor // message fields whose type has a plan
	kids     []*plan                        // plans of children, same order
}

// mayRequire reports whether a message of type md can lack a proto2
// required field: one declared in md or in a message it holds, or one an
// extension could bring (a type with extension ranges).
func mayRequire(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) bool {
	if seen[md.FullName()] {
		return false
	}
	seen[md.FullName()] = true
	if md.RequiredNumbers().Len() > 0 || md.ExtensionRanges().Len() > 0 {
		return true
	}
	fields := md.Fields()
	for i := range fields.Len() {
		if sub := fields.Get(i).Message(); sub != nil && mayRequire(sub, seen) {
			return true
		}
	}
	return false
}

// planFor computes md's plan, or nil when md and everything it contains
// need no check. Recursive types are resolved by optimistic assumption: a
// type being planned counts as needing checks, and a plan that ends up
// empty is pruned once the fixpoint settles. Only the useful plans are
// kept, reached from the root: most messages of a large API need no
// check, and a validator is held for every tool.
func planFor(md protoreflect.MessageDescriptor) *plan {
	plans := make(map[protoreflect.FullName]*plan)
	buildPlans(plans, md)
	// Prune to a fixpoint: a child plan is useful if it has checks or
	// useful children.
	useful := map[*plan]bool{}
	for changed := true; changed; {
		changed = false
		for _, p := range plans {
			if useful[p] {
				continue
			}
			ok := len(p.required) > 0 || len(p.closed) > 0
			for _, k := range p.kids {
				ok = ok || useful[k]
			}
			if ok {
				useful[p] = true
				changed = true
			}
		}
	}
	for _, p := range plans {
		var children []protoreflect.FieldDescriptor
		var kids []*plan
		for i, k := range p.kids {
			if useful[k] {
				children = append(children, p.children[i])
				kids = append(kids, k)
			}
		}
		p.children, p.kids = children, kids
	}
	if p := plans[md.FullName()]; useful[p] {
		return p
	}
	return nil
}

func buildPlans(plans map[protoreflect.FullName]*plan, md protoreflect.MessageDescriptor) *plan {
	if p, ok := plans[md.FullName()]; ok {
		return p
	}
	p := &plan{}
	plans[md.FullName()] = p
	if wellknown.Of(md) != wellknown.None {
		return p // protojson checks the well-known types' own forms
	}
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fieldBehavior(fd).has(annotations.FieldBehavior_REQUIRED) && fd.Cardinality() != protoreflect.Required {
			p.required = append(p.required, fd)
		}
		val := fd
		if fd.IsMap() {
			val = fd.MapValue()
		}
		if val.Enum() != nil && val.Enum().IsClosed() {
			p.closed = append(p.closed, fd)
		}
		if m := val.Message(); m != nil && !m.IsPlaceholder() {
			p.children = append(p.children, fd)
			p.kids = append(p.kids, buildPlans(plans, m))
		}
	}
	return p
}

// checker walks a converted message along its plan.
type checker struct {
	v     *Validator
	path  pathBuf
	out   violationSet
	enums map[protoreflect.FullName]string // enumExpected, once per enum per call
}

func (c *checker) message(m protoreflect.Message, p *plan) {
	for _, fd := range p.required {
		if !m.Has(fd) {
			c.add(fd, "required", "required", "")
		}
	}
	for _, fd := range p.closed {
		if !m.Has(fd) {
			continue
		}
		ed := fd.Enum()
		if fd.IsMap() {
			ed = fd.MapValue().Enum()
		}
		bad := func(n protoreflect.EnumNumber) bool { return ed.Values().ByNumber(n) == nil }
		switch {
		case fd.IsList():
			l := m.Get(fd).List()
			for i := range l.Len() {
				if n := l.Get(i).Enum(); bad(n) {
					c.addAt(fd, i, "", ed, n)
				}
			}
		case fd.IsMap():
			m.Get(fd).Map().Range(func(k protoreflect.MapKey, val protoreflect.Value) bool {
				if n := val.Enum(); bad(n) {
					c.addAt(fd, -1, k.String(), ed, n)
				}
				return true
			})
		default:
			if n := m.Get(fd).Enum(); bad(n) {
				c.addAt(fd, -2, "", ed, n)
			}
		}
	}
	for i, fd := range p.children {
		if !m.Has(fd) {
			continue
		}
		kid := p.kids[i]
		mark := c.path.len()
		c.path.field(c.v.fieldName(fd))
		switch {
		case fd.IsList():
			l := m.Get(fd).List()
			for j := range l.Len() {
				inner := c.path.len()
				c.path.index(j)
				c.message(l.Get(j).Message(), kid)
				c.path.truncate(inner)
			}
		case fd.IsMap():
			m.Get(fd).Map().Range(func(k protoreflect.MapKey, val protoreflect.Value) bool {
				inner := c.path.len()
				c.path.key(k.String())
				c.message(val.Message(), kid)
				c.path.truncate(inner)
				return true
			})
		default:
			c.message(m.Get(fd).Message(), kid)
		}
		c.path.truncate(mark)
	}
}

func (c *checker) add(fd protoreflect.FieldDescriptor, rule, expected, got string) {
	if c.out.full() {
		c.out.omitted++
		return
	}
	mark := c.path.len()
	c.path.field(c.v.fieldName(fd))
	c.out.add(Violation{Path: c.path.String(), Rule: rule, Expected: expected, Received: got})
	c.path.truncate(mark)
}

// addAt reports a closed enum's unknown number in fd: at element index of
// a list, at key of a map (index -1), or in fd itself (index -2).
func (c *checker) addAt(fd protoreflect.FieldDescriptor, index int, key string, ed protoreflect.EnumDescriptor, got protoreflect.EnumNumber) {
	if c.out.full() {
		c.out.omitted++
		return
	}
	mark := c.path.len()
	c.path.field(c.v.fieldName(fd))
	switch {
	case index >= 0:
		c.path.index(index)
	case index == -1:
		c.path.key(key)
	}
	c.out.add(Violation{Path: c.path.String(), Rule: "enum", Expected: cachedEnumExpected(&c.enums, ed), Received: strconv.Itoa(int(got))})
	c.path.truncate(mark)
}

// cachedEnumExpected is enumExpected computed once per enum per call, so
// each further violation costs its path, not a list of the enum's values.
func cachedEnumExpected(cache *map[protoreflect.FullName]string, ed protoreflect.EnumDescriptor) string {
	if s, ok := (*cache)[ed.FullName()]; ok {
		return s
	}
	if *cache == nil {
		*cache = map[protoreflect.FullName]string{}
	}
	s := enumExpected(ed)
	(*cache)[ed.FullName()] = s
	return s
}

func enumExpected(ed protoreflect.EnumDescriptor) string {
	values := ed.Values()
	names := make([]string, values.Len())
	for i := range names {
		names[i] = string(values.Get(i).Name())
	}
	return fmt.Sprintf("one of %s (enum %s)", strings.Join(names, ", "), ed.FullName())
}

// pathBuf builds a JSON path incrementally; truncate undoes a step, so one
// buffer serves a whole walk.
type pathBuf struct{ b []byte }

func (p *pathBuf) len() int       { return len(p.b) }
func (p *pathBuf) truncate(n int) { p.b = p.b[:n] }
func (p *pathBuf) String() string { return string(p.b) }
func (p *pathBuf) index(i int) {
	p.b = strconv.AppendInt(append(p.b, '['), int64(i), 10)
	p.b = append(p.b, ']')
}
func (p *pathBuf) key(k string) { p.b = append(strconv.AppendQuote(append(p.b, '['), k), ']') }

// rawKey is key for a member's raw JSON key, which needs no conversion
// when it is printable ASCII without escapes (then both quotings agree).
func (p *pathBuf) rawKey(raw []byte) {
	for _, c := range raw[1 : len(raw)-1] {
		if c < 0x20 || c > 0x7e || c == '\\' {
			p.key(unquote(raw))
			return
		}
	}
	p.b = append(append(append(p.b, '['), raw...), ']')
}

func (p *pathBuf) field(n string) {
	if len(p.b) > 0 {
		p.b = append(p.b, '.')
	}
	p.b = append(p.b, n...)
}
