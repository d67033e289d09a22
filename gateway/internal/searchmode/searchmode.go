// Package searchmode is search mode: a catalog too large for a model's
// context listed as two tools, search_tools and call_tool. It builds a
// catalog's search index and each tool's entry in answers, answers
// search_tools (lexically, or fused with an embedding model's ranking:
// Semantic), defines the two tools, and checks call_tool's arguments and
// answers a name the catalog lacks.
//
// It knows a tool only through Tool (its definition, search facts and
// input schema); which tool call_tool runs, and running it through the
// one call path, are the gateway's.
package searchmode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/searchdoc"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/internal/search"
)

// Search mode.
//
// search_tools finds the catalog's tools that fit a few words and returns
// their definitions within AnswerBudget (the best match's input schema
// whenever an answer can carry it, so the model can call at once; the
// next ones' while they fit; a tool named exactly, its schema whatever
// its size), and call_tool runs one of them by name, through the same
// call path as a typed call (the gateway's). Everything here is built
// once per catalog: the index, each tool's encoded answer entry, and the
// two tools' definitions; answers to repeated queries are cached with
// the catalog.

// Tool is what search mode reads of a catalog tool.
type Tool interface {
	// Def is the tool's definition: search mode reads its name, title,
	// description and annotations, never its schemas.
	Def() *mcp.Tool
	// Facts are what discovery read of the tool's method for search.
	Facts() *searchdoc.Facts
	// InputSchema is the tool's input schema, built on first use, or
	// the error that kept it from being built. deflated is the same
	// schema deflated when the tool holds it so (schema is then
	// inflated for this call), nil otherwise; an answer entry shares it
	// rather than keep a copy, and inflates it with the catalog's
	// Inflate when an answer carries it.
	InputSchema() (schema json.RawMessage, deflated []byte, err error)
}

// Inflate appends to dst the n bytes z inflates to: how a Tool's
// deflated input schema is read back.
type Inflate func(dst, z []byte, n int) ([]byte, error)

// Names of search mode's two tools.
const (
	SearchToolsName = "search_tools"
	CallToolName    = "call_tool"
)

// Limits of a search_tools answer.
const (
	// DefaultLimit is how many matches search_tools returns when the
	// call does not say.
	DefaultLimit = 5
	// MaxLimit caps the matches of one answer; a larger limit is
	// answered with this many.
	MaxLimit = 10
	// AnswerBudget is what a search_tools answer aims at on the
	// wire: 16 KiB, about 4,000 tokens at the 4 bytes a token that the
	// gateway's tool budget counts, a small part of a model's context
	// for one step of a task. Every match is listed by name, title, description and
	// hints; the best match carries its input schema, and the next ones
	// theirs while the answer stays within this budget. A single schema
	// larger than the budget (Temporal's StartWorkflowExecution: 22 KB)
	// is still carried by the best match, alone, within
	// MaxAnswerBytes: it is the one a model needs to call, and
	// asking again would cost a round trip for the same bytes.
	AnswerBudget = 16 << 10
	// MaxAnswerBytes bounds a search_tools result as encoded on the
	// wire: the list of matches, and the best match's schema when it is
	// larger than AnswerBudget. One answer goes over it: a query
	// that is a tool's exact name asks for that tool's schema, and gets
	// it whatever its size, since in search mode it is the only way a
	// model can learn the tool's arguments; its other matches come
	// without schemas then. A match whose schema would take any other
	// answer over this bound is listed without it, its entry giving the
	// schema's size and saying that its exact name brings it.
	MaxAnswerBytes = 64 << 10
	// answerOverhead is reserved for what wraps the tools array on the
	// wire: the JSON-RPC response, the result (with 2026-07-28's
	// resultType and serverInfo) and the content block.
	answerOverhead = 1 << 10
	// maxShortDescription bounds the description of a match listed
	// without its schema: a long proto comment would crowd out other
	// matches.
	maxShortDescription = 1 << 10
	// maxDirectoryBytes bounds the catalog's directory in search_tools'
	// description.
	maxDirectoryBytes = 4 << 10
	// MaxQueryChars bounds a search_tools query: a search is a few
	// words, and reading a query costs time in proportion to its length.
	// maxScopeChars bounds its scope.
	MaxQueryChars = 2000
	maxScopeChars = 200
	// cacheEntryOverhead is what a cached answer costs beyond its text
	// and its key's strings: the map entry and the result's structs.
	cacheEntryOverhead = 256
	// maxCachedAnswerBytes bounds the answers one catalog keeps cached.
	maxCachedAnswerBytes = 4 << 20
)

// Catalog is search mode's view of one catalog (the whole catalog's, or
// a toolset's): its index, its tools' answer entries and the answers
// kept. Its tools are numbered as the slice New was given, as are the
// documents of its index and the argument of a visible filter.
type Catalog struct {
	index   *search.Index
	tools   []Tool
	inflate Inflate
	// entries are the tools' entries in answers, each made on the first
	// answer that lists the tool (entry), or by the schemas' warm-up.
	entries []searchEntry
	// compact checks the entries' input schemas, each shared schema once
	// (tools of one message share its bytes); compactMu serialises it.
	compactMu sync.Mutex
	compact   mcp.SchemaCompactor
	// scopes are each tool's package, service and package.Service,
	// lowercased, which a query's scope is matched against.
	scopes [][3]string
	// vectors are the tools' embeddings, once the semantic reranking
	// (Semantic) has them; nil without it.
	vectors atomic.Pointer[search.Vectors]

	mu         sync.Mutex
	answers    map[searchKey]*mcp.CallToolResult
	cachedSize int
}

type searchKey struct {
	query, scope string
	limit        int
	// noSchemas: the caller asked for names and descriptions only.
	noSchemas bool
	// semantic: ranked with the catalog's embeddings.
	semantic bool
	// view is the caller's view key (the gateway's, by the scopes its
	// token holds), "" for every tool.
	view string
}

// answerEntry is one match in a search_tools answer.
// A match listed in full has "inputSchema" too, spliced in by
// Catalog.entry.
type answerEntry struct {
	Name        string               `json:"name"`
	Title       string               `json:"title,omitempty"`
	Description string               `json:"description"`
	Annotations *mcp.ToolAnnotations `json:"annotations,omitempty"`
	// SchemaNote says why a match whose input schema only an answer to
	// its exact name carries has none: its size, and how to get it.
	SchemaNote string `json:"inputSchemaNote,omitempty"`
}

// truncateRunes cuts s to at most n bytes at a rune boundary, marking the
// cut with an ellipsis.
func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// inputSchemaKey joins an answer entry's head and its input schema.
const inputSchemaKey = `,"inputSchema":`

// New indexes the tools of a catalog; their answer entries are made on
// first use (entry), with their schemas, inflate reading back those the
// tools hold deflated.
func New(tools []Tool, inflate Inflate) *Catalog {
	sc := &Catalog{
		tools:   tools,
		inflate: inflate,
		entries: make([]searchEntry, len(tools)),
		scopes:  make([][3]string, len(tools)),
		answers: make(map[searchKey]*mcp.CallToolResult),
	}
	docs := make([]search.Document, len(tools))
	facts := make([]*searchdoc.Facts, len(tools))
	for i, t := range tools {
		facts[i] = t.Facts()
	}
	superseded := searchdoc.Superseded(facts)
	for i, t := range tools {
		docs[i] = searchdoc.Document(t.Def(), facts[i])
		docs[i].Superseded = superseded[i]
		pkg, svc := strings.ToLower(facts[i].Pkg), strings.ToLower(facts[i].Service)
		sc.scopes[i] = [3]string{pkg, svc, pkg + "." + svc}
	}
	sc.index = search.New(docs)
	return sc
}

// Index is the catalog's search index, its documents numbered as the
// catalog's tools.
func (sc *Catalog) Index() *search.Index { return sc.index }

// Tool is the catalog's i-th tool.
func (sc *Catalog) Tool(i int) Tool { return sc.tools[i] }

// searchEntry is one tool's entry in answers. With its input schema it
// is head, `,"inputSchema":`, schema and '}', joined when an answer
// carries it: schema is the tool's own input schema when that is
// compact, as the schema package writes it, so the entries do not hold a
// second copy of it. short has name, title, description and hints (and,
// when only an answer to its exact name can carry its schema, a note
// saying so). fullText and shortText are what each adds to the text
// block once the MCP layer has escaped it into a JSON string.
type searchEntry struct {
	once                sync.Once
	head, schema, short []byte
	// schemaZ is schema deflated, when the tool holds its schema so and
	// the entry shares it (schema is then nil); schemaLen its length.
	schemaZ             []byte
	schemaLen           int
	fullText, shortText int
}

// appendSchema appends en's input schema to dst, inflating it with
// inflate when it is held deflated.
func (en *searchEntry) appendSchema(dst []byte, inflate Inflate) ([]byte, error) {
	if en.schemaZ == nil {
		return append(dst, en.schema...), nil
	}
	return inflate(dst, en.schemaZ, en.schemaLen)
}

// entry returns tools[i]'s entry, made on first use with the tool's
// schemas. A tool whose schema cannot be built (its discovery would have
// failed before schemas waited for first use) is listed without one, its
// note saying why.
func (sc *Catalog) entry(i int) *searchEntry {
	en := &sc.entries[i]
	en.once.Do(func() {
		def := sc.tools[i].Def()
		e := answerEntry{Name: def.Name, Title: def.Title, Description: def.Description, Annotations: def.Annotations}
		fullHead, err := json.Marshal(e)
		var in, inSchema json.RawMessage
		var inZ []byte
		if err == nil {
			in, inZ, err = sc.tools[i].InputSchema()
			if err == nil && inZ != nil {
				inSchema, err = sc.compact.CompactUnshared(in, `{"type":"object"}`)
			} else if err == nil {
				sc.compactMu.Lock()
				inSchema, err = sc.compact.Compact(in, `{"type":"object"}`)
				sc.compactMu.Unlock()
			}
		}
		e.Description = truncateRunes(e.Description, maxShortDescription)
		if err != nil {
			e.SchemaNote = "input schema unavailable: " + err.Error()
		} else {
			// The full entry is the entry with the schema added,
			// spliced rather than encoded again (which would check the
			// schema twice).
			en.head = fullHead[:len(fullHead)-1]
			en.schema = inSchema
			if inZ != nil && bytes.Equal(inSchema, in) {
				// The tool's own schema: share it, deflated.
				en.schema, en.schemaZ = nil, inZ
			}
			en.schemaLen = len(inSchema)
			en.fullText = escapedLen(en.head) + escapedLen([]byte(inputSchemaKey)) + escapedLen(inSchema) + len("}")
			if answerOverhead+len(`{"tools":[]}`)+en.fullText > MaxAnswerBytes {
				// Only an answer to its exact name carries this schema:
				// the entry says so, with the size, so a model knows
				// what asking costs before it asks.
				e.SchemaNote = fmt.Sprintf("input schema left out: %d bytes (about %d tokens), more than an answer listing other matches carries; search this tool's exact name, %s, to get it",
					len(inSchema), (len(inSchema)/4+500)/1000*1000, def.Name)
			}
		}
		en.short, _ = json.Marshal(e) // strings, bools and annotations
		en.shortText = escapedLen(en.short)
		if en.head == nil {
			en.fullText = en.shortText
		}
	})
	return en
}

// Warm makes tools[i]'s answer entry now, as the first answer listing
// the tool would: the gateway's background warm-up of schemas calls it
// once a tool's schemas are built, so that answers find entries made.
func (sc *Catalog) Warm(i int) { sc.entry(i) }

// escapedLen is the length of js as the text of a content block: a JSON
// string, counting every character the MCP layer may escape at its
// longest.
func escapedLen(js []byte) int {
	n := len(js)
	for _, c := range js {
		switch {
		case c == '"' || c == '\\':
			n++
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			n += 5
		case c >= 0x80:
			n++
		}
	}
	return n
}

// searchArgs are search_tools' arguments.
type searchArgs struct {
	Query *string `json:"query"`
	Limit *int    `json:"limit"`
	Scope *string `json:"scope"`
	// Schemas false lists the matches without input schemas.
	Schemas *bool `json:"schemas"`
}

// Search answers search_tools with the arguments raw; sem is the
// semantic reranking, nil without one; view and visible are the
// caller's view: visible, when set, says which tools it may see, and
// view keys the answers kept for such callers. An invalid argument is
// answered as a tool execution error, as a typed tool's are.
func (sc *Catalog) Search(ctx context.Context, raw json.RawMessage, sem *Semantic, view string, visible func(int) bool) *mcp.CallToolResult {
	var a searchArgs
	if err := decodeMetaArgs(raw, &a); err != nil {
		return metaInputError(SearchToolsName, err)
	}
	if a.Query == nil || strings.TrimSpace(*a.Query) == "" {
		return metaInputError(SearchToolsName, errors.New("query: required, a few words of what the tool should do, or a tool's name"))
	}
	if n := utf8.RuneCountInString(*a.Query); n > MaxQueryChars {
		return metaInputError(SearchToolsName, fmt.Errorf("query: at most %d characters, got %d; give a few words of what the tool should do", MaxQueryChars, n))
	}
	if a.Scope != nil && utf8.RuneCountInString(*a.Scope) > maxScopeChars {
		return metaInputError(SearchToolsName, fmt.Errorf("scope: at most %d characters; give a package or a service from the catalog", maxScopeChars))
	}
	limit := DefaultLimit
	if a.Limit != nil {
		if *a.Limit < 1 {
			return metaInputError(SearchToolsName, fmt.Errorf("limit: must be at least 1, got %d", *a.Limit))
		}
		limit = min(*a.Limit, MaxLimit)
	}
	key := searchKey{query: strings.TrimSpace(*a.Query), limit: limit, semantic: sem != nil && sem.ready(sc), noSchemas: a.Schemas != nil && !*a.Schemas, view: view}
	if a.Scope != nil {
		key.scope = strings.ToLower(strings.TrimSpace(*a.Scope))
	}
	sc.mu.Lock()
	res, ok := sc.answers[key]
	sc.mu.Unlock()
	if ok {
		return res
	}
	keep := visible
	if key.scope != "" {
		in := sc.within(key.scope, visible)
		if in == nil {
			return metaInputError(SearchToolsName, fmt.Errorf("scope: no API or service %q in this catalog; give a package or a service from the catalog in this tool's description, or leave scope out", *a.Scope))
		}
		keep = in
	}
	var hits []search.Hit
	loose := false
	if key.semantic {
		hits, key.semantic = sem.rank(ctx, sc, key.query, limit, keep)
	}
	switch {
	case !key.semantic:
		hits, loose = sc.index.SearchLoose(key.query, limit, keep)
	case len(hits) == 0:
		// Neither ranking found anything: never answer empty while the
		// caller can see tools.
		hits = sc.index.LooseWithin(key.query, limit, keep)
		loose = len(hits) > 0
	}
	exact := len(hits) > 0 && sc.index.Exact(key.query) == hits[0].Doc
	res = sc.answer(hits, !key.noSchemas, exact, loose)
	// An answer is kept with its key; what it costs counts the query too,
	// so many distinct queries cannot grow the cache past its bound. An
	// answer over MaxAnswerBytes (an exact name's large schema) is
	// not kept: it would crowd out many others, and building it again is
	// a copy of bytes encoded once per catalog.
	if len(res.Content[0].Text) > MaxAnswerBytes {
		return res
	}
	cost := len(res.Content[0].Text) + len(key.query) + len(key.scope) + cacheEntryOverhead
	sc.mu.Lock()
	if sc.cachedSize+cost > maxCachedAnswerBytes {
		clear(sc.answers)
		sc.cachedSize = 0
	}
	sc.answers[key] = res
	sc.cachedSize += cost
	sc.mu.Unlock()
	return res
}

// within is the filter of a scope: the tools of a package (or of the
// packages under a prefix such as "google.cloud"), of a service by its
// name, or by package.Service, among those visible allows (nil: all).
// nil when no tool is in it.
func (sc *Catalog) within(scope string, visible func(int) bool) func(int) bool {
	in := func(i int) bool {
		s := &sc.scopes[i]
		return (s[0] == scope || s[1] == scope || s[2] == scope || strings.HasPrefix(s[0], scope+".")) && (visible == nil || visible(i))
	}
	for i := range sc.tools {
		if in(i) {
			return in
		}
	}
	return nil
}

// The answer's notes. schemaNoteText ends an answer in which a match is
// listed without its input schema, so a model knows how to get it instead
// of guessing the arguments: an answer to a tool's exact name always
// carries its schema. looseNoteText ends an answer of loose matches
// (search.Index.SearchLoose): the request's words matched no tool
// closely, so the model knows to doubt the matches and how to ask better.
// An answer has one "note"; when both apply, it says both.
const (
	schemaNoteText = "A match listed without inputSchema: search its exact name to get its schema."
	looseNoteText  = "The request's words matched no tool closely: these are loose matches, by the kind of request (read or write), its verb and single words of the tools' names, fields, services and packages. " +
		"Rephrase with the API's own nouns (the catalog in " + SearchToolsName + "' description lists its APIs and services), or search again with scope set to one API or service."
)

var (
	schemaNote      = noteEnd(schemaNoteText)
	looseNote       = noteEnd(looseNoteText)
	looseSchemaNote = noteEnd(looseNoteText + " " + schemaNoteText)
)

// noteEnd is what ends an answer's tools array and the answer with note.
func noteEnd(note string) []byte {
	b, _ := json.Marshal(note)
	return append(append([]byte(`],"note":`), b...), '}')
}

// answer encodes the matches, best first. Every match found is listed
// (within MaxAnswerBytes; in practice always, each description
// being cut to maxShortDescription), by name, title, description and
// hints. With schemas, the best match carries its input schema when the
// answer then fits MaxAnswerBytes, or whatever its size when exact
// says the query is its name (the index puts that tool first), and each
// next one carries its own while the answer stays within
// AnswerBudget; a match listed without one is explained by the
// answer's note. loose says the matches are loose ones (SearchLoose), which
// the note says too. The answer is the text block alone: models read text,
// and a structuredContent copy would double its cost.
func (sc *Catalog) answer(hits []search.Hit, schemas, exact, loose bool) *mcp.CallToolResult {
	const open, end = `{"tools":[`, "]}"
	// The note's room is kept whether or not it is written, so what fits
	// does not depend on it.
	notes := schemaNote
	if loose {
		notes = looseSchemaNote
	}
	size := answerOverhead + len(open) + escapedLen(notes)
	for _, h := range hits {
		size += sc.entry(h.Doc).shortText + 1
	}
	for len(hits) > 0 && size > MaxAnswerBytes {
		size -= sc.entry(hits[len(hits)-1].Doc).shortText + 1
		hits = hits[:len(hits)-1]
	}
	text := []byte(open)
	omitted := false
	for i, h := range hits {
		bound := AnswerBudget
		if i == 0 {
			bound = MaxAnswerBytes
		}
		if i > 0 {
			text = append(text, ',')
		}
		en := sc.entry(h.Doc)
		extra := en.fullText - en.shortText
		carried := false
		if schemas && en.head != nil && (size+extra <= bound || i == 0 && exact) {
			start := len(text)
			text = append(append(text, en.head...), inputSchemaKey...)
			var err error
			if text, err = en.appendSchema(text, sc.inflate); err == nil {
				text, size, carried = append(text, '}'), size+extra, true
			} else {
				text = text[:start] // cannot happen to bytes the gateway deflated; listed without it
			}
		}
		if !carried {
			omitted = true
			text = append(text, en.short...)
		}
	}
	switch {
	case omitted && loose:
		text = append(text, looseSchemaNote...)
	case omitted:
		text = append(text, schemaNote...)
	case loose:
		text = append(text, looseNote...)
	default:
		text = append(text, end...)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{{Type: mcp.ContentText, Text: string(text)}}}
}

// decodeMetaArgs decodes the arguments of search_tools or call_tool into
// dst, refusing what their input schemas do not allow: a non-object and
// unknown properties.
func decodeMetaArgs(raw json.RawMessage, dst any) error {
	args := bytes.TrimSpace(raw)
	if len(args) == 0 || string(args) == "null" {
		// No arguments, as for a typed tool: an empty object.
		args = []byte("{}")
	} else if args[0] != '{' {
		return errors.New("arguments must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%s: must be %s, got %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
		}
		return errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// jsonKind names a Go kind as the JSON type a model should send.
func jsonKind(kind string) string {
	switch kind {
	case "int", "int64":
		return "an integer"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	}
	return "a " + kind
}

// InputErrorPrefix starts every invalid-arguments message of the two
// tools, as it starts the typed tools' (the gateway's call path), so a
// model reads them alike.
const InputErrorPrefix = "invalid arguments for "

// metaInputError answers invalid arguments of a search-mode tool as the
// typed tools' input errors read.
func metaInputError(name string, cause error) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{{Type: mcp.ContentText, Text: InputErrorPrefix + name + ": " + cause.Error()}}}
}

// ToolList is what tools/list shows in search mode for tools:
// search_tools and call_tool. search_tools' description carries the
// catalog's directory (its APIs and their services), so a model learns
// the catalog's vocabulary before it searches and can narrow a search
// with scope. searchHandle and callHandle are the two tools' handles (the
// gateway's, naming the list they search and call into), so a call runs
// against the list it was resolved in.
func ToolList(tools []Tool, searchHandle, callHandle any) (*mcp.ToolList, error) {
	searchTool := mcp.Tool{
		Handle: searchHandle,
		Name:   SearchToolsName,
		Title:  "Search tools",
		Description: fmt.Sprintf("Finds the tools that fit a task among the %d tools of this server. "+
			"Give a few words of what you want to do (\"delete a topic\", \"which servers do I have in us-east1\") or a tool's exact name; "+
			"the answer lists the best matches first, in about %d tokens: the best with its input schema, the next ones with theirs while they fit. "+
			"A tool's exact name always brings its input schema, whatever its size: search it to get the schema of a match listed without one "+
			"(the entry of one too large for an answer with other matches gives its size). "+
			"To look through more matches cheaply, set schemas to false: names and descriptions only. "+
			"Narrow a search to one API or service with scope. Run a match with %s.\n\n%s", len(tools), AnswerBudget/4/1000*1000, CallToolName, directory(tools, maxDirectoryBytes)),
		InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
			`"query":{"type":"string","maxLength":%d,"description":"what the tool should do, in a few words, or a tool's exact name to get its input schema"},`+
			`"limit":{"type":"integer","minimum":1,"default":%d,"description":"how many matches to return; at most %d"},`+
			`"scope":{"type":"string","maxLength":%d,"description":"only search one API (a package from the catalog, such as a.b.v1, or a prefix of packages) or one service (its name, or package.Service)"},`+
			`"schemas":{"type":"boolean","default":true,"description":"false: list the matches by name, title, description and hints only, without input schemas"}},`+
			`"required":["query"],"additionalProperties":false}`, MaxQueryChars, DefaultLimit, MaxLimit, maxScopeChars)),
		Annotations: &mcp.ToolAnnotations{Title: "Search tools", ReadOnlyHint: boolPtr(true), DestructiveHint: boolPtr(false), IdempotentHint: boolPtr(true), OpenWorldHint: boolPtr(false)},
	}
	call := mcp.Tool{
		Handle: callHandle,
		Name:   CallToolName,
		Title:  "Call a tool",
		Description: fmt.Sprintf("Runs a tool found with %s: name is the tool's exact name and arguments its arguments, "+
			"as its inputSchema describes. Answers exactly as the tool itself would.", SearchToolsName),
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"name":{"type":"string","description":"the tool's exact name, from search_tools"},` +
			`"arguments":{"type":"object","description":"the tool's arguments, as its inputSchema describes"}},` +
			`"required":["name"],"additionalProperties":false}`),
		// call_tool does what the tool it runs does, so it promises
		// nothing: the conservative hints.
		Annotations: &mcp.ToolAnnotations{Title: "Call a tool", ReadOnlyHint: boolPtr(false), DestructiveHint: boolPtr(true), IdempotentHint: boolPtr(false), OpenWorldHint: boolPtr(true)},
	}
	return mcp.NewToolList([]mcp.Tool{searchTool, call}, nil)
}

// directory is the catalog's APIs (proto packages) and their services,
// "Catalog: pkg: Service, Service; pkg: ...", within max bytes: when the
// services do not all fit, each API is listed with its service count
// instead, and APIs that still do not fit are counted.
func directory(tools []Tool, limit int) string {
	services := map[string][]string{}
	for _, t := range tools {
		f := t.Facts()
		if !slices.Contains(services[f.Pkg], f.Service) {
			services[f.Pkg] = append(services[f.Pkg], f.Service)
		}
	}
	pkgs := slices.Sorted(maps.Keys(services))
	if len(pkgs) == 0 {
		return "Catalog: no tools yet."
	}
	var full strings.Builder
	full.WriteString("Catalog (API: services):")
	for i, p := range pkgs {
		sep := " "
		if i > 0 {
			sep = "; "
		}
		slices.Sort(services[p])
		full.WriteString(sep + p + ": " + strings.Join(services[p], ", "))
	}
	full.WriteString(".")
	if full.Len() <= limit {
		return full.String()
	}
	var short strings.Builder
	short.WriteString("Catalog (API: number of services; give an API as scope to search it):")
	for i, p := range pkgs {
		item := fmt.Sprintf(" %s (%d)", p, len(services[p]))
		if i > 0 {
			item = ";" + item
		}
		if rest := fmt.Sprintf("; and %d more APIs.", len(pkgs)-i); short.Len()+len(item)+len(rest) > limit {
			short.WriteString(rest)
			return short.String()
		}
		short.WriteString(item)
	}
	short.WriteString(".")
	return short.String()
}

// boolPtr is a hint's value.
func boolPtr(b bool) *bool { return &b }
