// Package overrides compiles the operator's tool overrides
// (Options.Catalog.Tools, Toolset.Tools; the config file's tools:).
//
// An operator corrects what the gateway made of a method without touching
// the backend: its name, title, description and hints, and its arguments
// (hidden, fixed, default). A rule's name, title, description and hints
// are merged into the method's (mcpgateway.v1.tool) option, over what the
// option says, before the method is compiled (Rules.ForMethod), so they
// take the one path the option takes: naming and its collision rules, the
// hints' consistency, the retry decision, the description search indexes,
// the scope rules by tool name (which follow the base name). Arguments
// are compiled with the tool, once (CompileArgs): the input schema leaves
// hidden and fixed arguments out and shows defaults (Args.RewriteSchema);
// the validator refuses a hidden or fixed argument a caller sends, then
// merges the fixed values and the defaults into the converted request (a
// precompiled message each; Args is its schema.Injector), before the
// required fields and the backend's rules are checked. Every call path
// (typed, call_tool, tasks, streams) converts its arguments there.
//
// Every rule that matches a method applies, in order: a later rule's
// setting wins over an earlier one's. A toolset's rules apply on top of
// the gateway's, to its own copies of its tools.
//
// This package knows rules, methods and schemas; the gateway applies what
// it compiles to its tools (the description, the search facts, where each
// part came from) and checks the rules against every backend's methods.
package overrides

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/toolname"
	"github.com/grpc-mcp-gateway/gateway/internal/methodglob"
	"github.com/grpc-mcp-gateway/gateway/internal/option"
	mcpgatewayv1 "github.com/grpc-mcp-gateway/gateway/proto/mcpgateway/v1"
)

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

// Rules are a list of ToolOverride, checked. A nil *Rules has no rule.
type Rules struct {
	rules []rule
}

type rule struct {
	ToolOverride
	pattern string
	where   string // for errors: Origin, else owner[i]
	args    []ArgSpec
}

// ArgSpec is one argument override as written, checked for syntax only.
type ArgSpec struct {
	key   string // the path as written
	kind  argKind
	value json.RawMessage
	where string // the rule's where
	// rule is the rule's index in its list; glob says its pattern may
	// match several methods, some without the argument.
	rule int
	glob bool
}

// ArgKey names one argument of one rule, for the arguments no method had
// (Rules.Unmatched).
type ArgKey struct {
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

// Compile checks list's syntax; owner is the option's path
// ("Options.Catalog.Tools"). A rule without an Origin is refused with an
// *option.Error on the field at fault ("Options.Catalog.Tools[2].Name"),
// whose Err names the value and what was expected; one with an Origin
// (the caller's own words for where it was written) with a plain error
// that starts with it. No rule: nil.
func Compile(owner string, list []ToolOverride) (*Rules, error) {
	if len(list) == 0 {
		return nil, nil
	}
	r := &Rules{}
	for i, o := range list {
		where := o.Origin
		if where == "" {
			where = fmt.Sprintf("%s[%d]", owner, i)
		}
		// bad is the error about field of the rule (".Name"); written is
		// how field is named after an Origin ("name").
		bad := func(field, written string, err error) error {
			if o.Origin != "" {
				return fmt.Errorf("%s: %s: %w", o.Origin, written, err)
			}
			return &option.Error{Option: where + field, Err: err}
		}
		var p []string
		var err error
		if o.Origin != "" {
			p, err = methodglob.Compile(where+".Match", []string{o.Match})
		} else {
			p, err = methodglob.CompileOption(where+".Match", []string{o.Match})
		}
		if err != nil {
			return nil, err
		}
		if o.Name != "" && !toolname.Valid(o.Name) {
			return nil, bad(".Name", "name", fmt.Errorf("%q: want a portable tool name, 1 to 64 of a-z A-Z 0-9 _ -", o.Name))
		}
		ru := rule{ToolOverride: o, pattern: p[0], where: where}
		keys := make([]string, 0, len(o.Arguments))
		for k := range o.Arguments {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			a := o.Arguments[k]
			spec := ArgSpec{key: k, where: where, rule: i, glob: strings.ContainsAny(p[0], "*?[")}
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
				return nil, bad(".Arguments", "arguments", fmt.Errorf("%q: want a field name, or names joined by dots", k))
			case n != 1:
				return nil, bad(fmt.Sprintf(".Arguments[%q]", k), "arguments."+k, fmt.Errorf("want exactly one of hidden, fixed or default, got %d", n))
			case spec.value != nil && !json.Valid(spec.value):
				field := map[argKind]string{argFixed: ".Fixed", argDefault: ".Default"}[spec.kind]
				return nil, bad(fmt.Sprintf(".Arguments[%q]%s", k, field), "arguments."+k+"."+spec.kind.String(), errors.New("not valid JSON"))
			}
			ru.args = append(ru.args, spec)
		}
		r.rules = append(r.rules, ru)
	}
	return r, nil
}

// matching are the indexes of the rules that match method
// ("package.Service/Method"), in order.
func (r *Rules) matching(method string) []int {
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

// Method is what the rules matching one method say, merged.
type Method struct {
	rules *Rules
	// Idx are the indexes of the rules that match, in order.
	Idx []int
	// Opt is the method's (mcpgateway.v1.tool) option with the rules'
	// name, title, description and hints set over it; Proto is the
	// option as the backend declares it (nil for none).
	Opt, Proto *mcpgatewayv1.Tool
	// AppendDesc is what the rules add to the description, joined.
	AppendDesc string
	// Args are the rules' argument overrides, in order, for CompileArgs.
	Args []ArgSpec
	// NameFrom is the rule that named the tool, for errors; empty when
	// none did.
	NameFrom string
	// Resolved are the rules' arguments the method has, set by whoever
	// compiles Args, for Rules.Unmatched.
	Resolved []ArgKey
}

// Rules are the rules that match, in order.
func (m *Method) Rules() []*ToolOverride {
	out := make([]*ToolOverride, len(m.Idx))
	for i, k := range m.Idx {
		out[i] = &m.rules.rules[k].ToolOverride
	}
	return out
}

// ForMethod merges the rules matching m over its option to; nil when none
// matches.
func (r *Rules) ForMethod(m protoreflect.MethodDescriptor, to *mcpgatewayv1.Tool) *Method {
	idx := r.matching(string(m.Parent().FullName()) + "/" + string(m.Name()))
	if len(idx) == 0 {
		return nil
	}
	ov := &Method{rules: r, Idx: idx, Proto: to}
	opt := &mcpgatewayv1.Tool{}
	if to != nil {
		opt = proto.Clone(to).(*mcpgatewayv1.Tool)
	}
	for _, i := range idx {
		ru := &r.rules[i]
		if ru.Name != "" {
			opt.Name, ov.NameFrom = ru.Name, ru.where
		}
		if ru.Title != "" {
			opt.Title = ru.Title
		}
		if ru.Description != "" {
			opt.Description = ru.Description
		}
		if ru.DescriptionAppend != "" {
			ov.AppendDesc = JoinSentence(ov.AppendDesc, ru.DescriptionAppend)
		}
		setHint(&opt.ReadOnlyHint, ru.ReadOnlyHint)
		setHint(&opt.DestructiveHint, ru.DestructiveHint)
		setHint(&opt.IdempotentHint, ru.IdempotentHint)
		setHint(&opt.OpenWorldHint, ru.OpenWorldHint)
		ov.Args = append(ov.Args, ru.args...)
	}
	ov.Opt = opt
	return ov
}

func setHint(dst **bool, v *bool) {
	if v != nil {
		b := *v
		*dst = &b
	}
}

// JoinSentence adds s to d as a sentence of its own.
func JoinSentence(d, s string) string {
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

// CheckNames refuses a name a rule gives that the tool could not take: a
// rule whose name matches several methods of the backend, or a name
// another method's tool has. names are the tools' names, one per method;
// ovs the methods' merged rules. (An option's name falls back to the
// derived one with a warning; an operator's is a mistake to fix.)
func CheckNames(methods []protoreflect.MethodDescriptor, names []string, ovs map[protoreflect.FullName]*Method) error {
	claimed := make(map[string][]string)
	for _, m := range methods {
		if ov := ovs[m.FullName()]; ov != nil && ov.NameFrom != "" {
			claimed[ov.Opt.Name] = append(claimed[ov.Opt.Name], string(m.FullName()))
		}
	}
	for i, m := range methods {
		ov := ovs[m.FullName()]
		if ov == nil || ov.NameFrom == "" {
			continue
		}
		if c := claimed[ov.Opt.Name]; len(c) > 1 {
			return fmt.Errorf("%w: %s: name %q is given to %d methods (%s): a name is one tool's; narrow the rule's match", ErrToolOverride, ov.NameFrom, ov.Opt.Name, len(c), strings.Join(c, ", "))
		}
		if names[i] != ov.Opt.Name {
			return fmt.Errorf("%w: %s: name %q is another tool's name; give %s another", ErrToolOverride, ov.NameFrom, ov.Opt.Name, m.FullName())
		}
	}
	return nil
}

// Unmatched are the rules of r that no index in matched names, and the
// arguments of those matched that no method they matched has.
func (r *Rules) Unmatched(matched map[int]bool, resolved map[ArgKey]bool) []string {
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
			if !resolved[ArgKey{i, a.key}] {
				out = append(out, fmt.Sprintf("%s (match %q): arguments.%s: no method it matches has that field", ru.where, ru.Match, a.key))
			}
		}
	}
	return out
}
