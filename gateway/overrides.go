package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/schema"
	"github.com/grpc-mcp-gateway/gateway/internal/methodglob"
	mcpgatewayv1 "github.com/grpc-mcp-gateway/gateway/proto/mcpgateway/v1"
)

// Tool overrides (Options.Tools, Toolset.Tools; the config file's tools:).
//
// An operator corrects what the gateway made of a method without touching
// the backend: its name, title, description and hints, and its arguments
// (hidden, fixed, default). A rule's name, title, description and hints
// are merged into the method's (mcpgateway.v1.tool) option, over what the
// option says, before the method is compiled, so they take the one path
// the option takes: naming and its collision rules, the hints'
// consistency, the retry decision, the description search indexes, the
// scope rules by tool name (which follow the base name). Arguments are
// compiled with the tool, once: the input schema leaves hidden and fixed
// arguments out and shows defaults; the validator refuses a hidden or
// fixed argument a caller sends, then merges the fixed values and the
// defaults into the converted request (a precompiled message each), before
// the required fields and the backend's rules are checked. Every call
// path (typed, call_tool, tasks, streams) converts its arguments there.
//
// Every rule that matches a method applies, in order: a later rule's
// setting wins over an earlier one's. A toolset's rules apply on top of
// the gateway's, to its own copies of its tools.

// ErrToolOverride is wrapped by the errors of a tool override that cannot
// apply: a rule that matches no method once every backend is discovered,
// an argument path the request does not have, a fixed or default value
// of the wrong type, a name given to several methods. New fails with it
// at start; a later discovery logs it and keeps the backend's last tools.
var ErrToolOverride = errors.New("tool override")

// ToolOverride corrects the tools of the methods Match selects.
type ToolOverride struct {
	// Match selects methods by "package.Service/Method" glob, as
	// Options.Include takes them.
	Match string
	// Origin is where the rule was written, for errors ("gateway.yaml:12
	// tools[0]"); empty: Options.Tools[i] or Toolset.Tools[i].
	Origin string
	// Name is the tool's name (^[a-zA-Z0-9_-]{1,64}$); Match must then
	// select one method per backend.
	Name string
	// Title is the tool's human title.
	Title string
	// Description replaces the tool's description; DescriptionAppend is
	// added to the description (replaced or not) as a sentence of its own.
	Description, DescriptionAppend string
	// The four hints; nil leaves the hint as the method's option or the
	// gateway's inference says.
	ReadOnlyHint, DestructiveHint, IdempotentHint, OpenWorldHint *bool
	// Arguments correct the request's fields, by path: a field name (its
	// proto or JSON name), or names joined by dots through singular
	// message fields ("execution.workflow_id").
	Arguments map[string]ArgumentOverride
}

// ArgumentOverride corrects one argument. Exactly one of its settings is
// given.
type ArgumentOverride struct {
	// Hidden leaves the argument out of the schema; a call that sends it
	// is refused.
	Hidden bool
	// Fixed is the value (JSON, as the schema takes it) the gateway sets
	// in every request; the argument is left out of the schema and a call
	// that sends it is refused, so no caller can choose another.
	Fixed json.RawMessage
	// Default is the value (JSON) the gateway sets when a call leaves the
	// argument out (or sends its zero value, which protobuf cannot tell
	// from absence); the schema shows it as the default.
	Default json.RawMessage
}

// overrideRules are a list of ToolOverride, checked.
type overrideRules struct {
	rules []overrideRule
}

type overrideRule struct {
	ToolOverride
	pattern string
	where   string // for errors: Origin, else owner[i]
	args    []argSpec
}

// argSpec is one argument override as written, checked for syntax only.
type argSpec struct {
	key   string // the path as written
	kind  argKind
	value json.RawMessage
	where string // the rule's where
	// rule is the rule's index in its list; glob says its pattern may
	// match several methods, some without the argument.
	rule int
	glob bool
}

// argKey names one argument of one rule, for the arguments no method had.
type argKey struct {
	rule int
	key  string
}

// errNoPath is a path the request does not have.
type errNoPath struct{ msg string }

func (e *errNoPath) Error() string { return e.msg }

type argKind uint8

const (
	argHidden argKind = iota
	argFixed
	argDefault
)

func (k argKind) String() string {
	return [...]string{"hidden", "fixed", "default"}[k]
}

// compileOverrides checks list's syntax; owner names the setting
// ("Options.Tools") in errors.
func compileOverrides(owner string, list []ToolOverride) (*overrideRules, error) {
	if len(list) == 0 {
		return nil, nil
	}
	r := &overrideRules{}
	for i, o := range list {
		where := o.Origin
		if where == "" {
			where = fmt.Sprintf("%s[%d]", owner, i)
		}
		p, err := methodglob.Compile(where+".Match", []string{o.Match})
		if err != nil {
			return nil, err
		}
		if o.Name != "" && !validToolName(o.Name) {
			return nil, fmt.Errorf("%s: name %q: want a portable tool name, 1 to 64 of a-z A-Z 0-9 _ -", where, o.Name)
		}
		rule := overrideRule{ToolOverride: o, pattern: p[0], where: where}
		keys := make([]string, 0, len(o.Arguments))
		for k := range o.Arguments {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			a := o.Arguments[k]
			spec := argSpec{key: k, where: where, rule: i, glob: strings.ContainsAny(p[0], "*?[")}
			n := 0
			if a.Hidden {
				n++
				spec.kind = argHidden
			}
			if len(a.Fixed) > 0 {
				n++
				spec.kind, spec.value = argFixed, a.Fixed
			}
			if len(a.Default) > 0 {
				n++
				spec.kind, spec.value = argDefault, a.Default
			}
			switch {
			case k == "" || strings.HasPrefix(k, ".") || strings.HasSuffix(k, ".") || strings.Contains(k, ".."):
				return nil, fmt.Errorf("%s: arguments %q: want a field name, or names joined by dots", where, k)
			case n != 1:
				return nil, fmt.Errorf("%s: arguments.%s: want exactly one of hidden, fixed or default, got %d", where, k, n)
			case spec.value != nil && !json.Valid(spec.value):
				return nil, fmt.Errorf("%s: arguments.%s.%s: not valid JSON", where, k, spec.kind)
			}
			rule.args = append(rule.args, spec)
		}
		r.rules = append(r.rules, rule)
	}
	return r, nil
}

// matching are the indexes of the rules that match method
// ("package.Service/Method"), in order.
func (r *overrideRules) matching(method string) []int {
	if r == nil {
		return nil
	}
	var out []int
	for i := range r.rules {
		if methodglob.Match(r.rules[i].pattern, method) {
			out = append(out, i)
		}
	}
	return out
}

// methodOverride is what the rules matching one method say, merged.
type methodOverride struct {
	rules *overrideRules
	idx   []int
	// opt is the method's (mcpgateway.v1.tool) option with the rules'
	// name, title, description and hints set over it; proto is the
	// option as the backend declares it (nil for none).
	opt, proto *mcpgatewayv1.Tool
	appendDesc string
	args       []argSpec
	// nameFrom is the rule that named the tool, for errors.
	nameFrom string
	// resolved are the rules' arguments the method has (applyOverride).
	resolved []argKey
}

// forMethod merges the rules matching m over its option to; nil when none
// matches.
func (r *overrideRules) forMethod(m protoreflect.MethodDescriptor, to *mcpgatewayv1.Tool) *methodOverride {
	idx := r.matching(methodPath(m))
	if len(idx) == 0 {
		return nil
	}
	ov := &methodOverride{rules: r, idx: idx, proto: to}
	opt := &mcpgatewayv1.Tool{}
	if to != nil {
		opt = proto.Clone(to).(*mcpgatewayv1.Tool)
	}
	for _, i := range idx {
		ru := &r.rules[i]
		if ru.Name != "" {
			opt.Name, ov.nameFrom = ru.Name, ru.where
		}
		if ru.Title != "" {
			opt.Title = ru.Title
		}
		if ru.Description != "" {
			opt.Description = ru.Description
		}
		if ru.DescriptionAppend != "" {
			ov.appendDesc = joinSentence(ov.appendDesc, ru.DescriptionAppend)
		}
		setHint(&opt.ReadOnlyHint, ru.ReadOnlyHint)
		setHint(&opt.DestructiveHint, ru.DestructiveHint)
		setHint(&opt.IdempotentHint, ru.IdempotentHint)
		setHint(&opt.OpenWorldHint, ru.OpenWorldHint)
		ov.args = append(ov.args, ru.args...)
	}
	ov.opt = opt
	return ov
}

func setHint(dst **bool, v *bool) {
	if v != nil {
		b := *v
		*dst = &b
	}
}

// joinSentence adds s to d as a sentence of its own.
func joinSentence(d, s string) string {
	s = strings.TrimSpace(s)
	d = strings.TrimSpace(d)
	switch {
	case s == "":
		return d
	case d == "":
		return s
	}
	if !strings.HasSuffix(d, ".") && !strings.HasSuffix(d, "!") && !strings.HasSuffix(d, "?") {
		d += "."
	}
	return d + " " + s
}

// applyOverride applies what compileTool could not take from the merged
// option: the sentence added to the description and the arguments.
func applyOverride(t *tool, m protoreflect.MethodDescriptor, ov *methodOverride, useProtoNames bool) error {
	if ov.appendDesc != "" {
		appendDescription(t, ov.appendDesc)
	}
	if len(ov.args) == 0 {
		return nil
	}
	args, err := compileArgs(m, ov.args, useProtoNames)
	if err != nil {
		return err
	}
	ov.resolved = args.resolved
	if len(args.list) == 0 {
		return nil
	}
	renoteArgs(t, nil, args)
	setArgs(t, args)
	return nil
}

// unlisted are the top-level arguments of args a caller cannot send, as
// the description names them.
func (a *argRules) unlisted() map[string]bool {
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

// renoteArgs writes again the notes of a description written from the
// method's structure ("Requires: ...", "Takes: ..."), which named the
// arguments of before (the gateway's rules, nil for none) and must not
// name those args hides or fixes.
func renoteArgs(t *tool, before, args *argRules) {
	sh := t.search.shape
	if sh == nil || (t.origin.description != SourceVerb && t.origin.description != SourceStructure) {
		return
	}
	was := sh.Without(before.unlisted()).Notes()
	now := sh.Without(args.unlisted()).Notes()
	if was == now {
		return
	}
	t.def.Description = strings.Replace(t.def.Description, was, now, 1)
	t.search.description = strings.Replace(t.search.description, was, now, 1)
}

// appendDescription adds s to t's description before the gateway's notes
// on calling it, and to what search indexes.
func appendDescription(t *tool, s string) {
	notes := strings.TrimPrefix(t.def.Description, t.search.description)
	t.search.description = joinSentence(t.search.description, s)
	t.def.Description = t.search.description + notes
}

// setArgs gives t its argument rules, which its validator applies
// (injector), and search facts without the arguments a caller cannot
// send.
func setArgs(t *tool, args *argRules) {
	t.args = args
	drop := make(map[string]bool)
	for _, r := range args.list {
		if r.kind != argDefault && len(r.path) == 1 {
			drop[string(r.path[0].Name())] = true
		}
	}
	if t.search.shape != nil {
		t.search.shape = t.search.shape.Without(args.unlisted())
	}
	if len(drop) > 0 {
		t.search.fields = strings.Join(slices.DeleteFunc(strings.Fields(t.search.fields), func(w string) bool { return drop[w] }), " ")
	}
}

// argRules are one tool's compiled argument overrides; they are the
// tool's validator's schema.Injector.
type argRules struct {
	list []argRule
	// fixed holds every fixed value, merged into each request.
	fixed proto.Message
	// stream: the tool's input is a client stream, whose schema holds
	// the request under "requests" items.
	stream bool
	// resolved are the specs the method has, for the rules' check.
	resolved []argKey
}

type argRule struct {
	argSpec
	path []protoreflect.FieldDescriptor
	// name is the path in the schema's names ("execution.workflowId").
	name string
	// dflt is a request holding the default alone, merged when the
	// caller left the argument out.
	dflt proto.Message
}

// compileArgs resolves specs against m's request; a later spec for the
// same path replaces an earlier one.
func compileArgs(m protoreflect.MethodDescriptor, specs []argSpec, useProtoNames bool) (*argRules, error) {
	in := m.Input()
	if !schema.IsObject(in) {
		return nil, fmt.Errorf("%w: %s: arguments: the request of %s (%s) is not a JSON object, so it has no arguments to correct", ErrToolOverride, specs[0].where, m.FullName(), in.FullName())
	}
	a := &argRules{stream: m.IsStreamingClient()}
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
		a.resolved = append(a.resolved, argKey{s.rule, s.key})
		if err != nil {
			return nil, fmt.Errorf("%w: %s: arguments.%s: %s: %w", ErrToolOverride, s.where, s.key, m.FullName(), err)
		}
		if i, ok := byPath[r.name]; ok {
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
func resolveArg(md protoreflect.MessageDescriptor, s argSpec, useProtoNames bool) (argRule, error) {
	r := argRule{argSpec: s}
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
func (a *argRules) Inject(msg protoreflect.Message) []schema.Violation {
	var vs []schema.Violation
	for _, r := range a.list {
		if r.kind == argFixed {
			if other := oneofRival(msg, r.path); other != nil {
				// Merging would clear the caller's choice in silence.
				vs = append(vs, schema.Violation{Path: parentPath(r.name) + other.JSONName(), Rule: "override.fixed",
					Expected: "the gateway's configuration sets " + r.name + ", another member of its oneof, which no call can change: leave it out"})
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
		if r.kind == argDefault && !hasPath(msg, r.path) {
			proto.Merge(m, r.dflt)
		}
	}
	if a.fixed != nil {
		proto.Merge(m, a.fixed)
	}
	return nil
}

// Supplies is schema.Injector: the fixed and default arguments.
func (a *argRules) Supplies(path string) bool {
	for _, r := range a.list {
		if r.kind != argHidden && r.name == path {
			return true
		}
	}
	return false
}

// oneofRival is the member of the oneof of path's last field that msg
// sets, when it is another field; nil otherwise.
func oneofRival(msg protoreflect.Message, path []protoreflect.FieldDescriptor) protoreflect.FieldDescriptor {
	last := path[len(path)-1]
	od := last.ContainingOneof()
	if od == nil || od.IsSynthetic() {
		return nil
	}
	for _, fd := range path[:len(path)-1] {
		if !msg.Has(fd) {
			return nil
		}
		msg = msg.Get(fd).Message()
	}
	if set := msg.WhichOneof(od); set != nil && set.Number() != last.Number() {
		return set
	}
	return nil
}

// parentPath is name without its last segment, with its dot.
func parentPath(name string) string {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return name[:i+1]
	}
	return ""
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

// rewriteSchema is the input schema in with the rules applied: hidden and
// fixed arguments left out (and out of "required"), defaults shown. A
// message reached through "$ref" is written out in place first, so the
// change stays with this argument.
func (a *argRules) rewriteSchema(in json.RawMessage) (json.RawMessage, error) {
	doc, err := parseOrdered(in)
	if err != nil {
		return nil, err
	}
	root, ok := doc.(*jobj)
	if !ok {
		return nil, errors.New("input schema is not an object")
	}
	defs, _ := root.get("$defs").(*jobj)
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
		props, _ := node.get("properties").(*jobj)
		if props == nil {
			continue
		}
		last := segs[len(segs)-1]
		if r.kind == argDefault {
			if p, ok := props.get(last).(*jobj); ok {
				p.set("default", json.RawMessage(compactJSON(r.value)))
			}
			continue
		}
		props.del(last)
		if req, ok := node.get("required").([]any); ok {
			req = slices.DeleteFunc(req, func(v any) bool { return v == last })
			if len(req) == 0 {
				node.del("required")
			} else {
				node.set("required", req)
			}
		}
	}
	return writeOrdered(nil, doc), nil
}

// child is node's property name, written out in place when it refers to
// a definition.
func child(node *jobj, name string) *jobj {
	if node == nil {
		return nil
	}
	props, _ := node.get("properties").(*jobj)
	if props == nil {
		return nil
	}
	c, _ := props.get(name).(*jobj)
	return c
}

// deref writes node's "$ref" out in place (a copy of the definition), so
// that changing it leaves the definition's other uses alone.
func deref(node *jobj, defs *jobj) *jobj {
	if node == nil {
		return nil
	}
	ref, ok := node.get("$ref").(string)
	if !ok || defs == nil {
		return node
	}
	def, _ := defs.get(strings.TrimPrefix(ref, "#/$defs/")).(*jobj)
	if def == nil {
		return node
	}
	cp := copyValue(def).(*jobj)
	node.del("$ref")
	for _, k := range cp.keys {
		if node.get(k) == nil {
			node.set(k, cp.vals[k])
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

// checkOverrideNames refuses a name a rule gives that the tool could not
// take: a rule whose name matches several methods of the backend, or a
// name another method's tool has. (An option's name falls back to the
// derived one with a warning; an operator's is a mistake to fix.)
func checkOverrideNames(methods []protoreflect.MethodDescriptor, names []string, ovs map[protoreflect.FullName]*methodOverride) error {
	claimed := make(map[string][]string)
	for _, m := range methods {
		if ov := ovs[m.FullName()]; ov != nil && ov.nameFrom != "" {
			claimed[ov.opt.Name] = append(claimed[ov.opt.Name], string(m.FullName()))
		}
	}
	for i, m := range methods {
		ov := ovs[m.FullName()]
		if ov == nil || ov.nameFrom == "" {
			continue
		}
		if c := claimed[ov.opt.Name]; len(c) > 1 {
			return fmt.Errorf("%w: %s: name %q is given to %d methods (%s): a name is one tool's; narrow the rule's match", ErrToolOverride, ov.nameFrom, ov.opt.Name, len(c), strings.Join(c, ", "))
		}
		if names[i] != ov.opt.Name {
			return fmt.Errorf("%w: %s: name %q is another tool's name; give %s another", ErrToolOverride, ov.nameFrom, ov.opt.Name, m.FullName())
		}
	}
	return nil
}

// unmatched are the rules of r that no index in matched names, and the
// arguments of those matched that no method they matched has.
func (r *overrideRules) unmatched(matched map[int]bool, resolved map[argKey]bool) []string {
	if r == nil {
		return nil
	}
	var out []string
	for i, ru := range r.rules {
		if !matched[i] {
			out = append(out, fmt.Sprintf("%s (match %q): matches no method any backend exposes", ru.where, ru.Match))
			continue
		}
		for _, a := range ru.args {
			if !resolved[argKey{i, a.key}] {
				out = append(out, fmt.Sprintf("%s (match %q): arguments.%s: no method it matches has that field", ru.where, ru.Match, a.key))
			}
		}
	}
	return out
}

// checkOverrides says what an operator must know of the tool overrides
// after a rebuild from parts: a rule that matches no method is New's
// error at start once every backend is discovered, a warning otherwise.
func (g *Gateway) checkOverrides(c *catalog, parts []*backendTools, first bool, undiscovered []string) error {
	matched := make(map[int]bool)
	resolved := make(map[argKey]bool)
	for _, bt := range parts {
		for i := range bt.matchedRules {
			matched[i] = true
		}
		for k := range bt.resolvedArgs {
			resolved[k] = true
		}
	}
	un := g.overrides.unmatched(matched, resolved)
	for i, ts := range g.toolsets {
		un = append(un, ts.overrides.unmatched(c.toolsets[i].matchedRules, c.toolsets[i].resolvedArgs)...)
	}
	if len(un) == 0 {
		return nil
	}
	if first && len(undiscovered) == 0 {
		return fmt.Errorf("%w: %s (see what each method has with gateway catalog)", ErrToolOverride, strings.Join(un, "; "))
	}
	g.opts.Logger.Warn("tool override matches no method: it applies to none until a method it matches appears", "rules", un, "not_discovered", undiscovered)
	return nil
}

// toolsetCopy is a toolset's own copy of t with the toolset's rules
// applied over what the gateway's made of it; nil when no rule of r
// matches t. The copy shares what the rules leave alone (the call path,
// scopes, settings, the schemas it derives its own from). matched
// collects the rules that matched.
func (r *overrideRules) toolsetCopy(t *tool, useProtoNames bool, matched map[int]bool, resolved map[argKey]bool) (*tool, error) {
	if r == nil || t.schemas == nil {
		return nil, nil
	}
	m := t.schemas.m
	ov := r.forMethod(m, nil)
	if ov == nil {
		return nil, nil
	}
	for _, i := range ov.idx {
		matched[i] = true
	}
	nt := *t
	o := &nt.origin
	if ov.opt.Name != "" {
		nt.def.Name, o.name = ov.opt.Name, SourceConfig
	}
	ann := &mcp.ToolAnnotations{}
	if t.def.Annotations != nil {
		a := *t.def.Annotations
		ann = &a
	}
	if ov.opt.Title != "" {
		nt.def.Title, ann.Title, o.title = ov.opt.Title, ov.opt.Title, SourceConfig
	}
	overlayHints(ann, ov.opt)
	for i, h := range []*bool{ov.opt.ReadOnlyHint, ov.opt.DestructiveHint, ov.opt.IdempotentHint, ov.opt.OpenWorldHint} {
		if h != nil {
			o.hints[i] = SourceConfig
		}
	}
	nt.def.Annotations = ann
	if d := strings.TrimSpace(ov.opt.Description); d != "" {
		// What the gateway adds on calling the tool (paging, streams,
		// operations) stays; what describe wrote of its structure goes.
		notes := strings.TrimPrefix(t.def.Description, t.search.description)
		if sh := t.search.shape; sh != nil && (o.description == SourceVerb || o.description == SourceStructure) {
			notes = strings.TrimPrefix(notes, sh.Notes())
		}
		nt.search.description, nt.def.Description, o.description = d, d+notes, SourceConfig
	}
	if ov.appendDesc != "" {
		appendDescription(&nt, ov.appendDesc)
		o.appended = true
	}
	if len(ov.args) > 0 {
		own, err := compileArgs(m, ov.args, useProtoNames)
		if err != nil {
			return nil, err
		}
		for _, k := range own.resolved {
			resolved[k] = true
		}
		if len(own.list) == 0 {
			return &nt, nil
		}
		// The validator applies the gateway's rules and the toolset's;
		// the schema is the catalog's with the toolset's applied.
		var specs []argSpec
		if t.args != nil {
			for _, a := range t.args.list {
				specs = append(specs, a.argSpec)
			}
		}
		all, err := compileArgs(m, append(specs, ov.args...), useProtoNames)
		if err != nil {
			return nil, err
		}
		renoteArgs(&nt, t.args, all)
		setArgs(&nt, all)
		nt.schemas = &toolSchemas{tool: &nt, m: m, b: t.schemas.b, base: t.schemas, derive: own}
	}
	return &nt, nil
}

// CheckToolOverrides checks what can be checked of list without the
// methods it matches: the patterns, the names, one setting per argument,
// JSON values. The rest (a rule that matches nothing, an unknown argument,
// a value of the wrong type) is checked against each backend's methods at
// discovery.
func CheckToolOverrides(list []ToolOverride) error {
	if _, err := compileOverrides("Options.Tools", list); err != nil {
		return fmt.Errorf("%w: %w", ErrToolOverride, err)
	}
	return nil
}

// CheckToolOverridesOffline checks opts.Tools and the toolsets' Tools
// against the methods of the backends whose descriptors are files alone
// (NoReflection with Files), as discovery would, without connecting to
// any backend: --check-config's check. checked names those backends;
// when they are all the backends, a rule that matches no method is an
// error too. A backend that serves reflection is checked at discovery
// (New, or `gateway catalog`).
func CheckToolOverridesOffline(ctx context.Context, backends []Backend, opts *Options) (checked []string, err error) {
	if opts == nil || len(opts.Tools) == 0 && !slices.ContainsFunc(opts.Toolsets, func(ts Toolset) bool { return len(ts.Tools) > 0 }) {
		return nil, nil
	}
	rules, err := compileOverrides("Options.Tools", opts.Tools)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrToolOverride, err)
	}
	filter, err := newMethodFilter("Options", opts.Include, opts.Exclude)
	if err != nil {
		return nil, err
	}
	matched := make(map[int]bool)
	resolved := make(map[argKey]bool)
	var tools []*tool
	for _, b := range backends {
		if !b.NoReflection || b.Files == nil || b.Source != nil {
			continue
		}
		res, err := b.Files.Discover(ctx)
		if err != nil {
			return checked, fmt.Errorf("backend %s: %w", b.Name, err)
		}
		settings, err := newBackendSettings(b)
		if err != nil {
			return checked, fmt.Errorf("backend %s: %w", b.Name, err)
		}
		bt, err := compileBackend(b.Name, res, b.Conn, catalogOptions{
			exposeHealth: opts.ExposeHealth, exposeInternal: opts.ExposeInternal, useProtoNames: opts.UseProtoNames,
			filter: filter, logger: slog.New(slog.DiscardHandler), backend: settings, overrides: rules,
			deadlines: deadlines{call: DefaultCallTimeout, stream: time.Minute}, maxResultBytes: -1,
		})
		if err != nil {
			return checked, fmt.Errorf("backend %s: %w", b.Name, err)
		}
		for i := range bt.matchedRules {
			matched[i] = true
		}
		for k := range bt.resolvedArgs {
			resolved[k] = true
		}
		tools = append(tools, bt.tools...)
		checked = append(checked, b.Name)
	}
	complete := len(checked) == len(backends)
	var un []string
	if complete {
		un = rules.unmatched(matched, resolved)
	}
	for i, ts := range opts.Toolsets {
		tr, err := compileOverrides(fmt.Sprintf("Options.Toolsets[%d].Tools", i), ts.Tools)
		if err != nil {
			return checked, fmt.Errorf("%w: %w", ErrToolOverride, err)
		}
		if tr == nil {
			continue
		}
		tf, _ := newMethodFilter("", ts.Include, ts.Exclude)
		tm := make(map[int]bool)
		tres := make(map[argKey]bool)
		for _, t := range tools {
			if !tf.matchPath(t.method[1:]) {
				continue
			}
			if _, err := tr.toolsetCopy(t, opts.UseProtoNames, tm, tres); err != nil {
				return checked, fmt.Errorf("toolset %s: %w", ts.Name, err)
			}
		}
		if complete {
			un = append(un, tr.unmatched(tm, tres)...)
		}
	}
	if len(un) > 0 {
		return checked, fmt.Errorf("%w: %s", ErrToolOverride, strings.Join(un, "; "))
	}
	return checked, nil
}

// injector is what completes t's requests: its argument rules, or none.
func (t *tool) injector() schema.Injector {
	if t.args == nil {
		return nil // not a typed nil: most tools have none
	}
	return t.args
}
