package compiled

import (
	"slices"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/describe"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/overrides"
	mcpgatewayv1 "github.com/grpc-mcp-gateway/gateway/proto/mcpgateway/v1"
)

// Source says where a part of a tool's definition came from.
type Source string

// The sources of a tool's parts.
const (
	// SourceOption: the service's (mcpgateway.v1.tool) option.
	SourceOption Source = "proto option"
	// SourceDeclared: what the method's descriptors declare of its
	// behaviour: idempotency_level, or the google.api.http rule's verb.
	SourceDeclared Source = "declared"
	// SourceComment: the method's comment in the descriptors.
	SourceComment Source = "comment"
	// SourceConfig: the operator's tool override (Options.Catalog.Tools).
	SourceConfig Source = "config"
	// SourceVerb: inferred from the verb that starts the method's name
	// (describe's verb table).
	SourceVerb Source = "verb"
	// SourceStructure: inferred from the method's structure, its name
	// having no verb the table knows (describe.FromStructure).
	SourceStructure Source = "structure"
	// SourceDefault: the gateway's default (a derived name, a
	// conservative hint).
	SourceDefault Source = "default"
)

// Origin is where a compiled tool's parts came from.
type Origin struct {
	Name, Title, Description Source
	// Hints are readOnly, destructive, idempotent, openWorld.
	Hints [4]Source
	// Appended: an override added a sentence to the description.
	Appended bool
}

// originOf records where t's parts came from; to is the option merged
// with ov's rules (nil for neither), ov the rules (nil for none).
func originOf(t *Tool, m protoreflect.MethodDescriptor, ov *overrides.Method, to *mcpgatewayv1.Tool, comments *descriptors.Comments) Origin {
	declared := to
	if ov != nil {
		declared = ov.Proto
	}
	var rules []*overrides.ToolOverride
	if ov != nil {
		rules = ov.Rules()
	}
	sets := func(f func(ru *overrides.ToolOverride) bool) bool {
		return slices.ContainsFunc(rules, f)
	}
	sh := t.Search.Shape
	inferred := SourceStructure
	if sh != nil && sh.Verb != "" {
		inferred = SourceVerb
	}
	var o Origin
	switch {
	case ov != nil && ov.NameFrom != "":
		o.Name = SourceConfig
	case declared.GetName() != "" && t.Definition.Name == declared.GetName():
		o.Name = SourceOption
	default:
		o.Name = SourceDefault
	}
	switch {
	case sets(func(ru *overrides.ToolOverride) bool { return ru.Title != "" }):
		o.Title = SourceConfig
	case declared.GetTitle() != "":
		o.Title = SourceOption
	default:
		o.Title = inferred
	}
	switch {
	case sets(func(ru *overrides.ToolOverride) bool { return ru.Description != "" }):
		o.Description = SourceConfig
	case strings.TrimSpace(declared.GetDescription()) != "":
		o.Description = SourceOption
	case Comment(comments, m) != "":
		o.Description = SourceComment
	default:
		o.Description = inferred
	}
	o.Appended = ov != nil && ov.AppendDesc != ""

	var h describe.HintSources
	if sh != nil {
		_, h = sh.Hints()
	}
	for i, src := range []describe.Source{h.ReadOnly, h.Destructive, h.Idempotent, h.OpenWorld} {
		switch src {
		case describe.FromIdempotencyLevel, describe.FromHTTPRule:
			o.Hints[i] = SourceDeclared
		case describe.FromVerbTable:
			o.Hints[i] = SourceVerb
		case describe.FromStructure:
			o.Hints[i] = SourceStructure
		default:
			o.Hints[i] = SourceDefault
		}
	}
	// The option's hints, and what a read-only or destructive one implies
	// of the others (methodAnnotations), by who said them: the operator
	// over the owners.
	hintOf := func(t *mcpgatewayv1.Tool, i int) *bool {
		return [...]*bool{t.ReadOnlyHint, t.DestructiveHint, t.IdempotentHint, t.OpenWorldHint}[i]
	}
	for _, layer := range []struct {
		src Source
		has func(i int) *bool
	}{
		{SourceOption, func(i int) *bool {
			if declared == nil {
				return nil
			}
			return hintOf(declared, i)
		}},
		{SourceConfig, func(i int) *bool {
			var v *bool
			for _, ru := range rules {
				if x := [...]*bool{ru.ReadOnlyHint, ru.DestructiveHint, ru.IdempotentHint, ru.OpenWorldHint}[i]; x != nil {
					v = x
				}
			}
			return v
		}},
	} {
		if ro := layer.has(0); ro != nil {
			o.Hints[0] = layer.src
			if *ro {
				o.Hints[1], o.Hints[2] = layer.src, layer.src
			}
		}
		if de := layer.has(1); de != nil {
			o.Hints[1] = layer.src
			if *de && layer.has(0) == nil {
				o.Hints[0] = layer.src
			}
		}
		for _, i := range []int{2, 3} {
			if layer.has(i) != nil {
				o.Hints[i] = layer.src
			}
		}
	}
	return o
}
