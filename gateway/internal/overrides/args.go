package overrides

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/grpc-mcp-gateway/gateway/internal/schema"
)

// The argument overrides of a tool (hidden, fixed, default), compiled
// once at discovery: resolved against the request, applied to the input
// schema, and to each converted request by the validator (schema.Injector).

// Unlisted are the top-level arguments of a a caller cannot send, as
// the description names them (the schema's names).
func (a *Args) Unlisted() map[string]bool {
	out := make(map[string]bool)
	if a == nil {
		return out
	}
	for _, r := range a.list {
		if r.kind != argDefault && len(r.path) == 1 {
			out[r.name] = true
		}
	}
	return out
}

// Args are one tool's compiled argument overrides; they are the
// tool's validator's schema.Injector.
type Args struct {
	list []argRule
	// fixed holds every fixed value, merged into each request.
	fixed proto.Message
	// stream: the tool's input is a client stream, whose schema holds
	// the request under "requests" items.
	stream bool
	// resolved are the specs the method has, for the rules' check.
	resolved []ArgKey
}

// Empty reports whether a corrects no argument: every rule named one
// the method does not have (a glob's rule, left for other methods).
func (a *Args) Empty() bool { return len(a.list) == 0 }

// Resolved are the rules' arguments the method has, for Rules.Unmatched.
func (a *Args) Resolved() []ArgKey { return a.resolved }

// Specs are the argument overrides a was compiled from, as they apply
// (a later one for a path in place of an earlier), so that a toolset's
// rules compile on top of them.
func (a *Args) Specs() []ArgSpec {
	out := make([]ArgSpec, len(a.list))
	for i, r := range a.list {
		out[i] = r.ArgSpec
	}
	return out
}

// Removed are the top-level fields (proto names) a caller cannot send,
// which search leaves out of a tool's facts.
func (a *Args) Removed() map[string]bool {
	drop := make(map[string]bool)
	for _, r := range a.list {
		if r.kind != argDefault && len(r.path) == 1 {
			drop[string(r.path[0].Name())] = true
		}
	}
	return drop
}

// Summary says each argument a corrects and how, in order, as `gateway
// catalog` reports them ("namespace: fixed").
func (a *Args) Summary() []string {
	out := make([]string, len(a.list))
	for i, r := range a.list {
		out[i] = r.name + ": " + r.kind.String()
	}
	return out
}

type argRule struct {
	ArgSpec
	path []protoreflect.FieldDescriptor
	// name is the path in the schema's names ("execution.workflowId").
	name string
	// dflt is a request holding the default alone, merged when the
	// caller left the argument out.
	dflt proto.Message
}

// CompileArgs resolves specs against m's request; a later spec for the
// same path replaces an earlier one, except that a fixed argument stays
// fixed.
func CompileArgs(m protoreflect.MethodDescriptor, specs []ArgSpec, useProtoNames bool) (*Args, error) {
	in := m.Input()
	if !schema.IsObject(in) {
		return nil, fmt.Errorf("%w: %s: arguments: the request of %s (%s) is not a JSON object, so it has no arguments to correct", ErrToolOverride, specs[0].where, m.FullName(), in.FullName())
	}
	a := &Args{stream: m.IsStreamingClient()}
	byPath := make(map[string]int)
	for _, s := range specs {
		r, err := resolveArg(in, s, useProtoNames)
		var np *errNoPath
		if errors.As(err, &np) && s.glob {
			// A rule for many methods corrects those that have the
			// argument (namespace, on most of a service's methods);
			// one that none has is refused once all are seen.
			continue
		}
		a.resolved = append(a.resolved, ArgKey{s.rule, s.key})
		if err != nil {
			return nil, fmt.Errorf("%w: %s: arguments.%s: %s: %w", ErrToolOverride, s.where, s.key, m.FullName(), err)
		}
		if i, ok := byPath[r.name]; ok {
			// A later rule may fix another value, but not loosen a
			// fixed argument: hidden would send none (an empty tenant
			// often means every tenant), default would let a caller
			// choose again.
			if prev := a.list[i]; prev.kind == argFixed && r.kind != argFixed {
				return nil, fmt.Errorf("%w: %s: arguments.%s: %s: %s fixes %s, which a later rule may give another fixed value but not make %s", ErrToolOverride, s.where, s.key, m.FullName(), prev.where, r.name, r.kind)
			}
			a.list[i] = r
			continue
		}
		byPath[r.name] = len(a.list)
		a.list = append(a.list, r)
	}
	// One path inside another: hiding execution and fixing
	// execution.run_id cannot both hold.
	for _, r := range a.list {
		for _, o := range a.list {
			if r.name != o.name && strings.HasPrefix(o.name, r.name+".") {
				return nil, fmt.Errorf("%w: %s: arguments.%s: %s overrides %s too (%s), which is inside it", ErrToolOverride, o.where, o.key, r.where, r.name, r.kind)
			}
		}
	}
	var fixed []argRule
	for _, r := range a.list {
		if r.kind == argFixed {
			fixed = append(fixed, r)
		}
	}
	if len(fixed) > 0 {
		msg := dynamicpb.NewMessage(in)
		for _, r := range fixed {
			v, err := valueMessage(in, r)
			if err != nil {
				return nil, err // checked in resolveArg
			}
			proto.Merge(msg, v)
		}
		a.fixed = msg
	}
	return a, nil
}

// resolveArg finds s's field path in md and checks its value.
func resolveArg(md protoreflect.MessageDescriptor, s ArgSpec, useProtoNames bool) (argRule, error) {
	r := argRule{ArgSpec: s}
	segs := strings.Split(s.key, ".")
	names := make([]string, len(segs))
	cur := md
	for i, seg := range segs {
		fd := fieldNamed(cur, seg)
		if fd == nil {
			return r, &errNoPath{fmt.Sprintf("%s has no field %q (it has: %s)", cur.FullName(), seg, fieldList(cur, useProtoNames))}
		}
		if i < len(segs)-1 && (fd.Message() == nil || fd.IsList() || fd.IsMap()) {
			return r, &errNoPath{fmt.Sprintf("%s.%s is not a single message, so the path cannot go inside it", cur.FullName(), fd.Name())}
		}
		r.path = append(r.path, fd)
		names[i] = schemaFieldName(fd, useProtoNames)
		if fd.Message() != nil {
			cur = fd.Message()
		}
	}
	r.name = strings.Join(names, ".")
	if s.kind == argHidden {
		if last := r.path[len(r.path)-1]; schema.Required(last) {
			return r, fmt.Errorf("hidden: %s is required by the backend, so every call would fail without it; give it a value with fixed: instead", r.name)
		}
		return r, nil
	}
	v, err := valueMessage(md, r)
	if err != nil {
		return r, err
	}
	if s.kind == argDefault {
		r.dflt = v
	}
	return r, nil
}

// valueMessage is a request holding r's value alone, converted as a
// call's arguments are (protojson); its error says what was expected.
func valueMessage(md protoreflect.MessageDescriptor, r argRule) (proto.Message, error) {
	var b []byte
	for _, fd := range r.path {
		b = append(b, `{"`...)
		b = append(b, fd.JSONName()...)
		b = append(b, `":`...)
	}
	b = append(b, bytes.TrimSpace(r.value)...)
	b = append(b, bytes.Repeat([]byte{'}'}, len(r.path))...)
	msg := dynamicpb.NewMessage(md)
	if err := protojson.Unmarshal(b, msg); err != nil {
		last := r.path[len(r.path)-1]
		// protojson's own words name a position in the JSON built here,
		// which is no help to the operator: the field's type says it.
		return nil, fmt.Errorf("%s: want %s, got %s", r.kind, expectedValue(last), bytes.TrimSpace(r.value))
	}
	return msg, nil
}

// expectedValue says in words what JSON a field takes.
func expectedValue(fd protoreflect.FieldDescriptor) string {
	one := func() string {
		switch fd.Kind() {
		case protoreflect.StringKind:
			return "a string"
		case protoreflect.BoolKind:
			return "true or false"
		case protoreflect.BytesKind:
			return "a base64 string"
		case protoreflect.EnumKind:
			vs := fd.Enum().Values()
			names := make([]string, vs.Len())
			for i := range vs.Len() {
				names[i] = string(vs.Get(i).Name())
			}
			return "one of " + strings.Join(names, ", ")
		case protoreflect.MessageKind, protoreflect.GroupKind:
			if w, ok := wellKnownJSON[fd.Message().FullName()]; ok {
				return w
			}
			return "an object of " + string(fd.Message().FullName())
		case protoreflect.FloatKind, protoreflect.DoubleKind:
			return "a number"
		}
		return "a whole number"
	}()
	switch {
	case fd.IsMap():
		return "an object (a map)"
	case fd.IsList():
		return "a list, each " + one
	}
	return one
}

// wellKnownJSON says in words the JSON of the well-known types whose
// protojson form is not an object of their fields.
var wellKnownJSON = map[protoreflect.FullName]string{
	"google.protobuf.Duration":    `a duration string such as "5s" or "1.5s"`,
	"google.protobuf.Timestamp":   `an RFC 3339 time string such as "2026-01-02T15:04:05Z"`,
	"google.protobuf.FieldMask":   `a string of field paths separated by commas, such as "displayName,tags"`,
	"google.protobuf.Struct":      "an object",
	"google.protobuf.Value":       "any JSON value",
	"google.protobuf.ListValue":   "a list",
	"google.protobuf.Any":         `an object with "@type" naming its message`,
	"google.protobuf.Empty":       "{}",
	"google.protobuf.StringValue": "a string",
	"google.protobuf.BytesValue":  "a base64 string",
	"google.protobuf.BoolValue":   "true or false",
	"google.protobuf.DoubleValue": "a number",
	"google.protobuf.FloatValue":  "a number",
	"google.protobuf.Int32Value":  "a whole number",
	"google.protobuf.Int64Value":  "a whole number",
	"google.protobuf.UInt32Value": "a whole number",
	"google.protobuf.UInt64Value": "a whole number",
}

func fieldNamed(md protoreflect.MessageDescriptor, name string) protoreflect.FieldDescriptor {
	fs := md.Fields()
	if fd := fs.ByName(protoreflect.Name(name)); fd != nil {
		return fd
	}
	return fs.ByJSONName(name)
}

func fieldList(md protoreflect.MessageDescriptor, useProtoNames bool) string {
	fs := md.Fields()
	names := make([]string, fs.Len())
	for i := range fs.Len() {
		names[i] = schemaFieldName(fs.Get(i), useProtoNames)
	}
	return strings.Join(names, ", ")
}

func schemaFieldName(fd protoreflect.FieldDescriptor, useProtoNames bool) string {
	if useProtoNames {
		return string(fd.Name())
	}
	return fd.JSONName()
}

// Inject is schema.Injector: a hidden or fixed argument the caller sent
// is refused; otherwise the defaults of the arguments left out, then the
// fixed values, are merged into msg.
func (a *Args) Inject(msg protoreflect.Message) []schema.Violation {
	var vs []schema.Violation
	for _, r := range a.list {
		if r.kind == argFixed {
			if at, other := oneofRival(msg, r.path); other != nil {
				// Merging would clear the caller's choice in silence.
				vs = append(vs, schema.Violation{Path: pathPrefix(r.name, at) + other.JSONName(), Rule: "override.fixed",
					Expected: "the gateway's configuration sets " + r.name + ", which is in a oneof with it and which no call can change: leave it out"})
				continue
			}
		}
		if r.kind == argDefault || !hasPath(msg, r.path) {
			continue
		}
		expected := "not an argument of this tool (the gateway's configuration hides it): leave it out"
		if r.kind == argFixed {
			expected = "set by the gateway's configuration, which no call can change: leave it out"
		}
		vs = append(vs, schema.Violation{Path: r.name, Rule: "override." + r.kind.String(), Expected: expected})
	}
	if len(vs) > 0 {
		return vs
	}
	m := msg.Interface()
	for _, r := range a.list {
		if r.kind == argDefault && defaultApplies(msg, r.path) {
			proto.Merge(m, r.dflt)
		}
	}
	if a.fixed != nil {
		proto.Merge(m, a.fixed)
	}
	return nil
}

// Supplies is schema.Injector: the fixed and default arguments.
func (a *Args) Supplies(path string) bool {
	for _, r := range a.list {
		if r.kind != argHidden && r.name == path {
			return true
		}
	}
	return false
}

// oneofRival is a member of a oneof msg sets that is not the field of
// path at that depth, and that depth; nil when path's fields take the
// place of nothing the caller chose.
func oneofRival(msg protoreflect.Message, path []protoreflect.FieldDescriptor) (int, protoreflect.FieldDescriptor) {
	for i, fd := range path {
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
			if set := msg.WhichOneof(od); set != nil && set.Number() != fd.Number() {
				return i, set
			}
		}
		if i == len(path)-1 || !msg.Has(fd) {
			return 0, nil
		}
		msg = msg.Get(fd).Message()
	}
	return 0, nil
}

// defaultApplies reports whether a default at path fills a gap the caller
// left: the field is unset, the messages holding it are there (a default
// does not make a message the caller left out: an update's absent
// resource is not one with one field set), and no member of a oneof on
// the way is the caller's other choice.
func defaultApplies(msg protoreflect.Message, path []protoreflect.FieldDescriptor) bool {
	if _, other := oneofRival(msg, path); other != nil {
		return false
	}
	for _, fd := range path[:len(path)-1] {
		if !msg.Has(fd) {
			return false
		}
		msg = msg.Get(fd).Message()
	}
	return !msg.Has(path[len(path)-1])
}

// pathPrefix is the first n segments of name, with a trailing dot.
func pathPrefix(name string, n int) string {
	segs := strings.Split(name, ".")
	if n == 0 {
		return ""
	}
	return strings.Join(segs[:n], ".") + "."
}

// hasPath reports whether msg sets the field at path.
func hasPath(msg protoreflect.Message, path []protoreflect.FieldDescriptor) bool {
	for _, fd := range path[:len(path)-1] {
		if !msg.Has(fd) {
			return false
		}
		msg = msg.Get(fd).Message()
	}
	return msg.Has(path[len(path)-1])
}

// RewriteSchema is the input schema in with the rules applied: hidden and
// fixed arguments left out (and out of "required"), defaults shown. A
// message reached through "$ref" is written out in place first, so the
// change stays with this argument.
func (a *Args) RewriteSchema(in json.RawMessage) (json.RawMessage, error) {
	doc, err := parseJSON(in)
	if err != nil {
		return nil, err
	}
	root, ok := doc.(*jsonObject)
	if !ok {
		return nil, errors.New("input schema is not an object")
	}
	defs, _ := root.Get("$defs").(*jsonObject)
	base := root
	if a.stream {
		base = deref(child(child(root, "requests"), "items"), defs)
	}
	for _, r := range a.list {
		segs := strings.Split(r.name, ".")
		node := base
		for _, s := range segs[:len(segs)-1] {
			node = deref(child(node, s), defs)
		}
		if node == nil {
			continue // a bounded schema may leave the message out
		}
		props, _ := node.Get("properties").(*jsonObject)
		if props == nil {
			continue
		}
		last := segs[len(segs)-1]
		if r.kind == argDefault {
			if p, ok := props.Get(last).(*jsonObject); ok {
				p.Set("default", json.RawMessage(compactJSON(r.value)))
			}
			continue
		}
		props.Del(last)
		if req, ok := node.Get("required").([]any); ok {
			req = slices.DeleteFunc(req, func(v any) bool { return v == last })
			if len(req) == 0 {
				node.Del("required")
			} else {
				node.Set("required", req)
			}
		}
	}
	return appendJSON(nil, doc), nil
}

// child is node's property name, written out in place when it refers to
// a definition.
func child(node *jsonObject, name string) *jsonObject {
	if node == nil {
		return nil
	}
	props, _ := node.Get("properties").(*jsonObject)
	if props == nil {
		return nil
	}
	c, _ := props.Get(name).(*jsonObject)
	return c
}

// deref writes node's "$ref" out in place (a copy of the definition), so
// that changing it leaves the definition's other uses alone.
func deref(node *jsonObject, defs *jsonObject) *jsonObject {
	if node == nil {
		return nil
	}
	ref, ok := node.Get("$ref").(string)
	if !ok || defs == nil {
		return node
	}
	def, _ := defs.Get(strings.TrimPrefix(ref, "#/$defs/")).(*jsonObject)
	if def == nil {
		return node
	}
	cp := copyJSON(def).(*jsonObject)
	node.Del("$ref")
	for _, k := range cp.Keys() {
		if node.Get(k) == nil {
			node.Set(k, cp.Get(k))
		}
	}
	return node
}

func compactJSON(b []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return b
	}
	return buf.Bytes()
}
