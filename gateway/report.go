package gateway

import (
	"errors"
	"fmt"
	"strings"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/compiled"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/describe"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/searchmode"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// The catalog report: what a model will read of each tool, and where each
// part came from, so that an operator sees what the gateway guessed before
// correcting it (overrides.go). The sources are recorded at compile time,
// where each part is decided, never worked out again from the text.

// Source says where a part of a tool's definition came from.
type Source = compiled.Source

// The sources of a tool's parts, as a ToolReport names them.
const (
	// SourceOption: the service's (mcpgateway.v1.tool) option.
	SourceOption = compiled.SourceOption
	// SourceDeclared: what the method's descriptors declare of its
	// behaviour: idempotency_level, or the google.api.http rule's verb.
	SourceDeclared = compiled.SourceDeclared
	// SourceComment: the method's comment in the descriptors.
	SourceComment = compiled.SourceComment
	// SourceConfig: the operator's tool override (Options.Catalog.Tools).
	SourceConfig = compiled.SourceConfig
	// SourceVerb: inferred from the verb that starts the method's name
	// (docs/catalog.md's verb table).
	SourceVerb = compiled.SourceVerb
	// SourceStructure: inferred from the method's structure, its name
	// having no verb the table knows.
	SourceStructure = compiled.SourceStructure
	// SourceDefault: the gateway's default (a derived name, a
	// conservative hint).
	SourceDefault = compiled.SourceDefault
)

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
		out[i] = reportOf(t)
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
		sc = searchmode.New(searchTools(l.tools), compiled.AppendInflated)
	}
	hits, _ := sc.Index().SearchLoose(query, limit, nil)
	out := make([]ToolReport, len(hits))
	for i, h := range hits {
		out[i] = reportOf(sc.Tool(h.Doc).(*compiled.Tool))
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
func reportOf(t *compiled.Tool) ToolReport {
	def, err := t.WithSchemas()
	o := t.Origin
	r := ToolReport{
		Name: def.Name, NameSource: o.Name,
		Title: def.Title, TitleSource: o.Title,
		Description: def.Description, DescriptionSource: o.Description, DescriptionAppended: o.Appended,
		Bytes:   mcp.EntryBytes(def),
		Backend: t.Backend,
		Method:  t.Call.Method[1:],
	}
	if r.Title == "" && def.Annotations != nil {
		r.Title = def.Annotations.Title
	}
	if a := def.Annotations; a != nil {
		for i, v := range []*bool{a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint, a.OpenWorldHint} {
			r.Hints = append(r.Hints, HintReport{Hint: HintNames[i], Value: v != nil && *v, Source: o.Hints[i]})
		}
	}
	if t.Args != nil {
		r.Arguments = t.Args.Summary()
	}
	if sh := t.Search.Shape; sh != nil {
		hintsGuessed := false
		for _, s := range o.Hints[:3] {
			hintsGuessed = hintsGuessed || s == SourceStructure || s == SourceDefault
		}
		if sh.Effect == describe.Unknown && hintsGuessed {
			r.Check = append(r.Check, CheckVerbUnknown)
		}
		if (o.Description == SourceStructure || o.Description == SourceVerb) && sh.NameOnly() {
			r.Check = append(r.Check, CheckNameOnly)
		}
	}
	var defaulted []string
	for i, s := range o.Hints {
		// openWorldHint is true unless its owners say otherwise: a
		// stated policy, not a guess.
		if s == SourceDefault && i != 3 {
			defaulted = append(defaulted, HintNames[i])
		}
	}
	if len(defaulted) > 0 {
		r.Check = append(r.Check, CheckHintDefault+" ("+strings.Join(defaulted, ", ")+")")
	}
	if err == nil && t.Schemas.Shortened() {
		r.Check = append(r.Check, CheckSchemaShortn)
	}
	if err != nil {
		r.Check = append(r.Check, "schemas could not be built: "+err.Error())
	}
	return r
}
