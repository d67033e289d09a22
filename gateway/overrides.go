package gateway

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/overrides"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/schema"
)

// Tool overrides (Options.Catalog.Tools, Toolset.Tools; the config file's
// tools:), as the gateway applies them. gateway/internal/overrides
// compiles the rules (matching them to methods, merging them over the
// (mcpgateway.v1.tool) option, the argument rules, the input schema's
// rewrite); this file applies what it compiles to a tool (the added
// sentence, the notes that named a hidden argument, the search facts),
// makes a toolset's copies of its tools, and checks after a discovery
// that every rule matched.

// ErrToolOverride is wrapped by the errors of a tool override that cannot
// apply: a rule that matches no method once every backend is discovered,
// an argument path the request does not have, a fixed or default value
// of the wrong type, a name given to several methods. New fails with it
// at start; a later discovery logs it and keeps the backend's last tools.
var ErrToolOverride = overrides.ErrToolOverride

// ToolOverride corrects the tools of the methods Match selects: the
// tool's name, title, description (replaced or added to), hints, and
// arguments (hidden, fixed, default), each field as its doc in
// gateway/internal/overrides says and docs/curation.md shows.
type ToolOverride = overrides.ToolOverride

// ArgumentOverride corrects one argument: exactly one of Hidden, Fixed
// (a JSON value no call can change) or Default (a JSON value for a call
// that leaves the argument out) is given.
type ArgumentOverride = overrides.ArgumentOverride

// applyOverride applies what compileTool could not take from the merged
// option: the sentence added to the description and the arguments.
func applyOverride(t *tool, m protoreflect.MethodDescriptor, ov *overrides.Method, useProtoNames bool) error {
	if ov.AppendDesc != "" {
		appendDescription(t, ov.AppendDesc)
	}
	if len(ov.Args) == 0 {
		return nil
	}
	args, err := overrides.CompileArgs(m, ov.Args, useProtoNames)
	if err != nil {
		return err
	}
	ov.Resolved = args.Resolved()
	if args.Empty() {
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
func renoteArgs(t *tool, before, args *overrides.Args) {
	sh := t.Search.Shape
	if sh == nil || (t.Origin.description != SourceVerb && t.Origin.description != SourceStructure) {
		return
	}
	was := sh.Without(before.Unlisted()).Notes()
	now := sh.Without(args.Unlisted()).Notes()
	if was == now {
		return
	}
	t.Definition.Description = strings.Replace(t.Definition.Description, was, now, 1)
	t.Search.Description = strings.Replace(t.Search.Description, was, now, 1)
}

// appendDescription adds s to t's description before the gateway's notes
// on calling it, and to what search indexes.
func appendDescription(t *tool, s string) {
	notes := strings.TrimPrefix(t.Definition.Description, t.Search.Description)
	t.Search.Description = overrides.JoinSentence(t.Search.Description, s)
	t.Definition.Description = t.Search.Description + notes
}

// setArgs gives t its argument rules, which its validator applies
// (injector), and search facts without the arguments a caller cannot
// send.
func setArgs(t *tool, args *overrides.Args) {
	t.Args = args
	drop := args.Removed()
	if t.Search.Shape != nil {
		t.Search.Shape = t.Search.Shape.Without(args.Unlisted())
	}
	if len(drop) > 0 {
		t.Search.Fields = strings.Join(slices.DeleteFunc(strings.Fields(t.Search.Fields), func(w string) bool { return drop[w] }), " ")
	}
}

// checkOverrides says what an operator must know of the tool overrides
// after a rebuild from parts: a rule that matches no method is New's
// error at start once every backend is discovered, a warning otherwise.
func (g *Gateway) checkOverrides(c *catalog, parts []*backendTools, first bool, undiscovered []string) error {
	matched := make(map[int]bool)
	resolved := make(map[overrides.ArgKey]bool)
	for _, bt := range parts {
		for i := range bt.matchedRules {
			matched[i] = true
		}
		for k := range bt.resolvedArgs {
			resolved[k] = true
		}
	}
	un := g.overrides.Unmatched(matched, resolved)
	for i, ts := range g.toolsets {
		un = append(un, ts.overrides.Unmatched(c.toolsets[i].matchedRules, c.toolsets[i].resolvedArgs)...)
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
func toolsetCopy(r *overrides.Rules, t *tool, useProtoNames bool, matched map[int]bool, resolved map[overrides.ArgKey]bool) (*tool, error) {
	if r == nil || t.Schemas == nil {
		return nil, nil
	}
	m := t.Schemas.m
	ov := r.ForMethod(m, nil)
	if ov == nil {
		return nil, nil
	}
	for _, i := range ov.Idx {
		matched[i] = true
	}
	nt := *t
	o := &nt.Origin
	if ov.Opt.Name != "" {
		nt.Definition.Name, o.name = ov.Opt.Name, SourceConfig
	}
	ann := &mcp.ToolAnnotations{}
	if t.Definition.Annotations != nil {
		a := *t.Definition.Annotations
		ann = &a
	}
	if ov.Opt.Title != "" {
		nt.Definition.Title, ann.Title, o.title = ov.Opt.Title, ov.Opt.Title, SourceConfig
	}
	overlayHints(ann, ov.Opt)
	for i, h := range []*bool{ov.Opt.ReadOnlyHint, ov.Opt.DestructiveHint, ov.Opt.IdempotentHint, ov.Opt.OpenWorldHint} {
		if h != nil {
			o.hints[i] = SourceConfig
		}
	}
	nt.Definition.Annotations = ann
	if d := strings.TrimSpace(ov.Opt.Description); d != "" {
		// What the gateway adds on calling the tool (paging, streams,
		// operations) stays; what describe wrote of its structure goes.
		notes := strings.TrimPrefix(t.Definition.Description, t.Search.Description)
		if sh := t.Search.Shape; sh != nil && (o.description == SourceVerb || o.description == SourceStructure) {
			notes = strings.TrimPrefix(notes, sh.Notes())
		}
		nt.Search.Description, nt.Definition.Description, o.description = d, d+notes, SourceConfig
	}
	if ov.AppendDesc != "" {
		appendDescription(&nt, ov.AppendDesc)
		o.appended = true
	}
	if len(ov.Args) > 0 {
		own, err := overrides.CompileArgs(m, ov.Args, useProtoNames)
		if err != nil {
			return nil, err
		}
		for _, k := range own.Resolved() {
			resolved[k] = true
		}
		if own.Empty() {
			return &nt, nil
		}
		// The validator applies the gateway's rules and the toolset's;
		// the schema is the catalog's with the toolset's applied.
		var specs []overrides.ArgSpec
		if t.Args != nil {
			specs = t.Args.Specs()
		}
		all, err := overrides.CompileArgs(m, append(specs, ov.Args...), useProtoNames)
		if err != nil {
			return nil, err
		}
		renoteArgs(&nt, t.Args, all)
		setArgs(&nt, all)
		nt.Schemas = &toolSchemas{tool: &nt, m: m, b: t.Schemas.b, base: t.Schemas, derive: own}
	}
	return &nt, nil
}

// CheckToolOverrides checks what can be checked of list without the
// methods it matches: the patterns, the names, one setting per argument,
// JSON values. The rest (a rule that matches nothing, an unknown argument,
// a value of the wrong type) is checked against each backend's methods at
// discovery.
func CheckToolOverrides(list []ToolOverride) error {
	if _, err := overrides.Compile("Options.Catalog.Tools", list); err != nil {
		return fmt.Errorf("%w: %w", ErrToolOverride, err)
	}
	return nil
}

// injector is what completes t's requests: its argument rules, or none.
func (t *tool) injector() schema.Injector {
	if t.Args == nil {
		return nil // not a typed nil: most tools have none
	}
	return t.Args
}
