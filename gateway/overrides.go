package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/toolname"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/internal/methodglob"
	mcpgatewayv1 "github.com/grpc-mcp-gateway/gateway/proto/mcpgateway/v1"
)

// Tool overrides (Options.Catalog.Tools, Toolset.Tools; the config file's tools:).
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
	// Options.Catalog.Include takes them.
	Match string
	// Origin is where the rule was written, for errors ("gateway.yaml:12
	// tools[0]"); empty: Options.Catalog.Tools[i] or Toolset.Tools[i].
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
// ("Options.Catalog.Tools") in errors.
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
		if o.Name != "" && !toolname.Valid(o.Name) {
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

// renoteArgs writes again the notes of a description written from the
// method's structure ("Requires: ...", "Takes: ..."), which named the
// arguments of before (the gateway's rules, nil for none) and must not
// name those args hides or fixes.
func renoteArgs(t *tool, before, args *argRules) {
	sh := t.search.Shape
	if sh == nil || (t.origin.description != SourceVerb && t.origin.description != SourceStructure) {
		return
	}
	was := sh.Without(before.unlisted()).Notes()
	now := sh.Without(args.unlisted()).Notes()
	if was == now {
		return
	}
	t.def.Description = strings.Replace(t.def.Description, was, now, 1)
	t.search.Description = strings.Replace(t.search.Description, was, now, 1)
}

// appendDescription adds s to t's description before the gateway's notes
// on calling it, and to what search indexes.
func appendDescription(t *tool, s string) {
	notes := strings.TrimPrefix(t.def.Description, t.search.Description)
	t.search.Description = joinSentence(t.search.Description, s)
	t.def.Description = t.search.Description + notes
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
	if t.search.Shape != nil {
		t.search.Shape = t.search.Shape.Without(args.unlisted())
	}
	if len(drop) > 0 {
		t.search.Fields = strings.Join(slices.DeleteFunc(strings.Fields(t.search.Fields), func(w string) bool { return drop[w] }), " ")
	}
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
		notes := strings.TrimPrefix(t.def.Description, t.search.Description)
		if sh := t.search.Shape; sh != nil && (o.description == SourceVerb || o.description == SourceStructure) {
			notes = strings.TrimPrefix(notes, sh.Notes())
		}
		nt.search.Description, nt.def.Description, o.description = d, d+notes, SourceConfig
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
	if _, err := compileOverrides("Options.Catalog.Tools", list); err != nil {
		return fmt.Errorf("%w: %w", ErrToolOverride, err)
	}
	return nil
}
