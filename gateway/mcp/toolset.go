package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"sync"
	"time"

	"github.com/grpc-mcp-gateway/gateway/internal/jsonscan"
)

// ToolListOptions tunes a [ToolList]. A nil *ToolListOptions means defaults.
type ToolListOptions struct {
	// PageSize is the number of tools per tools/list page. Default 100.
	PageSize int
	// TTL is sent as ttlMs on 2026-07-28 list results: how long a client
	// may reuse the list without asking again. Clients that opened
	// subscriptions/listen are told about changes anyway. Default 60s; a
	// negative value sends 0 (always stale).
	TTL time.Duration
	// CacheScope is sent as cacheScope on 2026-07-28 list results: "public"
	// (any client or intermediary may cache) or "private" (only this
	// user's client). Default "public": the gateway's tool list does not
	// depend on the caller.
	CacheScope string
	// Compactor checks and compacts the tools' schemas. A caller that
	// checks the same schemas elsewhere (the gateway's search catalog)
	// gives one to share, so each schema is read once; nil: one for this
	// set.
	Compactor *SchemaCompactor
}

// ToolList is an immutable snapshot of the tools, in the order given. It
// exists so that tools/list costs no encoding per request: every page is
// encoded once per revision family, at the first tools/list of that
// family (but see maxKeptListBytes), and tools/call finds a tool by name
// with one map lookup.
type ToolList struct {
	tools  []Tool
	byName map[string]int
	// pages[f][i] is the complete result object of page i for family f,
	// encoded on the first tools/list of that family: most gateways see one
	// or two revisions, and a large catalog's pages are megabytes each.
	pages     [numFamilies][][]byte
	pagesOnce [numFamilies]sync.Once
	// keepLimit is maxKeptListBytes (tests lower it): a list larger than
	// that is encoded at each request, not kept.
	keepLimit int
	ann       [][]byte // each tool's annotations, encoded
	// sums[i] is the hash of tool i's 2025-06-18 entry and sizes[i] its
	// length, so that a Subset knows its cursors and size without
	// encoding a tool again.
	sums      []uint64
	sizes     []int
	pageSize  int
	cursorOf  []string // cursorOf[p] is page p's cursor (p >= 1)
	listBytes int
	// cursors maps the opaque cursor of page i (i >= 1) to i. Cursors embed
	// a hash of the set's content, so a cursor from another generation is
	// rejected as invalid instead of silently skipping or repeating tools.
	cursors map[string]int
	ttlMs   int64
	scope   string
}

// NewToolList validates tools (non-empty unique names, valid JSON schemas)
// and pre-encodes the tools/list pages. A nil InputSchema becomes
// {"type":"object"}.
func NewToolList(tools []Tool, opts *ToolListOptions) (*ToolList, error) {
	o := ToolListOptions{PageSize: 100, TTL: time.Minute, CacheScope: "public"}
	if opts != nil {
		if opts.PageSize > 0 {
			o.PageSize = opts.PageSize
		}
		if opts.TTL != 0 {
			o.TTL = opts.TTL
		}
		if opts.CacheScope != "" {
			o.CacheScope = opts.CacheScope
		}
		o.Compactor = opts.Compactor
	}
	if o.CacheScope != "public" && o.CacheScope != "private" {
		return nil, fmt.Errorf("mcp: tool set: cache scope %q is neither public nor private", o.CacheScope)
	}
	s := &ToolList{
		tools:  make([]Tool, len(tools)),
		byName: make(map[string]int, len(tools)),
		scope:  o.CacheScope,
	}
	if o.TTL > 0 {
		s.ttlMs = o.TTL.Milliseconds()
	}
	s.ann = make([][]byte, len(tools))
	s.sums = make([]uint64, len(tools))
	s.sizes = make([]int, len(tools))
	s.pageSize = o.PageSize
	s.keepLimit = maxKeptListBytes
	var scratch []byte
	compact := o.Compactor
	if compact == nil {
		compact = new(SchemaCompactor)
	}
	for i, t := range tools {
		if t.Name == "" {
			return nil, fmt.Errorf("mcp: tool set: tool %d has no name", i)
		}
		if _, dup := s.byName[t.Name]; dup {
			return nil, fmt.Errorf("mcp: tool set: duplicate tool name %q", t.Name)
		}
		s.byName[t.Name] = i
		in, err := compact.Compact(t.InputSchema, `{"type":"object"}`)
		if err != nil {
			return nil, fmt.Errorf("mcp: tool set: tool %q: input schema: %w", t.Name, err)
		}
		t.InputSchema = in
		if t.Meta != nil {
			if t.Meta, err = compact.Compact(t.Meta, ""); err != nil {
				return nil, fmt.Errorf("mcp: tool set: tool %q: _meta: %w", t.Name, err)
			}
		}
		if t.OutputSchema != nil {
			out, err := compact.Compact(t.OutputSchema, "")
			if err != nil {
				return nil, fmt.Errorf("mcp: tool set: tool %q: output schema: %w", t.Name, err)
			}
			t.OutputSchema = out
		}
		if t.Annotations != nil {
			if s.ann[i], err = json.Marshal(t.Annotations); err != nil {
				return nil, fmt.Errorf("mcp: tool set: tool %q: annotations: %w", t.Name, err)
			}
		}
		s.tools[i] = t
		// The 2025-06-18 shape (titles, output schemas) measures the list
		// and identifies the generation in cursors.
		scratch = appendTool(scratch[:0], t, s.ann[i], family20250618)
		h := fnv.New64a()
		h.Write(scratch)
		s.sums[i], s.sizes[i] = h.Sum64(), len(scratch)
	}
	s.paginate()
	return s, nil
}

// paginate sets the cursors and the list's size from the tools' sums and
// sizes.
func (s *ToolList) paginate() {
	h := fnv.New64a()
	var sum [8]byte
	s.listBytes = 0
	for i := range s.tools {
		binary.BigEndian.PutUint64(sum[:], s.sums[i])
		h.Write(sum[:])
		s.listBytes += s.sizes[i]
	}
	n := len(s.tools)
	npages := (n + s.pageSize - 1) / s.pageSize
	if npages == 0 {
		npages = 1
	}
	s.cursorOf = make([]string, npages)
	s.cursors = make(map[string]int, npages-1)
	gen := h.Sum64()
	for p := 1; p < npages; p++ {
		var raw [12]byte
		binary.BigEndian.PutUint64(raw[:8], gen)
		binary.BigEndian.PutUint32(raw[8:], uint32(p*s.pageSize))
		c := base64.RawURLEncoding.EncodeToString(raw[:])
		s.cursorOf[p] = c
		s.cursors[c] = p
	}
	// What a 2025-06-18 client receives beyond the tools: the page
	// envelopes and cursors.
	s.listBytes += npages*len(`{"tools":[]}`) + max(0, n-npages)
	for p := 1; p < npages; p++ {
		s.listBytes += len(`,"nextCursor":""`) + len(s.cursorOf[p])
	}
}

// Subset is the set of s's tools for which keep(i) holds, i being the
// tool's index in s, in s's order, with s's options except the cache
// scope: cacheScope is sent on 2026-07-28 list results ("" keeps s's).
// It is how one catalog gives many lists (a toolset's, the tools one
// caller may call): nothing is checked or encoded again, the subset
// shares s's schemas, and its cursors are its own (a cursor of s, or of
// another subset, is refused by it as expired), so it costs its pages
// (kept only up to 2 MiB; a larger subset is encoded at each request)
// and its index.
func (s *ToolList) Subset(keep func(i int) bool, cacheScope string) (*ToolList, error) {
	if cacheScope == "" {
		cacheScope = s.scope
	}
	if cacheScope != "public" && cacheScope != "private" {
		return nil, fmt.Errorf("mcp: tool set: cache scope %q is neither public nor private", cacheScope)
	}
	sub := &ToolList{byName: make(map[string]int), keepLimit: min(s.keepLimit, maxKeptSubsetBytes), pageSize: s.pageSize, ttlMs: s.ttlMs, scope: cacheScope}
	for i := range s.tools {
		if !keep(i) {
			continue
		}
		sub.byName[s.tools[i].Name] = len(sub.tools)
		sub.tools = append(sub.tools, s.tools[i])
		sub.ann = append(sub.ann, s.ann[i])
		sub.sums = append(sub.sums, s.sums[i])
		sub.sizes = append(sub.sizes, s.sizes[i])
	}
	sub.paginate()
	return sub, nil
}

// Len is the number of tools in the set.
func (s *ToolList) Len() int {
	if s == nil {
		return 0
	}
	return len(s.tools)
}

// familyPages encodes the pages of family f once.
func (s *ToolList) familyPages(f family) [][]byte {
	s.pagesOnce[f].Do(func() {
		pages := make([][]byte, len(s.cursorOf))
		for p := range pages {
			pages[p] = s.encodePage(f, p)
		}
		s.pages[f] = pages
	})
	return s.pages[f]
}

// maxKeptListBytes is the largest tools/list whose pages a ToolList keeps
// once encoded. A larger list (a typed catalog of the googleapis estate
// is 188 MB in 134 pages, per revision family) is encoded page by page
// at each request instead: a page of a megabyte or two costs a few
// milliseconds to encode, less than sending it, and keeping every page
// would hold hundreds of megabytes for the catalog's life.
const maxKeptListBytes = 16 << 20

// maxKeptSubsetBytes is maxKeptListBytes for a Subset: a catalog may have
// many (a list per toolset, per caller's view), and who asks decides how
// many views there are, so a larger subset is encoded at each request.
const maxKeptSubsetBytes = 2 << 20

// encodePage encodes page p for family f.
func (s *ToolList) encodePage(f family, p int) []byte {
	tf := f
	if f == family20260728 {
		tf = family20250618 // the same tools, in another envelope
	}
	n, npages := len(s.tools), len(s.cursorOf)
	lo, hi := p*s.pageSize, min((p+1)*s.pageSize, n)
	b := []byte(`{"tools":[`)
	for i := lo; i < hi; i++ {
		if i > lo {
			b = append(b, ',')
		}
		b = appendTool(b, s.tools[i], s.ann[i], tf)
	}
	b = append(b, ']')
	if p+1 < npages {
		b = append(b, `,"nextCursor":`...)
		b = appendString(b, s.cursorOf[p+1])
	}
	if f == family20260728 {
		b = append(b, `,"ttlMs":`...)
		b = strconv.AppendInt(b, s.ttlMs, 10)
		b = append(b, `,"cacheScope":`...)
		b = appendString(b, s.scope)
		b = append(b, `,"resultType":"complete"`...)
	}
	return append(b, '}')
}

// SchemaCompactor checks and compacts JSON schemas as NewToolList does
// (a JSON object; an empty schema is the default given), remembering its
// answer by the identity of the schema's bytes: tools made from one
// message share one slice (510 of Compute Engine's methods return its
// Operation), and checking every copy again was most of NewToolList's time
// on a 13,000-tool catalog. The same slice holds the same bytes, so its
// answer is the same; a caller must not change a schema's bytes while
// the compactor is in use. The zero value is ready to use; it is not
// safe for concurrent use.
type SchemaCompactor struct {
	done map[schemaID]json.RawMessage
}

type schemaID struct {
	data *byte
	n    int
}

// Compact returns raw compacted (raw itself when it is compact already),
// or def when raw is empty.
func (c *SchemaCompactor) Compact(raw json.RawMessage, def string) (json.RawMessage, error) {
	if len(raw) == 0 {
		return compactSchema(raw, def)
	}
	id := schemaID{&raw[0], len(raw)}
	if s, ok := c.done[id]; ok {
		return s, nil
	}
	s, err := compactSchema(raw, def)
	if err != nil {
		return nil, err
	}
	if c.done == nil {
		c.done = make(map[schemaID]json.RawMessage)
	}
	c.done[id] = s
	return s, nil
}

// CompactUnshared is Compact for bytes made for this call alone (a
// schema inflated from a deflated copy): remembered by their identity,
// they would be kept for nothing.
func (c *SchemaCompactor) CompactUnshared(raw json.RawMessage, def string) (json.RawMessage, error) {
	return compactSchema(raw, def)
}

// compactSchema checks that raw is a JSON object and compacts it. A schema
// that is compact already is returned as is, not copied: tools of one
// backend share their schema bytes.
func compactSchema(raw json.RawMessage, def string) (json.RawMessage, error) {
	if len(raw) == 0 {
		return json.RawMessage(def), nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if buf.Len() == 0 || buf.Bytes()[0] != '{' {
		return nil, errors.New("not a JSON object")
	}
	if bytes.Equal(buf.Bytes(), raw) {
		return raw, nil
	}
	return buf.Bytes(), nil
}

// EntryBytes is the size in bytes of t's entry in tools/list at the
// revision that shows the most of it (2025-11-25: title, outputSchema,
// annotations, execution and _meta), with t's schemas as given: what a
// tool costs a client, and what the gateway holds every tool to.
func EntryBytes(t Tool) int {
	return len(AppendEntry(nil, t))
}

// AppendEntry appends the entry EntryBytes measures to b, so a caller
// that measures many tools can reuse one buffer.
func AppendEntry(b []byte, t Tool) []byte {
	var ann []byte
	if t.Annotations != nil {
		ann, _ = json.Marshal(t.Annotations) // a struct of strings and bools
	}
	return appendTool(b, t, ann, family20251125)
}

// appendTool appends t's JSON as family f shows it.
func appendTool(b []byte, t Tool, ann []byte, f family) []byte {
	b = append(b, `{"name":`...)
	b = appendString(b, t.Name)
	if f >= family20250618 && t.Title != "" {
		b = append(b, `,"title":`...)
		b = appendString(b, t.Title)
	}
	if t.Description != "" {
		b = append(b, `,"description":`...)
		b = appendString(b, t.Description)
	}
	b = append(b, `,"inputSchema":`...)
	b = append(b, t.InputSchema...)
	if f >= family20250618 && t.OutputSchema != nil {
		b = append(b, `,"outputSchema":`...)
		b = append(b, t.OutputSchema...)
	}
	if f >= family20250326 && ann != nil && string(ann) != "{}" {
		b = append(b, `,"annotations":`...)
		b = append(b, ann...)
	}
	if f == family20251125 && t.TaskSupport != "" {
		b = append(b, `,"execution":{"taskSupport":`...)
		b = appendString(b, t.TaskSupport)
		b = append(b, '}')
	}
	if t.Meta != nil {
		b = append(b, `,"_meta":`...)
		b = append(b, t.Meta...)
	}
	return append(b, '}')
}

// ListBytes is the size in bytes of the whole tools/list answer, every
// page, as a 2025-06-18 or later client receives it (titles and output
// schemas included). It is what a client puts into a model's context, and
// what the gateway's tool budget is measured against.
func (s *ToolList) ListBytes() int {
	if s == nil {
		return len(emptyToolsPage)
	}
	return s.listBytes
}

// Tools returns a copy of the tools in list order; the snapshot itself
// never changes.
func (s *ToolList) Tools() []Tool {
	if s == nil {
		return nil
	}
	return append([]Tool(nil), s.tools...)
}

// resolve unquotes the raw JSON string raw (params.name) and finds the
// tool it names in the set: t is nil when the set has none of that name.
// The returned name is then the set's own copy, so the hot path does not
// allocate one per call. ok is false when raw is not a string.
func (s *ToolList) resolve(raw json.RawMessage) (t *Tool, name string, ok bool) {
	if s != nil && len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		if i, found := s.byName[string(raw[1:len(raw)-1])]; found {
			return &s.tools[i], s.tools[i].Name, true
		}
	}
	if name, ok = jsonscan.Unquote(raw); !ok {
		return nil, "", false
	}
	if s != nil {
		if i, found := s.byName[name]; found {
			t = &s.tools[i]
		}
	}
	return t, name, true
}

// page returns the pre-encoded result for cursor ("" is the first page).
func (s *ToolList) page(f family, cursor string) ([]byte, bool) {
	if s == nil {
		if cursor != "" {
			return nil, false
		}
		if f == family20260728 {
			return emptyToolsPage2026, true
		}
		return emptyToolsPage, true
	}
	p := 0
	if cursor != "" {
		var ok bool
		if p, ok = s.cursors[cursor]; !ok {
			return nil, false
		}
	}
	if s.listBytes > s.keepLimit {
		return s.encodePage(f, p), true
	}
	return s.familyPages(f)[p], true
}

var (
	emptyToolsPage     = []byte(`{"tools":[]}`)
	emptyToolsPage2026 = []byte(`{"tools":[],"ttlMs":0,"cacheScope":"public","resultType":"complete"}`)
)
