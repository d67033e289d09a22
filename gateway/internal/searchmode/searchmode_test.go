package searchmode

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/searchdoc"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// TestSearchAnswersCached: an answer is built once per catalog and query,
// and the cache stays within its bound however many queries arrive.
func TestSearchAnswersCached(t *testing.T) {
	var things []*thing
	for i := range 50 {
		name := fmt.Sprintf("Things_GetThing%02d", i)
		things = append(things, &thing{
			def:    mcp.Tool{Name: name, Description: "Returns a thing."},
			facts:  searchdoc.Facts{Method: fmt.Sprintf("GetThing%02d", i), Service: "Things", Pkg: "things.v1"},
			schema: json.RawMessage(`{"type":"object"}`),
		})
	}
	sc := New(tools(things...), inflate)
	args := json.RawMessage(`{"query":"get a thing"}`)
	first := sc.Search(t.Context(), args, nil, "", nil)
	if first.IsError {
		t.Fatal(first.Content[0].Text)
	}
	if again := sc.Search(t.Context(), args, nil, "", nil); again != first {
		t.Error("the same query was answered again instead of from the cache")
	}
	if other := sc.Search(t.Context(), json.RawMessage(`{"query":"get a thing","limit":2}`), nil, "", nil); other == first {
		t.Error("another limit was answered from the first query's cache entry")
	}
	cleared := false
	for i := 0; !cleared; i++ {
		before := sc.cachedSize
		sc.Search(t.Context(), json.RawMessage(fmt.Sprintf(`{"query":"thing %d"}`, i)), nil, "", nil)
		if sc.cachedSize > maxCachedAnswerBytes {
			t.Fatalf("after %d queries the cache holds %d bytes, over %d", i, sc.cachedSize, maxCachedAnswerBytes)
		}
		cleared = sc.cachedSize < before
	}
}

// TestSearchEntriesShareSchemas: a search entry holds a tool's compact
// input schema itself, not a copy (issue 22: the copies were ~70 MB of
// the googleapis catalog), whether the tool holds it as is or deflated,
// and a schema written with spaces is compacted into the answer as
// before.
func TestSearchEntriesShareSchemas(t *testing.T) {
	compact := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)
	spaced := json.RawMessage(`{ "type": "object" }`)
	packed := json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}}}`)
	things := []*thing{
		{def: mcp.Tool{Name: "Things_GetThing", Description: "Returns a thing."}, schema: compact,
			facts: searchdoc.Facts{Method: "GetThing", Service: "Things", Pkg: "things.v1"}},
		{def: mcp.Tool{Name: "Things_ListThings", Description: "Lists things."}, schema: spaced,
			facts: searchdoc.Facts{Method: "ListThings", Service: "Things", Pkg: "things.v1"}},
		(&thing{def: mcp.Tool{Name: "Things_DeleteThing", Description: "Deletes a thing."}, schema: packed,
			facts: searchdoc.Facts{Method: "DeleteThing", Service: "Things", Pkg: "things.v1"}}).deflated(t),
	}
	sc := New(tools(things...), inflate)
	if &sc.entry(0).schema[0] != &compact[0] {
		t.Error("the entry holds a copy of the tool's compact input schema")
	}
	if en := sc.entry(2); en.schema != nil || &en.schemaZ[0] != &things[2].z[0] {
		t.Error("the entry holds a copy of the tool's deflated input schema")
	}
	for i, want := range []string{string(compact), `{"type":"object"}`, string(packed)} {
		name := things[i].def.Name
		res := sc.Search(t.Context(), json.RawMessage(`{"query":"`+name+`","limit":1}`), nil, "", nil)
		var answer struct {
			Tools []struct {
				Name        string
				InputSchema json.RawMessage
			}
		}
		if err := json.Unmarshal([]byte(res.Content[0].Text), &answer); err != nil {
			t.Fatalf("%s: %v: %s", name, err, res.Content[0].Text)
		}
		if len(answer.Tools) != 1 || answer.Tools[0].Name != name || string(answer.Tools[0].InputSchema) != want {
			t.Errorf("%s: answer %s, want its schema %s", name, res.Content[0].Text, want)
		}
		en := sc.entry(i)
		schema, err := en.appendSchema(nil, inflate)
		if err != nil {
			t.Fatal(err)
		}
		entry := string(en.head) + `,"inputSchema":` + string(schema) + "}"
		if got := escapedLen([]byte(entry)); got != en.fullText {
			t.Errorf("%s: the entry's escaped length is %d, counted as %d", name, got, en.fullText)
		}
	}
}

// thing is a catalog tool as search mode reads it: a definition, its
// search facts, and its input schema, held as is or deflated (z, the
// schema's deflated bytes, as the gateway holds them in search mode).
type thing struct {
	def    mcp.Tool
	facts  searchdoc.Facts
	schema json.RawMessage
	z      []byte
}

func (t *thing) Def() *mcp.Tool          { return &t.def }
func (t *thing) Facts() *searchdoc.Facts { return &t.facts }
func (t *thing) InputSchema() (json.RawMessage, []byte, error) {
	if t.z == nil {
		return t.schema, nil, nil
	}
	in, err := inflate(nil, t.z, len(t.schema))
	return in, t.z, err
}

// deflated holds t's schema deflated, and returns t.
func (t *thing) deflated(tb testing.TB) *thing {
	var b bytes.Buffer
	w, err := flate.NewWriter(&b, flate.BestSpeed)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := w.Write(t.schema); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	t.z = b.Bytes()
	return t
}

// inflate reads a deflated schema back, as the gateway's does.
func inflate(dst, z []byte, n int) ([]byte, error) {
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	if _, err := io.ReadFull(flate.NewReader(bytes.NewReader(z)), dst[start:]); err != nil {
		return dst[:start], err
	}
	return dst, nil
}

func tools(ts ...*thing) []Tool {
	out := make([]Tool, len(ts))
	for i, t := range ts {
		out[i] = t
	}
	return out
}

// BenchmarkSearch answers search_tools on a catalog of 2,000 tools, each
// query new to the answer cache, once the entries are made: the cost of
// an answer the cache does not hold.
func BenchmarkSearch(b *testing.B) {
	verbs := []string{"Get", "List", "Create", "Update", "Delete", "Watch", "Start", "Cancel"}
	nouns := []string{"Animal", "Enclosure", "Keeper", "Ticket", "Feeding", "Visit", "Habitat", "Vet", "Shipment", "Invoice"}
	var things []*thing
	for i := range 2000 {
		verb, noun := verbs[i%len(verbs)], nouns[i/len(verbs)%len(nouns)]
		svc := fmt.Sprintf("Service%d", i/80)
		method := fmt.Sprintf("%s%s%d", verb, noun, i)
		things = append(things, &thing{
			def:    mcp.Tool{Name: svc + "_" + method, Description: verb + "s a " + strings.ToLower(noun) + " of the zoo."},
			facts:  searchdoc.Facts{Method: method, Service: svc, Pkg: fmt.Sprintf("zoo%d.v1", i/400), Input: method + "Request", Fields: "name parent page_size"},
			schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"parent":{"type":"string"},"pageSize":{"type":"integer"}}}`),
		})
	}
	sc := New(tools(things...), inflate)
	for i := range things {
		sc.Warm(i)
	}
	queries := []string{"delete an animal", "list the enclosures of a habitat", "who feeds the keeper", "cancel a shipment", "Service3_GetVisit240"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		args := fmt.Appendf(nil, `{"query":%q}`, fmt.Sprintf("%s %d", queries[i%len(queries)], i))
		if res := sc.Search(b.Context(), args, nil, "", nil); res.IsError {
			b.Fatal(res.Content[0].Text)
		}
		i++
	}
}
