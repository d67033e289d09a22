package compiled

import (
	"slices"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/overrides"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/internal/schema"
)

// applyOverride applies what compileTool could not take from the merged
// option: the sentence added to the description and the arguments.
func applyOverride(t *Tool, m protoreflect.MethodDescriptor, ov *overrides.Method, useProtoNames bool) error {
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
func renoteArgs(t *Tool, before, args *overrides.Args) {
	sh := t.Search.Shape
	if sh == nil || (t.Origin.Description != SourceVerb && t.Origin.Description != SourceStructure) {
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
func appendDescription(t *Tool, s string) {
	notes := strings.TrimPrefix(t.Definition.Description, t.Search.Description)
	t.Search.Description = overrides.JoinSentence(t.Search.Description, s)
	t.Definition.Description = t.Search.Description + notes
}

// setArgs gives t its argument rules, which its validator applies
// (injector), and search facts without the arguments a caller cannot
// send.
func setArgs(t *Tool, args *overrides.Args) {
	t.Args = args
	drop := args.Removed()
	if t.Search.Shape != nil {
		t.Search.Shape = t.Search.Shape.Without(args.Unlisted())
	}
	if len(drop) > 0 {
		t.Search.Fields = strings.Join(slices.DeleteFunc(strings.Fields(t.Search.Fields), func(w string) bool { return drop[w] }), " ")
	}
}

// ToolsetCopy is a toolset's own copy of t with the toolset's rules
// applied over what the gateway's made of it; nil when no rule of r
// matches t. The copy shares what the rules leave alone (the call path,
// scopes, settings, the schemas it derives its own from). matched
// collects the rules that matched.
func ToolsetCopy(r *overrides.Rules, t *Tool, useProtoNames bool, matched map[int]bool, resolved map[overrides.ArgKey]bool) (*Tool, error) {
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
		nt.Definition.Name, o.Name = ov.Opt.Name, SourceConfig
	}
	ann := &mcp.ToolAnnotations{}
	if t.Definition.Annotations != nil {
		a := *t.Definition.Annotations
		ann = &a
	}
	if ov.Opt.Title != "" {
		nt.Definition.Title, ann.Title, o.Title = ov.Opt.Title, ov.Opt.Title, SourceConfig
	}
	overlayHints(ann, ov.Opt)
	for i, h := range []*bool{ov.Opt.ReadOnlyHint, ov.Opt.DestructiveHint, ov.Opt.IdempotentHint, ov.Opt.OpenWorldHint} {
		if h != nil {
			o.Hints[i] = SourceConfig
		}
	}
	nt.Definition.Annotations = ann
	if d := strings.TrimSpace(ov.Opt.Description); d != "" {
		// What the gateway adds on calling the tool (paging, streams,
		// operations) stays; what describe wrote of its structure goes.
		notes := strings.TrimPrefix(t.Definition.Description, t.Search.Description)
		if sh := t.Search.Shape; sh != nil && (o.Description == SourceVerb || o.Description == SourceStructure) {
			notes = strings.TrimPrefix(notes, sh.Notes())
		}
		nt.Search.Description, nt.Definition.Description, o.Description = d, d+notes, SourceConfig
	}
	if ov.AppendDesc != "" {
		appendDescription(&nt, ov.AppendDesc)
		o.Appended = true
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
		nt.Schemas = &Schemas{tool: &nt, m: m, b: t.Schemas.b, base: t.Schemas, derive: own}
	}
	return &nt, nil
}

// injector is what completes t's requests: its argument rules, or none.
func (t *Tool) Injector() schema.Injector {
	if t.Args == nil {
		return nil // not a typed nil: most tools have none
	}
	return t.Args
}
