package gateway_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/gateway"
)

// looseNote is what the note of an answer of loose matches says.
const looseNote = "matched no tool closely"

// TestSearchLoose: search_tools never answers empty while the caller can
// see tools. A request whose words match no tool the normal way gets
// loose matches (by its kind, its verb, single words of the tools'
// fields and names), and the answer's note says so and how to ask
// better; when some match is listed without its schema too, the one note
// says both, and the answer stays valid JSON. A request that matches has
// no such note; a scope with no tools is an error, and a catalog with no
// tools answers no tools, as before.
func TestSearchLoose(t *testing.T) {
	_, _, url := startGateway(t, searchMode)
	cs := connect(t, url, "2025-11-25")

	for _, q := range []string{"xylophone", "can user:anne play the xylophone?", "is docker.io/library/redis:7 here?"} {
		got, note, _ := searchAnswer(t, cs, map[string]any{"query": q})
		if len(got) == 0 || len(got) > gateway.DefaultSearchLimit {
			t.Errorf("%q: %d matches, want 1 to %d", q, len(got), gateway.DefaultSearchLimit)
		}
		if !strings.Contains(note, looseNote) || !strings.Contains(note, "scope") || !strings.Contains(note, "Rephrase") {
			t.Errorf("%q: note %q, want one saying the matches are loose, suggesting a rephrase or a scope", q, note)
		}
	}
	// Within a scope, loose matches are the scope's.
	got, note, _ := searchAnswer(t, cs, map[string]any{"query": "xylophone", "scope": "zoo.v1", "limit": 10})
	if len(got) == 0 || !strings.Contains(note, looseNote) {
		t.Errorf("scoped: %v, note %q", names(got), note)
	}
	for _, f := range got {
		if !strings.HasPrefix(f.Name, "ZooService_") {
			t.Errorf("scoped: %v", names(got))
		}
	}
	// A request that matches: no loose note.
	if got, note, _ := searchAnswer(t, cs, map[string]any{"query": "remove an animal"}); len(got) == 0 || strings.Contains(note, looseNote) {
		t.Errorf("a matching request: %v, note %q", names(got), note)
	}
	// A scope that names nothing is an error, as before.
	res := call(t, cs, gateway.SearchToolsName, map[string]any{"query": "xylophone", "scope": "billing.v1"})
	if msg := text(t, res); !res.IsError || !strings.Contains(msg, `scope: no API or service "billing.v1"`) {
		t.Errorf("unknown scope: isError=%v %q", res.IsError, msg)
	}

	// A catalog with no tools answers none, without a note.
	_, _, empty := startGateway(t, &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeSearch}, Catalog: gateway.CatalogOptions{Exclude: []string{"zoo.v1.*/*"}}})
	ecs := connect(t, empty, "2025-11-25")
	res = call(t, ecs, gateway.SearchToolsName, map[string]any{"query": "xylophone"})
	if msg := text(t, res); res.IsError || msg != `{"tools":[]}` {
		t.Errorf("empty catalog: isError=%v %q, want {\"tools\":[]}", res.IsError, msg)
	}
}

// TestSearchLooseNotes: an answer of loose matches some of which come
// without their schemas has one note saying both, as valid JSON.
func TestSearchLooseNotes(t *testing.T) {
	api := &fakeAPI{}
	// shop.v1's schemas are about 4 KB each: a few fit an answer's
	// budget, not five.
	api.set(t, bigFile("shop.v1", 60, "GetWidget", "ListWidgets", "CreateWidget", "UpdateWidget", "DeleteWidget", "MoveWidget"))
	addr, _ := serveFake(t, api, "127.0.0.1:0")
	_, base := newGateway(t, []gateway.Backend{dialBackend(t, "shop", addr)}, searchMode)
	cs := connect(t, base+"/mcp", "2025-11-25")
	res := call(t, cs, gateway.SearchToolsName, map[string]any{"query": "xylophone"})
	msg := text(t, res)
	var answer struct {
		Tools []found
		Note  string
	}
	if err := json.Unmarshal([]byte(msg), &answer); err != nil || res.IsError {
		t.Fatalf("isError=%v, %v: %.200s", res.IsError, err, msg)
	}
	if len(answer.Tools) != gateway.DefaultSearchLimit || answer.Tools[len(answer.Tools)-1].InputSchema != nil {
		t.Fatalf("%d matches, the last with its schema: %v; the test needs one without", len(answer.Tools), answer.Tools[len(answer.Tools)-1].InputSchema != nil)
	}
	if n := strings.Count(msg, `"note":`); n != 1 || !strings.Contains(answer.Note, looseNote) || !strings.Contains(answer.Note, "search its exact name") {
		t.Errorf("%d notes: %q; want one saying the matches are loose and how to get a schema", n, answer.Note)
	}
}
