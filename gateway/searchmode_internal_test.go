package gateway

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/searchdoc"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// TestSearchAnswersCached: an answer is built once per catalog and query,
// and the cache stays within its bound however many queries arrive.
func TestSearchAnswersCached(t *testing.T) {
	var tools []*tool
	for i := range 50 {
		name := fmt.Sprintf("Things_GetThing%02d", i)
		tools = append(tools, &tool{
			def:    mcp.Tool{Name: name, Description: "Returns a thing.", InputSchema: json.RawMessage(`{"type":"object"}`)},
			search: searchdoc.Facts{Method: fmt.Sprintf("GetThing%02d", i), Service: "Things", Pkg: "things.v1"},
		})
	}
	sc, err := newSearchCatalog(withBuiltSchemas(tools))
	if err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(`{"query":"get a thing"}`)
	first := sc.searchTools(t.Context(), args, nil, "", nil)
	if first.IsError {
		t.Fatal(first.Content[0].Text)
	}
	if again := sc.searchTools(t.Context(), args, nil, "", nil); again != first {
		t.Error("the same query was answered again instead of from the cache")
	}
	if other := sc.searchTools(t.Context(), json.RawMessage(`{"query":"get a thing","limit":2}`), nil, "", nil); other == first {
		t.Error("another limit was answered from the first query's cache entry")
	}
	cleared := false
	for i := 0; !cleared; i++ {
		before := sc.cachedSize
		sc.searchTools(t.Context(), json.RawMessage(fmt.Sprintf(`{"query":"thing %d"}`, i)), nil, "", nil)
		if sc.cachedSize > maxCachedAnswerBytes {
			t.Fatalf("after %d queries the cache holds %d bytes, over %d", i, sc.cachedSize, maxCachedAnswerBytes)
		}
		cleared = sc.cachedSize < before
	}
}

// TestEffectiveMode: auto lists typed tools while tools/list's estimated
// tokens (JSON bytes / 4) are within the tool budget and search beyond;
// Off (--tool-budget unlimited) is always typed; typed and
// search do not look at the size.
func TestEffectiveMode(t *testing.T) {
	for _, tc := range []struct {
		mode      ToolMode
		budget    int
		listBytes int
		want      ToolMode
	}{
		{ToolModeAuto, 1000, 4003, ToolModeTyped}, // 1000 tokens
		{ToolModeAuto, 1000, 4004, ToolModeSearch},
		{ToolModeAuto, Off, 1 << 30, ToolModeTyped},
		{ToolModeTyped, 1000, 1 << 30, ToolModeTyped},
		{ToolModeSearch, 1000, 100, ToolModeSearch},
	} {
		g := &Gateway{opts: Options{Search: SearchOptions{ToolMode: tc.mode, ToolBudget: tc.budget}}}
		if got := g.effectiveMode(tc.listBytes); got != tc.want {
			t.Errorf("%s, budget %d, %d bytes: %s, want %s", tc.mode, tc.budget, tc.listBytes, got, tc.want)
		}
	}
}

// TestSearchEntriesShareSchemas: a search entry holds a tool's compact
// input schema itself, not a copy (issue 22: the copies were ~70 MB of
// the googleapis catalog), and a schema written with spaces is compacted
// into the answer as before.
func TestSearchEntriesShareSchemas(t *testing.T) {
	compact := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)
	spaced := json.RawMessage(`{ "type": "object" }`)
	tools := []*tool{
		{def: mcp.Tool{Name: "Things_GetThing", Description: "Returns a thing.", InputSchema: compact},
			search: searchdoc.Facts{Method: "GetThing", Service: "Things", Pkg: "things.v1"}},
		{def: mcp.Tool{Name: "Things_ListThings", Description: "Lists things.", InputSchema: spaced},
			search: searchdoc.Facts{Method: "ListThings", Service: "Things", Pkg: "things.v1"}},
	}
	sc, err := newSearchCatalog(withBuiltSchemas(tools))
	if err != nil {
		t.Fatal(err)
	}
	if &sc.entry(0).schema[0] != &compact[0] {
		t.Error("the entry holds a copy of the tool's compact input schema")
	}
	for i, want := range []string{string(compact), `{"type":"object"}`} {
		res := sc.searchTools(t.Context(), json.RawMessage(`{"query":"`+tools[i].def.Name+`","limit":1}`), nil, "", nil)
		var answer struct {
			Tools []struct {
				Name        string
				InputSchema json.RawMessage
			}
		}
		if err := json.Unmarshal([]byte(res.Content[0].Text), &answer); err != nil {
			t.Fatalf("%s: %v: %s", tools[i].def.Name, err, res.Content[0].Text)
		}
		if len(answer.Tools) != 1 || answer.Tools[0].Name != tools[i].def.Name || string(answer.Tools[0].InputSchema) != want {
			t.Errorf("%s: answer %s, want its schema %s", tools[i].def.Name, res.Content[0].Text, want)
		}
		en := sc.entry(i)
		entry := string(en.head) + `,"inputSchema":` + string(en.schema) + "}"
		if got := escapedLen([]byte(entry)); got != en.fullText {
			t.Errorf("%s: the entry's escaped length is %d, counted as %d", tools[i].def.Name, got, en.fullText)
		}
	}
}

// withBuiltSchemas gives each tool the schemas its definition names, as
// if built (toolschemas.go), and returns tools.
func withBuiltSchemas(tools []*tool) []*tool {
	for _, tl := range tools {
		s := &toolSchemas{tool: tl, b: new(schemaBuilder)}
		s.b.pending.Store(1)
		s.publish(builtSchemas{in: tl.def.InputSchema, out: tl.def.OutputSchema})
		tl.def.InputSchema, tl.def.OutputSchema, tl.schemas = nil, nil, s
	}
	return tools
}
