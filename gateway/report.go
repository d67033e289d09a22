package gateway

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	"github.com/grpc-mcp-gateway/gateway/gateway/describe"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/overrides"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	mcpgatewayv1 "github.com/grpc-mcp-gateway/gateway/proto/mcpgateway/v1"
)

// The catalog report: what a model will read of each tool, and where each
// part came from, so that an operator sees what the gateway guessed before
// correcting it (overrides.go). The sources are recorded at compile time,
// where each part is decided, never worked out again from the text.

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

// toolOrigin is where a compiled tool's parts came from.
type toolOrigin struct {
	name, title, description Source
	// hints are readOnly, destructive, idempotent, openWorld.
	hints [4]Source
	// appended: an override added a sentence to the description.
	appended bool
}

// originOf records where t's parts came from; to is the option merged
// with ov's rules (nil for neither), ov the rules (nil for none).
func originOf(t *tool, m protoreflect.MethodDescriptor, ov *overrides.Method, to *mcpgatewayv1.Tool, comments *descriptors.Comments) toolOrigin {
	declared := to
	if ov != nil {
		declared = ov.Proto
	}
	var rules []*ToolOverride
	if ov != nil {
		rules = ov.Rules()
	}
	sets := func(f func(ru *ToolOverride) bool) bool {
		return slices.ContainsFunc(rules, f)
	}
	sh := t.Search.Shape
	inferred := SourceStructure
	if sh != nil && sh.Verb != "" {
		inferred = SourceVerb
	}
	var o toolOrigin
	switch {
	case ov != nil && ov.NameFrom != "":
		o.name = SourceConfig
	case declared.GetName() != "" && t.Definition.Name == declared.GetName():
		o.name = SourceOption
	default:
		o.name = SourceDefault
	}
	switch {
	case sets(func(ru *ToolOverride) bool { return ru.Title != "" }):
		o.title = SourceConfig
	case declared.GetTitle() != "":
		o.title = SourceOption
	default:
		o.title = inferred
	}
	switch {
	case sets(func(ru *ToolOverride) bool { return ru.Description != "" }):
		o.description = SourceConfig
	case strings.TrimSpace(declared.GetDescription()) != "":
		o.description = SourceOption
	case comment(comments, m) != "":
		o.description = SourceComment
	default:
		o.description = inferred
	}
	o.appended = ov != nil && ov.AppendDesc != ""

	var h describe.HintSources
	if sh != nil {
		_, h = sh.Hints()
	}
	for i, src := range []describe.Source{h.ReadOnly, h.Destructive, h.Idempotent, h.OpenWorld} {
		switch src {
		case describe.FromIdempotencyLevel, describe.FromHTTPRule:
			o.hints[i] = SourceDeclared
		case describe.FromVerbTable:
			o.hints[i] = SourceVerb
		case describe.FromStructure:
			o.hints[i] = SourceStructure
		default:
			o.hints[i] = SourceDefault
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
			o.hints[0] = layer.src
			if *ro {
				o.hints[1], o.hints[2] = layer.src, layer.src
			}
		}
		if de := layer.has(1); de != nil {
			o.hints[1] = layer.src
			if *de && layer.has(0) == nil {
				o.hints[0] = layer.src
			}
		}
		for _, i := range []int{2, 3} {
			if layer.has(i) != nil {
				o.hints[i] = layer.src
			}
		}
	}
	return o
}

// HintNames are the MCP hints in the order ToolReport.Hints lists them.
var HintNames = [4]string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}

// ToolReport is what a model reads of one tool, and where each part came
// from (Gateway.Report).
type ToolReport struct {
	Name              string `json:"name"`
	NameSource        Source `json:"nameSource"`
	Title             string `json:"title"`
	TitleSource       Source `json:"titleSource"`
	Description       string `json:"description"`
	DescriptionSource Source `json:"descriptionSource"`
	// DescriptionAppended: an override added a sentence to it.
	DescriptionAppended bool         `json:"descriptionAppended,omitempty"`
	Hints               []HintReport `json:"hints"`
	// Bytes is the size of the tool's tools/list entry, schemas included.
	Bytes int `json:"bytes"`
	// Backend and Method say what the tool calls.
	Backend string `json:"backend"`
	Method  string `json:"method"`
	// Arguments are the tool's argument overrides ("namespace: fixed").
	Arguments []string `json:"arguments,omitempty"`
	// Check are the guesses an operator should look at.
	Check []string `json:"check,omitempty"`
	// Score is the search ranking's score, in a search report.
	Score float64 `json:"score,omitempty"`
}

// HintReport is one hint and its source.
type HintReport struct {
	Hint   string `json:"hint"`
	Value  bool   `json:"value"`
	Source Source `json:"source"`
}

// The guesses Report flags.
const (
	CheckVerbUnknown  = "verb not in the table: its hints are guessed from its structure or defaulted"
	CheckNameOnly     = "description from the name only: the gateway could not phrase what the method does, and it has no comment"
	CheckHintDefault  = "hint defaulted"
	CheckSchemaShortn = "schema shortened to the bound of a tool's entry"
)

// Report describes the current catalog's tools, or the named toolset's,
// in list order. Each tool's schemas are built if they were not.
func (g *Gateway) Report(toolset string) ([]ToolReport, error) {
	l, err := g.reportListing(toolset)
	if err != nil {
		return nil, err
	}
	out := make([]ToolReport, len(l.tools))
	for i, t := range l.tools {
		out[i] = t.report()
	}
	return out, nil
}

// SearchReport ranks the current catalog's tools (or the named
// toolset's) against query with search mode's own ranking, whatever mode
// the list is in, and describes the best limit of them.
func (g *Gateway) SearchReport(toolset, query string, limit int) ([]ToolReport, error) {
	l, err := g.reportListing(toolset)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(query) == "" {
		return nil, errors.New("search: the query is empty")
	}
	sc := l.search
	if sc == nil {
		if sc, err = newSearchCatalog(l.tools); err != nil {
			return nil, err
		}
	}
	hits, _ := sc.Index().SearchLoose(query, limit, nil)
	out := make([]ToolReport, len(hits))
	for i, h := range hits {
		out[i] = sc.Tool(h.Doc).(*tool).report()
		out[i].Score = h.Score
	}
	return out, nil
}

func (g *Gateway) reportListing(toolset string) (*listing, error) {
	c := g.catalog.Load()
	if toolset == "" {
		return &c.listing, nil
	}
	for i, ts := range g.toolsets {
		if ts.def.Name == toolset {
			return c.toolsets[i], nil
		}
	}
	return nil, fmt.Errorf("no toolset %q", toolset)
}

// report describes t.
func (t *tool) report() ToolReport {
	def, err := t.withSchemas()
	o := t.Origin
	r := ToolReport{
		Name: def.Name, NameSource: o.name,
		Title: def.Title, TitleSource: o.title,
		Description: def.Description, DescriptionSource: o.description, DescriptionAppended: o.appended,
		Bytes:   mcp.EntryBytes(def),
		Backend: t.Backend,
		Method:  t.Call.Method[1:],
	}
	if r.Title == "" && def.Annotations != nil {
		r.Title = def.Annotations.Title
	}
	if a := def.Annotations; a != nil {
		for i, v := range []*bool{a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint, a.OpenWorldHint} {
			r.Hints = append(r.Hints, HintReport{Hint: HintNames[i], Value: v != nil && *v, Source: o.hints[i]})
		}
	}
	if t.Args != nil {
		r.Arguments = t.Args.Summary()
	}
	if sh := t.Search.Shape; sh != nil {
		hintsGuessed := false
		for _, s := range o.hints[:3] {
			hintsGuessed = hintsGuessed || s == SourceStructure || s == SourceDefault
		}
		if sh.Effect == describe.Unknown && hintsGuessed {
			r.Check = append(r.Check, CheckVerbUnknown)
		}
		if (o.description == SourceStructure || o.description == SourceVerb) && sh.NameOnly() {
			r.Check = append(r.Check, CheckNameOnly)
		}
	}
	var defaulted []string
	for i, s := range o.hints {
		// openWorldHint is true unless its owners say otherwise: a
		// stated policy, not a guess.
		if s == SourceDefault && i != 3 {
			defaulted = append(defaulted, HintNames[i])
		}
	}
	if len(defaulted) > 0 {
		r.Check = append(r.Check, CheckHintDefault+" ("+strings.Join(defaulted, ", ")+")")
	}
	if err == nil && t.Schemas.full().whole > 0 {
		r.Check = append(r.Check, CheckSchemaShortn)
	}
	if err != nil {
		r.Check = append(r.Check, "schemas could not be built: "+err.Error())
	}
	return r
}
