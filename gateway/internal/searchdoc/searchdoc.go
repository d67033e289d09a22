// Package searchdoc is what search mode indexes of a tool: the facts
// read from its method's descriptors at discovery (Facts), the search
// document made of them and the tool's definition (Document), and which
// tools a preferred version of the same API supersedes (Superseded).
//
// It knows the descriptors, the describer's analysis and the search
// index's document, nothing of calls; package searchmode's catalog
// indexes the documents and answers search_tools.
package searchdoc

import (
	"slices"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/describe"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/internal/search"
)

// Facts is what search mode indexes about a tool beyond its
// definition, read from the descriptors once at discovery.
type Facts struct {
	Method  string // the method's simple name
	Service string // the service's simple name
	Pkg     string // the proto package
	Input   string // the request message's simple name
	Fields  string // the request's top-level field names, space-separated
	// Inner are the field names of the request's message fields (pause
	// and trigger_immediately of PatchSchedule's patch), Outputs the
	// response's top-level field names (what a Get returns).
	Inner, Outputs string
	HTTPPath       string // the google.api.http rule's path, "" without one
	// Description is the tool's description before the gateway's notes
	// (paging, partial responses, streaming, long-running calls): they
	// say how to call a tool, not what it does, and their words ("result",
	// "page", "next") are shared by every tool they apply to.
	Description string
	// Shape is what the method's structure says: its standard kind, verb
	// and what it acts on (describe.Analyze).
	Shape *describe.Method
}

// NewFacts reads m's facts; a is what its structure says
// (describe.Analyze). The catalog sets Description once the tool's
// description is written.
func NewFacts(m protoreflect.MethodDescriptor, a *describe.Method) Facts {
	svc := m.Parent().(protoreflect.ServiceDescriptor)
	f := Facts{
		Method:   string(m.Name()),
		Service:  string(svc.Name()),
		Pkg:      string(svc.ParentFile().Package()),
		Input:    string(m.Input().Name()),
		HTTPPath: a.HTTPPath,
		Shape:    a,
	}
	f.Fields = fieldNames(m.Input(), nil)
	var inner []string
	fs := m.Input().Fields()
	for i := range fs.Len() {
		if md := fs.Get(i).Message(); md != nil && !fs.Get(i).IsMap() && !strings.HasPrefix(string(md.FullName()), "google.protobuf.") {
			inner = append(inner, fieldNames(md, nil))
		}
	}
	f.Inner = strings.Join(inner, " ")
	f.Outputs = fieldNames(m.Output(), nil)
	return f
}

// fieldNames joins the names of md's fields.
func fieldNames(md protoreflect.MessageDescriptor, names []string) string {
	fs := md.Fields()
	for i := range fs.Len() {
		names = append(names, string(fs.Get(i).Name()))
	}
	return strings.Join(names, " ")
}

// Field weights of a tool's search document. The method's name says most
// about what a tool does; its service and the path of its HTTP rule say
// what it acts on; the description (written or synthesized) says it in
// words; field names and the package break ties. Names are indexed in
// pairs of adjacent words too, so "machine type" finds SetMachineType
// before the tools that only have a machine or a type.
var fields = [...]struct {
	weight float64
	pairs  bool
	text   func(def *mcp.Tool, f *Facts) string
}{
	{3, true, func(def *mcp.Tool, f *Facts) string { return f.Method }},
	{2, true, func(def *mcp.Tool, f *Facts) string { return def.Name + " " + def.Title }},
	{1.5, true, func(def *mcp.Tool, f *Facts) string { return f.Service + " " + f.Input }},
	{1.5, false, func(def *mcp.Tool, f *Facts) string { return f.HTTPPath }},
	{1, false, func(def *mcp.Tool, f *Facts) string { return f.Description }},
	{0.5, false, func(def *mcp.Tool, f *Facts) string { return f.Fields }},
	{0.3, false, func(def *mcp.Tool, f *Facts) string { return f.Inner }},
	{0.2, false, func(def *mcp.Tool, f *Facts) string { return f.Outputs }},
	{0.3, false, func(def *mcp.Tool, f *Facts) string { return f.Pkg }},
}

// searchKind is the search package's name of a standard kind.
func searchKind(k describe.Kind) string {
	switch k {
	case describe.Get:
		return search.KindGet
	case describe.List:
		return search.KindList
	case describe.Create:
		return search.KindCreate
	case describe.Update:
		return search.KindUpdate
	case describe.Delete:
		return search.KindDelete
	}
	return ""
}

// Document is the search document of the tool def with facts f: its
// fields by weight, and what its structure says (action, kind, target);
// Superseded is the caller's to set (see Superseded).
func Document(def *mcp.Tool, f *Facts) search.Document {
	fs := make([]search.Field, len(fields))
	for i, sf := range fields {
		fs[i] = search.Field{Text: sf.text(def, f), Weight: sf.weight, Pairs: sf.pairs}
	}
	doc := search.Document{Key: def.Name, Fields: fs, Group: f.Pkg}
	if sh := f.Shape; sh != nil {
		doc.Action, doc.Kind, doc.Target = sh.Verb, searchKind(sh.Kind), strings.Join(sh.Target(), " ")
		doc.Several = sh.Several()
		if target := sh.Target(); !slices.Equal(target, sh.Resource) {
			doc.Whole = strings.Join(sh.Resource, " ")
		}
		switch {
		case doc.Action == "" && len(sh.Noun) > 0 && sh.Effect == describe.Reads:
			// ContainerStatus, Plugins: a name that is a noun it
			// returns reads it.
			doc.Action = string(doc.Kind)
		case doc.Action == "" && len(sh.Words) > 0:
			// A verb describe has no entry for (FeedAnimal) is still
			// the method's action.
			doc.Action = sh.Words[0]
		}
	}
	if a := def.Annotations; a != nil && a.ReadOnlyHint != nil {
		doc.ReadOnly = *a.ReadOnlyHint
	}
	return doc
}
